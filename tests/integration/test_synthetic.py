"""The generated evaluation set (tests/synthetic.py): deterministic, and a run over it reaches
every verdict. The run folder is read back as plain JSON, as any consumer would read it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from synthetic import make_eval_set
from typer.testing import CliRunner

from ragassay.cli import app

FILES = ("chunks.jsonl", "questions.jsonl", "gold.jsonl", "predictions.jsonl", "config.yaml")


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_generator_is_deterministic_and_fast(tmp_path: Path) -> None:
    t0 = time.perf_counter()
    a = make_eval_set(tmp_path / "a", n_questions=300, seed=3)
    assert time.perf_counter() - t0 < 1.0
    b = make_eval_set(tmp_path / "b", n_questions=300, seed=3)
    c = make_eval_set(tmp_path / "c", n_questions=300, seed=4)
    assert a.name == "config.yaml"
    for name in FILES:
        assert (a.parent / name).read_bytes() == (b.parent / name).read_bytes(), name
    assert (a.parent / "predictions.jsonl").read_bytes() != (
        c.parent / "predictions.jsonl").read_bytes()
    questions = _read(a.parent / "questions.jsonl")
    assert len(questions) == 300
    text = " ".join(q["question"] for q in questions)
    assert "Rückgabefrist" in text and "하자보수" in text and "return" in text
    preds = _read(a.parent / "predictions.jsonl")
    assert len(preds) < 300  # some questions have no prediction line
    assert any("usage" in p for p in preds) and any("usage" not in p for p in preds)
    hits = [h for p in preds for h in p["retrieved"]]
    assert any("score" in h for h in hits) and any("score" not in h for h in hits)
    gold = _read(a.parent / "gold.jsonl")
    assert any(g["gold_evidence"] == [] for g in gold)
    assert any(len(g["gold_evidence"]) == 2 for g in gold)
    assert any(ev.get("grade") == 2 for g in gold for ev in g["gold_evidence"])


def test_a_run_reaches_every_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    k = 5
    config = make_eval_set(tmp_path / "set", n_questions=300, seed=0, k=k)
    monkeypatch.chdir(config.parent)  # the config's paths are relative to its folder
    out = tmp_path / "runs"
    result = CliRunner().invoke(app, ["run", "-c", "config.yaml", "--run-id", "syn",
                                      "--output-root", str(out), "-q"])
    assert result.exit_code == 3, result.output  # the set has questions without a prediction
    assert "found@5 " in result.output

    run = out / "syn"
    answers = {r["question_id"]: r for r in _read(run / "answers.jsonl")}
    retrieved = {r["question_id"]: r for r in _read(run / "retrieved_chunks.jsonl")}
    assert len(answers) == len(retrieved) == 300

    found = [r["metrics"][f"hit_at_{k}"] for r in retrieved.values()]
    grounded = [r["scores"]["groundedness"] for r in answers.values()]
    right = [r["scores"]["correct"] for r in answers.values()]
    for verdicts in (found, grounded, right):
        assert {0, 1, None} <= set(verdicts)  # yes, no and not measured

    reasons = {(r["scores"]["groundedness_reason"] or "").split(" ")[0]
               for r in answers.values()}
    assert {"", "no", "source", "number"} <= reasons  # every groundedness reason
    without = [q for q, r in answers.items() if r["answer"] is None]
    assert without and all(answers[q]["scores"]["groundedness"] is None for q in without)
    unanswerable = [r for r in answers.values() if not r["answerable"] and r["answer"]]
    assert {r["scores"]["unanswerable_detection_flag"] for r in unanswerable} == {0, 1}
    ranks = {r["metrics"]["rank"] for r in retrieved.values()}
    assert {0, 1, k, k + 1} <= ranks
    inline = [r for r in answers.values() if r["answer"] and not r["answer"]["citations"]
              and r["scores"]["cited_ids"]]
    assert inline  # citations given only as inline [chunk_id] markers
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["counts"]["without_prediction"] == len(without)
    assert metrics["gold"]["reanchored"] == []
