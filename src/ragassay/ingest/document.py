"""What every loader returns (:class:`LoadedDocument`, :class:`PageSpan`) and the helpers
the loaders share: the one text normalisation at load and strict UTF-8 decoding.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import InputError
from ..schema import Document


class PageSpan(NamedTuple):
    """Characters ``text[start:end]`` come from ``page`` (1-based); ``None`` = no page known."""

    start: int
    end: int
    page: int | None


@dataclass
class LoadedDocument:
    """One extracted document.

    ``pages`` are sorted, non-overlapping spans covering the text of a paged source (for a
    PDF the "\\n" joining two pages belongs to the page before it); empty when the source
    has no pages at all. ``sections`` are ``(start offset, heading)`` in text order; a
    ``None`` heading marks a part without a heading (sectioned JSON).
    """

    document: Document
    text: str
    pages: list[PageSpan] = field(default_factory=list)
    sections: list[tuple[int, str | None]] = field(default_factory=list)
    line: int | None = None  # line of a .jsonl record, for error messages


def normalize_nfc(text: str) -> str:
    """The only normalisation at load: ``\\r\\n`` → ``\\n``, then Unicode NFC."""
    return unicodedata.normalize("NFC", text.replace("\r\n", "\n"))


def decode(path: Path, data: bytes) -> str:
    """The bytes as UTF-8 (a BOM dropped); other encodings are refused, naming the byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not valid UTF-8 (byte {exc.start}); save the file as "
                         "UTF-8") from None


def new_document(*, title: str = "", doc_id: str = "", **kw: Any) -> Document:
    """A :class:`Document` as a loader knows it; ``source_path``, ``format`` and ``sha256``
    are filled in by :func:`ragassay.ingest.loaders.load_file`."""
    return Document(doc_id=doc_id, title=title, **kw)
