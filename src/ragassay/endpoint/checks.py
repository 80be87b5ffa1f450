"""Pre-run checks of an endpoint: the API key variable is set, something answers at the URL.

Before a run, :func:`check_endpoint` refuses a named but unset key variable and an address
where nothing answers (:class:`ragassay.errors.InputError`), so that neither is discovered
question by question after the retrieval work.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError
from .config import CallConfig, EndpointConfig
from .redact import MASK, redact_text, redact_url, url_secrets
from .transport import plain_url, request_headers

PROBE_TIMEOUT_S = 5.0


def check_api_key(cfg: CallConfig, *, what: str, path: str | Path = "config") -> None:
    """Refuse a named key variable that is unset or empty, before any work:
    :class:`InputError` on field ``{what}.api_key_env`` (``what`` is the config section,
    ``answerer``, ``judge`` or ``system``; ``path`` the config file)."""
    name = cfg.api_key_env
    if name is None:
        return
    value = os.environ.get(name)
    if not value:
        state = "is not set" if value is None else "is empty"
        raise InputError(path, f"environment variable {name} {state}; export {name}=<key>, "
                         f"or remove {what}.api_key_env for a server without a key",
                         field=f"{what}.api_key_env")


def probe_endpoint(cfg: EndpointConfig, *, what: str, path: str | Path = "config",
                   timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """One ``GET {base_url}/models`` with a short timeout (the smaller of ``timeout_s`` and
    the config's): any HTTP reply, whatever its status (404, 401, 500 …), means something
    answers — llama.cpp server, vLLM, Ollama and hosted APIs all serve the route, others
    answer 404. A connection that is refused, does not open within the timeout, or
    breaks before a reply (no HTTP there) is :class:`InputError` on ``{what}.base_url``
    naming the redacted URL. A slow reply (read timeout) is not an error: something is
    listening, and the run's own timeouts and retries deal with slowness."""
    import httpx

    url = plain_url(cfg.base_url, "/models")
    shown = redact_url(cfg.base_url)
    key = os.environ.get(cfg.api_key_env) if cfg.api_key_env else None
    headers = request_headers(key, cfg.base_url)
    limit = min(timeout_s, cfg.timeout_s)
    try:
        with httpx.Client(headers=headers, trust_env=False, timeout=limit) as http:
            with http.stream("GET", url):
                pass  # the status is enough: the body is not read
    except (httpx.ReadTimeout, httpx.WriteTimeout, httpx.PoolTimeout):
        return
    except (httpx.TransportError, httpx.InvalidURL) as exc:
        if isinstance(exc, httpx.ConnectTimeout):
            why = f"no connection within {limit:g} s"
        else:
            detail = redact_text(str(exc))
            for secret in url_secrets(cfg.base_url):
                if len(secret) >= 4:
                    detail = detail.replace(secret, MASK)
            why = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
        raise InputError(path, f"nothing answers at {shown}: start the server or fix "
                         f"base_url ({why})", field=f"{what}.base_url") from None


def check_endpoint(cfg: EndpointConfig, *, what: str, path: str | Path = "config",
                   probe: bool = True) -> None:
    """Everything that can be known about an endpoint before a run: the key variable
    (:func:`check_api_key`), then, with ``probe``, that something answers at ``base_url``
    (:func:`probe_endpoint`). Raises :class:`InputError` (exit 2) naming the field."""
    check_api_key(cfg, what=what, path=path)
    if probe:
        probe_endpoint(cfg, what=what, path=path)
