"""The pytest plugin (``ragassay.testing``): throwaway pytest sessions on the shop FAQ example.

The worktree is not installed, so the sessions load the plugin with ``-p ragassay.testing``
(an installed ragassay loads it through its ``pytest11`` entry point).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import ROOT

# The sessions run in this process, and pytester forgets the modules a session imported;
# numpy cannot be imported twice, so the evaluation is imported here, once.
import ragassay.gate
import ragassay.run
import ragassay.runfolder  # noqa: F401
from ragassay.testing import evaluate_config

pytest_plugins = ["pytester"]

EXAMPLE = ROOT / "examples" / "shop_faq_de"
# this module imported the plugin already, so pytest cannot rewrite its asserts (it has none)
PLUGIN = ("-p", "ragassay.testing", "-W", "ignore::pytest.PytestAssertRewriteWarning")


def _config(folder: Path, gate: dict[str, str], predictions: Path | None = None) -> Path:
    """A copy of the example's config with this ``gate:`` (paths point at the example)."""
    lines = [
        f"chunks_path: {EXAMPLE / 'chunks.jsonl'}",
        f"predictions_path: {predictions or EXAMPLE / 'predictions.jsonl'}",
        f"questions_path: {EXAMPLE / 'questions.jsonl'}",
        f"gold_evidence_path: {EXAMPLE / 'gold.jsonl'}",
        f"output_root: {folder / 'runs'}",
        "seed: 7",
        "pipeline: {name: naive_baseline, top_k: 3}",
        "metrics:",
        "  retrieval: [hit_at_1, hit_at_3, recall_at_3]",
        "  answer: [groundedness, correct, faithfulness, hallucination_flag]",
        'decline_phrases: ["Dazu liegen mir keine Informationen vor"]',
    ]
    if gate:
        lines.append("gate:")
        lines += [f'  {metric}: "{expr}"' for metric, expr in gate.items()]
    path = folder / "config.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _rooted(pytester: pytest.Pytester) -> None:
    """An ini file makes the session's folder its rootdir, so node ids read ``ragassay::...``
    (paths are passed as ``--option=PATH``: pytest takes a separate ``PATH`` argument into
    account when it looks for the rootdir)."""
    pytester.makeini("[pytest]\n")


def _outcomes(result: pytest.RunResult) -> dict[str, int]:
    return {k: v for k, v in result.parseoutcomes().items() if k in ("passed", "failed", "error",
                                                                      "errors", "skipped")}


def test_bars_that_hold_are_passing_items(pytester: pytest.Pytester) -> None:
    cfg = _config(pytester.path, {"hit_at_3": ">= 0.8", "faithfulness": ">= 0.9"})
    result = pytester.runpytest(*PLUGIN, f"--ragassay={cfg}", "-v", "--ragassay-out", "out")
    assert result.ret == 0
    assert _outcomes(result) == {"passed": 3}
    result.stdout.fnmatch_lines([
        "ragassay::bar[[]hit_at_3 >= 0.8[]] PASSED*",
        "ragassay::bar[[]faithfulness >= 0.9[]] PASSED*",
        "ragassay::every_question_measured PASSED*",
        "*found@3 8/9 · grounded 7/10 · right 6/10*",
    ])
    runs = list((pytester.path / "out").iterdir())  # --ragassay-out, relative to the session
    assert len(runs) == 1 and (runs[0] / "report.html").is_file()


def test_a_missed_bar_is_one_failing_item_with_its_reason(pytester: pytest.Pytester) -> None:
    cfg = _config(pytester.path, {"hit_at_3": ">= 0.8", "groundedness": ">= 0.9",
                                  "faithfulness": ">= 0.9"})
    result = pytester.runpytest(*PLUGIN, f"--ragassay={cfg}")
    assert result.ret == 1
    assert _outcomes(result) == {"passed": 3, "failed": 1}
    result.stdout.fnmatch_lines([
        "*_ ragassay::bar[[]groundedness >= 0.9[]] _*",
        "got 0.700",
        "FAILED ragassay::bar[[]groundedness >= 0.9[]] - got 0.700",
    ])


def test_the_shipped_example_fails_as_the_gate_command_does(pytester: pytest.Pytester) -> None:
    # its gate: hit_at_3 >= 0.8 holds, groundedness >= 0.9 and hallucination_flag <= 0 do not
    result = pytester.runpytest(*PLUGIN, f"--ragassay={EXAMPLE / 'config.yaml'}",
                                f"--ragassay-out={pytester.path / 'out'}")
    assert _outcomes(result) == {"passed": 2, "failed": 2}
    result.stdout.fnmatch_lines(["*hallucination_flag <= 0*got 0.100*"])


def test_a_question_that_flipped_against_the_baseline_fails(
        pytester: pytest.Pytester, tmp_path: Path) -> None:
    baseline = evaluate_config(_config(tmp_path, {}), run_id="baseline",
                               output_root=tmp_path / "runs")
    assert baseline.question("de01").checks.passed
    # de01 no longer retrieves its gold chunk (versand-1): found fails, so the question does
    rows = [json.loads(line) for line in
            (EXAMPLE / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in rows:
        if row["question_id"] == "de01":
            row["retrieved"] = [r for r in row["retrieved"] if r["chunk_id"] != "versand-1"]
    broken = pytester.path / "predictions.jsonl"
    broken.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                      encoding="utf-8")
    cfg = _config(pytester.path, {"hit_at_3": ">= 0.7"}, predictions=broken)
    assert baseline.folder is not None
    result = pytester.runpytest(*PLUGIN, f"--ragassay={cfg}",
                                f"--ragassay-baseline={baseline.folder}")
    assert result.ret == 1
    assert _outcomes(result) == {"passed": 2, "failed": 1}
    result.stdout.fnmatch_lines([
        "found, grounded pass→fail against baseline baseline"
        " — Was kostet der Versand innerhalb Deutschlands?",
        "FAILED ragassay::regression[[]de01[]] - found, grounded pass→fail*",
    ])


def test_the_same_baseline_gives_no_regression(pytester: pytest.Pytester, tmp_path: Path) -> None:
    cfg = _config(tmp_path, {"hit_at_3": ">= 0.8"})
    baseline = evaluate_config(cfg, run_id="base", output_root=tmp_path / "runs")
    assert baseline.folder is not None
    result = pytester.runpytest(*PLUGIN, f"--ragassay={cfg}", "-v",
                                f"--ragassay-baseline={baseline.folder}")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["ragassay::no_regression PASSED*"])


def test_the_fixture_is_the_sessions_run(pytester: pytest.Pytester) -> None:
    cfg = _config(pytester.path, {"hit_at_3": ">= 0.8"})
    pytester.makepyfile(test_own="""
        def test_own_assertion(ragassay_run):
            assert ragassay_run.totals.line() == "found@3 8/9 · grounded 7/10 · right 6/10"
            assert ragassay_run.metrics.means()["hit_at_3"].mean > 0.8
            assert (ragassay_run.folder / "summary.md").is_file()
    """)
    result = pytester.runpytest(*PLUGIN, f"--ragassay={cfg}")
    assert _outcomes(result) == {"passed": 3}
    # without --ragassay the plugin adds no item and the fixture skips the test
    result = pytester.runpytest(*PLUGIN)
    assert _outcomes(result) == {"skipped": 1}
    printed = [line for line in result.stdout.lines if not line.startswith("plugins:")]
    assert "ragassay" not in "\n".join(printed).replace("test_own", "")


def test_items_can_be_selected_and_strict_adds_one_per_question(
        pytester: pytest.Pytester) -> None:
    cfg = _config(pytester.path, {"hit_at_3": ">= 0.8", "junit_questions": "strict"})
    result = pytester.runpytest(*PLUGIN, f"--ragassay={cfg}", "-k", "bar or measured")
    assert _outcomes(result) == {"passed": 2}
    result = pytester.runpytest(*PLUGIN, f"--ragassay={cfg}", "-k", "question and not every")
    # de04, de05, de07, de08 and de10 fail a check (as `ragassay gate` strict fails them)
    assert _outcomes(result) == {"passed": 5, "failed": 5}
    result.stdout.fnmatch_lines(["FAILED ragassay::question[[]de10[]] - failed found, right"])


def test_bad_input_is_a_collection_error_with_the_message(pytester: pytest.Pytester) -> None:
    cfg = _config(pytester.path, {"recall_at_9": ">= 0.8"})
    result = pytester.runpytest(*PLUGIN, f"--ragassay={cfg}")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*ragassay: *config.yaml*gate.recall_at_9*unknown metric*"])
    assert "Traceback" not in result.stdout.str()
    result = pytester.runpytest(*PLUGIN, "--ragassay", "missing.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result = pytester.runpytest(*PLUGIN, "--ragassay-baseline", "runs/x")
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_evaluate_config_applies_overrides(tmp_path: Path) -> None:
    cfg = _config(tmp_path, {})
    first = evaluate_config(cfg, output_root=tmp_path / "runs", pipeline__top_k=1)
    second = evaluate_config(cfg, output_root=tmp_path / "runs")
    assert first.totals.k == 1 and second.totals.k == 3
    assert first.run_id != second.run_id and first.run_id.startswith("pytest-")


def test_the_plugin_module_imports_nothing_heavy() -> None:
    # loaded into every pytest session once ragassay is installed: the evaluation waits
    # for --ragassay
    import subprocess
    import sys

    code = ("import sys, ragassay.testing; "
            "print(sorted(m for m in ('numpy', 'pydantic', 'ragassay.run', 'ragassay.config') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": str(EXAMPLE.parents[1] / "src")})
    assert out.stdout.strip() == "[]"
