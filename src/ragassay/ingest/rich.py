"""Loaders of formats with layout, kept as text only: PDF, DOCX and HTML.

No layout parsing, no OCR: what cannot be kept as text (docx tables, images) is counted in
``Document.dropped``. PDF and DOCX libraries are imported on first use, so only corpora of
those formats pay for them. Registered by extension in :mod:`ragassay.ingest.loaders`.
"""

from __future__ import annotations

import io
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from ..errors import InputError
from .document import LoadedDocument, PageSpan, decode, new_document, normalize_nfc


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
        pages = [normalize_nfc(p.extract_text() or "") for p in reader.pages]
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
    doc = new_document(title=normalize_nfc(str(meta_title)).strip(), num_pages=len(pages))
    return [LoadedDocument(doc, text, pages=spans)]


def load_docx(path: Path, data: bytes) -> list[LoadedDocument]:
    """Body paragraphs joined with "\\n" (text-only: tables and images are not extracted,
    only counted in ``dropped``). "Heading*" / "Title" paragraphs start sections.

    The title is the first Title/Heading paragraph, else the first non-blank line.
    """
    import docx  # python-docx

    try:
        d = docx.Document(io.BytesIO(data))
        paragraphs = [(normalize_nfc(p.text), _style_name(p)) for p in d.paragraphs]
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
    return [LoadedDocument(new_document(title=title, dropped=dropped), text,
                           sections=sections)]


def _style_name(paragraph: Any) -> str:
    style = getattr(paragraph, "style", None)
    return (getattr(style, "name", None) or "") if style is not None else ""


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
        parser.feed(normalize_nfc(decode(path, data)))
        parser.close()
    except InputError:
        raise
    except Exception as exc:  # html.parser is lenient; this is a last resort
        raise InputError(path, f"cannot parse HTML ({exc})") from None
    text = "".join(parser.parts).rstrip()
    title = " ".join(parser.title.split()) or parser.first_h1
    dropped = {"images": parser.images} if parser.images else {}
    sections = [(s, h) for s, h in parser.sections if s <= len(text)]
    return [LoadedDocument(new_document(title=title, dropped=dropped), text, sections=sections)]
