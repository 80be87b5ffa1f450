"""Load a folder of documents as plain text: the deliberately naive, text-only baseline.

Every loader returns the full text of a document plus where its pages and sections start,
so the chunker can label chunks without re-reading the source. No layout parsing, no OCR:
what a loader cannot keep as text (docx tables, images) is counted in ``Document.dropped``.

Text normalisation at load is Unicode NFC and ``\\r\\n`` → ``\\n``, nothing else.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, NamedTuple

from ..schema import Document, InputError

log = logging.getLogger(__name__)

# Bump when extraction changes what text a file yields: it is part of the index fingerprint,
# so indexes built by an older loader are reported stale.
INGEST_VERSION = 1

FORMATS: dict[str, str] = {
    ".txt": "txt",
    ".md": "md",
    ".pdf": "pdf",
    ".docx": "docx",
    ".html": "html",
    ".htm": "html",
    ".jsonl": "jsonl",
    ".json": "json",
}
SUPPORTED_EXTENSIONS = tuple(FORMATS)


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
            (files if Path(name).suffix.lower() in FORMATS else skipped).append(rel)
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
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError(path, f"unsupported file type {path.suffix!r}; supported: "
                         + " ".join(SUPPORTED_EXTENSIONS))
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(path, f"cannot read file ({exc.strerror or exc})") from None
    digest = hashlib.sha256(data).hexdigest()
    docs = _LOADERS[fmt](path, data)
    for doc in docs:
        d = doc.document
        d.source_path, d.format, d.sha256 = rel, fmt, digest
        if not d.doc_id:
            d.doc_id = slugify(path.stem, path)
        if not d.title:
            d.title = first_line(doc.text)
        if not doc.text.strip():
            raise InputError(path, "document has no text")
    return docs


# --- helpers -------------------------------------------------------------------------


def normalize(text: str) -> str:
    """The only normalisation at load: ``\\r\\n`` → ``\\n``, then Unicode NFC."""
    return unicodedata.normalize("NFC", text.replace("\r\n", "\n"))


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


def _decode(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not valid UTF-8 (byte {exc.start}); save the file as "
                         "UTF-8") from None


def _doc(*, title: str = "", doc_id: str = "", **kw: Any) -> Document:
    # source_path, format and sha256 are filled in by load_file.
    return Document(doc_id=doc_id, title=title, **kw)


# --- txt, md -------------------------------------------------------------------------


def load_txt(path: Path, data: bytes) -> list[LoadedDocument]:
    """Whole text; the title is the first non-blank line."""
    text = normalize(_decode(path, data))
    return [LoadedDocument(_doc(), text)]


_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def load_md(path: Path, data: bytes) -> list[LoadedDocument]:
    """Whole text; ATX headings (``#`` .. ``######``, outside code fences) start sections.

    The title is the first heading, else the first non-blank line.
    """
    text = normalize(_decode(path, data))
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
    return [LoadedDocument(_doc(title=title), text, sections=sections)]


# --- pdf -----------------------------------------------------------------------------


def load_pdf(path: Path, data: bytes) -> list[LoadedDocument]:
    """``page.extract_text()`` per page, pages joined with "\\n"; one page span per page.

    The title is the PDF's /Title when set, else the first non-blank line. A PDF with no
    extractable text (scanned) is refused: OCR is not part of the naive baseline.
    """
    from pypdf import PdfReader  # imported here: only PDF corpora pay for it

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise InputError(path, "encrypted PDF (a password is needed); save an unencrypted "
                             "copy")
        pages = [normalize(p.extract_text() or "") for p in reader.pages]
        meta_title = (reader.metadata.title if reader.metadata else None) or ""
    except InputError:
        raise
    except Exception as exc:  # pypdf raises many types for damaged files
        raise InputError(path, f"cannot read PDF ({type(exc).__name__}: {exc})") from None
    if not any(p.strip() for p in pages):
        raise InputError(path, "no extractable text (scanned PDF? OCR is not part of the "
                         "naive baseline)")
    spans: list[PageSpan] = []
    start = 0
    for number, page in enumerate(pages, start=1):
        end = start + len(page) + (1 if number < len(pages) else 0)
        spans.append(PageSpan(start, end, number))
        start = end
    text = "\n".join(pages)
    doc = _doc(title=normalize(str(meta_title)).strip(), num_pages=len(pages))
    return [LoadedDocument(doc, text, pages=spans)]


# --- docx ----------------------------------------------------------------------------


def load_docx(path: Path, data: bytes) -> list[LoadedDocument]:
    """Body paragraphs joined with "\\n" (text-only: tables and images are not extracted,
    only counted in ``dropped``). "Heading*" / "Title" paragraphs start sections.

    The title is the first Title/Heading paragraph, else the first non-blank line.
    """
    import docx  # python-docx

    try:
        d = docx.Document(io.BytesIO(data))
        paragraphs = [(normalize(p.text), _style_name(p)) for p in d.paragraphs]
        n_tables = len(d.tables)
        body = d.element.body
        n_images = len(body.xpath(".//w:drawing")) + len(body.xpath(".//w:pict"))
    except Exception as exc:  # python-docx raises zip, xml and key errors on bad files
        raise InputError(path, f"cannot read DOCX ({type(exc).__name__}: {exc})") from None
    sections: list[tuple[int, str | None]] = []
    offset = 0
    for para, style in paragraphs:
        if style.startswith(("Heading", "Title")) and para.strip():
            sections.append((offset, para.strip()))
        offset += len(para) + 1
    text = "\n".join(p for p, _ in paragraphs)
    dropped = {k: v for k, v in (("tables", n_tables), ("images", n_images)) if v}
    title = (sections[0][1] or "") if sections else ""
    return [LoadedDocument(_doc(title=title, dropped=dropped), text,
                           sections=sections)]


def _style_name(paragraph: Any) -> str:
    style = getattr(paragraph, "style", None)
    return (getattr(style, "name", None) or "") if style is not None else ""


# --- html ----------------------------------------------------------------------------

_BLOCK = frozenset(
    "address article aside blockquote body br caption dd details div dl dt fieldset "
    "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre "
    "section summary table tbody tfoot thead tr ul".split()
)
_SKIP = frozenset({"script", "style", "noscript", "template"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


class _HTMLText(HTMLParser):
    """Collects text with block elements as line breaks and table cells joined by " | ".

    Whitespace inside text collapses to one space as a browser would (kept in ``<pre>``);
    a space is only written once the next word arrives, so lines never end in spaces and
    recorded offsets stay exact.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.length = 0
        self.sections: list[tuple[int, str | None]] = []
        self.title = ""
        self.first_h1 = ""
        self.images = 0
        self._skip = 0  # depth inside script/style/...
        self._in_head = False
        self._in_title = False
        self._pre = 0
        self._space = False  # a space is owed before the next text
        self._cell = 0  # cells opened in the current row
        self._heading: tuple[str, int, int] | None = None  # (tag, offset, first part)

    # writing
    def _write(self, s: str) -> None:
        self.parts.append(s)
        self.length += len(s)

    def _at_line_start(self) -> bool:
        return not self.parts or self.parts[-1].endswith("\n")

    def _newline(self) -> None:
        self._space = False
        if not self._at_line_start():
            self._write("\n")

    # parser callbacks
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self._skip += 1
        elif tag == "head":
            self._in_head = True
        elif tag == "body":
            self._in_head = False
        elif tag == "title":
            self._in_title = True
        if self._skip or self._in_head:
            return
        if tag == "img":
            self.images += 1
        elif tag == "tr":
            self._newline()
            self._cell = 0
        elif tag in ("td", "th"):
            if self._cell:
                self._space = False
                self._write(" | ")
            self._cell += 1
        elif tag in _BLOCK:
            self._newline()
            if tag == "pre":
                self._pre += 1
            if tag in _HEADINGS:
                self._heading = (tag, self.length, len(self.parts))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in ("br", "hr", "img"):
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self._skip = max(0, self._skip - 1)
            return
        if tag == "head":
            self._in_head = False
        elif tag == "title":
            self._in_title = False
        if self._skip or self._in_head:
            return
        if self._heading is not None and tag == self._heading[0]:
            _, start, first = self._heading
            heading = " ".join("".join(self.parts[first:]).split())
            if heading:
                self.sections.append((start, heading))
                if tag == "h1" and not self.first_h1:
                    self.first_h1 = heading
            self._heading = None
        if tag in _BLOCK and tag not in ("br", "hr"):
            self._newline()
            if tag == "pre":
                self._pre = max(0, self._pre - 1)

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
            return
        if self._skip or self._in_head:
            return
        if self._pre:
            text, trail = data, False
            if not text:
                return
        else:
            lead = data[:1].isspace()
            trail = data[-1:].isspace()
            text = " ".join(data.split())
            if lead:
                self._space = True
            if not text:
                return
        if self._space and not self._at_line_start() and not self.parts[-1].endswith(" "):
            self._write(" ")
        self._space = False
        self._write(text)
        if trail:
            self._space = True


def load_html(path: Path, data: bytes) -> list[LoadedDocument]:
    """Visible text (script/style/head dropped), blocks as lines, table rows as lines with
    cells joined by " | ", ``<h1>``..``<h6>`` as sections, ``<img>`` counted as dropped.

    The title is ``<title>``, else the first ``<h1>``, else the first non-blank line.
    """
    parser = _HTMLText()
    try:
        parser.feed(normalize(_decode(path, data)))
        parser.close()
    except InputError:
        raise
    except Exception as exc:  # html.parser is lenient; this is a last resort
        raise InputError(path, f"cannot parse HTML ({exc})") from None
    text = "".join(parser.parts).rstrip()
    title = " ".join(parser.title.split()) or parser.first_h1
    dropped = {"images": parser.images} if parser.images else {}
    sections = [(s, h) for s, h in parser.sections if s <= len(text)]
    return [LoadedDocument(_doc(title=title, dropped=dropped), text, sections=sections)]


# --- jsonl, sectioned json -----------------------------------------------------------


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
    return normalize(value)


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
    for line_no, raw in enumerate(normalize(_decode(path, data)).split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"malformed JSON ({exc.msg}, column {exc.colno})",
                             line=line_no) from None
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
        doc = _doc(doc_id=doc_id, title=title, metadata=_metadata(path, record, line_no))
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
    try:
        record = json.loads(_decode(path, data))
    except json.JSONDecodeError as exc:
        raise InputError(path, f"malformed JSON ({exc.msg}, column {exc.colno})",
                         line=exc.lineno) from None
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
    doc = _doc(doc_id=doc_id, title=title, num_pages=num_pages,
               metadata=_metadata(path, record))
    return [LoadedDocument(doc, text, pages=spans if pages_given else [], sections=sections)]


_LOADERS: dict[str, Callable[[Path, bytes], list[LoadedDocument]]] = {
    "txt": load_txt,
    "md": load_md,
    "pdf": load_pdf,
    "docx": load_docx,
    "html": load_html,
    "jsonl": load_jsonl,
    "json": load_json,
}
