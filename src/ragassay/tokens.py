"""Language-aware tokenisers for lexical (BM25) retrieval: text → list of index terms.

- ``"ko"``: Korean morphological analysis with Kiwi (``kiwipiepy``, which installs with its
  model), eojeol by eojeol: the text is split at whitespace, each eojeol holding Hangul is
  analysed on its own (once per process: a corpus repeats its eojeols, and an analysis is
  a hundred times slower than a look-up), any other follows the word rule below. Only
  content morphemes are kept — nouns (``NNG NNP NNB NR``), verb and adjective
  stems as their dictionary form (``VV VA`` → lemma, ``고쳐`` → ``고치다``), roots (``XR``),
  foreign words (``SL``), numbers (``SN``) and hanja (``SH``) — so particles and endings
  (``하자보수를`` / ``하자보수는``) do not keep a question from matching its chunk. Forms are
  NFKC-normalised and casefolded; a foreign word or number is split further with the
  word rule below, so both tokenisers give the same terms for the same Latin text.
- ``"de"``, ``"en"``: the word rule: NFKC, casefold, then maximal runs of digits with
  inner ``.``/``,`` separators (``3,000``, ``99.5``: kept whole, never re-read as another
  number) or of other word characters (``Gewährleistung``, ``per``). No stemming.
- ``"auto"`` (the BM25 default): Korean for a text that holds Hangul, the word rule
  otherwise (chosen per text, so a Korean question can match an English chunk's Latin
  words and numbers). An English or German set never needs kiwipiepy: the package is
  needed only once a text holds Hangul.

Every tokeniser is deterministic and returns terms in text order (duplicates kept: BM25
counts them). Kiwi's model is loaded on the first text holding Hangul (never for text
without it); when the package is missing the error
(:class:`~ragassay.errors.MissingPackage`, exit 2) gives the install line.
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


def word_tokens(text: str) -> list[str]:
    """The word rule: NFKC, casefold, then ``\\d+(?:[.,]\\d+)*`` or ``[^\\W\\d]+`` runs.

    ``"PER-001: 3,000명"`` → ``["per", "001", "3,000", "명"]``; empty text → ``[]``.
    """
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def has_hangul(text: str) -> bool:
    """True when the text holds a Hangul syllable or jamo."""
    return _HANGUL.search(text) is not None


def _kiwi_package() -> Any:
    # Importing the package is cheap; its model (about 500 MB, seconds to load) is loaded
    # by _kiwi on the first Hangul text only.
    try:
        import kiwipiepy
    except ImportError:
        from .errors import MissingPackage

        raise MissingPackage("pipeline.name: bm25", "kiwipiepy", "bm25",
                             "BM25 on Korean text (the Korean tokenizer)") from None
    return kiwipiepy


@lru_cache(maxsize=1)
def _kiwi() -> Any:
    # One analyser per process.
    return _kiwi_package().Kiwi()


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


# Terms of each eojeol analysed so far: a corpus repeats its eojeols far more often than
# Kiwi can analyse them (about 100 texts/s on a busy core). Bounded: it starts over.
_EOJEOL_TERMS: dict[str, tuple[str, ...]] = {}
_EOJEOL_MAX = 1 << 20


def _eojeol_terms(eojeols: Sequence[str]) -> list[tuple[str, ...]]:
    """The terms of each eojeol: Kiwi's content morphemes for one holding Hangul (each
    analysed once, all new ones in one call), the word rule otherwise."""
    cache = _EOJEOL_TERMS
    try:  # the usual case once a corpus is indexed: every eojeol seen before
        return [cache[e] for e in eojeols]
    except KeyError:
        pass
    if len(cache) >= _EOJEOL_MAX:  # start over
        cache.clear()
    new = [e for e in dict.fromkeys(eojeols) if e not in cache]
    korean = [e for e in new if has_hangul(e)]
    if korean:
        for e, toks in zip(korean, _kiwi().tokenize(korean), strict=True):
            cache[e] = tuple(_kiwi_terms(toks))
    for e in new:
        if e not in cache:
            cache[e] = tuple(word_tokens(e))
    return [cache[e] for e in eojeols]


def korean_tokens(text: str) -> list[str]:
    """Content morphemes of ``text`` by Kiwi (see the module docstring), eojeol by eojeol.

    ``"하자보수는 2년으로 하며"`` → ``["하자", "보수", "2", "년", "하다"]``. Raises
    ``ValueError`` naming the package when kiwipiepy is not installed.
    """
    return [t for terms in _eojeol_terms(text.split()) for t in terms]


def auto_tokens(text: str) -> list[str]:
    """:func:`korean_tokens` for a text holding Hangul, :func:`word_tokens` otherwise."""
    return korean_tokens(text) if has_hangul(text) else word_tokens(text)


def tokenizer_for(lang: str) -> Tokenizer:
    """The tokeniser for ``lang`` (``"ko"``, ``"de"``, ``"en"`` or ``"auto"``).

    Unknown ``lang`` → ``ValueError`` listing the known ones. ``"ko"`` checks at once that
    kiwipiepy can be loaded (:class:`~ragassay.errors.MissingPackage` otherwise), so a
    missing package is reported before any indexing starts; ``"auto"`` checks it on the
    first text holding Hangul (:func:`tokenize_all`: before indexing such a corpus).
    """
    if lang not in LANGS:
        raise ValueError(f"unknown tokenizer language {lang!r}; known: {', '.join(LANGS)}")
    if lang in ("de", "en"):
        return word_tokens
    if lang == "ko":
        _kiwi_package()
        return korean_tokens
    return auto_tokens


def tokenize_all(texts: Sequence[str], lang: str) -> list[list[str]]:
    """Tokenise many texts; the eojeols Kiwi has not seen yet go to it in one call.

    Gives exactly ``[tokenizer_for(lang)(t) for t in texts]``. Kiwi is loaded only when a
    text holds Hangul.
    """
    tokenizer_for(lang)  # checks lang (and the package for "ko")
    if lang in ("de", "en"):
        return [word_tokens(t) for t in texts]
    split = [t.split() if lang == "ko" or has_hangul(t) else None for t in texts]
    if any(s is not None for s in split):
        _kiwi_package()  # Korean text: the package, before any of it is analysed
    terms = iter(_eojeol_terms([e for eojeols in split if eojeols for e in eojeols]))
    return [word_tokens(t) if eojeols is None
            else [term for _ in eojeols for term in next(terms)]
            for t, eojeols in zip(texts, split, strict=True)]
