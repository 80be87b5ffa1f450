"""Ingest: load a folder of documents as text, then cut it into chunks."""

from .chunking import STRATEGY, check_chunking, chunk_document, chunk_id, windows
from .loaders import (
    FORMATS,
    INGEST_VERSION,
    SUPPORTED_EXTENSIONS,
    LoadedDocument,
    PageSpan,
    SourceScan,
    file_sha256,
    load_documents,
    load_file,
    scan_sources,
    slugify,
)

__all__ = [
    "FORMATS",
    "INGEST_VERSION",
    "STRATEGY",
    "SUPPORTED_EXTENSIONS",
    "LoadedDocument",
    "PageSpan",
    "SourceScan",
    "check_chunking",
    "chunk_document",
    "chunk_id",
    "file_sha256",
    "load_documents",
    "load_file",
    "scan_sources",
    "slugify",
    "windows",
]
