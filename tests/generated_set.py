"""Generated sets made against the fake OpenAI-compatible server with scripted replies, for
the tests of `ragassay generate` that need known replies (the checks' outcomes, the review
page, apply). The replies are written for the chunks in the order `ragassay generate`
samples them (:func:`ragassay.generate.sampling.seeds`), and the server answers the calls in
the order they are made (one at a time: it has no slots to report)."""

from __future__ import annotations

import json
from pathlib import Path

from openai_server import FakeOpenAIServer

from ragassay.anchor import anchor_label
from ragassay.generate.sampling import load_corpus
from ragassay.generate.select import candidates
from ragassay.metrics.numbers import extract_numbers
from ragassay.schema import GoldEvidence
from ragassay.sentences import split_sentences
from ragassay.text import content_words, guess_language

KO = ("보증기간은 검수 완료일로부터 24개월로 한다. 유지보수 인력은 상주 2명을 배치한다. "
      "장애가 발생하면 4시간 이내에 현장에 도착하여야 한다.")
DE = ("Die Lieferung dauert innerhalb Deutschlands 3 bis 5 Werktage. Der Versand kostet "
      "4,90 Euro. Ab 50 Euro Bestellwert ist der Versand kostenlos.")
EN = ("The warranty period is 12 months from acceptance. The contractor keeps two engineers "
      "on site. Faults must be answered within 8 hours.")

# chunk → (proposal reply, second-call reply or None when no second call is made)
GOOD = {
    "ko::chunk-001": ({"question": "보증기간은 얼마인가요?", "answer": "24개월",
                       "sentence": "보증기간은 검수 완료일로부터 24개월로 한다."},
                      {"answer": "24개월"}),
    "de::chunk-001": ({"question": "Wie viel kostet der Versand?", "answer": "4,90 Euro",
                       "sentence": "Der Versand kostet 4,90 Euro."}, {"answer": "4,90 Euro"}),
    "en::chunk-001": ({"question": "How long is the warranty period?", "answer": "12 months",
                       "sentence": "The warranty period is 12 months from acceptance."},
                      {"answer": "12 months"}),
}


def write_docs(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (("ko.txt", KO), ("de.txt", DE), ("en.txt", EN)):
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def script(server: FakeOpenAIServer, order: list[str],
           replies: dict[str, tuple[object, object | None]]) -> None:
    """Queue the replies of the chunks in ``order``: every proposal first, then the second
    calls of those that have one (a string is sent as it is, anything else as JSON)."""
    def text(value: object) -> str:
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    for cid in order:
        server.control.fail_next(reply=text(replies[cid][0]))
    for cid in order:
        second = replies[cid][1]
        if second is not None:
            server.control.fail_next(reply=text(second))


def factoid_order(docs: Path, seed: int = 0) -> list[str]:
    """The chunk ids in the order generate asks about them for factoid items (the sampling
    order, without the chunks that hold no sentence to pick)."""
    corpus = load_corpus(docs)
    return [chunks[0].chunk_id for chunks, _ in candidates("factoid", corpus.index, seed)]


_QUESTION = {"ko": "{}에 대한 값은 무엇인가요?", "de": "Welcher Wert gilt für {}?",
             "en": "What is the value for {}?"}


def _question(sentence: str, answer: str, lang: str) -> str:
    """A question in ``lang`` naming three content words of ``sentence`` (no number)."""
    words = [w for w in content_words(sentence) if not any(ch.isdigit() for ch in w)]
    return _QUESTION[lang].format(" ".join(words[:3]))


def numeric_replies(docs: Path, n: int, seed: int = 0, kind: str = "factoid"
                    ) -> tuple[list[str], dict[str, tuple[object, object | None]]]:
    """For the first round of ``n`` items of ``kind`` (``2n`` seeds) of any documents folder
    (``data/raw``): per seed, a reply asking, in the chunk's language, for a number of a
    sentence that only this chunk holds (the question only when the engine picked such a
    number itself, else with its own sentence and answer), and the second call answering it."""
    corpus = load_corpus(docs)
    order, replies = [], {}
    for chunks, picks in candidates(kind, corpus.index, seed):
        c = chunks[0]
        order.append(c.chunk_id)
        replies[c.chunk_id] = ("no sentence with a number here", None)
        p = picks[0]
        if [q for q in extract_numbers(p.answer) if q.unit not in ("date", "time")]:
            replies[c.chunk_id] = ({"question": _question(p.sentence, p.answer,
                                                            guess_language(c.text))},
                                   {"answer": p.answer})
        else:
            for a, b in split_sentences(c.text):
                sentence = c.text[a:b]
                numbers = [q for q in extract_numbers(sentence)
                           if q.unit not in ("date", "time")]
                label = GoldEvidence(chunk_id=c.chunk_id, doc_id=c.doc_id,
                                     support_claim=sentence)
                if numbers and anchor_label(label, corpus.index).status == "ok":
                    answer = numbers[0].raw
                    replies[c.chunk_id] = ({"question": _question(sentence, answer,
                                                                    guess_language(c.text)),
                                            "answer": answer, "sentence": sentence},
                                           {"answer": answer})
                    break
        if len(order) == 2 * n:
            break
    return order, replies
