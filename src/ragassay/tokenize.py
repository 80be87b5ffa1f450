"""Language-aware tokenisers for lexical (BM25) retrieval: text → list of index terms.

- ``"ko"``: Korean morphological analysis with Kiwi (``kiwipiepy``, which installs with its
  model). Only content morphemes are kept — nouns (``NNG NNP NNB NR``), verb and adjective
  stems as their dictionary form (``VV VA`` → lemma, ``고쳐`` → ``고치다``), roots (``XR``),
  foreign words (``SL``), numbers (``SN``) and hanja (``SH``) — so particles and endings
  (``하자보수를`` / ``하자보수는``) do not keep a question from matching its chunk. Forms are
  NFKC-normalised and casefolded; a foreign word or number is split further with the
  word rule below, so both tokenisers give the same terms for the same Latin text.
- ``"de"``, ``"en"``: the word rule: NFKC, casefold, then maximal runs of digits with
  inner ``.``/``,`` separators (``3,000``, ``99.5``: kept whole, never re-read as another
  number) or of other word characters (``Gewährleistung``, ``per``). No stemming.
- ``"auto"``: Korean for a text that holds Hangul, the word rule otherwise (chosen per text,
  so a Korean question can match an English chunk's Latin words and numbers).

Every tokeniser is deterministic and returns terms in text order (duplicates kept: BM25
counts them). Kiwi is imported on first use; when it is missing the error names the extra.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Literal

TokenizerLang = Literal["ko", "de", "en", "auto"]
Tokenizer = Callable[[str], list[str]]
LANGS: tuple[str, ...] = ("ko", "de", "en", "auto")

# A number keeps its inner separators ("3,000", "99.5", "1.000,50"): splitting it would
# turn one figure into two unrelated terms, and normalising it would need the locale.
_WORD = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d]+")
_HANGUL = re.compile("[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
# Kiwi tags of content morphemes (the part before "-": VV-R / VA-I are regular /
# irregular conjugations of VV / VA).
_KIWI_CONTENT = frozenset({"NNG", "NNP", "NNB", "NR", "XR", "SH"})
_KIWI_LEMMA = frozenset({"VV", "VA"})  # verbs and adjectives: the dictionary form
_KIWI_SPLIT = frozenset({"SL", "SN"})  # foreign words, numbers: the word rule
KIWI_INSTALL = "pip install 'ragassay[bm25]'  (or: pip install kiwipiepy)"


def word_tokens(text: str) -> list[str]:
    """The word rule: NFKC, casefold, then ``\\d+(?:[.,]\\d+)*`` or ``[^\\W\\d]+`` runs.

    ``"PER-001: 3,000명"`` → ``["per", "001", "3,000", "명"]``; empty text → ``[]``.
    """
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def has_hangul(text: str) -> bool:
    """True when the text holds a Hangul syllable or jamo."""
    return _HANGUL.search(text) is not None


@lru_cache(maxsize=1)
def _kiwi() -> Any:
    # One analyser per process: loading its model takes about a second.
    try:
        from kiwipiepy import Kiwi
    except ImportError:
        raise ValueError(f"the Korean tokenizer needs kiwipiepy: {KIWI_INSTALL}") from None
    return Kiwi()


def _kiwi_terms(tokens: Any) -> list[str]:
    out: list[str] = []
    for tok in tokens:
        tag = tok.tag.split("-", 1)[0]
        if tag in _KIWI_SPLIT:
            out.extend(word_tokens(tok.form))
        elif tag in _KIWI_LEMMA:
            out.append(unicodedata.normalize("NFKC", tok.lemma).casefold())
        elif tag in _KIWI_CONTENT:
            out.append(unicodedata.normalize("NFKC", tok.form).casefold())
    return out


def korean_tokens(text: str) -> list[str]:
    """Content morphemes of ``text`` by Kiwi (see the module docstring).

    ``"하자보수는 2년으로 하며"`` → ``["하자", "보수", "2", "년", "하다"]``. Raises
    ``ValueError`` naming the package when kiwipiepy is not installed.
    """
    if not text.strip():
        return []
    return _kiwi_terms(_kiwi().tokenize(text))


def auto_tokens(text: str) -> list[str]:
    """:func:`korean_tokens` for a text holding Hangul, :func:`word_tokens` otherwise."""
    return korean_tokens(text) if has_hangul(text) else word_tokens(text)


def tokenizer_for(lang: str) -> Tokenizer:
    """The tokeniser for ``lang`` (``"ko"``, ``"de"``, ``"en"`` or ``"auto"``).

    Unknown ``lang`` → ``ValueError`` listing the known ones. ``"ko"`` and ``"auto"`` check
    at once that kiwipiepy can be loaded (``ValueError`` naming the package otherwise), so
    a missing package is reported before any indexing starts.
    """
    if lang not in LANGS:
        raise ValueError(f"unknown tokenizer language {lang!r}; known: {', '.join(LANGS)}")
    if lang in ("de", "en"):
        return word_tokens
    _kiwi()
    return korean_tokens if lang == "ko" else auto_tokens


def tokenize_all(texts: Sequence[str], lang: str) -> list[list[str]]:
    """Tokenise many texts; the Korean ones go to Kiwi in one call.

    Gives exactly ``[tokenizer_for(lang)(t) for t in texts]``.
    """
    tokenizer_for(lang)  # checks lang and the package
    if lang in ("de", "en"):
        return [word_tokens(t) for t in texts]
    kiwi = [bool(t.strip()) and (lang == "ko" or has_hangul(t)) for t in texts]
    out = [[] if k else word_tokens(t) for t, k in zip(texts, kiwi, strict=True)]
    rows = [i for i, k in enumerate(kiwi) if k]
    for i, toks in zip(rows, _kiwi().tokenize([texts[i] for i in rows]), strict=True):
        out[i] = _kiwi_terms(toks)
    return out
