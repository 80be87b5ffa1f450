"""The terminal never hides a number; machine-readable output; progress; a fast start.

* stdout not a terminal (CI logs, pipes, CliRunner): tables are Markdown whose cells are
  those of summary.md / sweep.md, on a generated set of 2,000 questions;
* on a terminal: rich tables whose number columns are never cut (Markdown when they
  would not fit);
* ``--format json``: stdout is one JSON document, everything else goes to stderr;
* ``--progress``: one line per stage on a stderr that is not a terminal, nothing without;
* ``--version``, completion, flags without ``<bool>``, and a start-up without the heavy
  modules.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from builders import ROOT
from openai_server import FakeOpenAIServer
from rich.console import Console
from synthetic import make_eval_set
from test_llm_run import llm_config
from typer.testing import CliRunner

from ragassay import progress
from ragassay.cli import app
from ragassay.report.safe import print_table

runner = CliRunner()
Tables = dict[str, list[list[str]]]  # title → rows (header first)


def markdown_tables(text: str) -> Tables:
    """Every Markdown table of ``text``, under the last non-table line before it."""
    tables: Tables = {}
    title, current = "", None
    for line in text.splitlines():
        if line.startswith("| "):
            if current is None:
                current = tables.setdefault(title, [])
            current.append([c.strip() for c in line[2:-2].split(" | ")])
        else:
            current = None
            if line.strip() and not line.startswith("|---"):
                title = line.strip()
    return tables


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A 2,000-question set: one run and one sweep through the CLI (stdout: no terminal)."""
    root = tmp_path_factory.mktemp("big")
    config = make_eval_set(root / "set", n_questions=2000, k=5)
    ran = runner.invoke(app, ["run", "-c", str(config), "--run-id", "big", "--output-root",
                              str(root)])
    # the synthetic set leaves some questions without a prediction: not measured, exit 3
    assert ran.exit_code == 3, ran.output
    swept = runner.invoke(app, ["sweep", "-c", str(config), "--k", "1..5", "--sweep-id",
                                "sweep", "--output-root", str(root)])
    assert swept.exit_code == 0, swept.output
    return {"root": root, "config": config, "run": ran, "sweep": swept}


def test_sweep_table_off_a_terminal_is_sweep_md_cell_for_cell(big: dict) -> None:
    printed = markdown_tables(big["sweep"].stdout)["sweep"]
    saved = markdown_tables((big["root"] / "sweep/sweep.md").read_text(encoding="utf-8"))[""]
    assert printed == saved and len(printed) == 6  # header + k = 1..5
    assert all("…" not in c for row in printed for c in row)
    # the numbers are large enough for an 80-column rich table to have cut them
    assert any(len(c) >= 8 and "/" in c for c in printed[1])


def test_run_tables_off_a_terminal_are_summary_md_cell_for_cell(big: dict) -> None:
    printed = markdown_tables(big["run"].stdout)
    summary = markdown_tables((big["root"] / "big/summary.md").read_text(encoding="utf-8"))
    assert printed["retrieval metrics"] == summary["## Retrieval"]
    assert printed["answer metrics"] == summary["## Answer"]
    [title] = [t for t in printed if t.startswith("questions: found, grounded, right")]
    assert "(50 of 2000, failing first" in title  # not 2,000 lines in a CI log
    questions = printed[title]
    assert len(questions) == 51
    # the terminal leaves out the failure types (their counts are a table of their own)
    # summary.md: the totals, then its first 200 questions, failing first, saying so
    text = (big["root"] / "big/summary.md").read_text(encoding="utf-8")
    assert "\nTotals: " in text
    [totals] = [t for t in summary if t.startswith("The 200 of 2000 questions listed here")]
    assert len(summary[totals]) == 201 and "answers.jsonl" in totals
    by_id = {row[0]: row[:-1] for row in summary[totals]}
    assert questions[0] == summary[totals][0][:-1]  # the header
    assert all(row == by_id[row[0]] for row in questions[1:])
    assert printed["failure types"] == summary["## Failures"]
    assert "…" not in big["run"].stdout


def sweep_rows(big: dict) -> list[list[str]]:
    return markdown_tables((big["root"] / "sweep/sweep.md").read_text(encoding="utf-8"))[""]


def test_on_a_terminal_numbers_are_never_cut(big: dict) -> None:
    header, *rows = sweep_rows(big)
    for width in (72, 80, 120):
        buf = io.StringIO()
        console = Console(file=buf, width=width, force_terminal=True, color_system=None)
        print_table(console, "sweep", header, rows, left=["thr"])
        text = buf.getvalue()
        assert "…" not in text
        if "│" in text:  # a rich table: every number sits whole on one line
            for row in rows:
                for value in row[2:]:
                    assert value in text, (width, value)
        else:
            assert markdown_tables(text)["sweep"] == [header, *rows]
    narrow = io.StringIO()
    print_table(Console(file=narrow, width=40, force_terminal=True), "sweep", header, rows)
    assert markdown_tables(narrow.getvalue())["sweep"] == [header, *rows]  # would not fit
    wide = io.StringIO()
    print_table(Console(file=wide, width=200, force_terminal=True, color_system=None),
                "sweep", header, rows)
    assert "│" in wide.getvalue()  # a terminal wide enough gets the rich table


def test_run_format_json_is_metrics_json_and_run_dir(big: dict, tmp_path: Path) -> None:
    res = runner.invoke(app, ["run", "-c", str(big["config"]), "--run-id", "j", "--output-root",
                              str(tmp_path), "--format", "json"])
    assert res.exit_code == 3, res.output  # questions without a prediction
    doc = json.loads(res.stdout)
    saved = json.loads((tmp_path / "j/metrics.json").read_text(encoding="utf-8"))
    assert doc == {**saved, "run_dir": str(tmp_path / "j")}
    assert "run j →" in res.stderr and doc["run_id"] in res.stderr
    # with --gate: the gate's verdict in the same document, its lines on stderr
    gated = big["config"].parent / "gated.yaml"  # its paths are relative to its folder
    gated.write_text(big["config"].read_text(encoding="utf-8").replace(
        "output_root: runs", "output_root: runs\ngate: {correct: '>= 0.9'}"), encoding="utf-8")
    res = runner.invoke(app, ["run", "-c", str(gated), "--run-id", "j", "--force",
                              "--output-root", str(tmp_path), "--format", "json", "--gate"])
    assert res.exit_code == 1, res.output
    doc = json.loads(res.stdout)
    assert doc["gate"]["passed"] is False and "gate FAILED" in res.stderr
    assert doc["gate"]["bars"][0]["bar"] == "correct >= 0.9"


def test_gate_compare_sweep_format_json(big: dict, tmp_path: Path) -> None:
    run_dir = big["root"] / "big"
    res = runner.invoke(app, ["gate", str(run_dir), "--bar", "hit_at_5>=0.5", "--bar",
                              "recall_at_5>=0.9", "--baseline", str(run_dir), "--format",
                              "json"])
    assert res.exit_code == 1, res.output
    doc = json.loads(res.stdout)
    assert {"bars", "regressions", "fixes", "not_measured", "passed"} <= set(doc)
    assert doc["passed"] is False and [b["passed"] for b in doc["bars"]] == [True, False]
    assert doc["bars"][0]["value"] == pytest.approx(0.593, abs=5e-4)
    assert doc["regressions"] == [] and doc["baseline_id"] == "big"
    assert "gate FAILED" in res.stderr and "gate FAILED" == doc["summary"][:11]

    res = runner.invoke(app, ["compare", str(run_dir), str(run_dir), "-m", "hit_at_5",
                              "--format", "json", "--json", str(tmp_path / "c.json")])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == json.loads((tmp_path / "c.json").read_text())

    res = runner.invoke(app, ["sweep", "-c", str(big["config"]), "--k", "2,4", "--output-root",
                              str(tmp_path), "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    saved = json.loads((tmp_path / "sweep/sweep.json").read_text(encoding="utf-8"))
    assert doc == {**saved, "sweep_dir": str(tmp_path / "sweep")}
    assert [r["k"] for r in doc["rows"]] == [2, 4]


def test_json_bad_input_leaves_stdout_empty(tmp_path: Path) -> None:
    res = runner.invoke(app, ["gate", str(tmp_path), "--bar", "x>=1", "--format", "json"])
    assert res.exit_code == 2 and res.stdout == "" and "error:" in res.stderr


def test_progress_lines_on_a_stderr_that_is_not_a_terminal(tmp_path: Path) -> None:
    config = ROOT / "examples/shop_faq_de/config.yaml"
    args = ["run", "-c", str(config), "--output-root", str(tmp_path), "-q"]
    res = runner.invoke(app, [*args, "--run-id", "on", "--progress"])
    assert res.exit_code == 0, res.output
    assert "scoring: 10/10 in" in res.stderr
    assert "scoring" not in res.stdout  # progress never goes to stdout
    for flag in ("--no-progress", None):  # off, and off by default: stderr is no terminal
        res = runner.invoke(app, [*args, "--run-id", f"off{flag}", *([flag] if flag else [])])
        assert res.exit_code == 0 and "scoring" not in res.output
    # -q silences the tables only
    assert "questions: found" not in res.stdout and "found@" in res.stdout


def test_progress_of_the_pipeline_stages(tmp_path: Path, fake_server: FakeOpenAIServer) -> None:
    res = runner.invoke(app, ["run", "-c", str(ROOT / "configs/eval/rag_quality_v1.yaml"),
                              "--output-root", str(tmp_path), "--run-id", "x", "--progress"])
    assert res.exit_code == 0, res.output
    for stage in ("retrieval: 16/16", "answering: 16/16", "scoring: 16/16"):
        assert stage in res.stderr
    config = llm_config(tmp_path, fake_server)  # LLM answering and judging, on 4 threads
    res = runner.invoke(app, ["run", "-c", str(config), "--run-id", "llm", "--progress"])
    assert res.exit_code == 0, res.output
    assert "answering: 16/16" in res.stderr and "judging: " in res.stderr
    res = runner.invoke(app, ["sweep", "-c", str(config), "--k", "1,2", "--output-root",
                              str(tmp_path), "--progress"])
    assert res.exit_code == 0, res.output
    assert "sweep settings: 2/2" in res.stderr and res.stderr.count("answering: 16/16") == 2


def test_nested_bars_share_one_display_and_count_across_threads(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "stderr_is_terminal", lambda: True)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with progress.enabled_for(True), progress.bar("outer", 2) as outer:
        for _ in range(2):
            with progress.bar("inner", 400) as inner:
                threads = [threading.Thread(target=lambda: [inner.advance() for _ in range(100)])
                           for _ in range(4)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                assert inner.done == 400
            outer.advance()
    assert outer.done == 2 and not progress.is_enabled()
    assert list(progress.track([1, 2], "off")) == [1, 2]  # off: the items, nothing drawn


def test_version_completion_and_flags_in_help() -> None:
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout == "ragassay 0.1.0\n"
    top = runner.invoke(app, ["--help"])
    assert "--install-completion" in top.stdout and "--show-completion" in top.stdout
    for command in ["", "index", "run", "gate", "sweep", "compare", "metrics", "trec-eval",
                    "export-trec", "judge-check", "report"]:
        res = runner.invoke(app, [*command.split(), "--help"], env={"COLUMNS": "200"})
        assert res.exit_code == 0, command
        assert "<bool>" not in res.stdout, command
    run_help = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "200"}).stdout
    assert "--progress" in run_help and "--no-progress" in run_help
    assert "<text|json>" in run_help


def test_start_up_imports_only_typer_and_rich_console() -> None:
    code = ("import sys; sys.argv = ['ragassay', '--help']\n"
            "from ragassay.cli import app\n"
            "try:\n    app()\nexcept SystemExit:\n    pass\n"
            "heavy = {'numpy', 'pydantic', 'yaml', 'rich.progress', 'httpx',"
            " 'ragassay.core', 'ragassay.config', 'ragassay.report.safe'}\n"
            "print(sorted(heavy & set(sys.modules)), file=sys.stderr)")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"
    main = subprocess.run([sys.executable, "-m", "ragassay.cli", "--version"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert main.stdout == "ragassay 0.1.0\n"
