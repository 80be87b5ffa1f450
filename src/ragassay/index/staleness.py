"""Whether an index is still up to date: its build fingerprint and :func:`index_status`.

``build.fingerprint`` summarises everything the index was built from (sources, chunking,
embedder, loader version), so a changed input is noticed without re-reading the index's
documents.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..embed import embedder_difference, get_embedder
from ..errors import InputError
from ..ingest import INGEST_VERSION, STRATEGY, file_sha256, scan_sources
from ..store import Index
from .format import EMBEDDINGS, INDEX_JSON, load_index


def fingerprint(sources: Sequence[tuple[str, str]], chunking: dict[str, Any],
                embedding: dict[str, Any]) -> str:
    """sha256 of what an index is built from, as canonical JSON.

    Covers :data:`ragassay.ingest.INGEST_VERSION`, the sorted distinct
    ``(source_path, sha256)`` of the source files, the chunking parameters and the
    embedder's backend, model and params.
    """
    payload = {
        "ingest_version": INGEST_VERSION,
        "sources": sorted({(p, h) for p, h in sources}),
        "chunking": chunking,
        "embedder": {k: embedding[k] for k in ("backend", "model", "params")},
    }
    blob = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def chunking_params(chunk_size: int, overlap: int) -> dict[str, Any]:
    """The ``build.chunking`` record of an index."""
    return {"strategy": STRATEGY, "chunk_size": chunk_size, "overlap": overlap}


def index_status(
    index_dir: str | Path,
    source_dir: str | Path,
    *,
    chunk_size: int,
    overlap: int,
    embedder: str,
    embedder_params: dict[str, Any] | None = None,
    index: Index | None = None,
) -> str | None:
    """``None`` when the index loads and was built from these sources and parameters.

    Pass ``index`` when it is already loaded (from ``index_dir``) to avoid reading it twice.

    Otherwise a short reason, checked in this order: ``"missing"``, ``"unreadable: ..."``,
    ``"embedder changed"``, ``"chunking changed"``, ``"source changed: a.md, b.pdf"``
    (modified, added or removed files, at most 3 named), ``"source unreadable: ..."``, or
    ``"built by another loader version"``. Sources are compared by file hash, not parsed.
    """
    folder = Path(index_dir)
    if index is None:
        if not (folder / INDEX_JSON).exists() and not (folder / EMBEDDINGS).exists():
            return "missing"
        try:
            index = load_index(folder)
        except InputError as exc:
            return f"unreadable: {exc}"
    emb = get_embedder(embedder, **(embedder_params or {}))
    if embedder_difference(index.meta["embedding"], emb) is not None:
        return "embedder changed"
    # Through JSON, as the recorded params were: tuples become lists, keys strings.
    want = json.loads(json.dumps(emb.describe()))
    chunking = chunking_params(chunk_size, overlap)
    if index.meta["build"]["chunking"] != chunking:
        return "chunking changed"
    try:
        scan = scan_sources(source_dir)
        current = {rel: file_sha256(Path(source_dir) / rel) for rel in scan.files}
    except (InputError, OSError) as exc:
        return f"source unreadable: {exc}"
    recorded = {d.source_path: d.sha256 for d in index.documents}
    changed = sorted(p for p in current.keys() | recorded.keys()
                     if current.get(p) != recorded.get(p))
    if changed:
        more = f" (+{len(changed) - 3} more)" if len(changed) > 3 else ""
        return f"source changed: {', '.join(changed[:3])}{more}"
    if fingerprint(list(current.items()), chunking, want) != index.meta["build"]["fingerprint"]:
        return "built by another loader version"
    return None
