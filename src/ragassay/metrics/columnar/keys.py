"""Ids as 64-bit keys: hashes of (query, document) pairs and of ids, runs of equal ids, and
the repeated rows of a table they find."""

from __future__ import annotations

from typing import Protocol

import numpy as np


def pair_hash(qid: np.ndarray, docid: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each (qid, docid) pair of ``S`` arrays; equal pairs hash equal,
    whatever the arrays' widths (multiples of 8): all-zero words, the padding, are skipped."""
    with np.errstate(over="ignore"):
        h = np.full(len(qid), 0x9E3779B97F4A7C15, dtype=np.uint64)
        for ids, salt in ((qid, 0x100000001B3), (docid, 0xC2B2AE3D27D4EB4F)):
            words = np.ascontiguousarray(ids).view(np.uint64).reshape(
                len(ids), ids.dtype.itemsize // 8)  # (also with no row)
            for col in words.T:
                mixed = (h ^ col) * np.uint64(salt)
                h = np.where(col != 0, mixed ^ (mixed >> np.uint64(29)), h)
            h = (h ^ (h >> np.uint64(31))) * np.uint64(0xFF51AFD7ED558CCD)  # ends the qid
    return h


class Rows(Protocol):
    """What :func:`duplicate_rows` reads of a table (:class:`.reader.Table` has it)."""

    @property
    def pairs(self) -> np.ndarray: ...
    @property
    def qid(self) -> np.ndarray: ...
    @property
    def docid(self) -> np.ndarray: ...
    def __len__(self) -> int: ...


def duplicate_rows(t: Rows) -> np.ndarray:
    """Indices of the rows of ``t`` that repeat the (qid, docid) of an earlier row."""
    if len(t) < 2:
        return np.array([], dtype=np.int64)
    h = t.pairs
    ordered = np.sort(h)
    if not bool((ordered[1:] == ordered[:-1]).any()):
        return np.array([], dtype=np.int64)  # the usual case, found without an argsort
    order = np.argsort(h, kind="stable")
    hs = h[order]
    same = np.flatnonzero(hs[1:] == hs[:-1])
    a, b = order[same], order[same + 1]
    if bool(((t.qid[a] == t.qid[b]) & (t.docid[a] == t.docid[b])).all()):
        return b  # stable: b is the later row of each equal pair
    pairs = np.char.add(np.char.add(t.qid.astype(bytes), b"\0"), t.docid.astype(bytes))
    _, first = np.unique(pairs, return_index=True)  # a hash collision: compare the bytes
    later = np.ones(len(t), dtype=bool)
    later[first] = False
    return np.flatnonzero(later)




def run_blocks(ids: np.ndarray) -> np.ndarray:
    """The first row of each run of equal ids (rows of one query usually come together).
    Ids of 4 or 8 bytes' multiples (``S``, ``U``, numbers) are compared as 32- or 64-bit
    words, several times faster than numpy's string comparison; equal bytes are equal ids
    (and two blocks of equal ids that differ in their bytes, as 0.0 and -0.0, are two)."""
    n = len(ids)
    if n == 0:
        return np.array([], dtype=np.int64)
    size = ids.dtype.itemsize
    if ids.dtype.kind in "SUiufb" and size and size % 4 == 0:
        word = np.uint64 if size % 8 == 0 else np.uint32
        words = np.ascontiguousarray(ids).view(word).reshape(n, -1)
        change = words[1:, 0] != words[:-1, 0]
        for j in range(1, words.shape[1]):
            change |= words[1:, j] != words[:-1, j]
    else:
        change = ids[1:] != ids[:-1]
    return np.concatenate(([0], np.flatnonzero(change) + 1))


_WORD_SALT = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                       0xD6E8FEB86659FD93, 0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53,
                       0x27D4EB2F165667C5, 0x94D049BB133111EB], dtype=np.uint64)


def id_hash(ids: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each id of an ``S`` array whose width is a multiple of 8: the sum of
    its 64-bit words, each times an odd constant (modulo 2**64), whose high bits depend on
    every bit of the id. Equal ids hash equal whatever the widths (the zero words of the
    padding add 0); unequal ids rarely do, and every use compares the ids of equal hashes."""
    h = np.zeros(len(ids), dtype=np.uint64)
    if not len(ids):
        return h
    words = np.ascontiguousarray(ids).view(np.uint64).reshape(len(ids), -1)
    step = 1 << 16  # rows per round: the product stays in cache
    product = np.empty(min(step, len(ids)), dtype=np.uint64)
    for lo in range(0, len(ids), step):
        part, tmp = h[lo:lo + step], product[:min(step, len(ids) - lo)]
        for j in range(words.shape[1]):
            salt = _WORD_SALT[j % len(_WORD_SALT)] + np.uint64(2 * (j // len(_WORD_SALT)))
            np.multiply(words[lo:lo + step, j], salt, out=tmp)  # uint64 wraps silently
            part += tmp
    return h

