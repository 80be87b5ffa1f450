"""A system's request and reply: the request template filled in, the reply read into a
:class:`~ragassay.schema.Prediction` (our predictions format, docs/formats.md).

The reply (docs/system.md): ``answer`` (a text, or ``{text, status?, citations?}``),
``retrieved`` or ``contexts`` (a list of texts, or of ``{text, chunk_id?, doc_id?, page?,
score?}``), optional ``citations`` (1-based indexes into the contexts, context ids,
``[n]`` markers, or quoted texts), ``usage`` ``{prompt_tokens, completion_tokens}``,
``latency_ms`` and ``system_version``. Every part is found by its path
(:class:`~ragassay.system.config.ReplyPaths`). Without ``status``, the answer is read as
the LLM answerer's reply is (:func:`ragassay.answer.llm.parse_reply`): an honest decline
is ``insufficient``, and ``[1]``-style markers in its text are citations when the reply
gives none. A reply without an answer text is malformed (the call is retried once, then
the question is not measured); a part of the wrong shape is dropped and said in the
prediction's ``metadata.reply_notes``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from ..answer.llm import parse_reply
from ..endpoint import Malformed
from ..schema import Answer, Chunk, Citation, Prediction, RetrievedChunk, Usage
from ..text import fold_text
from .config import ReplyPaths

_MISSING = object()
STATUSES = ("supported", "insufficient", "abstained")


def fill_request(template: dict[str, Any] | None, question_id: str, question: str,
                 top_k: int) -> dict[str, Any]:
    """The request body: ``{question_id, question, top_k}``, or ``template`` with its
    placeholders replaced (plain replacement: braces of the question stay as written)."""
    if template is None:
        return {"question_id": question_id, "question": question, "top_k": top_k}
    values = {"{question_id}": question_id, "{question}": question, "{top_k}": str(top_k)}

    def fill(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: fill(v) for k, v in node.items()}
        if isinstance(node, list):
            return [fill(v) for v in node]
        if isinstance(node, str):
            if node == "{top_k}":
                return top_k
            for key, value in values.items():
                node = node.replace(key, value)
        return node
    return dict(fill(template))


def at_path(body: Any, path: str) -> Any:
    """The value at dotted ``path`` in ``body`` (a digit part indexes a list); a sentinel
    (not ``None``: a JSON null is a value) when any step is missing."""
    node = body
    for part in path.split(".") if path else []:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
    return node


def _first(item: dict[str, Any], keys: Sequence[str]) -> Any:
    for key in keys:
        if key in item and item[key] is not None:
            return item[key]
    return None


def _contexts(raw: Any, paths: ReplyPaths, notes: list[str]) -> list[RetrievedChunk]:
    if raw is _MISSING or raw is None:
        return []
    if not isinstance(raw, list):
        notes.append("contexts: not a list, dropped")
        return []
    out: list[RetrievedChunk] = []
    for i, item in enumerate(raw):
        data: dict[str, Any]
        if isinstance(item, str):
            data = {"text": item}
        elif isinstance(item, dict):
            data = {"text": _first(item, paths.text), "chunk_id": _first(item, paths.chunk_id),
                    "doc_id": _first(item, paths.doc_id), "page": _first(item, paths.page),
                    "score": _first(item, paths.score)}
            for key in ("chunk_id", "doc_id"):
                if data[key] is not None and not isinstance(data[key], str):
                    data[key] = str(data[key])
            if not isinstance(data["page"], int) or isinstance(data["page"], bool) \
                    or data["page"] < 1:
                data["page"] = None
            if isinstance(data["score"], bool) or not isinstance(data["score"], int | float):
                data["score"] = None
            data = {k: v for k, v in data.items() if v is not None}
        else:
            notes.append(f"contexts.{i}: neither a text nor an object, dropped")
            continue
        if not data.get("text") and not data.get("chunk_id"):
            notes.append(f"contexts.{i}: no text and no id, dropped")
            continue
        try:
            out.append(RetrievedChunk.model_validate(data))
        except ValidationError:
            notes.append(f"contexts.{i}: unreadable, dropped")
    return out


def _citation(raw: Any, hits: Sequence[RetrievedChunk], ids: Sequence[str]) -> Citation | None:
    """One citation: a 1-based index, an id of a hit, a ``[n]`` marker, or a text that one
    hit holds (the first); a text no hit holds is kept as a citation of no context."""
    if isinstance(raw, dict):
        page = raw.get("page") if isinstance(raw.get("page"), int) else None
        inner = raw.get("chunk_id", raw.get("index", raw.get("text")))
        cit = _citation(inner, hits, ids)
        return None if cit is None else cit.model_copy(update={"page": page})
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        if 1 <= raw <= len(ids):
            return Citation(chunk_id=ids[raw - 1], raw=str(raw))
        return Citation(chunk_id=f"[{raw}]", raw=str(raw))  # a source it never returned
    if not isinstance(raw, str) or not raw.strip():
        return None
    value = raw.strip()
    if value in ids:
        return Citation(chunk_id=value)
    bare = value.strip("[]").strip()
    if bare.isdigit():
        return _citation(int(bare), hits, ids)
    needle = fold_text(value)
    for hit, cid in zip(hits, ids, strict=True):
        if hit.text is not None and needle and needle in fold_text(hit.text):
            return Citation(chunk_id=cid, raw=value[:80])
    return Citation(chunk_id=value[:80] if "::" in value else f"[{value[:40]}]", raw=value[:80])


def _usage(raw: Any, notes: list[str]) -> Usage | None:
    if raw is _MISSING or raw is None:
        return None
    if isinstance(raw, dict):
        try:
            return Usage(prompt_tokens=raw.get("prompt_tokens", 0),
                         completion_tokens=raw.get("completion_tokens", 0), source="reported")
        except ValidationError:
            pass
    notes.append("usage: not two token counts (integers >= 0), dropped")
    return None


def read_reply(body: Any, paths: ReplyPaths, question_id: str,
               decline_phrases: Sequence[str], measured_ms: float | None = None
               ) -> Prediction:
    """The prediction a reply ``body`` (parsed JSON, or what a callable returned) stands
    for (see the module docstring). ``measured_ms``: the call's time, the prediction's
    ``latency_ms`` when the reply reports none. Raises :class:`Malformed` without an
    answer text."""
    notes: list[str] = []
    answer = at_path(body, paths.answer)
    status: Any = None
    given_cites: Any = at_path(body, paths.citations)
    if isinstance(answer, dict):
        status = answer.get("status")
        if "citations" in answer:
            given_cites = answer["citations"]
        answer = answer.get("text")
    if not isinstance(answer, str):
        raise Malformed(f"the reply has no answer text at {paths.answer!r}")
    if paths.contexts is not None:
        raw_contexts = at_path(body, paths.contexts)
    else:
        raw_contexts = at_path(body, "retrieved")
        if raw_contexts is _MISSING:
            raw_contexts = at_path(body, "contexts")
    hits = _contexts(raw_contexts, paths, notes)
    # the ids the hits get in the prediction: their own, else "#n" (Prediction's rule)
    ids = [h.chunk_id or f"#{i}" for i, h in enumerate(hits, 1)]
    chunks = [Chunk(chunk_id=cid, doc_id="", text=h.text or "") for h, cid in
              zip(hits, ids, strict=True)]
    parsed = parse_reply(answer, chunks, decline_phrases)
    citations = parsed.citations
    if isinstance(given_cites, list):
        citations = [c for raw in given_cites if (c := _citation(raw, hits, ids)) is not None]
    elif given_cites is not _MISSING and given_cites is not None:
        notes.append("citations: not a list, dropped")
    if status not in STATUSES:
        if status is not None:
            notes.append(f"answer.status {status!r}: not one of {', '.join(STATUSES)}")
        status = parsed.status
    latency = at_path(body, paths.latency_ms)
    latency_ms: Any = measured_ms if measured_ms is None else {"system": measured_ms}
    if isinstance(latency, int | float) and not isinstance(latency, bool) and latency >= 0 \
            and latency < float("inf"):
        latency_ms = {"system": float(latency)}
    usage = _usage(at_path(body, paths.usage), notes)
    metadata: dict[str, Any] = {}
    version = at_path(body, paths.system_version)
    if isinstance(version, str | int | float) and not isinstance(version, bool):
        metadata["system_version"] = str(version)
    if notes:
        metadata["reply_notes"] = notes
    return Prediction(question_id=question_id, retrieved=hits,
                      answer=Answer(text=answer, status=status, citations=citations),
                      usage=usage, latency_ms=latency_ms,
                      metadata=metadata)
