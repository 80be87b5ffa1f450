"""Bring your own system: the shop FAQ example scored from its predictions and chunk file.

The expected totals are worked out by hand, question by question, in
examples/shop_faq_de/NOTES.md.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from builders import ROOT
from typer.testing import CliRunner

from ragassay.cli import app
from ragassay.config import load_config
from ragassay.core import predict, score
from ragassay.inputs import load_inputs
from ragassay.run import run_evaluation

EXAMPLE = ROOT / "examples/shop_faq_de"
runner = CliRunner()


def totals(k: int) -> tuple[str, str, str]:
    cfg = load_config(EXAMPLE / "config.yaml")
    inputs = load_inputs(cfg)
    rows = score(cfg, inputs, predict(cfg, inputs, k=k), k=k)
    found = [r.retrieval[f"hit_at_{k}"] for r in rows if r.retrieval[f"hit_at_{k}"]
             is not None]
    grounded = [r.scores["groundedness"] for r in rows]
    right = [r.scores["correct"] for r in rows]
    return (f"{sum(found)}/{len(found)}", f"{sum(grounded)}/{len(grounded)}",
            f"{sum(right)}/{len(right)}")


@pytest.mark.parametrize(("k", "expected"), [
    (1, ("7/9", "6/10", "6/10")),
    (3, ("8/9", "7/10", "6/10")),
    (5, ("8/9", "8/10", "6/10")),
])
def test_shop_faq_totals(at_root: None, k: int, expected: tuple[str, str, str]) -> None:
    assert totals(k) == expected


def test_shop_faq_reasons_at_k3(tmp_path: Path, at_root: None) -> None:
    cfg = load_config(EXAMPLE / "config.yaml")
    run = run_evaluation(cfg, run_id="faq", output_root=tmp_path)
    rows = {json.loads(line)["question_id"]: json.loads(line) for line in
            (run.folder / "answers.jsonl").read_text(encoding="utf-8").splitlines()}
    reason = {qid: r["scores"]["groundedness_reason"] for qid, r in rows.items()}
    assert reason["de04"] == "source not in context: rückgabe-2"  # cited rank 4, k=3
    assert reason["de05"] == "number 10 Tage not in source"  # the chunk says 14 Tagen
    assert reason["de08"] == "number 2 Monaten not in source"  # the chunk says 2 Jahre
    assert reason["de03"] == ""  # "fünf Werktage" is the chunk's "5 Werktage"
    assert rows["de07"]["scores"]["correct"] == 0  # declined although the answer was there
    assert rows["de09"]["scores"]["correct"] == 1  # the unanswerable one, declined
    assert run.metrics.model_dump()["cost"]["prompt_tokens"] > 0  # reported by the system
    assert rows["de01"]["usage"]["source"] == "reported"
    assert run.metrics.model_dump()["provenance"]["index"]["embedding"] is None


def test_counted_tokens_when_the_system_reports_none(tmp_path: Path, at_root: None) -> None:
    preds = [json.loads(line) for line in (EXAMPLE / "predictions.jsonl").read_text(
        encoding="utf-8").splitlines()]
    for p in preds:
        p.pop("usage", None)
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in preds),
                    encoding="utf-8")
    cfg = load_config(EXAMPLE / "config.yaml")
    cfg.predictions_path = path
    run = run_evaluation(cfg, run_id="counted", output_root=tmp_path)
    row = json.loads((run.folder / "answers.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert row["usage"]["source"] == "counted" and row["usage"]["tokenizer"] == "cl100k_base"
    assert row["usage"]["prompt_tokens"] > 20


def test_missing_prediction_is_reported_not_dropped(tmp_path: Path, at_root: None) -> None:
    lines = (EXAMPLE / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")  # de01 has none
    cfg = load_config(EXAMPLE / "config.yaml")
    cfg.predictions_path = path
    run = run_evaluation(cfg, run_id="missing", output_root=tmp_path)
    assert run.metrics.model_dump()["counts"]["without_prediction"] == 1
    assert run.metrics.model_dump()["answer"]["correct"]["missing"] == 1
    failures = [json.loads(line) for line in (run.folder / "failure_cases.jsonl").read_text(
        encoding="utf-8").splitlines()]
    row = next(f for f in failures if f["question_id"] == "de01")
    assert row["failure_types"] == ["evaluation_failure.metric_missing"]


@pytest.fixture()
def example_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    dest = tmp_path / "examples/shop_faq_de"
    shutil.copytree(EXAMPLE, dest)
    monkeypatch.chdir(tmp_path)
    return dest


def rewrite(path: Path, lineno: int, change: dict) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[lineno - 1])
    row.update(change)
    lines[lineno - 1] = json.dumps(row, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_cli(*extra: str) -> tuple[int, str]:
    result = runner.invoke(app, ["run", "-c", "examples/shop_faq_de/config.yaml", "-q",
                                 "--run-id", "x", *extra])
    return result.exit_code, result.output


def test_prediction_for_unknown_question(example_copy: Path) -> None:
    rewrite(example_copy / "predictions.jsonl", 2, {"question_id": "de99"})
    code, output = run_cli()
    assert code == 2 and "predictions.jsonl:2: field 'question_id'" in output


def test_duplicate_prediction(example_copy: Path) -> None:
    path = example_copy / "predictions.jsonl"
    first = path.read_text(encoding="utf-8").splitlines()[0]
    path.write_text(path.read_text(encoding="utf-8") + first + "\n", encoding="utf-8")
    code, output = run_cli()
    assert code == 2 and "duplicate question_id 'de01'" in output


def test_citation_of_unknown_chunk(example_copy: Path) -> None:
    path = example_copy / "predictions.jsonl"
    row = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    row["answer"]["citations"] = [{"chunk_id": "versand-99"}]
    rewrite(path, 1, {"answer": row["answer"]})
    code, output = run_cli()
    assert code == 2 and "field 'answer.citations.0.chunk_id'" in output
    assert "versand-99" in output


def test_run_gate_exit_codes(example_copy: Path) -> None:
    code, output = run_cli("--gate")
    assert code == 1 and "FAIL groundedness >= 0.9" in output
    result = runner.invoke(app, ["gate", "experiments/runs/x", "--bar", "hit_at_3 >= 0.8",
                                 "--junit", "j.xml"])
    assert result.exit_code == 0, result.output
    assert Path("j.xml").read_text(encoding="utf-8").startswith("<?xml")
    result = runner.invoke(app, ["gate", "experiments/runs/x", "--bar", "hit_at_3 >= abc"])
    assert result.exit_code == 2 and "cannot parse" in result.output


@pytest.mark.parametrize("keep", [9, 0], ids=["one-missing", "empty-file"])
def test_questions_without_a_prediction_exit_3_with_the_folder_written(
        tmp_path: Path, keep: int) -> None:
    """One rule, as the exit-code table says: a question the predictions file has no
    prediction for is not measured, so the run exits 3 (one line naming how many and the
    first); the run folder is written with the others measured. An empty predictions file
    is the same case with every question."""
    from ragassay.runfolder import read_run_folder as read_run

    lines = (EXAMPLE / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "p.jsonl"
    path.write_text("".join(line + "\n" for line in lines[1:1 + keep]), encoding="utf-8")
    res = CliRunner().invoke(app, ["run", "-c", str(EXAMPLE / "config.yaml"), "--predictions",
                                   str(path), "--output-root", str(tmp_path / "runs"),
                                   "--run-id", "r", "-q"])
    assert res.exit_code == 3, res.output
    missing = 10 - keep
    assert (f"error: {missing} questions not measured: no prediction for them (e.g. 'de01'"
            in res.stderr)
    run = read_run(tmp_path / "runs" / "r")
    assert run.metrics.counts.without_prediction == missing
