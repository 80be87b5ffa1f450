"""The system under test, called as it runs: over HTTP or as a Python callable.

Named in the config (``system:``) or by ``ragassay run --system URL|package.module:function``
(docs/system.md). Each question is sent as ``{question_id, question, top_k}`` (or a
configured template); the reply (``answer``, ``retrieved``/``contexts`` as ids or texts,
``citations``, ``usage``, ``latency_ms``, ``system_version``) becomes a prediction in our
format, scored like any other (:mod:`ragassay.contexts` places the gold in returned texts).
The run folder keeps the predictions (``predictions.jsonl``) and the system's identity
(``system.json``), so ``ragassay run --predictions RUN/predictions.jsonl`` scores the same
replies again without calling.

- :mod:`.config` — :class:`SystemConfig`, :class:`ReplyPaths`;
- :mod:`.reply` — the request template, reading a reply into a prediction;
- :mod:`.callers` — :class:`HttpSystem` (the one HTTP client), :class:`PythonSystem`;
- :mod:`.run` — :func:`ask_all`: concurrency, run deadline, cache, progress.

Adapters for LangChain and LlamaIndex: :mod:`ragassay.integrations`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .callers import HttpSystem, PythonSystem, load_callable, open_system
    from .config import ReplyPaths, SystemConfig
    from .reply import at_path, fill_request, read_reply
    from .run import ask_all

# Each name is imported from its module when first asked for: a config reads `system:`
# through .config alone, and a run without a system under test never loads the callers
# (asyncio, the reply reader), 0.03 s of every run's start.
_HOME = {"HttpSystem": "callers", "PythonSystem": "callers", "load_callable": "callers",
         "open_system": "callers", "ReplyPaths": "config", "SystemConfig": "config",
         "at_path": "reply", "fill_request": "reply", "read_reply": "reply", "ask_all": "run"}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_HOME[name]}", __name__), name)
    globals()[name] = value  # asked once
    return value


__all__ = ["HttpSystem", "PythonSystem", "ReplyPaths", "SystemConfig", "ask_all", "at_path",
           "fill_request", "load_callable", "open_system", "read_reply"]
