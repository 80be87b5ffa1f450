"""Load a folder of documents as plain text: the deliberately naive, text-only baseline.

Every loader returns the full text of a document plus where its pages and sections start,
so the chunker can label chunks without re-reading the source. No layout parsing, no OCR:
what a loader cannot keep as text (docx tables, images) is counted in ``Document.dropped``.

Text normalisation at load is Unicode NFC and ``\\r\\n`` → ``\\n``, nothing else.

This module holds the folder scan, :func:`load_file` and the one registry of loaders by
file extension (:data:`FORMATS`); the loaders are in :mod:`.plain` (txt, md, jsonl, json)
and :mod:`.rich` (pdf, docx, html), their shared types in :mod:`.document`.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from ..errors import InputError, unknown_name
from ..jsonio import read_limited
from .document import LoadedDocument, PageSpan, decode, new_document, normalize_nfc
from .plain import load_json, load_jsonl, load_md, load_txt
from .rich import load_docx, load_html, load_pdf

log = logging.getLogger(__name__)

# Bump when extraction changes what text a file yields: it is part of the index fingerprint,
# so indexes built by an older loader are reported stale.
INGEST_VERSION = 1
# The largest document file read (whole, to hash and parse it); documented in formats.md.
MAX_DOCUMENT_BYTES = 256 * 1024 * 1024

Loader = Callable[[Path, bytes], list[LoadedDocument]]


class Format(NamedTuple):
    """A registered file format: its name (``Document.format``) and its loader."""

    name: str
    load: Loader


# The one registry of loaders, by lower-case file extension.
LOADERS: dict[str, Format] = {
    ".txt": Format("txt", load_txt),
    ".md": Format("md", load_md),
    ".pdf": Format("pdf", load_pdf),
    ".docx": Format("docx", load_docx),
    ".html": Format("html", load_html),
    ".htm": Format("html", load_html),
    ".jsonl": Format("jsonl", load_jsonl),
    ".json": Format("json", load_json),
}
FORMATS: dict[str, str] = {ext: f.name for ext, f in LOADERS.items()}
SUPPORTED_EXTENSIONS = tuple(LOADERS)


@dataclass
class SourceScan:
    """The files of a source folder: ``files`` to load and ``skipped`` (unsupported type).

    Both hold paths relative to the folder, as POSIX strings, sorted.
    """

    root: Path
    files: list[str]
    skipped: list[str]


# --- the folder ----------------------------------------------------------------------


def _hidden(name: str) -> bool:
    # Dotfiles (.DS_Store, .git, our own temp folders) and Office lock files (~$x.docx).
    return name.startswith((".", "~$"))


def scan_sources(source_dir: str | Path) -> SourceScan:
    """List the files under ``source_dir`` recursively, sorted by relative POSIX path.

    Hidden files and folders are ignored silently; files of other types are listed in
    ``skipped`` so the caller can report them. Symlinked folders are not followed.
    """
    root = Path(source_dir)
    if not root.is_dir():
        raise InputError(root, "source folder not found")
    files: list[str] = []
    skipped: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not _hidden(d)]
        for name in filenames:
            if _hidden(name):
                continue
            rel = (Path(dirpath) / name).relative_to(root).as_posix()
            (files if Path(name).suffix.lower() in LOADERS else skipped).append(rel)
    return SourceScan(root=root, files=sorted(files), skipped=sorted(skipped))


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes, read in blocks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def load_documents(source_dir: str | Path) -> list[LoadedDocument]:
    """Load every supported file under ``source_dir``, in sorted relative-path order.

    Unsupported files are skipped (logged; see :func:`scan_sources` to list them). Raises
    :class:`InputError` for an unreadable file, a document without text, or a ``doc_id``
    used twice in the folder (naming both places).
    """
    scan = scan_sources(source_dir)
    for rel in scan.skipped:
        log.info("skipped %s (unsupported file type)", rel)
    out: list[LoadedDocument] = []
    seen: dict[str, str] = {}
    for rel in scan.files:
        for doc in load_file(scan.root, rel):
            doc_id = doc.document.doc_id
            where = _where(doc)
            if doc_id in seen:
                raise InputError(scan.root / rel, f"duplicate doc_id {doc_id!r}: also used by "
                                 f"{seen[doc_id]}", line=doc.line, field="doc_id")
            seen[doc_id] = where
            out.append(doc)
    return out


def _where(doc: LoadedDocument) -> str:
    path = doc.document.source_path
    return path if doc.line is None else f"{path}:{doc.line}"


def load_file(root: str | Path, rel: str) -> list[LoadedDocument]:
    """Load one file (``root / rel``); a ``.jsonl`` file may hold several documents."""
    path = Path(root) / rel
    spec = LOADERS.get(path.suffix.lower())
    if spec is None:
        raise InputError(path, unknown_name("file type", path.suffix, SUPPORTED_EXTENSIONS,
                                            known_as="supported"))
    try:
        data = read_limited(path, MAX_DOCUMENT_BYTES, "document")
    except OSError as exc:
        raise InputError(path, f"cannot read file ({exc.strerror or exc})") from None
    digest = hashlib.sha256(data).hexdigest()
    docs = spec.load(path, data)
    for doc in docs:
        d = doc.document
        d.source_path, d.format, d.sha256 = rel, spec.name, digest
        if not d.doc_id:
            d.doc_id = slugify(path.stem, path)
        if not d.title:
            d.title = first_line(doc.text)
        if not doc.text.strip():
            raise InputError(path, "document has no text")
    return docs


# --- helpers -------------------------------------------------------------------------


_NOT_ALNUM = re.compile(r"[\W_]+")


def slugify(stem: str, path: str | Path | None = None) -> str:
    """Default ``doc_id`` of a file: NFC, lowercase, non-letter/digit runs → "-", trimmed.

    Letters and digits of any script are kept (``"한빛 RFP_v2"`` → ``"한빛-rfp-v2"``). A stem
    with no letter or digit at all cannot name a document: :class:`InputError`.
    """
    slug = _NOT_ALNUM.sub("-", unicodedata.normalize("NFC", stem).lower()).strip("-")
    if not slug:
        raise InputError(path or stem, "cannot derive a doc_id from the file name (it has no "
                         "letter or digit); rename the file")
    return slug


def first_line(text: str) -> str:
    """The first non-blank line, stripped ("" when there is none)."""
    for line in text.split("\n"):
        if line.strip():
            return line.strip()
    return ""


__all__ = [
    "FORMATS",
    "INGEST_VERSION",
    "LOADERS",
    "SUPPORTED_EXTENSIONS",
    "Format",
    "LoadedDocument",
    "Loader",
    "PageSpan",
    "SourceScan",
    "decode",
    "file_sha256",
    "first_line",
    "load_documents",
    "load_docx",
    "load_file",
    "load_html",
    "load_json",
    "load_jsonl",
    "load_md",
    "load_pdf",
    "load_txt",
    "new_document",
    "normalize_nfc",
    "scan_sources",
    "slugify",
]
