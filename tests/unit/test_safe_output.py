"""User text reaches summary.md and the terminal as literal text: no HTML, no Markdown
structure, no rich markup, no escape sequences."""

from __future__ import annotations

import io
import re
from pathlib import Path

from rich.console import Console

from ragassay import evaluate_rag
from ragassay.report.safe import md, plain
from ragassay.report.summary import print_summary
from ragassay.schema import (
    Answer,
    Chunk,
    Citation,
    GoldEvidence,
    GoldRecord,
    Prediction,
    Question,
    RetrievedChunk,
)

EVIL = ("<script>alert(1)</script> [/Monat] [link=https://x.example]click[/link] "
        "[a](javascript:alert(1)) *b* `c` | d\n# injected heading\x1b[31mred\x1b[0m\x07")


def evil_run() -> object:
    q = Question(question_id="q<1>", question=EVIL, answerable=True, must_contain=["14 Tage"],
                 topic=EVIL)
    chunk = Chunk(chunk_id="faq::1", doc_id="faq", text="Rückgabe innerhalb von 14 Tagen.")
    pred = Prediction(question_id="q<1>", retrieved=[RetrievedChunk(chunk_id="faq::1")],
                      answer=Answer(text=EVIL, status="supported",
                                    citations=[Citation(chunk_id="faq::1")]))
    gold = GoldRecord(question_id="q<1>",
                      gold_evidence=[GoldEvidence(chunk_id="faq::1", doc_id="faq")])
    return evaluate_rag([q], [gold], [pred], [chunk], run_id="r`<b>`")


def test_markdown_escaping_by_hand() -> None:
    assert md("<b>|[x](y)\n# h") == r"&lt;b&gt;\|[x\](y) # h"
    assert md("[0.577, 0.962]") == "[0.577, 0.962]"
    assert md("recall_at_5 & more") == "recall_at_5 &amp; more"
    assert plain("a\x1b[31mb\tc\r\nd") == "a[31mb c d"


def test_summary_md_holds_user_text_literally(tmp_path: Path) -> None:
    folder = evil_run().write(tmp_path / "run")  # type: ignore[attr-defined]
    text = (folder / "summary.md").read_text(encoding="utf-8")
    assert "<script" not in text and "<b>" not in text
    assert not re.search(r"(?<!\\)\]\(javascript", text)  # only escaped brackets
    assert r"[a\](javascript:" in text  # shown as written, not a link
    assert "\x1b" not in text and "\x07" not in text
    assert not any(line.startswith("# injected") for line in text.splitlines())
    assert "&lt;script&gt;" in text and "[/Monat]" in text


def test_terminal_tables_print_user_text_as_written() -> None:
    buf = io.StringIO()
    print_summary(evil_run(), Console(file=buf, width=400, force_terminal=True))  # type: ignore[arg-type]
    out = buf.getvalue()
    assert "[/Monat]" in out and "[link=https://x.example]click[/link]" in out
    assert "\x1b[31mred" not in out and "\x07" not in out


def test_bidi_controls_and_c1_are_neutralised_in_terminal_text() -> None:
    """U+202E would show ``evil‮txt.exe`` as ``evilexe.txt``; CSI (U+009B) starts an escape
    sequence on its own. Both are dropped from every message and table cell."""
    from ragassay.termsafe import plain, unsafe_chars

    assert plain("evil\u202etxt.exe \u2066a\u2069 \x9b31m \u200fx") == "eviltxt.exe a 31m x"
    assert unsafe_chars("a\u202eb\x9bc\u202e") == ["U+202E", "U+009B"]


def test_a_logged_warning_is_printed_inert(tmp_path: Path) -> None:
    """A warning on the ``ragassay`` logger (here: a leftover of a killed writer, removed
    when the folder is read) names a path the user chose; it reaches stderr without the
    escape sequence and the bidi override in that name."""
    from typer.testing import CliRunner

    from ragassay.cli import app
    from ragassay.termsafe import UNSAFE

    name = "run\x1b[2J\u202egnp"
    (tmp_path / f".{name}.tmp-99999999-deadbeef").mkdir()  # pid 99999999: long gone
    res = CliRunner().invoke(app, ["report", str(tmp_path / name)])
    assert res.exit_code == 2
    assert "removed, left by an interrupted write" in res.stderr
    assert not UNSAFE.search(res.stderr), repr(res.stderr)
