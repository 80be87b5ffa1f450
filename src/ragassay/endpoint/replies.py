"""Reading the endpoint's replies: chat text and usage, embedding vectors, malformed bodies."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import httpx


class Malformed(Exception):
    """The server answered 200 with a body we cannot use."""


def parse_chat(body: Any) -> tuple[str, dict[str, int] | None, str | None]:
    try:
        content = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise Malformed("the reply has no choices[0].message.content") from None
    if not isinstance(content, str):
        raise Malformed("choices[0].message.content is not a string")
    usage = body.get("usage")
    tokens: dict[str, int] | None = None
    if isinstance(usage, dict) and all(
        isinstance(usage.get(k), int) for k in ("prompt_tokens", "completion_tokens")
    ):
        tokens = {"prompt_tokens": usage["prompt_tokens"],
                  "completion_tokens": usage["completion_tokens"]}
    model = body.get("model")
    return content, tokens, model if isinstance(model, str) else None


def parse_embeddings(body: Any, n: int) -> np.ndarray:
    try:
        data = body["data"]
        # Servers may answer out of order; "index" says which input a vector belongs to.
        rows = sorted(data, key=lambda d: d.get("index", 0)) if all(
            isinstance(d, dict) and "index" in d for d in data) else list(data)
        vectors = [row["embedding"] for row in rows]
    except (KeyError, TypeError, AttributeError):
        raise Malformed("the reply has no data[i].embedding") from None
    if len(vectors) != n:
        raise Malformed(f"asked for {n} embeddings, got {len(vectors)}")
    try:
        arr = np.asarray(vectors, dtype=np.float32)
    except (ValueError, TypeError):
        raise Malformed("embeddings are not equal-length lists of numbers") from None
    if arr.ndim != 2:
        raise Malformed("embeddings are not equal-length lists of numbers")
    return arr


def json_body(resp: httpx.Response) -> Any:
    try:
        return resp.json()
    except ValueError:
        raise Malformed(f"not JSON: {snippet(resp.text)}") from None


def snippet(text: str, limit: int = 200) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[:limit] + "…"
