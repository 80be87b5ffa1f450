"""A dependency-free, deterministic embedder: signed feature hashing of words and char n-grams.

    text → NFKC → casefold → words = re.findall(r"\\w+")
    features(word) = ["w:" + word] + char n-grams of " " + word + " " for n in lo..hi
    h = blake2b(feature, digest_size=8) as a little-endian uint64
    bucket = h mod dimension, sign = -1 if the top bit of h is set else +1
    v[bucket] += sign * (1 + ln count(feature))      (sublinear tf, per distinct feature)
    v = v / ||v||                                     (zero vector for text without words)

Char n-grams make it work without a tokenizer for Korean syllables, German compounds and
English inflections alike. The ":" prefix keeps word features apart from n-grams (n-grams
are made of word characters and spaces only). Hashes come from blake2b, never Python's
``hash()``, so vectors are identical on every machine and run.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import chain, pairwise
from operator import methodcaller
from typing import Any

import numpy as np

from .base import Embedder

_WORD = re.compile(r"\w+")


def features(word: str, lo: int, hi: int) -> list[str]:
    """The features of one (already normalised) word: itself, prefixed, then its n-grams."""
    padded = f" {word} "
    out = [f"w:{word}"]
    for n in range(lo, hi + 1):
        out.extend(padded[i : i + n] for i in range(len(padded) - n + 1))
    return out


_blake2b = partial(hashlib.blake2b, digest_size=8)
_digest = methodcaller("digest")


def _digests(feature_list: Iterable[str]) -> Iterator[bytes]:
    """Each feature's 8-byte blake2b digest of its UTF-8 bytes (the C loop of ``map``: no
    Python call per feature); :func:`feature_hash` is one of them read little-endian."""
    return map(_digest, map(_blake2b, map(str.encode, feature_list)))


def feature_hash(feature: str) -> int:
    """The 64-bit hash of a feature: blake2b, 8-byte digest, read little-endian."""
    return int.from_bytes(next(_digests([feature])), "little")


_BATCH = 256  # texts summed together
_CACHE_WORDS = 1 << 18  # words kept per n-gram range (then the look-up starts over)
_SHORT = 3  # n-grams up to this length are few and shared by many words: kept hashed
_CACHE_SHORT = 1 << 20  # short n-grams kept (likewise)


@dataclass
class _Hashes:
    """What is known of one n-gram range: each word's feature hashes, and the hashes of
    the short n-grams, as little-endian 8-byte digests (``words[w]``: one per feature)."""

    words: dict[str, bytes] = field(default_factory=dict)
    short: dict[str, bytes] = field(default_factory=dict)

    def learn(self, tokens: Sequence[Sequence[str]], lo: int, hi: int) -> None:
        """Add the feature hashes of the words of ``tokens`` not seen yet: the features of
        :func:`features`, cut for all new words in one pass per n. A short n-gram is hashed
        once per process (a few thousand 2-grams make up a corpus's half a million), a
        longer one whenever a new word brings it (most of them are new: a look-up would
        cost more than it saves)."""
        new = list(set(chain.from_iterable(tokens)).difference(self.words))
        if len(self.words) + len(new) > _CACHE_WORDS:  # start over
            self.words.clear()
            new = list(set(chain.from_iterable(tokens)))
        padded = [f" {w} " for w in new]
        sizes = np.fromiter(map(len, padded), dtype=np.intp, count=len(padded))
        per_word = [np.ones(len(padded), dtype=np.intp)]  # features per word, per kind
        parts = [b"".join(_digests([f"w:{w}" for w in new]))]
        for n in range(lo, hi + 1):
            grams = [p[i : i + n] for p in padded for i in range(len(p) - n + 1)]
            per_word.append(np.maximum(sizes - (n - 1), 0))
            parts.append(self._short_digests(grams) if n <= _SHORT
                         else b"".join(_digests(grams)))
        digests = np.frombuffer(b"".join(parts), dtype="<u8")
        # digests run kind by kind (word, then each n); regroup them word by word (a word's
        # features are summed as a set, so their order within the word does not matter)
        owner = np.concatenate([np.repeat(np.arange(len(padded)), c) for c in per_word])
        flat = digests[np.argsort(owner, kind="stable")].tobytes()
        ends = (np.cumsum(sum(per_word)) * 8).tolist()
        self.words.update(zip(new, (flat[a:b] for a, b in pairwise([0, *ends])), strict=True))

    def _short_digests(self, grams: list[str]) -> bytes:
        known = self.short
        if len(known) >= _CACHE_SHORT:  # start over
            known.clear()
        unseen = list(set(grams).difference(known))
        known.update(zip(unseen, _digests(unseen), strict=True))
        return b"".join(map(known.__getitem__, grams))


_CACHES: dict[tuple[int, int], _Hashes] = {}


def clear_cache() -> None:
    """Forget every hash kept (a benchmark starting cold, as a fresh build does)."""
    _CACHES.clear()


def words(text: str) -> list[str]:
    """Word tokens after NFKC and casefolding."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


class HashingEmbedder(Embedder):
    """Signed hashing of words and character n-grams (see the module docstring)."""

    name = "hashing"
    normalized = True

    def __init__(self, dimension: int = 1024,
                 ngram_range: tuple[int, int] | Sequence[int] = (2, 4)) -> None:
        lo, hi = (int(x) for x in ngram_range)
        if int(dimension) < 1:
            raise ValueError(f"dimension must be at least 1, got {dimension}")
        if not 1 <= lo <= hi:
            raise ValueError(f"ngram_range must be (lo, hi) with 1 <= lo <= hi, got "
                             f"{tuple(ngram_range)}")
        self.dimension = int(dimension)
        self.ngram_range = (lo, hi)
        self.model = f"hashing-char-{lo}-{hi}-d{self.dimension}"
        # Lists, not tuples: this is what index.json holds, so a reloaded record compares equal.
        self.params: dict[str, Any] = {"dimension": self.dimension, "ngram_range": [lo, hi]}

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        # A batch at once. Each word occurrence contributes its feature hashes, so a
        # feature's count in a text is the length of its run once the text's hashes are
        # sorted (a value sort per text: far cheaper than an argsort). The sums then run
        # in the same order as for one text alone (features ascending), so a vector does
        # not depend on the batch it was embedded in.
        if len(texts) > _BATCH:  # the float64 sums of a batch stay within _BATCH rows
            return np.concatenate([self.embed_documents(texts[i : i + _BATCH])
                                   for i in range(0, len(texts), _BATCH)])
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        lo, hi = self.ngram_range
        cache = _CACHES.setdefault((lo, hi), _Hashes())
        tokens = [words(t) for t in texts]
        join, get = b"".join, cache.words.__getitem__
        try:  # each text's hashes, word by word: a dict look-up per occurrence
            parts = [join(map(get, t)) for t in tokens]
        except KeyError:  # words not seen yet: learn them all, then look up again
            cache.learn(tokens, lo, hi)
            parts = [join(map(get, t)) for t in tokens]
        lengths = np.fromiter(map(len, parts), dtype=np.intp, count=len(parts)) // 8
        ends = np.cumsum(lengths)
        size = int(ends[-1]) if len(ends) else 0
        if not size:
            return out
        keys = np.frombuffer(join(parts), dtype="<u8").astype(np.uint64)
        bounds = ends.tolist()
        for a, b in pairwise([0, *bounds]):
            keys[a:b].sort()
        new_run = np.empty(size, dtype=bool)  # a feature's first occurrence in its text
        new_run[0] = True
        np.not_equal(keys[1:], keys[:-1], out=new_run[1:])
        new_run[ends[:-1][lengths[1:] > 0]] = True  # a text's first feature
        first = np.flatnonzero(new_run)
        uniq = keys[first]
        # Count each distinct feature over its whole text, then weight it once.
        weight = 1.0 + np.log(np.diff(first, append=size).astype(np.float64))
        np.negative(weight, out=weight, where=uniq.view(np.int64) < 0)  # the sign: top bit
        dim = np.uint64(self.dimension)
        bucket = (uniq & (dim - np.uint64(1)) if not self.dimension & (self.dimension - 1)
                  else uniq % dim).view(np.intp)  # below 2**63: the same values
        distinct = np.diff(np.searchsorted(first, ends), prepend=0)  # per text
        bucket += np.repeat(np.arange(0, len(texts) * self.dimension, self.dimension,
                                      dtype=np.intp), distinct)  # the text's row
        flat = np.bincount(bucket, weights=weight, minlength=len(texts) * self.dimension)
        rows = flat.reshape(len(texts), self.dimension)
        # ||v|| as np.linalg.norm takes it (a dot product per row, so the same bits), the
        # division for the whole batch at once; a text without words keeps its zero vector
        norms = np.sqrt([row.dot(row) for row in rows])
        norms[norms == 0] = 1.0
        out[:] = rows / norms[:, None]
        return out
