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
from collections.abc import Sequence
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


def feature_hash(feature: str) -> int:
    """The 64-bit hash of a feature: blake2b, 8-byte digest, read little-endian."""
    return int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(),
                          "little")


_EMPTY = np.empty(0, dtype=np.uint64)
_BATCH = 256  # texts summed together
_CACHE_WORDS = 1 << 18  # words kept per n-gram range (then the look-up starts over)
_CACHES: dict[tuple[int, int], dict[str, np.ndarray]] = {}


def word_hashes(word: str, lo: int, hi: int) -> np.ndarray:
    """The feature hashes of one (normalised) word, from a look-up per n-gram range.

    Words repeat across a corpus far more than texts do: hashing once per word is the main
    speed-up. The arrays are shared, so they are read-only.
    """
    cache = _CACHES.setdefault((lo, hi), {})
    arr = cache.get(word)
    if arr is None:
        if len(cache) >= _CACHE_WORDS:
            cache.clear()
        arr = np.fromiter((feature_hash(f) for f in features(word, lo, hi)), dtype=np.uint64)
        arr.flags.writeable = False
        cache[word] = arr
    return arr


def clear_cache() -> None:
    """Forget every word's hashes (a benchmark starting cold, as a fresh build does)."""
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
        cache = _CACHES.setdefault((lo, hi), {})
        parts: list[np.ndarray] = []
        for text in texts:
            tokens = words(text)
            try:  # a plain dict look-up per occurrence; a miss goes through word_hashes
                hashes = [cache[w] for w in tokens]
            except KeyError:
                hashes = [word_hashes(w, lo, hi) for w in tokens]
            text_keys = np.concatenate(hashes) if hashes else _EMPTY.copy()
            text_keys.sort()
            parts.append(text_keys)
        lengths = np.fromiter((len(p) for p in parts), dtype=np.intp, count=len(parts))
        ends = np.cumsum(lengths)
        size = int(ends[-1]) if len(ends) else 0
        if not size:
            return out
        keys = np.concatenate(parts)
        new_run = np.empty(size, dtype=bool)  # a feature's first occurrence in its text
        new_run[0] = True
        np.not_equal(keys[1:], keys[:-1], out=new_run[1:])
        new_run[ends[:-1][lengths[1:] > 0]] = True  # a text's first feature
        first = np.flatnonzero(new_run)
        uniq = keys[first]
        text_of = np.searchsorted(ends, first, side="right")
        # Count each distinct feature over its whole text, then weight it once.
        weight = 1.0 + np.log(np.diff(first, append=size).astype(np.float64))
        weight[uniq >> np.uint64(63) == 1] *= -1.0  # the sign
        dim = np.uint64(self.dimension)
        mask = dim - np.uint64(1)
        bucket = (uniq & mask if not self.dimension & (self.dimension - 1) else uniq % dim)
        flat = np.bincount(text_of * self.dimension + bucket.astype(np.intp), weights=weight,
                           minlength=len(texts) * self.dimension)
        for row, vec in enumerate(flat.reshape(len(texts), self.dimension)):
            norm = float(np.linalg.norm(vec))
            out[row] = vec / norm if norm > 0 else vec
        return out
