"""The contract command end to end on the shipped fixture, and every bad input it must refuse."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from builders import ROOT

from ragassay.diagnose import LABELS

CONFIG = "configs/eval/rag_quality_v1.yaml"
FILES = {"metrics.json", "retrieved_chunks.jsonl", "answers.jsonl", "failure_cases.jsonl",
         "chunks.jsonl", "summary.md", "report.html"}


def run_eval(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "eval.naive_rag.run_eval", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
                               "PATH": "/usr/bin:/bin",
                               "COLUMNS": "200"})


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def contract_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    proc = run_eval("--config", CONFIG, "--run-id", "e2e", "--output-root", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "recall_at_5" in proc.stdout  # the summary table
    return out / "e2e"


def test_contract_files_and_counts(contract_run: Path) -> None:
    assert {p.name for p in contract_run.iterdir()} == FILES
    metrics = json.loads((contract_run / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["counts"] == {"questions": 16, "answerable": 13, "unanswerable": 3,
                                 "without_prediction": 0, "answerer_errors": 0}
    for name in ("recall_at_5", "recall_at_10", "mrr_at_5", "ndcg_at_5"):
        agg = metrics["retrieval"][name]
        assert agg["n"] + agg["missing"] == 16 and agg["n"] <= 13
        assert agg["ci_low"] <= agg["mean"] <= agg["ci_high"]
    for name in ("faithfulness", "groundedness", "answer_relevancy", "citation_accuracy",
                 "hallucination_flag", "unanswerable_detection_flag"):
        assert name in metrics["answer"]
    assert metrics["answer"]["unanswerable_detection_flag"]["n"] == 3
    assert list(metrics["failures"]["counts"]) == list(LABELS)
    prov = metrics["provenance"]
    assert prov["config_sha256"] and prov["seed"] == 20261201
    assert prov["index"]["stale"] is None, "committed index is out of date with data/raw"

    for name in ("retrieved_chunks.jsonl", "answers.jsonl"):
        rows = read_jsonl(contract_run / name)
        assert len(rows) == 16
        assert all(r["run_id"] == "e2e" and r["question_id"] for r in rows)
    failures = read_jsonl(contract_run / "failure_cases.jsonl")
    assert failures and all(r["failure_types"] and set(r["failure_types"]) <= set(LABELS)
                            for r in failures)
    assert all(set(r["evidence"]) == set(r["failure_types"]) for r in failures)
    fired = {t for r in failures for t in r["failure_types"]}
    assert len({t.split(".")[0] for t in fired}) >= 3, "the fixture must fail in several ways"


def test_rerun_same_id_is_refused_then_forced_identically(contract_run: Path) -> None:
    root = contract_run.parent
    before = json.loads((contract_run / "metrics.json").read_text(encoding="utf-8"))
    stable = ("retrieved_chunks.jsonl", "failure_cases.jsonl", "summary.md")  # no timings
    before_bytes = {name: (contract_run / name).read_bytes() for name in stable}
    proc = run_eval("--config", CONFIG, "--run-id", "e2e", "--output-root", str(root))
    assert proc.returncode == 2
    assert "run id already used" in proc.stderr and str(root / "e2e") in proc.stderr
    proc = run_eval("--config", CONFIG, "--run-id", "e2e", "--output-root", str(root), "--force")
    assert proc.returncode == 0, proc.stderr
    after = json.loads((contract_run / "metrics.json").read_text(encoding="utf-8"))
    before.pop("timings"), after.pop("timings")
    assert before == after
    assert before_bytes == {name: (contract_run / name).read_bytes() for name in stable}
    assert not [p for p in root.iterdir() if p.name.startswith(".")]  # no temp folders left


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    """A copy of the config, the eval data and the index that a test may break."""
    for rel in ("configs", "data/eval", "data/index"):
        shutil.copytree(ROOT / rel, tmp_path / rel)
    return tmp_path


def expect_error(ws: Path, *needles: str) -> str:
    proc = run_eval("--config", CONFIG, "--run-id", "bad", cwd=ws)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1, line
    for needle in needles:
        assert needle in line
    assert not (ws / "experiments/runs/bad").exists()
    return line


def edit_line(path: Path, lineno: int, text: str | None) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    if text is None:
        del lines[lineno - 1]
    else:
        lines[lineno - 1] = text
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_malformed_jsonl_line(workspace: Path) -> None:
    edit_line(workspace / "data/eval/rag_questions.jsonl", 3, '{"question_id": "q03",')
    expect_error(workspace, "data/eval/rag_questions.jsonl:3:", "malformed JSON")


def test_missing_required_field(workspace: Path) -> None:
    path = workspace / "data/eval/rag_questions.jsonl"
    row = json.loads(path.read_text(encoding="utf-8").splitlines()[4])
    del row["answerable"]
    edit_line(path, 5, json.dumps(row, ensure_ascii=False))
    expect_error(workspace, "rag_questions.jsonl:5:", "field 'answerable'")


def test_duplicate_question_id(workspace: Path) -> None:
    path = workspace / "data/eval/rag_questions.jsonl"
    first = path.read_text(encoding="utf-8").splitlines()[0]
    edit_line(path, 2, first)
    expect_error(workspace, "rag_questions.jsonl:2:", "field 'question_id'", "duplicate")


def test_gold_for_unknown_question(workspace: Path) -> None:
    path = workspace / "data/eval/gold_evidence.jsonl"
    row = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    row["question_id"] = "q999"
    edit_line(path, 1, json.dumps(row, ensure_ascii=False))
    expect_error(workspace, "gold_evidence.jsonl:1:", "field 'question_id'", "q999")


def test_embeddings_that_do_not_match(workspace: Path) -> None:
    emb = np.load(workspace / "data/index/embeddings.npy")
    np.save(workspace / "data/index/embeddings.npy", emb[:-1])
    expect_error(workspace, "embeddings.npy", "rows")


def test_config_outside_the_contract(workspace: Path) -> None:
    path = workspace / CONFIG
    text = path.read_text(encoding="utf-8").replace("rerank: false", "rerank: true")
    path.write_text(text, encoding="utf-8")
    lineno = next(i for i, line in enumerate(text.splitlines(), 1) if "rerank:" in line)
    expect_error(workspace, f"rag_quality_v1.yaml:{lineno}:", "field 'pipeline.rerank'")


def test_existing_run_folder_is_never_touched(workspace: Path) -> None:
    run_dir = workspace / "experiments/runs/keep"
    run_dir.mkdir(parents=True)
    (run_dir / "metrics.json").write_text("precious", encoding="utf-8")
    proc = run_eval("--config", CONFIG, "--run-id", "keep", cwd=workspace)
    assert proc.returncode == 2 and "run id already used" in proc.stderr
    assert (run_dir / "metrics.json").read_text(encoding="utf-8") == "precious"


def test_stale_gold_is_reanchored_and_reported(workspace: Path) -> None:
    """A label pointing at a chunk that no longer holds its claim is moved, and reported."""
    path = workspace / "data/eval/gold_evidence.jsonl"
    rows = read_jsonl(path)
    target = next(r for r in rows if r["gold_evidence"] and r["gold_evidence"][0].get(
        "support_claim"))
    right = target["gold_evidence"][0]["chunk_id"]
    target["gold_evidence"][0]["chunk_id"] = right.rsplit("-", 1)[0] + "-999"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    proc = run_eval("--config", CONFIG, "--run-id", "moved", cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    metrics = json.loads((workspace / "experiments/runs/moved/metrics.json").read_text())
    moved = [m for m in metrics["gold"]["reanchored"]
             if m["question_id"] == target["question_id"]]
    assert moved and moved[0]["status"] == "reanchored" and right in moved[0]["chunk_ids"]


def test_timings_per_stage(contract_run: Path) -> None:
    """Stage times in metrics.json; per-question percentiles only where each question is
    timed on its own (the answer call), the batched retrieval as its total and mean."""
    timings = json.loads((contract_run / "metrics.json").read_text(encoding="utf-8"))["timings"]
    for key in ("load_s", "anchor_s", "retrieve_s", "retrieve_mean_ms", "answer_s", "score_s",
                "write_s", "total_s"):
        assert isinstance(timings[key], float) and timings[key] >= 0, key
    assert timings["retrieve_mean_ms"] == pytest.approx(timings["retrieve_s"] * 1000 / 16)
    assert set(timings["answer_ms"]) == {"p50", "p95", "mean", "n"}
    assert timings["answer_ms"]["n"] == 16 and timings["answer_ms"]["p50"] <= \
        timings["answer_ms"]["p95"]
    score_ms = timings["score_ms"]  # each question's scoring timed on its own
    assert score_ms["n"] == 16 and 0 <= score_ms["p50"] <= score_ms["p95"]
    assert score_ms["mean"] * 16 <= timings["score_s"] * 1000
    assert "retrieve" not in timings["latency_ms"]  # no per-question share of a batch time
    answers = read_jsonl(contract_run / "answers.jsonl")
    assert all(set(a["latency_ms"]) == {"answer"} for a in answers)
