"""The chunk store: a loaded index's documents and chunks, looked up by id.

:class:`Index` holds what scoring, gold anchoring and diagnosis read (chunks, documents,
their order) plus the embedding rows as loaded; it neither builds, embeds nor searches, so
this module imports no embedder, loader or HTTP code. :func:`read_chunks` makes one from
a plain ``chunks.jsonl`` (evidence without embeddings). Building, the on-disk format and
staleness live in :mod:`ragassay.index`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from .errors import InputError
from .jsonio import read_jsonl
from .schema import SCHEMA_VERSION, Chunk, Count, Document, Id, Metadata, Page, StrictStr


@dataclass
class Index:
    """A loaded index; look-ups by id are dictionary look-ups built once.

    ``embeddings`` row i belongs to ``chunks[i]`` (zero columns for a chunk file).
    """

    path: Path
    meta: dict[str, Any]
    documents: list[Document]
    chunks: list[Chunk]
    embeddings: np.ndarray
    _positions: dict[str, int] = field(init=False, repr=False)
    _documents: dict[str, Document] = field(init=False, repr=False)
    _by_doc: dict[str, list[Chunk]] = field(init=False, repr=False)
    # Derived look-ups built on first use by other modules (e.g. gold anchoring's index of
    # normalised chunk texts), once per store: the chunks are not changed after loading.
    cache: dict[str, Any] = field(init=False, repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        self._positions = {c.chunk_id: i for i, c in enumerate(self.chunks)}
        if len(self._positions) != len(self.chunks):
            raise ValueError("duplicate chunk_id in index")
        self._documents = {d.doc_id: d for d in self.documents}
        by_doc: dict[str, list[Chunk]] = {}
        for c in self.chunks:
            by_doc.setdefault(c.doc_id, []).append(c)
        for v in by_doc.values():  # sorted only where needed: most are already in seq order
            if any(a.seq > b.seq for a, b in zip(v, v[1:], strict=False)):
                v.sort(key=lambda c: c.seq)  # stable: ties in seq keep index order
        self._by_doc = by_doc

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

    @property
    def skipped(self) -> list[str]:
        """Source files the build left out (unsupported type), relative paths, sorted."""
        build = self.meta.get("build") or {}
        return list(build.get("skipped") or [])

    def chunks_of(self, doc_id: str) -> list[Chunk]:
        """The document's chunks in ``seq`` order (empty for an unknown document)."""
        return list(self._by_doc.get(doc_id, []))


class ChunkRecord(BaseModel):
    """One line of a plain chunk file (`chunks.jsonl`): evidence without embeddings.

    Strict like every record (:mod:`ragassay.schema`): an unknown key is an error; what a
    user's chunk store carries besides goes in ``metadata`` (kept in the file, not read).
    The fields of an index's chunks (``char_span``, ``seq``) are accepted, so chunks
    written from a :class:`~ragassay.schema.Chunk` read back.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    chunk_id: Id
    doc_id: Id | None = None
    text: StrictStr
    title: StrictStr = ""
    section: StrictStr | None = None
    page_span: tuple[Page, Page] | None = None
    char_span: tuple[Count, Count] | None = None
    seq: Count | None = None
    metadata: Metadata = Field(default_factory=dict)

    @field_validator("page_span", "char_span")
    @classmethod
    def _page_span(cls, v: tuple[int, int] | None) -> tuple[int, int] | None:
        if v is not None and v[0] > v[1]:
            raise ValueError(f"span [{v[0]}, {v[1]}] ends before it starts")
        return v


def read_chunks(path: str | Path) -> Index:
    """An evidence store from `chunks.jsonl` (`{chunk_id, doc_id?, text, page_span?}`).

    Chunk ids are arbitrary strings. `doc_id` defaults to the part of the id before `::`, or
    the id itself; `seq` (the order within the document) to the order in the file.
    It has no embeddings, so it serves scoring of predictions, not retrieval.
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
                            char_span=rec.char_span,
                            seq=seq[doc_id] if rec.seq is None else rec.seq))
    return store_of_chunks(chunks, str(path))


def store_of_chunks(chunks: list[Chunk], source: str) -> Index:
    """An evidence store without embeddings over ``chunks`` (a chunk file, or chunks held in
    memory): it serves scoring of predictions, not retrieval."""
    doc_ids = list(dict.fromkeys(c.doc_id for c in chunks))
    documents = [Document(doc_id=d, source_path=source, format="chunks") for d in doc_ids]
    meta = {"schema_version": SCHEMA_VERSION, "embedding": None,
            "build": {"source_dir": source, "chunking": {"strategy": "given"},
                      "num_documents": len(documents), "num_chunks": len(chunks)}}
    return Index(Path(source), meta, documents, chunks, np.zeros((len(chunks), 0), np.float32))
