"""Build, save, load and verify an index: ``index.json`` + ``embeddings.npy`` in one folder.

``index.json`` = ``{schema_version, embedding: {backend, model, dimension, normalized,
params, sha256}, build: {source_dir, chunking: {strategy, chunk_size, overlap},
num_documents, num_chunks, fingerprint, skipped}, documents: [...], chunks: [...]}``;
``embeddings.npy`` is float32 with row i = ``chunks[i]``; ``embedding.sha256`` is the
sha256 of its bytes, so a sidecar from another build is caught on load.

No timestamps: rebuilding the same input gives byte-identical files. ``build.fingerprint``
summarises everything the index was built from (sources, chunking, embedder, loader
version), so :func:`index_status` can tell whether it is still up to date.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import secrets
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .embed import Embedder, get_embedder
from .ingest import (
    INGEST_VERSION,
    STRATEGY,
    SUPPORTED_EXTENSIONS,
    check_chunking,
    chunk_document,
    file_sha256,
    load_documents,
    scan_sources,
)
from .schema import SCHEMA_VERSION, Chunk, Document, InputError, read_jsonl
from .vector import ApproximateSearch, ExactSearch, ann_recall

INDEX_JSON = "index.json"
EMBEDDINGS = "embeddings.npy"
_REBUILD = "rebuild with `ragassay index`"


@dataclass
class Index:
    """A loaded index; look-ups by id are dictionary look-ups built once."""

    path: Path
    meta: dict[str, Any]
    documents: list[Document]
    chunks: list[Chunk]
    embeddings: np.ndarray
    _positions: dict[str, int] = field(init=False, repr=False)
    _documents: dict[str, Document] = field(init=False, repr=False)
    _by_doc: dict[str, list[Chunk]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._positions = {c.chunk_id: i for i, c in enumerate(self.chunks)}
        if len(self._positions) != len(self.chunks):
            raise ValueError("duplicate chunk_id in index")
        self._documents = {d.doc_id: d for d in self.documents}
        by_doc: dict[str, list[Chunk]] = {}
        for c in self.chunks:
            by_doc.setdefault(c.doc_id, []).append(c)
        # Stable sort: ties in seq keep index order.
        self._by_doc = {k: sorted(v, key=lambda c: c.seq) for k, v in by_doc.items()}

    def chunk(self, chunk_id: str) -> Chunk:
        """The chunk with this id (``KeyError`` when absent)."""
        return self.chunks[self._positions[chunk_id]]

    def position(self, chunk_id: str) -> int:
        """Row of the chunk in ``chunks`` and ``embeddings`` (``KeyError`` when absent)."""
        return self._positions[chunk_id]

    def has(self, chunk_id: str) -> bool:
        return chunk_id in self._positions

    def document(self, doc_id: str) -> Document:
        """The document with this id (``KeyError`` when absent)."""
        return self._documents[doc_id]

    def has_document(self, doc_id: str) -> bool:
        return doc_id in self._documents

    def chunks_of(self, doc_id: str) -> list[Chunk]:
        """The document's chunks in ``seq`` order (empty for an unknown document)."""
        return list(self._by_doc.get(doc_id, []))


# --- fingerprint ---------------------------------------------------------------------


def fingerprint(sources: Sequence[tuple[str, str]], chunking: dict[str, Any],
                embedding: dict[str, Any]) -> str:
    """sha256 of what an index is built from, as canonical JSON.

    Covers :data:`INGEST_VERSION`, the sorted distinct ``(source_path, sha256)`` of the
    source files, the chunking parameters and the embedder's backend, model and params.
    """
    payload = {
        "ingest_version": INGEST_VERSION,
        "sources": sorted({(p, h) for p, h in sources}),
        "chunking": chunking,
        "embedder": {k: embedding[k] for k in ("backend", "model", "params")},
    }
    blob = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _chunking(chunk_size: int, overlap: int) -> dict[str, Any]:
    return {"strategy": STRATEGY, "chunk_size": chunk_size, "overlap": overlap}


# --- build ---------------------------------------------------------------------------


def build_index(
    source_dir: str | Path,
    out_dir: str | Path,
    *,
    chunk_size: int = 400,
    overlap: int = 80,
    embedder: str = "hashing",
    embedder_params: dict[str, Any] | None = None,
    batch_size: int = 256,
    progress: bool = True,
) -> Index:
    """Load → chunk → embed (in batches) → write the index, replacing ``out_dir`` atomically.

    The files are written to a temporary sibling folder, synced, then swapped in: on any
    failure the previous index stays as it was and the temporary folder is removed. An
    existing ``out_dir`` holding anything but the two index files is refused, so nothing
    is deleted silently; so is an ``out_dir`` inside ``source_dir`` (it would be indexed).
    """
    check_chunking(chunk_size, overlap)
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    source, out = Path(source_dir), Path(out_dir)
    emb = get_embedder(embedder, **(embedder_params or {}))
    _check_out_dir(source, out)

    loaded = load_documents(source)
    if not loaded:
        raise InputError(source, f"no supported documents ({' '.join(SUPPORTED_EXTENSIONS)})")
    documents = [d.document for d in loaded]
    chunks = [c for d in loaded for c in chunk_document(d, chunk_size=chunk_size,
                                                          overlap=overlap)]
    vectors = embed_chunks(emb, [c.text for c in chunks], batch_size=batch_size,
                           progress=progress)

    chunking = _chunking(chunk_size, overlap)
    embedding = emb.describe()
    npy = _npy_bytes(vectors)
    embedding["sha256"] = hashlib.sha256(npy).hexdigest()
    meta: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "embedding": embedding,
        "build": {
            "source_dir": source.as_posix(),
            "chunking": chunking,
            "num_documents": len(documents),
            "num_chunks": len(chunks),
            "fingerprint": fingerprint([(d.source_path, d.sha256) for d in documents],
                                       chunking, embedding),
            "skipped": scan_sources(source).skipped,
        },
    }
    if len(chunks) >= ANN_THRESHOLD:
        meta["search"] = measure_search(vectors)
    record = {**meta,
              "documents": [d.model_dump(mode="json") for d in documents],
              "chunks": [c.model_dump(mode="json") for c in chunks]}
    _write_atomically(out, {
        INDEX_JSON: (json.dumps(record, ensure_ascii=False, indent=1) + "\n").encode("utf-8"),
        EMBEDDINGS: npy,
    })
    return Index(path=out, meta=meta, documents=documents, chunks=chunks, embeddings=vectors)


# From this many chunks on, dense search is approximate (HNSW). Measured on 2 cores with
# 384-dim vectors: exact search costs 1.6 ms a query at 100k chunks while the HNSW graph
# takes about 70 s to build (it is rebuilt when a run loads the index), so below about a
# million chunks exact search is both exact and faster for question sets of any usual size.
ANN_THRESHOLD = 1_000_000


def measure_search(vectors: np.ndarray, *, k: int = 10, sample: int = 200,
                   seed: int = 0) -> dict[str, Any]:
    """The approximate search used for a large index, and its recall@k against exact search
    (recorded in `index.json`). Queries are a fixed sample of the index's vectors with
    seeded noise added, so that a query is not simply its own nearest neighbour."""
    approx = ApproximateSearch(vectors)
    rows = np.linspace(0, len(vectors) - 1, num=min(sample, len(vectors))).astype(np.int64)
    noise = np.random.default_rng(seed).normal(0, 0.05, (len(rows), vectors.shape[1]))
    queries = (vectors[rows] + noise).astype(np.float32)
    queries /= np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
    recall = ann_recall(ExactSearch(vectors), approx, queries, k)
    return {**approx.describe(), f"recall_at_{k}_vs_exact": recall, "recall_queries": len(rows),
            "threshold": ANN_THRESHOLD}


def embed_chunks(embedder: Embedder, texts: Sequence[str], *, batch_size: int = 256,
                 progress: bool = False) -> np.ndarray:
    """Embed texts in batches into one float32 ``(n, dimension)`` array.

    With ``progress``, a progress bar is drawn on stderr.
    """
    out = np.zeros((len(texts), embedder.dimension), dtype=np.float32)
    bar = None
    if progress:
        from rich.console import Console
        from rich.progress import Progress

        bar = Progress(console=Console(stderr=True), transient=True)
        task = bar.add_task(f"embedding ({embedder.model})", total=len(texts))
        bar.start()
    try:
        for start in range(0, len(texts), batch_size):
            batch = texts[start : start + batch_size]
            vecs = np.asarray(embedder.embed_documents(batch))
            if vecs.shape != (len(batch), embedder.dimension):
                raise ValueError(f"embedder {embedder.name!r} returned shape {vecs.shape} for "
                                 f"{len(batch)} texts; expected ({len(batch)}, "
                                 f"{embedder.dimension})")
            out[start : start + len(batch)] = vecs
            if bar is not None:
                bar.advance(task, len(batch))
    finally:
        if bar is not None:
            bar.stop()
    return out


def _check_out_dir(source: Path, out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise InputError(out, "index folder path exists and is not a folder")
    if out.is_dir():
        other = sorted(p.name for p in out.iterdir() if p.name not in (INDEX_JSON, EMBEDDINGS))
        if other:
            raise InputError(out, f"index folder holds other files ({', '.join(other[:5])}"
                             f"{', ...' if len(other) > 5 else ''}); they would be lost on "
                             "rebuild: move them away or choose another --out folder")
    if source.is_dir() and out.resolve().is_relative_to(source.resolve()):
        raise InputError(out, f"the index folder is inside the source folder {source}; its "
                         "index.json would be read as a document: choose another --out folder")


def _npy_bytes(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array, dtype=np.float32), allow_pickle=False)
    return buf.getvalue()


def _write_synced(path: Path, data: bytes) -> None:
    with path.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _sync_dir(path: Path) -> None:
    # Makes the renames durable; not possible on every platform (Windows), hence optional.
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_atomically(out: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` into a fresh temp sibling of ``out``, then swap it into place.

    The swap renames the old folder aside, renames the new one in and deletes the old one;
    if the second rename fails, the old folder is renamed back.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_hex(4)
    tmp = out.parent / f".{out.name}.tmp-{token}"
    old = out.parent / f".{out.name}.old-{token}"
    tmp.mkdir()
    try:
        for name, data in files.items():
            _write_synced(tmp / name, data)
        _sync_dir(tmp)
        moved_aside = out.exists()
        if moved_aside:
            os.rename(out, old)
        try:
            os.rename(tmp, out)
        except BaseException:
            if moved_aside:
                os.rename(old, out)
            raise
        _sync_dir(out.parent)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(old, ignore_errors=True)


# --- load and verify -----------------------------------------------------------------


def load_index(index_dir: str | Path) -> Index:
    """Read and verify an index folder.

    Raises :class:`InputError` naming the file (and field) when: a file is missing;
    ``index.json`` is malformed, of another schema version, or has an invalid record
    (``chunks.17.text``) or a duplicate id; ``embeddings.npy`` is unreadable, not float32,
    has a row count other than the number of chunks or a width other than
    ``embedding.dimension``, or is not the file this build wrote (sha256).
    """
    folder = Path(index_dir)
    meta_path, npy_path = folder / INDEX_JSON, folder / EMBEDDINGS
    for p in (meta_path, npy_path):
        if not p.is_file():
            raise InputError(p, "file not found; build the index with `ragassay index`")
    meta, documents, chunks = _read_index_json(meta_path)
    embeddings = _read_embeddings(npy_path, meta["embedding"], len(chunks))
    return Index(path=folder, meta=meta, documents=documents, chunks=chunks,
                 embeddings=embeddings)


def _read_index_json(path: Path) -> tuple[dict[str, Any], list[Document], list[Chunk]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(path, f"malformed JSON ({exc.msg}, column {exc.colno}); {_REBUILD}",
                         line=exc.lineno) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot read file ({exc}); {_REBUILD}") from None
    if not isinstance(data, dict):
        raise InputError(path, f"expected a JSON object; {_REBUILD}")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise InputError(path, f"schema_version {version!r} is not supported (expected "
                         f"{SCHEMA_VERSION}); {_REBUILD}", field="schema_version")
    embedding = _require(path, data, "embedding", dict)
    for key, kind in (("backend", str), ("model", str), ("dimension", int),
                      ("normalized", bool), ("params", dict), ("sha256", str)):
        _require(path, embedding, key, kind, prefix="embedding.")
    build = _require(path, data, "build", dict)
    _require(path, build, "chunking", dict, prefix="build.")
    _require(path, build, "fingerprint", str, prefix="build.")
    documents = _records(path, data, "documents", Document, "doc_id")
    chunks = _records(path, data, "chunks", Chunk, "chunk_id")
    known = {d.doc_id for d in documents}
    for i, c in enumerate(chunks):
        if c.doc_id not in known:
            raise InputError(path, f"chunk {c.chunk_id!r} belongs to unknown document "
                             f"{c.doc_id!r}; {_REBUILD}", field=f"chunks.{i}.doc_id")
    meta = {k: v for k, v in data.items() if k not in ("documents", "chunks")}
    return meta, documents, chunks


def _require(path: Path, record: dict[str, Any], key: str, kind: type,
             prefix: str = "") -> Any:
    value = record.get(key)
    if value is None:
        raise InputError(path, f"missing required field; {_REBUILD}", field=prefix + key)
    # bool is an int in Python; a dimension of `true` is still wrong.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise InputError(path, f"expected {kind.__name__}, got {type(value).__name__}; "
                         f"{_REBUILD}", field=prefix + key)
    return value


def _records(path: Path, data: dict[str, Any], key: str, model: type[BaseModel],
             id_field: str) -> list[Any]:
    items = _require(path, data, key, list)
    out: list[Any] = []
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise InputError(path, f"expected an object, got {type(item).__name__}",
                             field=f"{key}.{i}")
        try:
            rec = model.model_validate(item)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err.get("loc", ()))
            raise InputError(path, f"{err.get('msg', 'invalid value')}; {_REBUILD}",
                             field=f"{key}.{i}.{loc}" if loc else f"{key}.{i}") from None
        ident = getattr(rec, id_field)
        if ident in first:
            raise InputError(path, f"duplicate {id_field} {ident!r} (also {key}.{first[ident]})"
                             f"; {_REBUILD}", field=f"{key}.{i}.{id_field}")
        first[ident] = i
        out.append(rec)
    return out


def _read_embeddings(path: Path, embedding: dict[str, Any], num_chunks: int) -> np.ndarray:
    data = path.read_bytes()
    try:
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise InputError(path, f"not a readable .npy array ({exc}); {_REBUILD}") from None
    if array.ndim != 2:
        raise InputError(path, f"expected a 2-d array, got shape {array.shape}; {_REBUILD}")
    if array.dtype != np.float32:
        raise InputError(path, f"dtype is {array.dtype}, expected float32; {_REBUILD}")
    rows, width = array.shape
    if rows != num_chunks:
        raise InputError(path, f"{EMBEDDINGS} has {rows} rows but {INDEX_JSON} lists "
                         f"{num_chunks} chunks: {_REBUILD}")
    if width != embedding["dimension"]:
        raise InputError(path, f"vectors have {width} dimensions but {INDEX_JSON} records "
                         f"embedding.dimension {embedding['dimension']} (model "
                         f"{embedding['model']}): {_REBUILD}")
    digest = hashlib.sha256(data).hexdigest()
    if digest != embedding["sha256"]:
        raise InputError(path, f"sha256 {digest[:12]}… does not match embedding.sha256 "
                         f"{embedding['sha256'][:12]}… in {INDEX_JSON}: the file belongs to "
                         f"another build; {_REBUILD}")
    return array


# --- staleness -----------------------------------------------------------------------


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
    built = index.meta["embedding"]
    # Through JSON, as the recorded params were: tuples become lists, keys strings.
    want = json.loads(json.dumps(get_embedder(embedder, **(embedder_params or {})).describe()))
    if any(built.get(k) != want[k] for k in ("backend", "model", "params")):
        return "embedder changed"
    chunking = _chunking(chunk_size, overlap)
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


class ChunkRecord(BaseModel):
    """One line of a plain chunk file (`chunks.jsonl`): evidence without embeddings."""

    model_config = ConfigDict(extra="allow")
    chunk_id: str = Field(min_length=1)
    doc_id: str | None = None
    text: str
    title: str = ""
    section: str | None = None
    page_span: tuple[int, int] | None = None


def load_chunk_file(path: str | Path) -> Index:
    """An evidence store from `chunks.jsonl` (`{chunk_id, doc_id?, text, page_span?}`).

    Chunk ids are arbitrary strings. `doc_id` defaults to the part of the id before `::`, or
    the id itself. It has no embeddings, so it serves scoring of predictions, not retrieval.
    """
    records = read_jsonl(path, ChunkRecord, key="chunk_id")
    if not records:
        raise InputError(path, "chunk file holds no chunks")
    chunks: list[Chunk] = []
    seq: dict[str, int] = {}
    for rec in records:
        doc_id = rec.doc_id or rec.chunk_id.split("::", 1)[0]
        seq[doc_id] = seq.get(doc_id, 0) + 1
        chunks.append(Chunk(chunk_id=rec.chunk_id, doc_id=doc_id, title=rec.title,
                            section=rec.section, text=rec.text, page_span=rec.page_span,
                            seq=seq[doc_id]))
    documents = [Document(doc_id=d, source_path=str(path), format="chunks") for d in seq]
    meta = {"schema_version": SCHEMA_VERSION, "embedding": None,
            "build": {"source_dir": str(path), "chunking": {"strategy": "given"},
                      "num_documents": len(documents), "num_chunks": len(chunks)}}
    return Index(Path(path), meta, documents, chunks, np.zeros((len(chunks), 0), np.float32))
