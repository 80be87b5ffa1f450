"""The contract run with an LLM answerer (and judge) over real HTTP to the local test server."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest
import yaml
from builders import ROOT
from openai_server import FakeOpenAIServer
from typer.testing import CliRunner

from ragassay.cli import app

runner = CliRunner()


def llm_config(tmp_path: Path, server: FakeOpenAIServer, **answerer: object) -> Path:
    cfg = yaml.safe_load((ROOT / "configs/eval/rag_quality_v1.yaml").read_text(encoding="utf-8"))
    for key in ("index_dir", "source_dir", "questions_path", "gold_evidence_path"):
        cfg[key] = str((ROOT / "configs/eval" / cfg[key]).resolve())
    cfg["output_root"] = str(tmp_path / "runs")
    cfg["answerer"] = {"kind": "llm", "base_url": server.base_url, "model": "fake-model",
                       "cache_dir": str(tmp_path / "cache"), "backoff_base_s": 0.01,
                       "max_retries": 1, "concurrency": 4, **answerer}
    cfg["judge"] = {"base_url": server.base_url, "model": "fake-judge",
                    "cache_dir": str(tmp_path / "cache"), "backoff_base_s": 0.01}
    cfg["metrics"]["answer"] = ["judge_faithfulness", *cfg["metrics"]["answer"]]
    path = tmp_path / "llm.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return path


def rows(run_dir: Path, name: str) -> list[dict]:
    return [json.loads(line) for line in (run_dir / name).read_text(encoding="utf-8")
            .splitlines()]


def test_llm_answerer_run_then_cached_rerun(tmp_path: Path, fake_server: FakeOpenAIServer
                                            ) -> None:
    config = llm_config(tmp_path, fake_server)
    result = runner.invoke(app, ["run", "-c", str(config), "--run-id", "llm", "-q"])
    assert result.exit_code == 0, result.output
    first_calls = fake_server.control.request_count
    assert first_calls >= 16  # 16 answers (+ judge calls)
    run_dir = tmp_path / "runs/llm"
    answers = rows(run_dir, "answers.jsonl")
    assert all(a["usage"]["source"] == "reported" for a in answers)
    supported = [a for a in answers if a["answer"]["status"] == "supported"]
    assert supported and all(a["answer"]["citations"] for a in supported)
    judged = [a for a in supported if a["judge"] and a["judge"].get("total")]
    assert judged and all(0 <= a["scores"]["judge_faithfulness"] <= 1 for a in judged)
    # A judged answer gives no reason for the judge's score to be missing.
    assert not any("judge_faithfulness" in a["missing"] for a in judged)
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["answer"]["judge_faithfulness"]["n"] >= len(judged)
    # A rerun costs nothing and gives identical answers.
    fake_server.control.reset()
    again = runner.invoke(app, ["run", "-c", str(config), "--run-id", "llm", "-q", "--force"])
    assert again.exit_code == 0, again.output
    # no call to the model (a GET /models probe of the endpoint before the run is not one)
    assert [r for r in fake_server.control.requests if r.method == "POST"] == []
    assert [a["answer"] for a in rows(run_dir, "answers.jsonl")] == [a["answer"] for a in
                                                                     answers]


def test_numbered_and_short_citations_score_like_full_ids(tmp_path: Path,
                                                          fake_server: FakeOpenAIServer) -> None:
    by_style = {}
    for cite in ("id", "number", "short"):
        fake_server.control.cite = cite
        (tmp_path / cite).mkdir()
        config = llm_config(tmp_path / cite, fake_server)
        result = runner.invoke(app, ["run", "-c", str(config), "--run-id", cite, "-q"])
        assert result.exit_code == 0, result.output
        by_style[cite] = rows(tmp_path / cite / "runs" / cite, "answers.jsonl")
        judge_prompts = [r.body["messages"][1]["content"] for r in fake_server.control.requests
                         if r.method == "POST" and r.body.get("model") == "fake-judge"]
        assert judge_prompts and all("\nQuestion: " in p for p in judge_prompts)
        fake_server.control.reset()
    cited = [a for a in by_style["number"] if a["answer"]["citations"]]
    assert cited and all(c["raw"].isdigit() for a in cited for c in a["answer"]["citations"])
    assert all("::" not in c["raw"] for a in by_style["short"]
               for c in a["answer"]["citations"])
    assert [(a["scores"], a["checks"]) for a in by_style["number"]] == \
        [(a["scores"], a["checks"]) for a in by_style["id"]]
    # A short id is mapped when one context chunk has it; when two documents' chunks of
    # the context share it, nothing is guessed: a source the answerer never saw.
    ambiguous = 0
    for short, full in zip(by_style["short"], by_style["id"], strict=True):
        locals_ = [c.rpartition("::")[2] for c in short["context_chunk_ids"]]
        raws = [c["raw"] for c in short["answer"]["citations"]]
        if any(locals_.count(r) > 1 for r in raws):
            ambiguous += 1
            assert short["scores"]["groundedness_reason"] == \
                f"source not in context: [{raws[0]}]"
        else:
            assert (short["scores"], short["checks"]) == (full["scores"], full["checks"])
    assert 0 < ambiguous < len(cited)  # the fixture has both cases


def test_failed_calls_are_not_scores(tmp_path: Path, fake_server: FakeOpenAIServer) -> None:
    config = llm_config(tmp_path, fake_server, max_retries=0, concurrency=1)
    fake_server.control.fail_next(3, status=500)  # the first three questions fail
    result = runner.invoke(app, ["run", "-c", str(config), "--run-id", "err", "-q"])
    assert result.exit_code == 3, result.output
    assert "3 questions not measured" in result.output
    run_dir = tmp_path / "runs/err"
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["counts"]["answerer_errors"] == 3
    assert metrics["answer"]["groundedness"]["missing"] == 3
    failures = {f["question_id"]: f for f in rows(run_dir, "failure_cases.jsonl")}
    not_measured = [f for f in failures.values()
                    if "answerer call failed" in json.dumps(f["evidence"])]
    assert len(not_measured) == 3
    # Resume: the failed questions are asked again, the others come from the cache.
    fake_server.control.reset()
    resumed = runner.invoke(app, ["run", "-c", str(config), "--run-id", "err", "-q", "--force"])
    assert resumed.exit_code == 0, resumed.output
    answer_calls = [r for r in fake_server.control.requests
                    if r.body and r.body.get("model") == "fake-model"]
    assert len(answer_calls) == 3


def test_llm_answerer_config_errors(tmp_path: Path, fake_server: FakeOpenAIServer) -> None:
    config = llm_config(tmp_path, fake_server)
    text = config.read_text(encoding="utf-8").replace("model: fake-model\n", "")
    config.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["run", "-c", str(config), "--run-id", "x", "-q"])
    assert result.exit_code == 2 and "answerer.model" in result.output
    assert fake_server.control.request_count == 0  # no call before the config is valid


@pytest.mark.parametrize("labels", ["data/judge/labelled.jsonl"])
def test_judge_check_command(tmp_path: Path, fake_server: FakeOpenAIServer, labels: str) -> None:
    config = llm_config(tmp_path, fake_server)
    result = runner.invoke(app, ["judge-check", str(ROOT / labels), "-c", str(config)])
    assert result.exit_code == 0, result.output
    assert "accuracy=" in result.output and "kappa=" in result.output


# --- endpoint checks before the run, and no secret in the run folder ------------------------


def test_unset_key_variable_stops_the_run_before_any_work(
        tmp_path: Path, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAGASSAY_NO_SUCH_KEY", raising=False)
    config = llm_config(tmp_path, fake_server, api_key_env="RAGASSAY_NO_SUCH_KEY")
    result = runner.invoke(app, ["run", "-c", str(config), "--run-id", "nokey", "-q"])
    assert result.exit_code == 2, result.output
    assert "field 'answerer.api_key_env'" in result.output
    assert "RAGASSAY_NO_SUCH_KEY is not set" in result.output
    assert "resume" not in result.output
    assert fake_server.control.request_count == 0
    assert not (tmp_path / "runs/nokey").exists()


def test_unset_judge_key_variable_stops_the_run_before_any_work(
        tmp_path: Path, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAGASSAY_NO_SUCH_KEY", raising=False)
    config = llm_config(tmp_path, fake_server)
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["judge"]["api_key_env"] = "RAGASSAY_NO_SUCH_KEY"
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = runner.invoke(app, ["run", "-c", str(config), "--run-id", "nokey", "-q"])
    assert result.exit_code == 2, result.output
    assert "field 'judge.api_key_env'" in result.output
    assert fake_server.control.request_count == 0


def test_nothing_listening_stops_the_run_at_once(tmp_path: Path,
                                                 fake_server: FakeOpenAIServer) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = llm_config(tmp_path, fake_server, base_url=f"http://127.0.0.1:{port}/v1",
                        max_retries=3)
    t0 = time.perf_counter()
    result = runner.invoke(app, ["run", "-c", str(config), "--run-id", "down", "-q"])
    assert result.exit_code == 2, result.output
    assert time.perf_counter() - t0 < 10
    assert f"nothing answers at http://127.0.0.1:{port}/v1" in result.output
    assert "answerer.base_url" in result.output
    assert not (tmp_path / "runs/down").exists()


SECRET = "pw-Zq7xK9"  # not a word of any path or text of the run


def test_no_secret_of_base_url_reaches_the_run_folder(tmp_path: Path,
                                                      fake_server: FakeOpenAIServer) -> None:
    scheme, rest = fake_server.base_url.split("://", 1)
    url = f"{scheme}://user:{SECRET}@{rest}"
    config = llm_config(tmp_path, fake_server, base_url=url, max_retries=0, concurrency=1)
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["judge"]["base_url"] = url
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    fake_server.control.fail_next(2, status=500)  # error messages with the URL in them
    result = runner.invoke(app, ["run", "-c", str(config), "--run-id", "sec", "-q"])
    assert result.exit_code == 3, result.output
    assert SECRET not in result.output
    assert any(r.headers.get("Authorization", "").startswith("Basic ")
               for r in fake_server.control.requests)  # the userinfo still authenticates
    run_dir = tmp_path / "runs/sec"
    files = [p for p in run_dir.rglob("*") if p.is_file()]
    assert {"metrics.json", "answers.jsonl", "failure_cases.jsonl", "report.html"} <= {
        p.name for p in files}
    leaks = [p.name for p in files if SECRET.encode() in p.read_bytes()]
    assert leaks == []
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["answerer"]["base_url"].startswith("http://user:***@127.0.0.1:")
    failures = (run_dir / "failure_cases.jsonl").read_text(encoding="utf-8")
    assert "HTTP 500 from http://user:***@127.0.0.1:" in failures


def test_endpoint_gone_after_the_probe_stops_the_run_fast(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server answers the start-up probe, then goes away: the run stops calling after
    a few refused connections instead of retrying every question, and says why."""
    import ragassay.run as run_module

    server = FakeOpenAIServer().start()
    real_check = run_module.check_endpoints

    def check_then_stop(cfg: object, **kw: object) -> None:
        real_check(cfg, **kw)  # type: ignore[arg-type]
        server.stop()  # gone after the probe: every connection is now refused

    monkeypatch.setattr(run_module, "check_endpoints", check_then_stop)
    # today's defaults: 3 retries with 0.5 s, 1 s, 2 s waits for each of 16 questions
    config = llm_config(tmp_path, server, max_retries=3, backoff_base_s=0.5)
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["judge"]["base_url"] = server.base_url
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    t0 = time.perf_counter()
    result = runner.invoke(app, ["run", "-c", str(config), "--run-id", "gone", "-q"])
    elapsed = time.perf_counter() - t0
    assert result.exit_code == 3, result.output
    assert elapsed < 5, elapsed
    answers = rows(tmp_path / "runs/gone", "answers.jsonl")
    assert len(answers) == 16
    reasons = [a["not_measured"] for a in answers]
    assert all(r and r.startswith("answerer call failed: endpoint unreachable: connection "
                                  f"refused at {server.base_url}; stopped after 3 failed")
               for r in reasons), reasons[:2]
    assert sum("this call was not made" in r for r in reasons) >= 16 - 4


def test_failed_answer_keeps_its_retrieval_metrics(tmp_path: Path,
                                                   fake_server: FakeOpenAIServer) -> None:
    config = llm_config(tmp_path, fake_server, max_retries=0, concurrency=1)
    fake_server.control.fail_next(3, status=500)  # the first three answer calls fail
    result = runner.invoke(app, ["run", "-c", str(config), "--run-id", "part", "-q"])
    assert result.exit_code == 3, result.output
    run_dir = tmp_path / "runs/part"
    answers = {a["question_id"]: a for a in rows(run_dir, "answers.jsonl")}
    failed = [a for a in answers.values() if a["not_measured"]]
    assert len(failed) == 3
    for a in failed:
        assert a["answer"] is None
        assert a["scores"]["groundedness"] is None and a["scores"]["correct"] is None
        assert a["missing"]["groundedness"].startswith("answerer call failed: HTTP 500")
        assert a["checks"]["grounded"] is None and a["checks"]["right"] is None
    retrieved = {r["question_id"]: r for r in rows(run_dir, "retrieved_chunks.jsonl")}
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    # The same questions answered (resumed from the cache for the others): same retrieval.
    fake_server.control.reset()
    again = runner.invoke(app, ["run", "-c", str(config), "--run-id", "full", "-q"])
    assert again.exit_code == 0, again.output
    full_dir = tmp_path / "runs/full"
    full = {r["question_id"]: r for r in rows(full_dir, "retrieved_chunks.jsonl")}
    full_answers = {a["question_id"]: a for a in rows(full_dir, "answers.jsonl")}
    answerable_failed = [a for a in failed if a["answerable"]]
    assert answerable_failed  # the fixture's first questions are answerable
    for a in failed:
        qid = a["question_id"]
        assert retrieved[qid]["retrieved"] == full[qid]["retrieved"]
        assert retrieved[qid]["metrics"] == full[qid]["metrics"]
        assert retrieved[qid]["gold_rank_in_index"] == full[qid]["gold_rank_in_index"]
        assert a["checks"]["found"] == full_answers[qid]["checks"]["found"]
    for a in answerable_failed:
        assert retrieved[a["question_id"]]["metrics"]["recall_at_5"] is not None
        assert a["checks"]["found"] in (True, False)
    full_metrics = json.loads((full_dir / "metrics.json").read_text(encoding="utf-8"))
    # The failed questions' retrieval counts in the aggregates and the found check.
    assert metrics["retrieval"]["recall_at_5"] == full_metrics["retrieval"]["recall_at_5"]
    assert metrics["checks"]["found"] == full_metrics["checks"]["found"]
    assert metrics["checks"]["grounded"]["not_measured"] >= 3


# --- judge failures are not measured: exit 3 ---------------------------------------------


def test_a_run_whose_judge_fails_exits_3_with_the_reason(tmp_path: Path,
                                                          fake_server: FakeOpenAIServer) -> None:
    config = llm_config(tmp_path, fake_server)
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["answerer"] = {"kind": "extractive"}  # every POST is then a judge call
    data["judge"]["max_retries"] = 0
    config.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    fake_server.control.fail_next(100_000, status=400)  # the judge breaks, every call
    result = runner.invoke(app, ["run", "-c", str(config), "--run-id", "judged", "-q"])
    assert result.exit_code == 3, result.output  # was 0: judged questions not measured
    assert "the judge failed on" in result.output and "judge call failed" in result.output
    answers = rows(tmp_path / "runs/judged", "answers.jsonl")  # the run folder is written
    failed = [a for a in answers if a["missing"].get("judge_faithfulness", "")
              .startswith("judge call failed")]
    assert failed


def test_judge_check_with_items_not_measured_exits_3(tmp_path: Path,
                                                     fake_server: FakeOpenAIServer) -> None:
    config = llm_config(tmp_path, fake_server)
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["judge"]["concurrency"] = 1  # one call at a time: the script hits the first item
    config.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    fake_server.control.fail_next(2, reply="not json at all")  # the first item, twice
    result = runner.invoke(app, ["judge-check", str(ROOT / "data/judge/labelled.jsonl"),
                                 "-c", str(config)])
    assert result.exit_code == 3, result.output  # was 0 with items not measured
    assert "1 of 24 items not measured" in result.output
    assert "judge reply invalid twice: not JSON" in result.output
