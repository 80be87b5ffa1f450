"""The grammar of a generated question: the regular expression its proposal's schema gives
as ``pattern`` (llama.cpp's server compiles it into the grammar the reply must follow).

An answerable item's question is its support sentence turned into a question, the answer
replaced by a question phrase that fits it (:func:`~.wording.wh_phrases`: ``how many
months`` for ``12 months``, ``몇 개월`` for ``24개월``) — the sentence's other words kept in
their order, each one optional. So a model chooses which words to keep and which question
phrase to use; it cannot invent a word, repeat one, switch language or write the answer into
the question. The answer's trailing particle or punctuation stays glued to the question
phrase (``24개월로`` → ``몇 개월로``); a Korean question may instead end right after the
question phrase with a question ending (``… 몇 개월인가요?``). A two-chunk question joins
the two sentences' questions with ``and`` (``und``, ``그리고``).

An unanswerable item's question is the fixed frame of its absent attribute
(:data:`~.wording.ABSENT`: ``What is the fax number of …?``) around a subject of up to
:data:`MAX_SUBJECT_WORDS` words of the picked sentence (and the language's stop words).
"""

from __future__ import annotations

import re

from ..text import STOPWORDS, Language, contains_term, fold_text, strip_korean_suffix
from .select import Pick
from .wording import ABSENT, AND, KO_ENDINGS, wh_phrases

_SPECIAL = re.compile(r"([\\^$.|?*+()\[\]{}])")
_WORD = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*")
_GLUE = re.compile(r"^[^\s]*")
_END = " .!?。！？:;"
_KO_PARTICLES = {True: ("은", "이", "을", "의", "에", "에서"),  # after a final consonant
                 False: ("는", "가", "를", "의", "에", "에서")}
MAX_SUBJECT_WORDS = 8


def esc(text: str) -> str:
    """``text`` as a literal of llama.cpp's pattern syntax: only its operators escaped (it
    does not read Python's escaped space)."""
    return _SPECIAL.sub(r"\\\1", text)


def _alt(words: list[str] | tuple[str, ...]) -> str:
    return "(" + "|".join(esc(w) for w in words) + ")"


def _echo(p: Pick, language: Language) -> str:
    """The pattern of one sentence turned into a question, without the question mark."""
    s = p.sentence.strip().rstrip(_END)
    i = s.find(p.answer)
    if i < 0:  # a span the number reader read across a width variant: match it folded
        i = fold_text(s).find(fold_text(p.answer))
        i = max(i, 0)
    before = _tokens(s[:i])
    rest = s[i + len(p.answer):]
    glue = _GLUE.match(rest).group()  # type: ignore[union-attr]
    after = _tokens(rest[len(glue):])
    glue = _unquoted(glue)
    whs = list(wh_phrases(language, p.frame, p.answer))
    if not before and language != "ko":
        whs = [w[:1].upper() + w[1:] for w in whs]
    head = "".join(f"({esc(t)} )?" for t in before)
    tail = "".join(f"( {esc(t)})?" for t in after)
    if language == "ko":
        return f"{head}{_alt(whs)}({esc(glue)}{tail}|{_alt(KO_ENDINGS)})"
    return f"{head}{_alt(whs)}{esc(glue)}{tail}"


def _unquoted(text: str) -> str:
    # a '"' or '\' in the pattern of a JSON string field would be written unescaped by
    # llama.cpp's grammar: the reply would not be JSON (the server answers 500)
    return text.replace('"', "").replace("\\", "")


def _tokens(text: str) -> list[str]:
    return [t for t in (_unquoted(w) for w in text.split()) if t]


def subject_words(picks: list[Pick], language: Language) -> list[str]:
    """The words an unanswerable question's subject may use: the words of the picked
    sentence, each also lower-cased (Korean: also its stem, and the stem with a particle),
    and the language's stop words (:data:`ragassay.text.STOPWORDS`)."""
    words: dict[str, None] = {}
    for p in picks:
        for w in _WORD.findall(p.sentence):
            if language == "ko":
                stem = strip_korean_suffix(w)
                words.update(dict.fromkeys([w, stem, *(stem + k for k in _KO_PARTICLES[
                    _final_consonant(stem[-1])])]))
            else:
                words.update(dict.fromkeys([w, w[:1].lower() + w[1:]]))
    if language != "ko":
        words.update(dict.fromkeys(sorted(STOPWORDS[language])))
    return [w for w in words if not any(contains_term(w, p.answer) for p in picks)]


def _final_consonant(syllable: str) -> bool:
    """Whether a Hangul syllable ends in a consonant (batchim), which takes ``은`` not
    ``는``; any other character counts as one."""
    code = ord(syllable) - 0xAC00
    return not 0 <= code < 11172 or code % 28 != 0


def question_pattern(kind: str, picks: list[Pick], language: Language) -> str:
    """The regular expression the question of an item of ``kind`` with these picks must
    match, in ``language`` (see the module docstring)."""
    if kind == "unanswerable":
        word = _alt(subject_words(picks, language))
        body = f"{word}( {word}){{0,{MAX_SUBJECT_WORDS - 1}}}"
        absent = next(a for a in ABSENT[language] if a.term == picks[0].answer)
        return f"^{esc(absent.before)}{body}{esc(absent.after)}$"
    parts = [_echo(p, language) for p in picks]
    return "^" + f"{_alt(AND[language])}".join(parts) + "\\?$"
