"""Adapters: a LangChain or LlamaIndex pipeline as a system under test.

Each adapter turns the framework's object into a callable for ``--system
package.module:function`` (:mod:`ragassay.system`): it takes the request
``{question_id, question, top_k}`` and returns the documented reply, with the pipeline's
retrieved documents (or source nodes) as contexts given by their text.

- :mod:`.langchain` — :func:`~ragassay.integrations.langchain.from_retriever` (a retriever,
  and optionally an LLM or chat model to answer) and
  :func:`~ragassay.integrations.langchain.from_chain` (a runnable chain that returns its
  answer and its context documents);
- :mod:`.llamaindex` — :func:`~ragassay.integrations.llamaindex.from_query_engine` (its
  response's ``source_nodes`` become the contexts).

Each needs its framework (the ``langchain`` / ``llamaindex`` extras), imported when the
adapter is built; ragassay itself never imports them.
"""

from __future__ import annotations

from typing import Any


def context_of(text: str, metadata: dict[str, Any] | None, score: float | None
               ) -> dict[str, Any]:
    """One context of a reply: the text, and what the framework's metadata says of it —
    ``chunk_id`` (or ``id``), ``doc_id`` (or ``source``, ``file_name``), ``page`` (an
    integer, or ``page_label`` digits) — and the score when the framework has one. A
    framework's random node or document ids are not used: they change on every run."""
    meta = metadata or {}
    out: dict[str, Any] = {"text": text}
    for key in ("chunk_id", "id"):
        if isinstance(meta.get(key), str | int):
            out["chunk_id"] = str(meta[key])
            break
    for key in ("doc_id", "source", "file_name"):
        if isinstance(meta.get(key), str | int):
            out["doc_id"] = str(meta[key])
            break
    page = meta.get("page", meta.get("page_label"))
    if isinstance(page, str) and page.isdigit():
        page = int(page)
    if isinstance(page, int) and not isinstance(page, bool) and page >= 1:
        out["page"] = page
    if isinstance(score, int | float) and not isinstance(score, bool):
        out["score"] = float(score)
    return out


def missing_extra(package: str, extra: str) -> Exception:
    """The error for a framework that is not installed: bad setup (exit 2), with the line
    that installs it."""
    from ..errors import InputError

    return InputError("--system", f"the {extra} adapter needs {package}: pip install "
                      f"'{package}' (or install ragassay with its [{extra}] extra)")
