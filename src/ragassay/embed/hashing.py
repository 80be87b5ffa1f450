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
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
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


@lru_cache(maxsize=1 << 18)
def _word_hashes(word: str, lo: int, hi: int) -> np.ndarray:
    # Words repeat across a corpus far more than texts do: hashing once per word is the
    # main speed-up. The array is shared, so it is made read-only.
    arr = np.fromiter((feature_hash(f) for f in features(word, lo, hi)), dtype=np.uint64)
    arr.flags.writeable = False
    return arr


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
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = self._embed_one(text)
        return out

    def _embed_one(self, text: str) -> np.ndarray:
        counts = Counter(words(text))
        if not counts:
            return np.zeros(self.dimension, dtype=np.float64)
        lo, hi = self.ngram_range
        per_word = [_word_hashes(w, lo, hi) for w in counts]
        keys = np.concatenate(per_word)
        reps = np.repeat(np.fromiter(counts.values(), dtype=np.float64, count=len(counts)),
                         [len(h) for h in per_word])
        # Count each distinct feature over the whole text, then weight it once.
        uniq, inverse = np.unique(keys, return_inverse=True)
        weight = 1.0 + np.log(np.bincount(inverse, weights=reps))
        sign = np.where(uniq >> np.uint64(63), -1.0, 1.0)
        bucket = (uniq % np.uint64(self.dimension)).astype(np.intp)
        vec = np.bincount(bucket, weights=sign * weight, minlength=self.dimension)
        norm = float(np.linalg.norm(vec))
        return vec / norm if norm > 0 else vec
