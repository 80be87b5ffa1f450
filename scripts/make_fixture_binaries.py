"""Generate the two binary documents of the public fixture in ``data/raw/``.

Run from the repository root (needs python-docx and fpdf2, i.e. ``pip install -e '.[fixture]'``)::

    python scripts/make_fixture_binaries.py            # writes both files
    python scripts/make_fixture_binaries.py --check    # exit 1 if the committed files differ

Writes:

- ``data/raw/hangyeol_smart_library_rfp.docx`` -- Korean RFP whose payment split and equipment
  counts sit only in Word tables. A text-only loader that reads ``document.paragraphs`` drops
  them, so the fixture question about the 중도금 share has its evidence lost while parsing.
- ``data/raw/hcpa_tos_renewal_rfp.pdf`` -- English RFP, 5 pages, with the same header and
  footer line on every page and a nearly empty page 3, so that one fixed-size chunk is mostly
  header/footer text. fpdf2's core fonts are Latin-1 only: no em dashes or Hangul here.

All content is fictional and written for this project.

Determinism: the output bytes depend only on this script and the library versions. The PDF
gets a fixed creation date (fpdf2 then derives the same trailer /ID). python-docx stamps the
current time on every zip member, so the .docx is re-zipped with a fixed member timestamp
and fixed core properties. A different fpdf2 or python-docx version may still produce other
bytes (for instance the PDF /Producer string names the fpdf2 version); the extracted text is
what the fixture relies on.
"""

from __future__ import annotations

import argparse
import io
import sys
import zipfile
from datetime import datetime, timezone
from pathlib import Path

from docx import Document
from fpdf import FPDF

RAW_DIR = Path(__file__).resolve().parent.parent / "data" / "raw"
DOCX_NAME = "hangyeol_smart_library_rfp.docx"
PDF_NAME = "hcpa_tos_renewal_rfp.pdf"

FIXED_TIME = datetime(2026, 3, 2, 9, 0, 0, tzinfo=timezone.utc)
ZIP_TIME = (2026, 3, 2, 9, 0, 0)

# --- the Word document -------------------------------------------------------------------

DOCX_TITLE = "한결군 스마트 도서관 통합관리시스템 구축 사업 제안요청서"

# (style, text) in reading order; ("table", n) marks where table n goes.
DOCX_BODY: list[tuple[str, str | int]] = [
    ("p", "발주기관: 한결군립도서관 운영지원과"),
    ("p", "공고번호: 한결-2026-도서-002"),
    ("h", "1. 사업 개요"),
    ("p", "한결군은 군립도서관 본관과 작은도서관 5곳의 대출·반납 업무를 하나의 통합관리시스템으로 "
          "운영하고, 무인 대출반납기와 RFID 기반 장서 관리 체계를 도입하여 야간과 휴일에도 "
          "도서를 빌리고 돌려줄 수 있도록 하고자 한다. 사업 기간은 계약일로부터 7개월이다."),
    ("h", "2. 과업 범위"),
    ("p", "계약상대자는 통합관리시스템 소프트웨어를 구축하고, 장서 약 21만 권에 RFID 태그를 "
          "부착하며, 무인 대출반납기와 보안 게이트를 납품·설치하여야 한다. 기존 도서관리 "
          "프로그램의 회원 정보와 대출 이력은 통합관리시스템으로 이관한다."),
    ("h", "3. 납품 장비"),
    ("p", "납품 장비의 종류, 수량과 설치 장소는 아래 표 1과 같다. 장비는 설치 전에 발주기관의 "
          "규격 확인을 받아야 한다."),
    ("table", 1),
    ("h", "4. 대가 지급"),
    ("p", "대가는 선금, 중도금, 잔금으로 나누어 지급하며, 단계별 지급 시기와 지급 비율은 아래 "
          "표 2와 같다. 선금을 받은 계약상대자는 선금 사용 계획서를 제출하고, 중도금 청구 시 "
          "선금 사용 내역을 정산하여야 한다."),
    ("table", 2),
    ("h", "5. 하자보수"),
    ("p", "하자보수 기간은 최종 검수 완료일로부터 18개월로 하며, 무인 대출반납기의 고장 신고를 "
          "받은 경우 계약상대자는 2영업일 이내에 현장에서 조치하여야 한다."),
    ("h", "6. 보안 요구사항"),
    ("p", "회원 개인정보는 도서관 내부망의 데이터베이스에만 저장하고, 무인 대출반납기에는 회원 "
          "번호 외의 개인정보를 남기지 않는다. 계약상대자는 사업 종료 시 개인정보 파기 확인서를 "
          "제출하여야 한다."),
    ("h", "7. 교육 및 운영 지원"),
    ("p", "계약상대자는 개통 전에 사서와 자원봉사자를 대상으로 통합관리시스템과 무인 대출반납기 "
          "사용법 교육을 도서관별로 1회 이상 실시하고, 개통 후 1개월 동안 본관에 운영 지원 인력을 "
          "배치하여 이용자 문의에 대응하여야 한다."),
    ("h", "8. 제안서 제출"),
    ("p", "제안서는 전자조달시스템으로 제출하며, 제안 발표는 대표 1인이 15분 이내로 진행한다. "
          "제안서에 적은 장비 규격이 납품 장비와 다를 경우 발주기관은 교체를 요구할 수 있다."),
]

DOCX_TABLES: dict[int, list[list[str]]] = {
    1: [
        ["장비명", "수량", "설치 장소"],
        ["무인 대출반납기", "6대", "본관 2대, 작은도서관 5곳 중 규모가 큰 4곳에 각 1대"],
        ["RFID 보안 게이트", "6조", "본관 1조, 작은도서관 5곳에 각 1조"],
        ["예약도서 무인 보관함", "2대", "본관 출입구 옆 1대, 읍내 작은도서관 1대"],
    ],
    2: [
        ["구분", "지급 조건", "비고"],
        ["선금", "계약 체결 후 14일 이내에 계약금액의 30%를 지급", "선금 보증서 제출"],
        ["중도금", "중간 검수 완료 후 14일 이내에 계약금액의 40%를 지급", "선금 정산 후 지급"],
        ["잔금", "최종 검수 완료 후 14일 이내에 계약금액의 30%를 지급", "하자보수보증금 납부 후"],
    ],
}


def build_docx() -> bytes:
    """The Korean .docx, with fixed core properties and zip timestamps."""
    doc = Document()
    doc.add_heading(DOCX_TITLE, level=0)
    for kind, value in DOCX_BODY:
        if kind == "h":
            doc.add_heading(str(value), level=1)
        elif kind == "p":
            doc.add_paragraph(str(value))
        else:
            rows = DOCX_TABLES[int(value)]
            table = doc.add_table(rows=len(rows), cols=len(rows[0]))
            table.style = "Table Grid"
            for r, row in enumerate(rows):
                for c, cell_text in enumerate(row):
                    table.cell(r, c).text = cell_text
    props = doc.core_properties
    props.title = DOCX_TITLE
    props.author = "ragassay fixture"
    props.last_modified_by = "ragassay fixture"
    props.comments = "Fictional document written for the ragassay test fixture."
    props.revision = 1
    props.created = FIXED_TIME.replace(tzinfo=None)
    props.modified = FIXED_TIME.replace(tzinfo=None)
    props.last_printed = FIXED_TIME.replace(tzinfo=None)
    raw = io.BytesIO()
    doc.save(raw)
    return _restamp_zip(raw.getvalue())


def _restamp_zip(data: bytes) -> bytes:
    """Rewrite a zip with the same members in the same order, each stamped ZIP_TIME."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=ZIP_TIME)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o644 << 16
            dst.writestr(fixed, src.read(info.filename))
    return out.getvalue()


# --- the PDF -------------------------------------------------------------------------------

PDF_HEADER = "Harbor City Port Authority - RFP HCPA-2026-07 - Confidential"
PDF_FOOTER = (
    "HCPA-2026-07 Terminal Operating System Renewal - Page {page} of {nb} - Do not distribute"
)

# One list of lines per page; lines starting with "# " are section headings.
PDF_PAGES: list[list[str]] = [
    [
        "# Request for Proposals HCPA-2026-07: Terminal Operating System Renewal",
        "Issued by the Harbor City Port Authority, Department of Port Technology, on 2 March 2026.",
        "# 1. Introduction",
        "The Harbor City Port Authority (HCPA) operates two container terminals with a combined",
        "capacity of 1.8 million TEU per year. The current terminal operating system (TOS) was",
        "installed in 2012 and reaches the end of vendor support in December 2027.",
        "HCPA invites proposals to replace it with a modern TOS that covers berth planning, yard",
        "management, gate automation and electronic data interchange with shipping lines.",
        "# 2. Scope of work",
        "The contractor shall deliver, configure and operate the new TOS, migrate open container",
        "records from the legacy system, integrate the customs single window and the rail shuttle",
        "scheduler, and train at least 120 HCPA staff before go-live.",
        "The detailed design document shall be delivered within 45 calendar days after signature.",
    ],
    [
        "# 3. Functional requirements",
        "TOS-F-01 Berth planning shall show vessel schedules for the next 14 days on one screen.",
        "TOS-F-02 Yard moves shall be optimised automatically and confirmed on handheld terminals.",
        "TOS-F-03 Gate transactions for pre-advised trucks shall be processed within 60 seconds.",
        "TOS-F-04 EDI messages from shipping lines shall be acknowledged within 5 minutes.",
        "# 4. Service levels",
        "TOS-S-01 The production TOS shall achieve an availability of at least 99.95% in each",
        "calendar month, excluding pre-announced maintenance windows of at most 4 hours a month.",
        "TOS-S-02 A Severity 1 incident shall be resolved within 2 hours, around the clock.",
        "TOS-S-03 The disaster recovery site shall take over within 30 minutes of a site failure.",
    ],
    [
        "This page is intentionally left blank.",
    ],
    [
        "# 5. Commercial terms",
        "The contract term is 36 months from go-live, with one optional extension of 24 months.",
        "Liquidated damages of 0.1% of the contract price per calendar day of delay apply to",
        "go-live, capped at 10% of the contract price.",
        "The contractor shall correct defects reported within 18 months of go-live at no cost.",
        "A performance bond of 5% of the contract price shall be provided within 14 days.",
        "# 6. Security requirements",
        "The TOS shall be hosted in data centres located in the Harbor City region.",
        "All administrator access shall use multi-factor authentication and be logged for 1 year.",
        "The contractor shall hold ISO/IEC 27001 certification for the services in scope.",
    ],
    [
        "# 7. Non-production environments",
        "TOS-S-05 The training TOS shall achieve an availability of at least 99.5% in each",
        "calendar month during HCPA office hours; it may share hardware with the test system.",
        "# 8. Evaluation and submission",
        "Proposals are scored 70% on technical merit and 30% on price.",
        "Technical proposals scoring below 49 of 70 points are not considered further.",
        "Proposals shall be submitted via the HCPA e-tendering portal by noon on 30 April 2026.",
        "A site visit for bidders will take place on 24 March 2026; attendance is recommended.",
    ],
]


class _RfpPdf(FPDF):
    """FPDF with the repeated header and footer lines of the fixture."""

    def header(self) -> None:
        self.set_font("helvetica", size=9)
        self.cell(0, 6, PDF_HEADER, new_x="LMARGIN", new_y="NEXT")
        self.ln(4)

    def footer(self) -> None:
        self.set_y(-15)
        self.set_font("helvetica", size=9)
        self.cell(0, 6, PDF_FOOTER.format(page=self.page_no(), nb=len(PDF_PAGES)))


def build_pdf() -> bytes:
    """The English multi-page PDF; every body line is written as one cell (one text line)."""
    pdf = _RfpPdf(format="A4")
    pdf.set_margins(15, 15, 15)
    pdf.set_auto_page_break(False)
    pdf.set_creation_date(FIXED_TIME)
    pdf.set_title("RFP HCPA-2026-07 Terminal Operating System Renewal")
    pdf.set_author("ragassay fixture")
    pdf.set_creator("scripts/make_fixture_binaries.py")
    width = pdf.w - pdf.l_margin - pdf.r_margin
    for lines in PDF_PAGES:
        pdf.add_page()
        for line in lines:
            heading = line.startswith("# ")
            text = line[2:] if heading else line
            pdf.set_font("helvetica", style="B" if heading else "", size=12 if heading else 10)
            if pdf.get_string_width(text) > width:  # a wrapped line would break the claims
                raise ValueError(f"PDF line too wide for one line: {text!r}")
            if heading:
                pdf.ln(2)
            pdf.cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


# --- entry point ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed files instead of writing")
    parser.add_argument("--out", type=Path, default=RAW_DIR, help="output folder")
    args = parser.parse_args(argv)
    outputs = {DOCX_NAME: build_docx(), PDF_NAME: build_pdf()}
    stale = []
    for name, data in outputs.items():
        path = args.out / name
        if args.check:
            if not path.is_file() or path.read_bytes() != data:
                stale.append(name)
        else:
            path.write_bytes(data)
            print(f"wrote {path} ({len(data)} bytes)")
    if stale:
        print("differs from a fresh build: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
