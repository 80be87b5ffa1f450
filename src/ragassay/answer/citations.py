"""Citations a model writes, mapped back to chunk ids.

The answer prompt numbers its sources (``[1]``, ``[2]``, … each with its chunk id listed,
see :func:`ragassay.answer.prompt.build_prompt`). Real models then cite in several ways:
the number (``[1]``, ``[Source 1]``, ``[#1]``), the full id (``[doc::chunk-001]``) or the
id without its document (``[chunk-001]``). :func:`map_citation` maps one such marker to
the context chunk it names, and only when it names exactly one:

- the full chunk id of a context chunk;
- a source number ``n`` (``1 <= n <= len(context)``), bare or after a label word
  (``source``, ``src``, ``doc``, ``document``, ``quelle``, ``출처``, ``문서``, ``자료``;
  any case, an optional ``#`` or ``:``): the n-th context chunk;
- the part after ``::`` of a context chunk's id (``chunk-001``), case-insensitive.

When the interpretations name two different chunks (``[chunk-001]`` with
``a::chunk-001`` and ``b::chunk-001`` both in the context, or ``[2]`` when a chunk's id is
``2`` and it is not source 2), the marker is ambiguous and nothing is guessed. A marker
that maps to nothing is still a citation when it is shaped like one (a source number, an
id with ``::`` or a ``chunk-NNN``): it stays a citation, under the marker as written in
its brackets (``[4]``, ``[chunk-001]``) — an id no chunk has, so that the metrics fail it
as a source the model never saw (``source not in context: [4]``) and never take it for a
chunk. Any other bracket (``[sic]``, ``[Note]``) is text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from ..schema import Chunk, Citation

BRACKETS = re.compile(r"\[([^\[\]\n]+)\]")
"""One bracket of a reply (``[doc::chunk-001]``, ``[1, 2]``, ``[Source 1; Source 3]``: one or
more markers), its inside as group 1: the one pattern that finds inline markers, for the
citation parser here and for the answer metrics, which read the text without them."""
_SPLIT = re.compile(r"[,;]\s*|\s+(?:and|und|및|와|과)\s+", re.IGNORECASE)
_NUMBERED = re.compile(r"(?:(?:sources?|src|docs?|documents?|quelle|출처|문서|자료)\s*[#:]?\s*"
                       r"|#)?(\d+)", re.IGNORECASE)
_CHUNK_SHAPED = re.compile(r"::|\bchunk[-_ ]?\d+\b", re.IGNORECASE)
_ID_SPLIT = re.compile(r"[,;]\s*")
_TRAILING_NUMBER = re.compile(r"\d+$")


def inline_ids(text: str) -> list[str]:
    """The markers of a text's brackets as written (``[a, b]`` gives ``a`` and ``b``), in
    order; what each names is for the caller to decide."""
    return [part.strip() for m in BRACKETS.finditer(text)
            for part in _ID_SPLIT.split(m.group(1)) if part.strip()]


def id_stem(chunk_id: str) -> str:
    """A chunk id without its trailing number: ``versand-`` of ``versand-2``, ``a::chunk-``
    of ``a::chunk-001``; ``""`` for an id that is a number or ends in none."""
    stem = _TRAILING_NUMBER.sub("", chunk_id)
    return stem if stem != chunk_id else ""


def unknown_inline_ids(text: str, has: Callable[[str], bool], stems: Collection[str]
                       ) -> list[str]:
    """Inline markers that name a chunk id the evidence does not have, each once: a marker
    shaped like a chunk id (``::``, ``chunk-NNN``) or one that is an id of the evidence with
    another number (``[versand-99]`` where ids ``versand-1`` … exist: ``stems`` are the
    :func:`id_stem` of the known ids). Other brackets (``[1]``, ``[sic]``) are text."""
    out = [raw for raw in inline_ids(text) if not has(raw)
           and (_CHUNK_SHAPED.search(raw) or (id_stem(raw) and id_stem(raw) in stems))]
    return list(dict.fromkeys(out))


@dataclass(frozen=True)
class Mapped:
    """One marker of a reply: ``raw`` as the model wrote it (without brackets) and the
    chunk id it names (``None``: it names no context chunk, or more than one)."""

    raw: str
    chunk_id: str | None


def source_label(position: int) -> str:
    """The label of the source at 0-based ``position`` in the prompt: ``[1]``, ``[2]``, …"""
    return f"[{position + 1}]"


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).strip().strip("\"'`*").strip()


def map_citation(raw: str, context: Sequence[Chunk]) -> Mapped | None:
    """The context chunk that the marker ``raw`` (one id or label, without brackets) names,
    by the rules of the module docstring; ``None`` when ``raw`` is not shaped like a
    citation at all (ordinary bracketed text)."""
    text = _norm(raw)
    if not text:
        return None
    candidates: dict[str, None] = {}  # ordered set of the chunk ids ``text`` can name
    for chunk in context:
        if chunk.chunk_id == text:
            candidates[chunk.chunk_id] = None
    numbered = _NUMBERED.fullmatch(text)
    if numbered:
        n = int(numbered.group(1))
        if 1 <= n <= len(context):
            candidates[context[n - 1].chunk_id] = None
    folded = text.casefold()
    for chunk in context:
        _, sep, local = chunk.chunk_id.rpartition("::")
        if sep and local.casefold() == folded:
            candidates[chunk.chunk_id] = None
    if len(candidates) == 1:
        return Mapped(raw=raw.strip(), chunk_id=next(iter(candidates)))
    if len(candidates) > 1 or numbered or _CHUNK_SHAPED.search(text):
        return Mapped(raw=raw.strip(), chunk_id=None)  # ambiguous, or names no source
    return None


def reply_markers(text: str, context: Sequence[Chunk]) -> list[Mapped]:
    """Every citation marker of ``text`` in order of appearance (brackets split at ``,``
    ``;`` and ``and``), mapped with :func:`map_citation`; non-citation brackets left out."""
    out = []
    for bracket in BRACKETS.finditer(text):
        for part in _SPLIT.split(bracket.group(1)):
            mapped = map_citation(part, context)
            if mapped is not None:
                out.append(mapped)
    return out


def citations_of(markers: Sequence[Mapped], context: Sequence[Chunk]) -> list[Citation]:
    """The citations of a reply, in order of first appearance: one per cited chunk, with
    the chunk's first page when known and ``raw`` = the first marker that named it, and
    one per distinct unmapped marker, whose ``chunk_id`` is the marker as written in its
    brackets (``[4]``: no chunk's id, so the metrics count a source the answerer never
    saw, even when the marker's text is the id of a context chunk it cannot be told from)."""
    pages = {c.chunk_id: c.page_span[0] if c.page_span else None for c in context}
    seen: dict[str, Citation] = {}
    for m in markers:
        cid = m.chunk_id if m.chunk_id is not None else f"[{m.raw}]"
        if cid not in seen:
            seen[cid] = Citation(chunk_id=cid, page=pages.get(cid), raw=m.raw)
    return list(seen.values())
