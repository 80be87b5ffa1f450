"""A system under test as a Python callable, its contexts as text, and the reply reader.

The fixture (tests/fixtures/system) is a tiny system with its own chunking: one sentence per
context, no chunk ids. The expected values are worked out by hand in the comments (k = 2).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from builders import ROOT
from typer.testing import CliRunner

from ragassay.cli import app
from ragassay.config import load_config
from ragassay.endpoint import Malformed
from ragassay.errors import NOT_MEASURED
from ragassay.run import run_evaluation
from ragassay.system import ReplyPaths, SystemConfig, fill_request, read_reply

FIXTURE = ROOT / "examples" / "text_system"
runner = CliRunner()


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fixture copied to a temporary working folder (the callable is imported from it)."""
    for f in FIXTURE.iterdir():
        if f.is_file():
            shutil.copy(f, tmp_path / f.name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def run_system(project: Path, target: str, run_id: str = "live", **system: Any) -> Any:
    cfg = load_config(project / "config.yaml",
                      {"system": {"callable": target, **system}, "output_root": "runs"})
    return run_evaluation(cfg, run_id=run_id)


def rows(folder: Path, name: str) -> dict[str, dict[str, Any]]:
    return {json.loads(line)["question_id"]: json.loads(line)
            for line in (folder / name).read_text(encoding="utf-8").splitlines()}


@pytest.mark.parametrize("target", ["sentence_rag:ask", "sentence_rag:ask_async"])
def test_texts_are_scored_with_the_gold_placed_in_them(project: Path, target: str) -> None:
    result = run_system(project, target)
    r = {q.question_id: q for q in result.questions}
    # q1: "Payment …" then "The fee is 4 euros per month." (the gold, rank 2), then the
    # same sentence again (one item, counted where it first stands).
    assert [c.chunk_id for c in r["q1"].retrieved] == ["#1@q1", "#2@q1"]
    assert r["q1"].gold_grades == {"#2@q1": 1}
    assert (r["q1"].retrieval["recall_at_1"], r["q1"].retrieval["mrr_at_2"]) == (0.0, 0.5)
    # q2: the claim cut in two by the system's chunker: both halves are gold ("split").
    assert r["q2"].gold_grades == {"#1@q2": 1, "#2@q2": 1}
    assert (r["q2"].retrieval["recall_at_1"], r["q2"].retrieval["recall_at_2"]) == (0.5, 1.0)
    # q4: the system returned our shipping chunk word for word: it is that chunk; the gold
    # (tariff::chunk-002) is not there: missed, not dropped.
    assert [c.chunk_id for c in r["q4"].retrieved] == ["shipping::chunk-001"]
    assert r["q4"].gold_grades == {"tariff::chunk-002": 1}
    assert (r["q4"].retrieval["recall_at_2"], r["q4"].retrieval["rank"]) == (0.0, 0)
    means = {name: agg.mean for name, agg in result.metrics.retrieval.items()}
    assert means["recall_at_1"] == pytest.approx((0 + 0.5 + 0) / 3)
    assert means["recall_at_2"] == pytest.approx((1 + 1 + 0) / 3)
    assert means["mrr_at_2"] == pytest.approx((0.5 + 1 + 0) / 3)
    # the answers: q1 cites [2] (the fee sentence), q2 cites 1 and 2, q3 declines, q4
    # cites the shipping chunk (its 3 is there: grounded, but not right)
    assert [c.chunk_id for c in r["q1"].answer.citations] == ["#2@q1"]
    assert [c.chunk_id for c in r["q2"].answer.citations] == ["#1@q2", "#2@q2"]
    assert {q: r[q].scores["groundedness"] for q in r} == {"q1": 1, "q2": 1, "q3": 1, "q4": 1}
    assert {q: r[q].scores["correct"] for q in r} == {"q1": 1, "q2": 1, "q3": 1, "q4": 0}
    assert result.totals.line().startswith("found@2 2/3 · grounded 4/4 · right 3/4")
    placed = result.metrics.gold["returned_texts"]
    assert {k: v for k, v in placed["states"].items() if v} == {"ok": 1, "split": 1,
                                                                 "unanchored": 1}
    assert [(p["question_id"], p["status"]) for p in placed["placements"]] == [
        ("q1", "ok"), ("q2", "split"), ("q4", "unanchored")]
    # the run's own gold audit is that of the evidence, as for any run
    assert result.metrics.gold["states"]["ok"] == 3


def test_the_run_folder_keeps_the_replies_and_scores_them_again(project: Path) -> None:
    live = run_system(project, "sentence_rag:ask")
    folder = live.folder
    assert folder is not None
    system = json.loads((folder / "system.json").read_text(encoding="utf-8"))
    assert system["kind"] == "python" and system["callable"] == "sentence_rag:ask"
    assert len(system["source_sha256"]) == 64
    preds = [json.loads(line) for line in
             (folder / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [p["question_id"] for p in preds] == ["q1", "q2", "q3", "q4"]
    assert preds[0]["retrieved"][0] == {"chunk_id": "#1", "text": "Payment is due on the "
                                        "first day of the month."}
    cfg = load_config(project / "config.yaml", {"predictions_path": str(
        folder / "predictions.jsonl"), "output_root": "runs"})
    replay = run_evaluation(cfg, run_id="replay")
    assert replay.folder is not None
    a = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    b = json.loads((replay.folder / "metrics.json").read_text(encoding="utf-8"))
    # documented (docs/system.md): run_id, mode, the provenance's input hashes and the
    # timings differ; the system's identity is read from system.json beside the file
    assert (a["mode"], b["mode"]) == ("system", "predictions")
    assert b["provenance"]["system"] == a["provenance"]["system"]
    for doc in (a, b):
        for key in ("run_id", "mode", "timings"):
            doc.pop(key)
        doc["provenance"].pop("inputs_sha256")
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    for name in ("retrieved_chunks.jsonl", "answers.jsonl", "failure_cases.jsonl"):
        live_rows = {q: {k: v for k, v in row.items() if k != "run_id"}
                     for q, row in rows(folder, name).items()}
        again = {q: {k: v for k, v in row.items() if k != "run_id"}
                 for q, row in rows(replay.folder, name).items()}
        assert live_rows == again, name


def test_a_failed_call_is_not_measured_and_exits_3(project: Path) -> None:
    res = runner.invoke(app, ["run", "-c", "config.yaml", "--system", "sentence_rag:broken",
                              "--output-root", "runs", "--run-id", "broken", "-q"])
    assert res.exit_code == NOT_MEASURED, res.output
    assert "RuntimeError: the index is down" in res.output
    answers = rows(project / "runs" / "broken", "answers.jsonl")
    assert answers["q2"]["not_measured"].startswith("system call failed: sentence_rag:broken "
                                                    "raised RuntimeError")
    assert answers["q2"]["scores"]["groundedness"] is None  # never a score
    assert answers["q1"]["not_measured"] is None


def test_an_unknown_module_is_bad_input(project: Path) -> None:
    res = runner.invoke(app, ["run", "-c", "config.yaml", "--system", "no_such_rag:ask",
                              "--output-root", "runs"])
    assert res.exit_code == 2
    assert "system.callable" in res.output and "no_such_rag" in res.output


def test_a_rerun_resumes_from_the_cache(project: Path) -> None:
    (project / "calls.txt").write_text("", encoding="utf-8")
    (project / "counting_rag.py").write_text(
        "import pathlib\nfrom sentence_rag import REPLIES\n"
        "def ask(request):\n"
        "    with open(pathlib.Path(__file__).parent / 'calls.txt', 'a') as fh:\n"
        "        fh.write(request['question_id'] + '\\n')\n"
        "    return REPLIES[request['question_id']]\n", encoding="utf-8")
    first = run_system(project, "counting_rag:ask", "one", cache_dir="cache")
    second = run_system(project, "counting_rag:ask", "two", cache_dir="cache")
    calls = (project / "calls.txt").read_text(encoding="utf-8").split()
    assert sorted(calls) == ["q1", "q2", "q3", "q4"]  # the second run called nothing
    assert second.metrics.timings["system_cached"] == 4
    assert first.metrics.retrieval == second.metrics.retrieval


# --- the reply reader --------------------------------------------------------------------


def test_the_request_template_is_filled_in() -> None:
    template = {"model": "m", "k": "{top_k}", "messages": [
        {"role": "user", "content": "Q {question_id}: {question}"}]}
    assert fill_request(template, "q7", "What is {x}?", 5) == {
        "model": "m", "k": 5, "messages": [{"role": "user", "content": "Q q7: What is {x}?"}]}
    assert fill_request(None, "q7", "Why?", 3) == {"question_id": "q7", "question": "Why?",
                                                   "top_k": 3}


def test_a_chat_reply_is_read_by_its_paths() -> None:
    body = {"choices": [{"message": {"content": "It costs 4 euros [2]."}}],
            "sources": [{"page_content": "Shipping.", "source": "s", "page": 3},
                        {"page_content": "It costs 4 euros.", "score": 0.5}],
            "usage": {"prompt_tokens": 10, "completion_tokens": -5}}
    paths = ReplyPaths(answer="choices.0.message.content", contexts="sources")
    pred = read_reply(body, paths, "q1", ["I don't know"], measured_ms=12.0)
    assert [(h.chunk_id, h.doc_id, h.page, h.score) for h in pred.retrieved] == [
        ("#1", "s", 3, None), ("#2", None, None, 0.5)]
    assert [c.chunk_id for c in pred.answer.citations] == ["#2"]
    assert pred.answer.status == "supported"
    assert pred.usage is None  # -5 tokens: dropped and said, the answer kept
    assert pred.metadata["reply_notes"] == ["usage: not two token counts (integers >= 0), "
                                            "dropped"]
    assert pred.latency_ms == {"system": 12.0}


def test_citations_may_be_indexes_ids_markers_or_texts() -> None:
    body = {"answer": {"text": "A and B.", "citations": [1, "[2]", "ctx-c", "holds B", 9,
                                                         "nowhere at all"]},
            "retrieved": ["Text A.", "This holds B.", {"chunk_id": "ctx-c", "text": "C"}],
            "system_version": "v3", "latency_ms": 40}
    pred = read_reply(body, ReplyPaths(), "q1", [])
    assert [c.chunk_id for c in pred.answer.citations] == [
        "#1", "#2", "ctx-c", "#2", "[9]", "[nowhere at all]"]
    assert pred.metadata["system_version"] == "v3" and pred.latency_ms == {"system": 40.0}


def test_a_reply_without_an_answer_is_malformed() -> None:
    with pytest.raises(Malformed, match="no answer text at 'answer'"):
        read_reply({"retrieved": []}, ReplyPaths(), "q1", [])


def test_the_system_config_takes_a_url_or_a_callable() -> None:
    assert SystemConfig.model_validate("http://127.0.0.1:1/ask").url == "http://127.0.0.1:1/ask"
    assert SystemConfig.model_validate("pkg.mod:fn").callable == "pkg.mod:fn"
    with pytest.raises(ValueError, match="one of them"):
        SystemConfig(url="http://127.0.0.1:1/ask", callable="a:b")
    with pytest.raises(ValueError, match="package.module:function"):
        SystemConfig(callable="just_a_module")
    assert SystemConfig(url="http://u:secret@127.0.0.1:1/ask").model_dump()["url"] == \
        "http://u:***@127.0.0.1:1/ask"
