"""The on-disk format of an index: ``index.json`` + ``embeddings.npy`` in one folder.

``index.json`` = ``{schema_version, embedding: {backend, model, dimension, normalized,
params, sha256}, build: {source_dir, chunking: {strategy, chunk_size, overlap},
num_documents, num_chunks, fingerprint, skipped}, search?, documents: [...], chunks: [...]}``;
``embeddings.npy`` is float32 with row i = ``chunks[i]``; ``embedding.sha256`` is the
sha256 of its bytes, so a sidecar from another build is caught on load. Each chunk record
carries ``text_sha256``, the sha256 of its UTF-8 text, so a text edited inside index.json
(the vectors would no longer be of that text) is caught on load, naming the chunk.

No timestamps: writing the same index gives byte-identical files. :func:`write_index`
replaces the folder atomically; :func:`load_index` reads and verifies it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from pydantic import BaseModel

from ..atomic import FolderWriter, recover, write_folder
from ..errors import InputError
from ..ingest.loaders import file_sha256
from ..jsonio import batched, parse_record, read_json
from ..schema import SCHEMA_VERSION, Chunk, Document
from ..store import Index

INDEX_JSON = "index.json"
EMBEDDINGS = "embeddings.npy"
_REBUILD = "rebuild with `ragassay index`"
TEXT_SHA256 = "text_sha256"  # of each chunk record in index.json


def text_sha256(text: str) -> str:
    """The ``text_sha256`` of a chunk: sha256 of its text as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- write ---------------------------------------------------------------------------


def embedding_record(description: dict[str, Any], sha256: str) -> dict[str, Any]:
    """The ``embedding`` record: the embedder's description plus the sha256 of the sidecar."""
    return {**description, "sha256": sha256}


class _Hashing:
    """A binary handle that hashes what goes through it (the sidecar, as it is written)."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh, self.sha = fh, hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.sha.update(data)
        return self.fh.write(data)


def write_npy(fh: BinaryIO, array: np.ndarray) -> str:
    """Write ``array`` as float32 ``.npy`` to ``fh`` in blocks (no copy of the whole array
    is made); returns the sha256 of the bytes written (``embedding.sha256``)."""
    out = _Hashing(fh)
    np.save(out, np.ascontiguousarray(array, dtype=np.float32),
            allow_pickle=False)
    return out.sha.hexdigest()


def _write_index_json(fh: BinaryIO, meta: dict[str, Any], documents: list[Document],
                      chunks: list[Chunk]) -> None:
    """``index.json``: ``meta`` indented, then one document and one chunk record per line,
    written a batch at a time (an index of a million chunks is never one string)."""
    head = json.dumps(meta, ensure_ascii=False, indent=1)
    fh.write((head[:-2] + (",\n" if meta else "\n")).encode("utf-8"))  # head[:-2]: "\n}"
    docs = (d.model_dump(mode="json") for d in documents)
    rows = ({**c.model_dump(mode="json"), TEXT_SHA256: text_sha256(c.text)} for c in chunks)
    for key, records, last in (("documents", docs, False), ("chunks", rows, True)):
        fh.write(f' "{key}": [\n'.encode())
        first = True
        for part in batched(records, 1000):
            text = ",\n".join(" " + json.dumps(r, ensure_ascii=False) for r in part)
            fh.write((("" if first else ",\n") + text).encode("utf-8"))
            first = False
        fh.write(("\n ]" + ("\n}\n" if last else ",\n")).encode())


def write_index(out: Path, meta: dict[str, Any], documents: list[Document],
                chunks: list[Chunk], embeddings: np.ndarray) -> dict[str, Any]:
    """Write ``embeddings.npy`` (float32) and ``index.json`` (``meta`` + documents + chunks)
    into ``out``, replacing it atomically, both streamed. ``meta["embedding"]`` is the
    embedder's description; its ``sha256`` of the sidecar is added here. Returns ``meta``
    as written."""
    def fill(folder: FolderWriter) -> None:
        with folder.open(EMBEDDINGS) as fh:
            meta["embedding"] = embedding_record(meta["embedding"], write_npy(fh, embeddings))
        with folder.open(INDEX_JSON) as fh:
            _write_index_json(fh, meta, documents, chunks)

    write_folder(out, fill, force=True)
    return meta


def check_out_dir(source: Path, out: Path) -> None:
    """Refuse an ``out`` that is a file, holds other files than the index's, or lies
    inside ``source`` (its index.json would be read as a document)."""
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


# --- load and verify -----------------------------------------------------------------


def load_index(index_dir: str | Path) -> Index:
    """Read and verify an index folder. ``Index.embeddings`` is a read-only memory map of
    ``embeddings.npy`` (verified by its sha256 here; a rebuild replaces the file, never
    writes into it).

    Raises :class:`InputError` naming the file (and field) when: a file is missing;
    ``index.json`` is malformed, of another schema version, or has an invalid record
    (``chunks.17.text``), a duplicate id or a chunk text that does not match its
    ``text_sha256``; ``embeddings.npy`` is unreadable, not float32,
    has a row count other than the number of chunks or a width other than
    ``embedding.dimension``, or is not the file this build wrote (sha256).
    """
    folder = Path(index_dir)
    recover(folder)  # finish or roll back a rebuild that was interrupted
    meta_path, npy_path = folder / INDEX_JSON, folder / EMBEDDINGS
    for p in (meta_path, npy_path):
        if not p.is_file():
            raise InputError(p, "file not found; build the index with `ragassay index`")
    meta, documents, chunks = _read_index_json(meta_path)
    embeddings = _read_embeddings(npy_path, meta["embedding"], len(chunks))
    return Index(path=folder, meta=meta, documents=documents, chunks=chunks,
                 embeddings=embeddings)


def _read_index_json(path: Path) -> tuple[dict[str, Any], list[Document], list[Chunk]]:
    head, records = _index_parts(path)
    version = head.get("schema_version")
    if version == 1:
        raise InputError(path, "written by an older ragassay (schema_version 1: no "
                         f"{TEXT_SHA256} of the chunk texts); {_REBUILD}", field="schema_version")
    if version != SCHEMA_VERSION:
        raise InputError(path, f"schema_version {version!r} is not supported (expected "
                         f"{SCHEMA_VERSION}); {_REBUILD}", field="schema_version")
    embedding = _require(path, head, "embedding", dict)
    for key, kind in (("backend", str), ("model", str), ("dimension", int),
                      ("normalized", bool), ("params", dict), ("sha256", str)):
        _require(path, embedding, key, kind, prefix="embedding.")
    build = _require(path, head, "build", dict)
    _require(path, build, "chunking", dict, prefix="build.")
    _require(path, build, "fingerprint", str, prefix="build.")
    documents = _records(path, records("documents"), "documents", Document, "doc_id")
    titles = {d.doc_id: d.title for d in documents}
    chunks = _records(path, records("chunks"), "chunks", Chunk, "chunk_id", titles)
    return head, documents, chunks


def _index_parts(path: Path) -> tuple[dict[str, Any], Callable[[str], Iterator[Any]]]:
    """The head of ``index.json`` (everything but its two lists) and a reader of each list's
    records. The file is decoded whole by the standard reader (``json.loads``); a file it
    cannot decode is read again by :func:`~ragassay.jsonio.read_json`, whose error names
    the line. Each record's decoded dict is let go of once it is handed out, so memory holds
    the decoded lists or the validated records, not both (docs/benchmarks.md, "The
    index.json reader": as fast as a line-by-line reader, within a sixth of its memory)."""
    try:
        data = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        data = read_json(path, hint=f"; {_REBUILD}")  # the error names the line
    if not isinstance(data, dict):
        raise InputError(path, f"expected a JSON object; {_REBUILD}")

    def records(key: str) -> Iterator[Any]:
        items = _require(path, data, key, list)
        for i, item in enumerate(items):
            items[i] = None  # the validated record is kept, not its decoded dict too
            yield item

    return {k: v for k, v in data.items() if k not in ("documents", "chunks")}, records


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


def _records(path: Path, items: Iterable[Any], key: str, model: type[BaseModel],
             id_field: str, doc_titles: dict[str, str] | None = None) -> list[Any]:
    """Validate the records of one list (``documents`` or ``chunks``) as they are read. For
    chunks (``doc_titles``: each document's title by id): each record's ``text_sha256``
    (taken out: it is no field of a chunk) must match its text, and its document must be
    known. A chunk's title equal to its document's is kept as that one string (a chunk
    inherits its document's title: one copy per document, not one per chunk)."""
    out: list[Any] = []
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise InputError(path, f"expected an object, got {type(item).__name__}",
                             field=f"{key}.{i}")
        recorded = item.pop(TEXT_SHA256, None) if doc_titles is not None else None
        if doc_titles is not None and not isinstance(recorded, str):
            what = ("missing" if recorded is None
                    else f"expected str, got {type(recorded).__name__}")
            raise InputError(path, f"{what}; {_REBUILD}", field=f"{key}.{i}.{TEXT_SHA256}")
        doc_id = item.get("doc_id")
        if doc_titles is not None and isinstance(doc_id, str):
            title = doc_titles.get(doc_id)
            if title is not None and item.get("title") == title:
                item["title"] = title
        rec: Any = parse_record(model, item, path, prefix=f"{key}.{i}", hint=f"; {_REBUILD}")
        ident = getattr(rec, id_field)
        if ident in first:
            raise InputError(path, f"duplicate {id_field} {ident!r} (also {key}.{first[ident]})"
                             f"; {_REBUILD}", field=f"{key}.{i}.{id_field}")
        first[ident] = i
        if doc_titles is not None:
            if text_sha256(rec.text) != recorded:
                raise InputError(path, f"the text of chunk {ident!r} does not match its "
                                 f"{TEXT_SHA256} (edited after the build?): its vector is of "
                                 f"another text; {_REBUILD}", field=f"{key}.{i}.text")
            if rec.doc_id not in doc_titles:
                raise InputError(path, f"chunk {ident!r} belongs to unknown document "
                                 f"{rec.doc_id!r}; {_REBUILD}", field=f"{key}.{i}.doc_id")
        out.append(rec)
    return out


def _read_embeddings(path: Path, embedding: dict[str, Any], num_chunks: int) -> np.ndarray:
    # A read-only memory map: the rows cost no memory of the process's own until used, and
    # exact search, which keeps them snapped, gives their pages back as it reads them
    # (vector.release_rows), so a run holds the vectors once. The sha256 is taken from the
    # file in blocks.
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
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
    digest = file_sha256(path)
    if digest != embedding["sha256"]:
        raise InputError(path, f"sha256 {digest[:12]}… does not match embedding.sha256 "
                         f"{embedding['sha256'][:12]}… in {INDEX_JSON}: the file belongs to "
                         f"another build; {_REBUILD}")
    return array
