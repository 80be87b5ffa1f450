"""Loaders (one small generated file per format) and the fixed-size chunker."""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragassay.errors import InputError
from ragassay.ingest import (
    LoadedDocument,
    PageSpan,
    chunk_document,
    chunk_id,
    load_documents,
    load_file,
    scan_sources,
    slugify,
    windows,
)
from ragassay.schema import Document


def write(folder: Path, name: str, content: str | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8", newline="")
    else:
        path.write_bytes(content)
    return path


def only(folder: Path) -> LoadedDocument:
    docs = load_documents(folder)
    assert len(docs) == 1
    return docs[0]


# --- slugs and the folder ------------------------------------------------------------


@pytest.mark.parametrize(("stem", "slug"), [
    ("hanbit_civil_portal_rfp", "hanbit-civil-portal-rfp"),
    ("한빛시 통합민원 RFP (v2)", "한빛시-통합민원-rfp-v2"),
    ("Stadtwerke Lindenau – Kundenportal", "stadtwerke-lindenau-kundenportal"),
    ("Größe__2026", "größe-2026"),
    ("--a..b--", "a-b"),
])
def test_slugify(stem: str, slug: str) -> None:
    assert slugify(stem) == slug


def test_slug_is_nfc_so_decomposed_hangul_gives_the_same_id() -> None:
    import unicodedata

    nfd = unicodedata.normalize("NFD", "한빛")  # macOS file names are often NFD
    assert nfd != "한빛" and slugify(nfd) == "한빛"


def test_slug_without_letters_is_refused() -> None:
    with pytest.raises(InputError, match="rename the file"):
        slugify("___", "___.txt")


def test_korean_file_name_becomes_doc_id(tmp_path: Path) -> None:
    write(tmp_path, "재난안전 제안요청서.txt", "본문")
    assert only(tmp_path).document.doc_id == "재난안전-제안요청서"


def test_walk_is_recursive_sorted_and_reports_skipped(tmp_path: Path) -> None:
    write(tmp_path, "b.txt", "b")
    write(tmp_path, "a/z.md", "# z")
    write(tmp_path, "a/notes.xlsx", b"\x00")
    write(tmp_path, "C.TXT", "upper-case extension")
    write(tmp_path, ".hidden/x.txt", "ignored")
    write(tmp_path, ".DS_Store", b"\x00")
    scan = scan_sources(tmp_path)
    # Code-point order of the relative POSIX path: "C" < "a" < "b".
    assert scan.files == ["C.TXT", "a/z.md", "b.txt"]
    assert scan.skipped == ["a/notes.xlsx"]
    docs = load_documents(tmp_path)
    assert [d.document.source_path for d in docs] == scan.files
    assert [d.document.doc_id for d in docs] == ["c", "z", "b"]


def test_missing_source_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="source folder not found"):
        load_documents(tmp_path / "nope")


def test_duplicate_doc_id_across_files_names_both(tmp_path: Path) -> None:
    write(tmp_path, "a/report.txt", "one")
    write(tmp_path, "b/Report.md", "two")
    with pytest.raises(InputError) as exc:
        load_documents(tmp_path)
    assert "b/Report.md" in str(exc.value) and "a/report.txt" in str(exc.value)
    assert "'report'" in str(exc.value)


def test_duplicate_doc_id_between_jsonl_and_file_names_the_line(tmp_path: Path) -> None:
    write(tmp_path, "a.jsonl", '{"doc_id": "x", "text": "t"}\n{"doc_id": "y", "text": "t"}\n')
    write(tmp_path, "x.txt", "again")
    with pytest.raises(InputError, match=r"also used by a\.jsonl:1"):
        load_documents(tmp_path)


def test_empty_document_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "empty.txt", " \n\n")
    with pytest.raises(InputError, match="document has no text") as exc:
        load_documents(tmp_path)
    assert exc.value.path.endswith("empty.txt")


def test_file_metadata(tmp_path: Path) -> None:
    import hashlib

    raw = "첫 줄\r\n둘째 줄\r\n".encode()
    write(tmp_path, "sub/doc.txt", raw)
    d = only(tmp_path).document
    assert (d.source_path, d.format, d.num_pages) == ("sub/doc.txt", "txt", None)
    assert d.sha256 == hashlib.sha256(raw).hexdigest()  # of the bytes, before normalising


# --- txt, md -------------------------------------------------------------------------


def test_txt_normalises_only_crlf_and_nfc(tmp_path: Path) -> None:
    # "e" + combining acute (NFD) becomes "é"; tabs and double spaces stay.
    write(tmp_path, "a.txt", "\n  Cafe\u0301 menu\r\nline\ttwo  end\n")
    doc = only(tmp_path)
    assert doc.text == "\n  Café menu\nline\ttwo  end\n"
    assert doc.document.title == "Café menu"
    assert doc.pages == [] and doc.sections == []


def test_txt_must_be_utf8(tmp_path: Path) -> None:
    write(tmp_path, "latin.txt", "Größe".encode("latin-1"))
    with pytest.raises(InputError, match="UTF-8"):
        load_documents(tmp_path)


def test_md_headings_become_sections(tmp_path: Path) -> None:
    text = ("intro line\n"
            "# 제안요청서\n"
            "body\n"
            "```\n"
            "# not a heading (code)\n"
            "```\n"
            "## 2. 과업 범위 ##\n"
            "#hashtag is not a heading\n"
            "####### seven is not a heading\n")
    write(tmp_path, "rfp.md", text)
    doc = only(tmp_path)
    assert doc.text == text
    start1 = len("intro line\n")
    start2 = text.index("## 2.")
    assert doc.sections == [(start1, "제안요청서"), (start2, "2. 과업 범위")]
    assert doc.document.title == "제안요청서"


def test_md_without_heading_takes_first_line_as_title(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "\nplain text\nmore\n")
    assert only(tmp_path).document.title == "plain text"


# --- pdf -----------------------------------------------------------------------------


def make_pdf(path: Path, pages: list[str]) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for body in pages:
        pdf.add_page()
        if body:
            pdf.multi_cell(0, 6, body)
    pdf.output(str(path))


def test_pdf_pages_are_joined_with_newline_and_spanned(tmp_path: Path) -> None:
    make_pdf(tmp_path / "manual.pdf", ["Alpha page one.", "Bravo page two.", "Charlie three."])
    doc = only(tmp_path)
    assert doc.document.format == "pdf" and doc.document.num_pages == 3
    assert doc.text == "Alpha page one.\nBravo page two.\nCharlie three."
    n1, n2 = len("Alpha page one.\n"), len("Bravo page two.\n")
    assert doc.pages == [PageSpan(0, n1, 1), PageSpan(n1, n1 + n2, 2),
                         PageSpan(n1 + n2, len(doc.text), 3)]
    assert doc.document.title == "Alpha page one."


def test_pdf_chunk_crossing_a_page_boundary_spans_both_pages(tmp_path: Path) -> None:
    make_pdf(tmp_path / "m.pdf", ["A" * 30, "B" * 30])
    doc = only(tmp_path)
    assert doc.text == "A" * 30 + "\n" + "B" * 30
    chunks = chunk_document(doc, chunk_size=20, overlap=0)
    # Windows [0,20) [20,40) [40,60) [60,61); page 1 holds [0,31) (its "\n" included).
    assert [c.char_span for c in chunks] == [(0, 20), (20, 40), (40, 60), (60, 61)]
    assert [c.page_span for c in chunks] == [(1, 1), (1, 2), (2, 2), (2, 2)]


def test_pdf_without_text_is_refused_as_scanned(tmp_path: Path) -> None:
    make_pdf(tmp_path / "scan.pdf", ["", ""])
    with pytest.raises(InputError, match="no extractable text") as exc:
        load_documents(tmp_path)
    assert exc.value.path.endswith("scan.pdf")


def test_pdf_empty_page_keeps_its_number(tmp_path: Path) -> None:
    make_pdf(tmp_path / "m.pdf", ["one", "", "three"])
    doc = only(tmp_path)
    assert doc.text == "one\n\nthree"
    assert doc.pages == [PageSpan(0, 4, 1), PageSpan(4, 5, 2), PageSpan(5, 10, 3)]


def test_corrupt_pdf_names_the_file(tmp_path: Path) -> None:
    write(tmp_path, "broken.pdf", b"%PDF-1.4\nthis is not really a pdf")
    with pytest.raises(InputError, match="cannot read PDF") as exc:
        load_documents(tmp_path)
    assert exc.value.path.endswith("broken.pdf")


def test_encrypted_pdf_names_the_file(tmp_path: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    pdf.add_page()
    pdf.cell(text="secret")
    pdf.set_encryption(owner_password="owner", user_password="user")
    pdf.output(str(tmp_path / "locked.pdf"))
    with pytest.raises(InputError, match="encrypted PDF") as exc:
        load_documents(tmp_path)
    assert exc.value.path.endswith("locked.pdf")


# --- docx ----------------------------------------------------------------------------


def tiny_png() -> bytes:
    """A valid 1x1 grey PNG, built by hand so no image library is needed."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(b"\x00\x80")) + chunk(b"IEND", b""))


def test_docx_keeps_body_paragraphs_and_counts_tables_and_images(tmp_path: Path) -> None:
    import docx

    d = docx.Document()
    d.add_heading("Smart Library RFP", level=0)  # style "Title"
    d.add_paragraph("Intro paragraph.")
    d.add_heading("1. Scope", level=1)
    d.add_paragraph("Scope text.")
    table = d.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "TABLE-ONLY-VALUE"
    (tmp_path / "p.png").write_bytes(tiny_png())
    d.add_picture(str(tmp_path / "p.png"))
    d.add_paragraph("After.")
    (tmp_path / "docs").mkdir()
    d.save(str(tmp_path / "docs" / "lib.docx"))

    doc = only(tmp_path / "docs")
    # The picture sits in its own (empty) paragraph: an empty line.
    assert doc.text == "Smart Library RFP\nIntro paragraph.\n1. Scope\nScope text.\n\nAfter."
    assert "TABLE-ONLY-VALUE" not in doc.text
    assert doc.document.dropped == {"tables": 1, "images": 1}
    start = len("Smart Library RFP\nIntro paragraph.\n")
    assert doc.sections == [(0, "Smart Library RFP"), (start, "1. Scope")]
    assert doc.document.title == "Smart Library RFP"
    assert doc.document.format == "docx"


def test_corrupt_docx_names_the_file(tmp_path: Path) -> None:
    write(tmp_path, "bad.docx", b"PK\x03\x04 not a zip")
    with pytest.raises(InputError, match="cannot read DOCX") as exc:
        load_documents(tmp_path)
    assert exc.value.path.endswith("bad.docx")


# --- html ----------------------------------------------------------------------------

HTML = """<!DOCTYPE html>
<html><head><title> 서린 교육청  RFP </title>
<style>p { color: red }</style><script>var x = "<p>no</p>";</script></head>
<body>
<h1>서린 교육청 <b>AI</b> 플랫폼</h1>
<p>사업   기간은
   10개월이다.<img src="x.png"></p>
<h2>평가 기준</h2>
<table>
  <tr><th>부문</th><th>배점</th></tr>
  <tr><td>기술</td><td>80</td></tr>
</table>
<ul><li>하나</li><li>둘<br>셋</li></ul>
</body></html>
"""


def test_html_text_tables_sections_and_images(tmp_path: Path) -> None:
    write(tmp_path, "seorin.html", HTML)
    doc = only(tmp_path)
    assert doc.text == ("서린 교육청 AI 플랫폼\n"
                        "사업 기간은 10개월이다.\n"
                        "평가 기준\n"
                        "부문 | 배점\n"
                        "기술 | 80\n"
                        "하나\n"
                        "둘\n"
                        "셋")
    assert doc.sections == [(0, "서린 교육청 AI 플랫폼"),
                            (doc.text.index("평가 기준"), "평가 기준")]
    assert doc.document.title == "서린 교육청 RFP"
    assert doc.document.dropped == {"images": 1}


def test_html_title_falls_back_to_first_h1(tmp_path: Path) -> None:
    write(tmp_path, "a.htm", "<p>lead</p><h2>Sub</h2><h1>Main</h1>")
    doc = only(tmp_path)
    assert doc.document.title == "Main" and doc.document.format == "html"


# --- jsonl ---------------------------------------------------------------------------


def test_jsonl_one_document_per_line(tmp_path: Path) -> None:
    write(tmp_path, "faq.jsonl",
          '{"doc_id": "faq-1", "text": "Versand dauert 3 Tage.", "title": "Versand",'
          ' "metadata": {"lang": "de"}}\n'
          "\n"
          '{"doc_id": "faq-2", "text": "Rückgabe\\nbinnen 30 Tagen."}\n')
    docs = load_documents(tmp_path)
    assert [d.document.doc_id for d in docs] == ["faq-1", "faq-2"]
    assert docs[0].document.title == "Versand" and docs[0].document.metadata == {"lang": "de"}
    assert docs[1].document.title == "Rückgabe"  # no title: the first line
    assert docs[1].text == "Rückgabe\nbinnen 30 Tagen."
    assert docs[0].document.sha256 == docs[1].document.sha256  # one file
    assert (docs[0].line, docs[1].line) == (1, 3)


@pytest.mark.parametrize(("line2", "message", "field"), [
    ('{"doc_id": "b", "text": ', "malformed JSON", None),
    ('{"doc_id": "b"}', "missing required field", "text"),
    ('{"text": "x"}', "missing required field", "doc_id"),
    ('{"doc_id": "b", "text": 5}', "expected a string", "text"),
    ('{"doc_id": "b", "text": "x", "metadata": []}', "expected an object", "metadata"),
    ('{"doc_id": "a", "text": "x"}', "duplicate doc_id", "doc_id"),
    ('{"doc_id": "b", "text": "  "}', "document has no text", "text"),
    ('["doc_id", "b"]', "expected a JSON object", None),
])
def test_jsonl_bad_line_names_line_and_field(tmp_path: Path, line2: str, message: str,
                                             field: str | None) -> None:
    write(tmp_path, "docs.jsonl", '{"doc_id": "a", "text": "ok"}\n' + line2 + "\n")
    with pytest.raises(InputError, match=message) as exc:
        load_documents(tmp_path)
    assert exc.value.path.endswith("docs.jsonl")
    assert (exc.value.line, exc.value.field) == (2, field)


def test_empty_jsonl_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "docs.jsonl", "\n\n")
    with pytest.raises(InputError, match="no documents"):
        load_documents(tmp_path)


# --- sectioned json ------------------------------------------------------------------

SECTIONED = {
    "doc_id": "gyeongan-water",
    "title": "경안시 상수도",
    "metadata": {"agency": "경안시"},
    "sections": [
        {"heading": "표지", "text": "제안요청서", "page": 1},
        {"heading": "1. 개요", "text": "사업 기간은 9개월이다.", "page": 2},
        {"heading": "별첨", "text": "제출 서류 목록"},
    ],
}


def test_sectioned_json_layout_sections_and_pages(tmp_path: Path) -> None:
    write(tmp_path, "water.json", json.dumps(SECTIONED, ensure_ascii=False))
    doc = only(tmp_path)
    parts = ["표지\n제안요청서", "1. 개요\n사업 기간은 9개월이다.", "별첨\n제출 서류 목록"]
    assert doc.text == "\n\n".join(parts)
    s1 = len(parts[0]) + 2
    s2 = s1 + len(parts[1]) + 2
    assert doc.sections == [(0, "표지"), (s1, "1. 개요"), (s2, "별첨")]
    assert doc.pages == [PageSpan(0, s1, 1), PageSpan(s1, s2, 2),
                         PageSpan(s2, len(doc.text), None)]
    d = doc.document
    assert (d.doc_id, d.title, d.num_pages, d.metadata) == (
        "gyeongan-water", "경안시 상수도", 2, {"agency": "경안시"})

    # Page 1 = [0, 10), page 2 = [10, 31), no page = [31, 42).
    assert (s1, s2, len(doc.text)) == (10, 31, 42)
    chunks = chunk_document(doc, chunk_size=11, overlap=0)
    assert [c.char_span for c in chunks] == [(0, 11), (11, 22), (22, 33), (33, 42)]
    assert [c.page_span for c in chunks] == [(1, 2), (2, 2), (2, 2), None]
    assert [c.section for c in chunks] == ["표지", "1. 개요", "1. 개요", "별첨"]


def test_sectioned_json_without_pages_is_unpaged(tmp_path: Path) -> None:
    data = {"doc_id": "x", "title": "X", "sections": [{"heading": "", "text": "just text"}]}
    write(tmp_path, "x.json", json.dumps(data))
    doc = only(tmp_path)
    assert doc.text == "just text" and doc.pages == [] and doc.document.num_pages is None
    assert doc.sections == [(0, None)]
    assert chunk_document(doc)[0].section is None


@pytest.mark.parametrize(("mutate", "field"), [
    (lambda d: d["sections"][2].pop("text"), "sections.2.text"),
    (lambda d: d["sections"][1].update(page=0), "sections.1.page"),
    (lambda d: d["sections"][1].update(page="2"), "sections.1.page"),
    (lambda d: d["sections"][0].update(heading=3), "sections.0.heading"),
    (lambda d: d.update(sections=[]), "sections"),
    (lambda d: d.update(sections=["x"]), "sections.0"),
    (lambda d: d.pop("doc_id"), "doc_id"),
    (lambda d: d.update(title=["t"]), "title"),
])
def test_sectioned_json_errors_name_the_field(
        tmp_path: Path, mutate: Callable[[dict[str, Any]], Any], field: str) -> None:
    data = json.loads(json.dumps(SECTIONED))
    mutate(data)
    write(tmp_path, "w.json", json.dumps(data, ensure_ascii=False))
    with pytest.raises(InputError) as exc:
        load_documents(tmp_path)
    assert exc.value.field == field and exc.value.path.endswith("w.json")


def test_malformed_json_names_the_line(tmp_path: Path) -> None:
    write(tmp_path, "w.json", '{\n "doc_id": "x",\n "sections": [\n}')
    with pytest.raises(InputError, match="malformed JSON") as exc:
        load_documents(tmp_path)
    assert exc.value.line == 4


def test_load_file_refuses_unknown_type(tmp_path: Path) -> None:
    write(tmp_path, "a.csv", "x")
    with pytest.raises(InputError, match="unknown file type '.csv'; supported: .txt"):
        load_file(tmp_path, "a.csv")
    write(tmp_path, "a.mdx", "x")
    with pytest.raises(InputError, match=r"'.mdx'; did you mean .md\? \(supported: "):
        load_file(tmp_path, "a.mdx")


def test_every_registered_extension_has_a_loader() -> None:
    from ragassay.ingest import FORMATS, SUPPORTED_EXTENSIONS
    from ragassay.ingest.loaders import LOADERS

    assert SUPPORTED_EXTENSIONS == tuple(FORMATS) == tuple(LOADERS)
    assert FORMATS == {ext: spec.name for ext, spec in LOADERS.items()}
    assert {FORMATS[".htm"], FORMATS[".html"]} == {"html"}


# --- chunker -------------------------------------------------------------------------


def loaded(text: str, *, pages: list[PageSpan] | None = None,
           sections: list[tuple[int, str | None]] | None = None) -> LoadedDocument:
    return LoadedDocument(Document(doc_id="d", title="T"), text, pages=pages or [],
                          sections=sections or [])


def test_windows_hand_worked() -> None:
    # stride = 4 - 1 = 3: [0,4) [3,7) [6,10); the third reaches the end, so it is the last.
    assert windows(10, 4, 1) == [(0, 4), (3, 7), (6, 10)]
    # [0,4) [3,7) [6,9): clipped at 9; no extra window [9, 9) or one inside [6, 9).
    assert windows(9, 4, 1) == [(0, 4), (3, 7), (6, 9)]
    assert windows(3, 4, 1) == [(0, 3)]
    assert windows(0, 4, 1) == []
    assert windows(8, 4, 0) == [(0, 4), (4, 8)]


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (-5, 0), (10, 10), (10, 11), (10, -1)])
def test_invalid_chunking_parameters(size: int, overlap: int) -> None:
    with pytest.raises(ValueError, match="chunk_size|overlap"):
        chunk_document(loaded("text"), chunk_size=size, overlap=overlap)


def test_chunk_ids_titles_and_sections() -> None:
    text = "intro " + "# Alpha " + "a" * 10 + "# Beta " + "b" * 10
    alpha, beta = text.index("# Alpha"), text.index("# Beta")
    chunks = chunk_document(loaded(text, sections=[(alpha, "Alpha"), (beta, "Beta")]),
                            chunk_size=10, overlap=2)
    assert [c.chunk_id for c in chunks[:2]] == ["d::chunk-001", "d::chunk-002"]
    assert all(c.title == "T" and c.doc_id == "d" and c.page_span is None for c in chunks)
    for c in chunks:
        a = c.char_span[0]
        want = "Beta" if a >= beta else "Alpha" if a >= alpha else None
        assert c.section == want


def test_chunk_id_widens_beyond_999() -> None:
    assert chunk_id("d", 7) == "d::chunk-007"
    assert chunk_id("d", 999) == "d::chunk-999"
    assert chunk_id("d", 1000) == "d::chunk-1000"
    chunks = chunk_document(loaded("x" * 1001), chunk_size=1, overlap=0)
    assert chunks[-1].chunk_id == "d::chunk-1001" and chunks[-1].seq == 1001


@given(text=st.text(min_size=0, max_size=300),
       size=st.integers(min_value=1, max_value=60),
       data=st.data())
def test_chunk_invariants(text: str, size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(min_value=0, max_value=size - 1))
    chunks = chunk_document(loaded(text), chunk_size=size, overlap=overlap)
    if not text:
        assert chunks == []
        return
    stride = size - overlap
    for i, c in enumerate(chunks):
        a, b = c.char_span
        assert c.text == text[a:b]
        assert c.seq == i + 1 and c.chunk_id == f"d::chunk-{i + 1:03d}"
        assert (a, b) == (i * stride, min(i * stride + size, len(text)))
    # The windows cover the text, the last one ends at its end and none lies inside the
    # one before it.
    assert chunks[0].char_span[0] == 0 and chunks[-1].char_span[1] == len(text)
    assert all(c.char_span[1] < len(text) for c in chunks[:-1])
    for prev, cur in zip(chunks, chunks[1:], strict=False):
        assert cur.char_span[0] <= prev.char_span[1]
        assert cur.char_span[1] > prev.char_span[1]


@given(lengths=st.lists(st.integers(min_value=0, max_value=40), min_size=1, max_size=6),
       size=st.integers(min_value=1, max_value=50), data=st.data())
def test_page_span_is_min_and_max_page_touched(lengths: list[int], size: int,
                                               data: st.DataObject) -> None:
    overlap = data.draw(st.integers(min_value=0, max_value=size - 1))
    pages, start = [], 0
    for number, n in enumerate(lengths, start=1):
        pages.append(PageSpan(start, start + n, number))
        start += n
    if start == 0:
        return
    doc = loaded("x" * start, pages=pages)
    for c in chunk_document(doc, chunk_size=size, overlap=overlap):
        a, b = c.char_span
        touched = [p.page for p in pages if p.start < b and a < p.end]
        assert c.page_span == (min(touched), max(touched))
