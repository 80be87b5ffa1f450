"""What a server says about itself: the model it serves and how many requests it handles.

Two optional routes, each asked at most once per client, with a short timeout, and only
when needed:

- ``GET {base_url}/models`` (every OpenAI-compatible server): the served model's entry,
  part of the cache key so that another model behind the same name and address (llama.cpp
  serves whatever file it was started with, whatever ``model`` the request names) never
  gets the previous model's replies;
- ``GET /props`` (llama.cpp server, at the root beside ``/v1``): ``total_slots``, the
  number of requests it works on at once, the default ``concurrency``.

A server that does not serve a route (404), answers garbage or does not answer in time
tells nothing: ``None``, never an error — the run's own calls find out whether it works.
"""

from __future__ import annotations

import json
import os
from typing import Any

from .config import EndpointConfig
from .transport import plain_url, request_headers

INFO_TIMEOUT_S = 5.0
# Fields of a /models entry that change between two identical requests (llama.cpp sends
# the time of the request as "created").
_VOLATILE = frozenset({"created"})


def fetch_json(cfg: EndpointConfig, url: str, timeout_s: float = INFO_TIMEOUT_S) -> Any:
    """The JSON body of ``GET url`` (with the config's credentials, if any); ``None`` on
    any failure: no connection, a timeout (the smaller of ``timeout_s`` and the config's), a
    status other than 200, a body that is not JSON or longer than ``max_reply_bytes``."""
    import httpx

    key = os.environ.get(cfg.api_key_env) if cfg.api_key_env else None
    headers = request_headers(key, cfg.base_url)
    try:
        with httpx.Client(headers=headers, trust_env=False,
                          timeout=min(timeout_s, cfg.timeout_s)) as http:
            with http.stream("GET", plain_url(url)) as resp:
                if resp.status_code != 200:
                    return None
                body = bytearray()
                for piece in resp.iter_bytes():
                    body += piece
                    if len(body) > cfg.max_reply_bytes:
                        return None
        return json.loads(body)
    except (httpx.HTTPError, ValueError):
        return None


def model_identity(body: Any, model: str) -> list[dict[str, Any]] | None:
    """What a ``/models`` reply says about the served model: the entries of ``data`` whose
    ``id`` is ``model`` — or, when none is (llama.cpp names its model by the file it
    loaded), every entry — without volatile fields, sorted. ``None`` for a reply without a
    ``data`` list of objects."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        return None
    named = [e for e in data if e.get("id") == model] or data
    entries = [{k: v for k, v in e.items() if k not in _VOLATILE} for e in named]
    return sorted(entries, key=lambda e: str(e.get("id")))


def props_urls(base_url: str) -> list[str]:
    """Where ``/props`` may be: beside ``/v1`` (llama.cpp), then under ``base_url`` (a
    query string of ``base_url`` is left out: llama.cpp's routes take none)."""
    base_url = plain_url(base_url)
    base_url = base_url.partition("?")[0]
    root = base_url[: -len("/v1")] if base_url.endswith("/v1") else None
    return [u + "/props" for u in (root, base_url) if u]


def total_slots(body: Any) -> int | None:
    """``total_slots`` of a llama.cpp ``/props`` reply when it is an integer ≥ 1."""
    slots = body.get("total_slots") if isinstance(body, dict) else None
    if isinstance(slots, int) and not isinstance(slots, bool) and slots >= 1:
        return slots
    return None
