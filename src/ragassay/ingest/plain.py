"""Loaders of plain-text formats: ``.txt``, Markdown, JSON Lines and sectioned JSON.

Each takes ``(path, bytes)`` and returns the documents of the file
(:class:`~ragassay.ingest.document.LoadedDocument`); they are registered by extension in
:mod:`ragassay.ingest.loaders`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..jsonio import decode_json
from .document import LoadedDocument, PageSpan, decode, new_document, normalize_nfc


def load_txt(path: Path, data: bytes) -> list[LoadedDocument]:
    """Whole text; the title is the first non-blank line."""
    text = normalize_nfc(decode(path, data))
    return [LoadedDocument(new_document(), text)]


_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def load_md(path: Path, data: bytes) -> list[LoadedDocument]:
    """Whole text; ATX headings (``#`` .. ``######``, outside code fences) start sections.

    The title is the first heading, else the first non-blank line.
    """
    text = normalize_nfc(decode(path, data))
    sections: list[tuple[int, str | None]] = []
    fence: str | None = None
    offset = 0
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if m and (fence is None or m.group(1)[0] == fence):
            fence = m.group(1)[0] if fence is None else None
        elif fence is None and (h := _ATX.match(line)) and (h.group(2) or "").strip():
            sections.append((offset, h.group(2).strip()))
        offset += len(line) + 1
    title = next((h for _, h in sections if h), "")
    return [LoadedDocument(new_document(title=title), text, sections=sections)]


def _str_field(path: Path, record: dict[str, Any], key: str, *, required: bool,
               line: int | None = None, prefix: str = "") -> str:
    value = record.get(key)
    if value is None:
        if required:
            raise InputError(path, "missing required field", line=line, field=prefix + key)
        return ""
    if not isinstance(value, str):
        raise InputError(path, f"expected a string, got {type(value).__name__}", line=line,
                         field=prefix + key)
    return normalize_nfc(value)


def _metadata(path: Path, record: dict[str, Any], line: int | None = None) -> dict[str, Any]:
    meta = record.get("metadata")
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise InputError(path, f"expected an object, got {type(meta).__name__}", line=line,
                         field="metadata")
    return meta


def _doc_id(path: Path, record: dict[str, Any], line: int | None = None) -> str:
    doc_id = _str_field(path, record, "doc_id", required=True, line=line).strip()
    if not doc_id:
        raise InputError(path, "doc_id is empty", line=line, field="doc_id")
    return doc_id


def load_jsonl(path: Path, data: bytes) -> list[LoadedDocument]:
    """One document per line ``{doc_id, text, title?, metadata?}``; blank lines skipped."""
    out: list[LoadedDocument] = []
    seen: dict[str, int] = {}
    for line_no, raw in enumerate(normalize_nfc(decode(path, data)).split("\n"), start=1):
        if not raw.strip():
            continue
        record = decode_json(raw, path, line_no)
        if not isinstance(record, dict):
            raise InputError(path, f"expected a JSON object, got {type(record).__name__}",
                             line=line_no)
        doc_id = _doc_id(path, record, line_no)
        if doc_id in seen:
            raise InputError(path, f"duplicate doc_id {doc_id!r} (first on line "
                             f"{seen[doc_id]})", line=line_no, field="doc_id")
        seen[doc_id] = line_no
        text = _str_field(path, record, "text", required=True, line=line_no)
        if not text.strip():
            raise InputError(path, "document has no text", line=line_no, field="text")
        title = _str_field(path, record, "title", required=False, line=line_no).strip()
        doc = new_document(doc_id=doc_id, title=title, metadata=_metadata(path, record, line_no))
        out.append(LoadedDocument(doc, text, line=line_no))
    if not out:
        raise InputError(path, "no documents in file (expected one JSON object per line)")
    return out


def load_json(path: Path, data: bytes) -> list[LoadedDocument]:
    """A sectioned document ``{doc_id, title?, metadata?, sections: [{heading?, text, page?}]}``.

    Text layout: each section is ``heading + "\\n" + text`` (just ``text`` when it has no
    heading), sections joined by ``"\\n\\n"``. Each section is one page span (the separator
    after it included) with its ``page``, or ``None`` when it has none; ``num_pages`` is
    the largest page given (``None`` if no section has one). Field paths in errors count
    sections from 0 (``sections.3.text``).
    """
    record = decode_json(decode(path, data), path)
    if not isinstance(record, dict):
        raise InputError(path, "expected a JSON object {doc_id, title, sections: [...]}")
    doc_id = _doc_id(path, record)
    title = _str_field(path, record, "title", required=False).strip()
    raw_sections = record.get("sections")
    if not isinstance(raw_sections, list) or not raw_sections:
        raise InputError(path, "expected a non-empty list of {heading, text, page?}",
                         field="sections")
    parts: list[str] = []
    spans: list[PageSpan] = []
    sections: list[tuple[int, str | None]] = []
    start = 0
    for i, sec in enumerate(raw_sections):
        prefix = f"sections.{i}."
        if not isinstance(sec, dict):
            raise InputError(path, f"expected an object, got {type(sec).__name__}",
                             field=f"sections.{i}")
        heading = _str_field(path, sec, "heading", required=False, prefix=prefix).strip()
        body = _str_field(path, sec, "text", required=True, prefix=prefix)
        page = sec.get("page")
        if page is not None and (isinstance(page, bool) or not isinstance(page, int)
                                 or page < 1):
            raise InputError(path, f"expected a page number >= 1, got {page!r}",
                             field=prefix + "page")
        part = f"{heading}\n{body}" if heading else body
        end = start + len(part) + (2 if i < len(raw_sections) - 1 else 0)
        sections.append((start, heading or None))
        spans.append(PageSpan(start, end, page))
        parts.append(part)
        start = end
    text = "\n\n".join(parts)
    pages_given = [s.page for s in spans if s.page is not None]
    num_pages = max(pages_given) if pages_given else None
    if not title:
        title = next((h for _, h in sections if h), "")
    doc = new_document(doc_id=doc_id, title=title, num_pages=num_pages,
               metadata=_metadata(path, record))
    return [LoadedDocument(doc, text, pages=spans if pages_given else [], sections=sections)]
