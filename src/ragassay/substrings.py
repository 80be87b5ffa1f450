"""Which of many texts hold a piece of text: word look-ups that find the texts holding a
substring, or most like it, without reading every text (gold anchoring's search,
:mod:`ragassay.anchor`)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from functools import partial
from itertools import accumulate

# Needles of several words found in the joined text before the word look-ups are built: the
# look-ups cost as much as a few hundred finds (each a pass over every text), so texts asked
# a handful of times never build them, and texts asked thousands of times lose little.
FIND_FIRST = 32


class SubstringIndex:
    """Texts searched for needles (one per row), with look-ups built on first use: each
    space-separated word → the rows holding it; the distinct words sorted, and sorted by
    their reversed spelling, to find the words beginning or ending with a piece; and all
    texts joined by NUL with each row's start offset. :meth:`rows_with` finds the rows
    holding a needle as a substring without reading every text."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self._words: dict[str, list[int]] | None = None
        self._affixes: tuple[_Affixes, _Affixes] | None = None
        self._joined: tuple[str, list[int]] | None = None
        self._found = 0  # needles found in the joined text before the look-ups are built

    def words(self) -> dict[str, list[int]]:
        if self._words is None:
            words: dict[str, list[int]] = {}
            get = words.get
            for row, text in enumerate(self.texts):
                for w in set(text.split(" ")):
                    rows = get(w)
                    if rows is None:
                        words[w] = [row]
                    else:
                        rows.append(row)
            self._words = words
        return self._words

    def affixes(self) -> tuple[_Affixes, _Affixes]:
        """The look-ups of words by their beginning and by their end."""
        if self._affixes is None:
            words = self.words()
            self._affixes = (_Affixes(words), _Affixes(words, reverse=True))
        return self._affixes

    def joined(self) -> tuple[str, list[int]]:
        if self._joined is None:
            starts, at = [], 0
            for text in self.texts:
                starts.append(at)
                at += len(text) + 1
            self._joined = ("\0".join(self.texts), starts)
        return self._joined

    def rows_with(self, needle: str) -> list[int]:
        """The rows whose text holds ``needle``, ascending.

        A needle of three or more words: a text holding it holds each inner word as a whole
        word, so only the rows holding the rarest of them, then the others while they stay
        selective, are checked. Two words: a text holding them holds a word ending with the
        first and one beginning with the second, found the same way. A single word: every
        occurrence in the joined text, one per row. A needle holding the separator (or none
        at all, or only spaces): every row checked. Until the look-ups are built (the
        :data:`FIND_FIRST` first needles), every needle is found in the joined text.
        """
        if not needle or "\0" in needle:
            return [r for r, t in enumerate(self.texts) if needle in t]
        parts = needle.split(" ")
        if len(parts) == 1 or (self._words is None and self._found < FIND_FIRST):
            self._found += 1
            return self._rows_in_joined(needle)
        words = self.words()
        inner = set(parts[1:-1])
        if inner:
            postings = []
            for w in inner:
                rows_of = words.get(w)
                if rows_of is None:
                    return []  # a word no text has: no row
                postings.append(rows_of)
            postings.sort(key=len)
            rows = set(postings[0])
            for more in postings[1:]:
                if len(rows) * 8 < len(more):  # reading the few texts costs less than this
                    break
                rows.intersection_update(more)
            return sorted(r for r in rows if needle in self.texts[r])
        return self._rows_by_affixes(needle, parts[0], parts[-1])

    def _rows_by_affixes(self, needle: str, first: str, last: str) -> list[int]:
        """The rows holding a two-word needle: by the words ending with its first piece
        and those beginning with its last (an empty piece says nothing)."""
        starts_with, ends_with = self.affixes()
        # (how many rows at most, the rows): the postings of every word ending with the
        # first piece / beginning with the last one
        sets: list[tuple[int, Callable[[], Iterable[int]]]] = [
            (affix.size(piece), partial(affix.rows, piece))
            for affix, piece in ((ends_with, first), (starts_with, last)) if piece]
        if not sets:
            return [r for r, t in enumerate(self.texts) if needle in t]
        sets.sort(key=lambda x: x[0])
        rows = set(sets[0][1]())
        for size, getter in sets[1:]:
            if len(rows) * 8 < size:  # reading the few texts costs less than this
                break
            rows.intersection_update(getter())
        return sorted(r for r in rows if needle in self.texts[r])

    def rows_with_reference(self, needle: str) -> list[int]:
        """:meth:`rows_with` by reading every text (the plain version)."""
        return [r for r, t in enumerate(self.texts) if needle in t]

    def _rows_in_joined(self, needle: str) -> list[int]:
        text, starts = self.joined()
        out: list[int] = []
        at = text.find(needle)
        while at >= 0:
            row = bisect_right(starts, at) - 1
            out.append(row)
            if row + 1 >= len(starts):
                break
            at = text.find(needle, starts[row + 1])
        return out

    def nearest(self, needle: str, n: int) -> list[tuple[int, float]]:
        """The ``n`` rows most like ``needle`` with their similarity, best first (ties in
        row order); rows sharing no word with it are never listed.

        similarity = |bigrams(needle) ∩ bigrams(text)| / |bigrams(needle)|, the share of the
        needle's character bigrams (spaces dropped) found in the text, rounded to 3 places:
        1.0 when every piece of a claim stands somewhere in the chunk, so a reworded or
        re-numbered claim scores high. Only the rows sharing the most words with the needle
        are scored (at most ``50·n``), and words held by more than a tenth of the rows are
        not counted unless the needle has no other, so a label costs its rare words'
        postings, not every row.
        """
        words = self.words()
        needle_words = [w for w in set(needle.split(" ")) if w in words]
        common = max(len(self.texts) // 10, 10)
        rare = [w for w in needle_words if len(words[w]) <= common] or needle_words
        hits: dict[int, int] = {}
        for w in rare:
            for row in words[w]:
                hits[row] = hits.get(row, 0) + 1
        if not hits:
            return []
        grams = _bigrams(needle)
        if not grams:
            return []
        pool = sorted(hits, key=lambda r: (-hits[r], r))[: 50 * n]
        scored = []
        for r in pool:
            squeezed = self.texts[r].replace(" ", "")
            scored.append((r, round(sum(g in squeezed for g in grams) / len(grams), 3)))
        return sorted(scored, key=lambda x: (-x[1], x[0]))[:n]


def _bigrams(text: str) -> set[str]:
    squeezed = text.replace(" ", "")
    return {squeezed[i:i + 2] for i in range(len(squeezed) - 1)} or ({squeezed} if squeezed
                                                                       else set())


class _Affixes:
    """The distinct words of some texts sorted by their spelling (or, ``reverse``, by their
    reversed spelling), so that the words beginning (ending) with a piece are one range,
    found by bisection, with the running count of their rows to size it without reading it."""

    def __init__(self, postings: dict[str, list[int]], *, reverse: bool = False) -> None:
        self.reverse, self.postings = reverse, postings
        self.keys = sorted(w[::-1] for w in postings) if reverse else sorted(postings)
        self.words = [k[::-1] for k in self.keys] if reverse else self.keys
        self.counts = [0, *accumulate(len(postings[w]) for w in self.words)]

    def _range(self, piece: str) -> tuple[int, int]:
        key = piece[::-1] if self.reverse else piece
        lo = bisect_left(self.keys, key)
        # The first string after every one beginning with ``key``: its last character
        # raised by one (characters at the top of Unicode dropped first).
        top = key.rstrip("\U0010ffff")
        if not top:
            return lo, len(self.keys)
        return lo, bisect_left(self.keys, top[:-1] + chr(ord(top[-1]) + 1), lo)

    def size(self, piece: str) -> int:
        """An upper bound of the rows holding a word with this beginning (end)."""
        lo, hi = self._range(piece)
        return self.counts[hi] - self.counts[lo]

    def rows(self, piece: str) -> set[int]:
        lo, hi = self._range(piece)
        return {r for w in self.words[lo:hi] for r in self.postings[w]}
