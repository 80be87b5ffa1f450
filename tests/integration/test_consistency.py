"""One run, one truth: every output states the same found / grounded / right verdict for
every question — the terminal, summary.md, report.html, JUnit from `gate --bar` and from
`gate --config`, and the sweep row at the run's k — on the fixture, on the shop FAQ at k=1
and k=3, and on a generated set of 300 questions."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html import unescape
from pathlib import Path

import pytest
import yaml
from builders import ROOT
from rich.console import Console
from synthetic import make_eval_set
from typer.testing import CliRunner

import ragassay.cli as cli
from ragassay.checks import verdict_text
from ragassay.cli import consoles
from ragassay.reasons import NO_PREDICTION
from ragassay.report.html import decode_row
from ragassay.runfolder import RunResult, read_run_folder

runner = CliRunner()
Verdicts = dict[str, tuple[str, str, str]]  # question id → (found, grounded, right) as text


def config_with_gate(source: Path, dest: Path) -> Path:
    """A copy of a shipped config (paths made absolute) with a gate that every run passes."""
    cfg = yaml.safe_load(source.read_text(encoding="utf-8"))
    for key in ("index_dir", "source_dir", "questions_path", "gold_evidence_path",
                "predictions_path", "chunks_path"):
        if key in cfg:
            cfg[key] = str((source.parent / cfg[key]).resolve())
    cfg["gate"] = {"correct": ">= 0", "faithfulness": ">= 0"}
    dest.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return dest


def expected(result: RunResult) -> Verdicts:
    return {q.question_id: tuple(verdict_text(getattr(q.checks, c))  # type: ignore[misc]
                                 for c in ("found", "grounded", "right"))
            for q in result.questions}


def first_word(cell: str) -> str:
    return cell.strip().split(" ")[0] if cell.strip() else ""


def from_terminal(text: str, ids: set[str]) -> Verdicts:
    """The question table `ragassay run` printed: stdout is not a terminal here, so it is
    the Markdown table under its title (the terminal form leaves out the failure types)."""
    table = text.split("questions: found, grounded, right", 1)[1]
    out = {}
    for line in table.splitlines():
        if not line.startswith("| "):
            if out:
                break  # the end of the table
            continue
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        if len(cells) == 6 and cells[0] in ids:
            out[cells[0]] = (cells[3], first_word(cells[4]), cells[5])
    return out


def from_markdown(text: str) -> Verdicts:
    table = text.split("## Questions", 1)[1].split("\n## ", 1)[0]  # up to the next section
    out = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        if line.startswith("| ") and len(cells) == 7 and cells[0] != "question":
            out[cells[0]] = (cells[3], first_word(cells[4]), cells[5])
    return out


_ROW = re.compile(r'<tr class="main"><td class="ids">(.*?)</td><td class="question">.*?</td>'
                  r'<td class="num">.*?</td><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td>')


_ROWS_JSON = re.compile(r'<script type="application/json" id="rows">(.*?)</script>', re.S)


def from_html(page: str) -> Verdicts:
    """The verdicts as the page shows them: every question from the JSON rows the page's
    script draws its list from (a cell reads ``yes`` / ``no`` / ``—``, grounded with its
    reason), and the static rows shown with JavaScript off must say the same."""
    static = {unescape(m[0]): (unescape(m[1]), first_word(unescape(m[2])), unescape(m[3]))
              for m in _ROW.findall(page)}
    match = _ROWS_JSON.search(page)
    assert match, "no embedded rows"
    data = json.loads(match.group(1))
    rows = [decode_row(r, data["strings"]) for r in data["rows"]]
    drawn = {r["id"]: (verdict_text(r["c"][0]), verdict_text(r["c"][1]), verdict_text(r["c"][2]))
             for r in rows}
    assert static and {qid: drawn.get(qid) for qid in static} == static
    return drawn


_CHECKS = re.compile(r"checks: found=(\S+) grounded=(\S+) right=(\S+) \(found = (.*)\)")
_JUNIT_WORD = {"pass": "yes", "fail": "no", "not-measured": "—"}


def from_junit(path: Path) -> tuple[Verdicts, str]:
    root = ET.parse(path).getroot()
    cases = root.findall("testsuite[@name='ragassay.questions']/testcase")
    out = {}
    found_rule = ""
    for case in cases:
        qid = case.get("name", "").split(":")[0]
        text = "".join(case.itertext())
        m = _CHECKS.search(text)
        if m is None:  # not measured: skipped, no checks recorded
            assert case.find("skipped") is not None, text
            out[qid] = ("—", "—", "—")
            continue
        out[qid] = tuple(_JUNIT_WORD[w] for w in m.groups()[:3])  # type: ignore[assignment]
        found_rule = m.group(4)
    return out, found_rule


def check_every_output(config: Path, run_id: str, tmp_path: Path,
                       monkeypatch: pytest.MonkeyPatch, k: int | None = None) -> RunResult:
    monkeypatch.setattr(consoles, "out", Console(width=400, highlight=False))
    k_args = ["--k", str(k)] if k is not None else []
    res = runner.invoke(cli.app, ["run", "-c", str(config), *k_args, "--run-id", run_id,
                                  "--output-root", str(tmp_path)])
    folder = tmp_path / run_id
    result = read_run_folder(folder)
    # exit 3 exactly when a question has no prediction (the generated sets have some)
    unpredicted = any(q.not_measured == NO_PREDICTION for q in result.questions)
    assert res.exit_code == (3 if unpredicted else 0), res.output
    want = expected(result)
    ids = set(want)
    shown = from_terminal(res.stdout, ids)  # a large run lists its 50 worst questions
    assert shown == {qid: want[qid] for qid in shown}
    assert len(shown) == min(len(want), 50)
    assert result.totals.line() in res.stdout
    summary = (folder / "summary.md").read_text(encoding="utf-8")
    listed = from_markdown(summary)  # a large run lists its 200 worst questions
    assert listed == {qid: want[qid] for qid in listed}
    assert len(listed) == min(len(want), 200)
    assert f"Totals: {result.totals.line()}" in summary
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert from_html(page) == want
    assert result.totals.line() in unescape(page)
    assert f"found@{result.totals.k}" in page

    gate_config = config_with_gate(config, tmp_path / f"{run_id}-gate.yaml")
    rules = set()
    for name, args in (("bar", ["--bar", "correct>=0"]), ("config", ["-c", str(gate_config)])):
        junit = tmp_path / f"{run_id}-{name}.xml"
        res = runner.invoke(cli.app, ["gate", str(folder), *args, "--junit", str(junit)])
        assert res.exit_code in (0, 1), res.output
        verdicts, rule = from_junit(junit)
        assert verdicts == want, name
        rules.add(rule)
    assert rules == {f"hit_at_{result.totals.k} (hit policy {result.totals.hit_policy})"}

    sweep = runner.invoke(cli.app, ["sweep", "-c", str(config), "--k", str(result.totals.k),
                                    "--sweep-id", f"{run_id}-sweep", "--output-root",
                                    str(tmp_path)])
    assert sweep.exit_code == 0, sweep.output
    row = json.loads((tmp_path / f"{run_id}-sweep" / "sweep.json").read_text())["rows"][0]
    totals = result.totals
    for check in ("found", "grounded", "right"):
        assert row[check] == getattr(totals, check).model_dump(), check
    return result


def test_the_fixture_says_one_thing_everywhere(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    result = check_every_output(ROOT / "configs/eval/rag_quality_v1.yaml", "fixture", tmp_path,
                                monkeypatch)
    assert result.totals.line() == "found@10 11/13 · grounded 16/16 · right 6/16"


@pytest.mark.parametrize(("k", "line"), [
    (1, "found@1 7/9 · grounded 6/10 · right 6/10"),
    (3, "found@3 8/9 · grounded 7/10 · right 6/10"),
])
def test_the_shop_faq_says_one_thing_everywhere(k: int, line: str, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    result = check_every_output(ROOT / "examples/shop_faq_de/config.yaml", f"faq-k{k}",
                                tmp_path, monkeypatch, k=k)
    assert result.totals.line() == line


def test_a_generated_set_says_one_thing_everywhere(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    config = make_eval_set(tmp_path / "set", n_questions=300, seed=3, k=5)
    result = check_every_output(config, "syn", tmp_path, monkeypatch)
    verdicts = set(expected(result).values())
    # the set reaches every verdict of every check, so the comparison above means something
    for i in range(3):
        assert {v[i] for v in verdicts} == {"yes", "no", "—"}
