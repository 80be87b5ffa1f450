"""Calling a system under test: over HTTP (the one client) or as a Python callable.

Both take one request (``{question_id, question, top_k}``, or the configured template)
and give one :class:`~ragassay.schema.Prediction` or raise
:class:`~ragassay.endpoint.EndpointError` (the question is then not measured).

- :class:`HttpSystem` POSTs the request to the configured URL through
  :class:`~ragassay.endpoint.Transport`: timeouts from the request's start, retries with
  backoff and ``Retry-After``, fail fast, a size limit, credentials from ``api_key_env``
  and redacted errors.
- :class:`PythonSystem` calls ``package.module:function`` with the request dict; the
  function may be ``async``. It runs in the run's worker threads, each ``async`` call on
  its own event loop, limited by ``timeout_s`` (a plain function cannot be stopped from
  outside: its own time is not limited). An exception it raises fails that question
  only; it is not retried (a function is not a network).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import inspect
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..endpoint import EndpointError, Malformed, Transport
from ..errors import InputError
from ..schema import Prediction
from .config import SystemConfig
from .reply import read_reply


class HttpSystem(Transport):
    """A system behind a URL (see the module docstring)."""

    def __init__(self, cfg: SystemConfig, decline_phrases: Sequence[str], *,
                 sleep: Callable[[float], None] | None = None) -> None:
        assert cfg.url is not None  # SystemConfig has one target
        super().__init__(cfg, cfg.url, sleep=sleep)
        self.cfg = cfg
        self.decline_phrases = tuple(decline_phrases)

    def identity(self) -> dict[str, Any]:
        """What names this system in the run and in the cache: the redacted URL, the
        request template and the reply paths."""
        return {"kind": "http", "url": self.shown_url, "request": self.cfg.request,
                "reply": self.cfg.reply.model_dump()}

    def ask(self, request: dict[str, Any], question_id: str, key: str) -> Prediction:
        t0 = time.perf_counter()

        def parse(body: Any) -> Prediction:
            return read_reply(body, self.cfg.reply, question_id, self.decline_phrases,
                              (time.perf_counter() - t0) * 1000)
        return self.post_json("", request, key, parse)


def load_callable(target: str, field: str = "system.callable") -> Callable[..., Any]:
    """``package.module:function`` imported from the working folder (first) or an installed
    package; a missing module or attribute is an :class:`InputError` naming ``field``."""
    module_name, _, name = target.partition(":")
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(field, f"cannot import {module_name!r} ({exc}): run from the folder "
                         "that holds it, or install its package") from None
    fn = getattr(module, name, None)
    if fn is None or not callable(fn):
        raise InputError(field, f"{module_name!r} has no callable {name!r}")
    return fn


def _source_sha256(fn: Callable[..., Any], module: str | None) -> str | None:
    """sha256 of the file of ``module`` (the one the target names: an adapter's callable
    is defined elsewhere, but configured there), else of ``fn``'s own source file."""
    path = getattr(sys.modules.get(module or ""), "__file__", None)
    if not path:
        try:
            path = inspect.getsourcefile(fn) or inspect.getsourcefile(type(fn))
        except TypeError:
            return None
    if not path or not Path(path).is_file():
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class PythonSystem:
    """A system that is a Python callable (see the module docstring)."""

    def __init__(self, cfg: SystemConfig, decline_phrases: Sequence[str],
                 fn: Callable[..., Any] | None = None) -> None:
        assert cfg.callable is not None or fn is not None
        self.cfg = cfg
        self.fn = fn if fn is not None else load_callable(str(cfg.callable))
        self.decline_phrases = tuple(decline_phrases)
        self.unreachable: str | None = None

    def identity(self) -> dict[str, Any]:
        """The callable's name and its module file's sha256 (a changed file is another
        system, also for the cache: what the file builds, e.g. an index, is not seen),
        with the reply paths."""
        return {"kind": "python", "callable": self.cfg.callable or getattr(
                    self.fn, "__qualname__", type(self.fn).__qualname__),
                "source_sha256": _source_sha256(self.fn, (self.cfg.callable or "")
                                                .partition(":")[0]),
                "reply": self.cfg.reply.model_dump()}

    def ask(self, request: dict[str, Any], question_id: str, key: str) -> Prediction:
        t0 = time.perf_counter()
        try:
            out = self.fn(request)
            if inspect.isawaitable(out):
                out = asyncio.run(_bounded(out, self.cfg.timeout_s))
        except TimeoutError:
            raise EndpointError(f"{self.cfg.target}: no reply within "
                                f"{self.cfg.timeout_s:g} s") from None
        except Exception as exc:  # the system's own failure: this question is not measured
            raise EndpointError(f"{self.cfg.target} raised {type(exc).__name__}: {exc}"
                                ) from exc
        ms = (time.perf_counter() - t0) * 1000
        try:
            return read_reply(out, self.cfg.reply, question_id, self.decline_phrases, ms)
        except Malformed as exc:
            raise EndpointError(f"{self.cfg.target} returned {exc}") from None

    def close(self) -> None:
        """Nothing to close (the same interface as :class:`HttpSystem`)."""


async def _bounded(awaitable: Any, timeout_s: float) -> Any:
    return await asyncio.wait_for(awaitable, timeout_s)


def open_system(cfg: SystemConfig, decline_phrases: Sequence[str]) -> HttpSystem | PythonSystem:
    """The caller of the configured system."""
    if cfg.url is not None:
        return HttpSystem(cfg, decline_phrases)
    return PythonSystem(cfg, decline_phrases)
