"""The fast load of cl100k_base against tiktoken's own (``tiktoken.get_encoding``): the
same vocabulary, pattern and special tokens, and the same tokens on seeded generated
texts and on tricky hand-written ones."""

from __future__ import annotations

import random

import pytest

from ragassay.answer.vocabulary import load_encoding, load_encoding_reference

TRICKY = ["", " ", "\n", "\n\n", " \n ", "Hello world", "don't WE'LL they'Re", "12345678",
          "3.14159", "Ärger über Öl", "계약 기간은 3년간", "<|endoftext|>", "a  b\t\tc\r\n",
          "😀 emoji 🇩🇪", "[1] doc::chunk-001 (page 3)\ntext\n\n", "ﬁ ligature", "\u200b"]
ALPHABET = list("abcdefghijXYZ0123456789 \n\t.,;:'\"!?-[]()äöüß계약기간€%😀")


@pytest.fixture(scope="module")
def encodings():
    return load_encoding(), load_encoding_reference()


def test_same_vocabulary(encodings):
    fast, ref = encodings
    assert fast.name == ref.name
    assert fast._pat_str == ref._pat_str
    assert fast._special_tokens == ref._special_tokens
    assert fast._mergeable_ranks == ref._mergeable_ranks
    assert fast.n_vocab == ref.n_vocab


@pytest.mark.parametrize("text", TRICKY)
def test_same_tokens_tricky(encodings, text):
    fast, ref = encodings
    assert (fast.encode(text, disallowed_special=())
            == ref.encode(text, disallowed_special=()))


def test_same_tokens_generated(encodings):
    fast, ref = encodings
    rng = random.Random(20261202)
    for _ in range(500):
        text = "".join(rng.choices(ALPHABET, k=rng.randint(0, 80)))
        assert (fast.encode(text, disallowed_special=())
                == ref.encode(text, disallowed_special=()))


@pytest.mark.parametrize("text", TRICKY)
def test_ordinary_encoding_is_encoding_without_special_checks(encodings, text):
    fast, _ = encodings  # what prompt.count_tokens relies on
    assert fast.encode_ordinary(text) == fast.encode(text, disallowed_special=())


def test_unexpected_file_falls_back_to_tiktoken(monkeypatch, encodings):
    from ragassay.answer import vocabulary

    monkeypatch.setattr(vocabulary, "_SHA256", "0" * 64)  # as if the bundled file changed
    _, ref = encodings
    assert vocabulary.load_encoding().encode_ordinary("Hello world") == ref.encode_ordinary(
        "Hello world")
