"""The deterministic claim splitter for Korean, German and English answers.

An answer's claims are its sentences (:func:`ragassay.sentences.split_sentences`: abbreviations,
dates and decimal points do not end a sentence), each further cut into clauses at

- a semicolon (``;``, ``；``);
- a comma followed by a coordinating conjunction that starts a new statement:
  English ``, and`` / ``, but`` / ``, while`` / ``, whereas``; German ``, und`` /
  ``, aber`` / ``, sondern`` / ``, während`` / ``, doch``; Korean connective endings
  followed by a space and a comma or not: ``…고,`` ``…며,`` ``…지만`` ``…으나,``.

A clause is kept apart only when both sides hold at least three words, two in Korean
(``red, and blue`` stays one claim); the conjunction itself is dropped. Inline citation
markers (``[rfp::chunk-001]``) are removed and
whitespace collapsed first; a piece without a word character is dropped. Empty text → ``[]``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..sentences import split_sentences

_MARKER = re.compile(r"\s*\[[^\[\]\n]+\]")
_WS = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?。])")
_HAS_WORD = re.compile(r"\w")
_CLAUSE_CUT = re.compile(
    r"\s*[;；]\s*"
    r"|,\s+(?:and|but|while|whereas|und|aber|sondern|während|doch)\s+"
    r"|(?:(?<=[\uac00-\ud7a3]고)|(?<=[\uac00-\ud7a3]며)|(?<=지만)|(?<=으나)),?\s+",
    re.IGNORECASE)
_MIN_WORDS = 3
_MIN_WORDS_KO = 2  # a Korean word carries its particles: fewer, longer words
_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def _clean(text: str) -> str:
    # split() cuts at what re's \s matches (str.isspace): the runs collapsed, as _WS would
    return _SPACE_BEFORE_PUNCT.sub(r"\1", " ".join(text.split()))


def _clauses(sentence: str) -> list[str]:
    # every cut needs a semicolon, a comma or a Korean ending: most sentences have none
    if not ("," in sentence or ";" in sentence or "；" in sentence
            or _HANGUL.search(sentence)):
        return [sentence]
    return _clauses_reference(sentence)


def _clauses_reference(sentence: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    for m in _CLAUSE_CUT.finditer(sentence):
        left, right = sentence[start:m.start()], sentence[m.end():]
        least = _MIN_WORDS_KO if _HANGUL.search(sentence) else _MIN_WORDS
        if len(left.split()) >= least and len(right.split()) >= least:
            pieces.append(left)
            start = m.end()
    pieces.append(sentence[start:])
    return pieces


def split_claims(answer_text: str) -> list[str]:
    """The claims of an answer (see the module docstring), in order."""
    return list(_split(answer_text))


# Cached: a question's gold texts repeat one another (``must_contain`` and
# ``support_claim``), and the claim checks split every gold text of every question.
@lru_cache(maxsize=1 << 14)
def _split(answer_text: str) -> tuple[str, ...]:
    text = _MARKER.sub("", answer_text) if "[" in answer_text else answer_text
    claims = []
    for a, b in split_sentences(text):
        for piece in _clauses(text[a:b]):
            claim = _clean(piece)
            if _HAS_WORD.search(claim):
                claims.append(claim)
    return tuple(claims)


def split_claims_reference(answer_text: str) -> list[str]:
    """The plain :func:`split_claims` (uncached, every sentence searched for cuts; its
    differential test compares the two)."""
    text = _MARKER.sub("", answer_text)
    claims = []
    for a, b in split_sentences(text):
        for piece in _clauses_reference(text[a:b]):
            claim = _SPACE_BEFORE_PUNCT.sub(r"\1", _WS.sub(" ", piece).strip())
            if _HAS_WORD.search(claim):
                claims.append(claim)
    return claims
