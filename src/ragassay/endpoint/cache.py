"""The on-disk cache of chat replies: request keys (sha256 of the payload) and entry files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..atomic import write_text

CACHE_VERSION = 2  # 2: the endpoint and the served model are part of the key


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 kept: the same value always gives the same text."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def cache_key(payload: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of ``payload``: what identifies a reply — the client
    puts in the endpoint (redacted base URL), the served model as the server describes it,
    and the request (model, messages, temperature, max_tokens and any other parameter)."""
    return hashlib.sha256(canonical_json({"v": CACHE_VERSION, **payload}).encode()).hexdigest()


def key_endpoint(shown_url: str, served_model: list[dict[str, Any]] | None) -> str | None:
    """The endpoint part of a cache key: ``None`` when the served model names its own
    content (an id with ``@sha256:``, as ``ragassay serve-local`` reports it), so that the
    same model file restarted on another port keeps its cache; else the redacted URL."""
    if served_model and all("@sha256:" in str(e.get("id", "")) for e in served_model):
        return None
    return shown_url


def cache_file(cache_dir: Path | None, key: str) -> Path | None:
    """The file holding the cached reply for ``key`` (``None`` without a cache)."""
    return None if cache_dir is None else cache_dir / f"{key}.json"


def read_entry(path: Path | None) -> dict[str, Any] | None:
    """The cached entry in ``path``; ``None`` when there is none or it cannot be used."""
    if path is None or not path.is_file():
        return None
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # unreadable entry: ask again and overwrite it
    if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
        return None
    return entry


def write_entry(path: Path | None, entry: dict[str, Any]) -> None:
    """Store ``entry`` in ``path`` (nothing without a cache)."""
    if path is None:
        return
    # Temp file + rename: an interrupted run leaves complete entries or none.
    write_text(path, canonical_json(entry))
