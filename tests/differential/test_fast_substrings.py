"""The substring look-ups against reading every text, on seeded generated texts: a needle
found in the joined text (the first needles), by its inner words' postings (three or more
words) or by the words ending / beginning with its pieces (two words) must give exactly
the rows a scan gives."""

from __future__ import annotations

import random

import pytest

from ragassay import substrings
from ragassay.substrings import SubstringIndex

VOCAB = ["tamuzono", "te", "ga", "ta", "si", "ku", "ab", "abc", "bca", "ca", "a", "b",
         "하자보수", "기간은", "12개월", "개월", "Frist", "frist", "\U0010ffff", "x\U0010ffff"]


def _texts(rng: random.Random) -> list[str]:
    texts = [" ".join(rng.choice(VOCAB) for _ in range(rng.randint(0, 14)))
             for _ in range(rng.randint(1, 120))]
    return texts + ["", " ", "ab  ca", " ab", "ga ga ga"]


def _needle(rng: random.Random, texts: list[str]) -> str:
    source = rng.choice(texts)
    kind = rng.random()
    if source and kind < 0.6:  # a piece cut anywhere, across words
        i = rng.randrange(len(source))
        return source[i : i + rng.randint(1, 40)]
    if kind < 0.8:  # whole words, maybe in no text
        return " ".join(rng.choice(VOCAB + ["nowhere"]) for _ in range(rng.randint(1, 5)))
    return rng.choice(["", " ", "  ", "\0", "a\0b", " ga", "ga ", "ga  ga", " ga ga "])


@pytest.mark.parametrize("find_first", [0, 5, 10**9])
@pytest.mark.parametrize("seed", range(3))
def test_rows_with_equals_the_scan(seed: int, find_first: int,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(substrings, "FIND_FIRST", find_first)
    rng = random.Random(seed)
    for _ in range(6):
        texts = _texts(rng)
        look = SubstringIndex(texts)
        for _ in range(300):
            needle = _needle(rng, texts)
            assert look.rows_with(needle) == look.rows_with_reference(needle), (needle, texts)


def test_the_hand_checked_cases() -> None:
    look = SubstringIndex(["the cat sat", "a cat", "bobcat sat down", "sat"])
    for _ in range(substrings.FIND_FIRST + 1):  # past the finds, into the look-ups
        assert look.rows_with("cat sat") == [0, 2]  # "bobcat": the first piece ends a word
    assert look.rows_with("the cat sat") == [0]  # by the inner word "cat"
    assert look.rows_with("a dog sat") == []  # an inner word no text has
    assert look.rows_with("at s") == [0, 2]  # pieces of words on both sides
    assert look.rows_with(" sat") == [0, 2]  # an empty first piece says nothing
