"""The live form over real HTTP: the built-in baseline served on 127.0.0.1
(:mod:`ragassay.system.baseline_server`, what `ragassay serve-baseline` runs), scored live
and by replay; retries, Retry-After and fail fast of the system client."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from builders import ROOT
from openai_server import FakeOpenAIServer
from typer.testing import CliRunner

from ragassay.cli import app
from ragassay.config import load_config
from ragassay.system import HttpSystem, SystemConfig
from ragassay.system.baseline_server import BaselineSystem, make_server

EXAMPLE = ROOT / "examples/http_system"
runner = CliRunner()


@pytest.fixture(scope="module")
def baseline_url() -> Iterator[str]:
    """The shipped baseline (configs/eval/rag_quality_v1.yaml) served on a free port."""
    server = make_server(BaselineSystem(load_config(ROOT / "configs/eval/rag_quality_v1.yaml")))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def example_config(tmp_path: Path, name: str, url: str, **system: Any) -> Path:
    """The example's config, pointed at ``url``, writing under ``tmp_path``."""
    cfg = yaml.safe_load((EXAMPLE / name).read_text(encoding="utf-8"))
    for key in ("index_dir", "questions_path", "gold_evidence_path"):
        cfg[key] = str((EXAMPLE / cfg[key]).resolve())
    cfg["output_root"] = str(tmp_path / "runs")
    cfg["system"] = {**cfg["system"], "url": url, "cache_dir": str(tmp_path / "cache"),
                     **system}
    path = tmp_path / name
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return path


def metrics_of(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "metrics.json").read_text(encoding="utf-8"))


def comparable(doc: dict[str, Any]) -> str:
    """metrics.json without what docs/system.md says differs between a live run and its
    replay: run_id, mode, the input hashes and the timings."""
    doc = {k: v for k, v in doc.items() if k not in ("run_id", "mode", "timings")}
    doc["provenance"] = {k: v for k, v in doc["provenance"].items() if k != "inputs_sha256"}
    return json.dumps(doc, sort_keys=True, ensure_ascii=False)


def test_the_example_is_scored_live_and_by_replay_with_identical_metrics(
        tmp_path: Path, baseline_url: str) -> None:
    config = example_config(tmp_path, "config.yaml", baseline_url + "/ask")
    res = runner.invoke(app, ["run", "-c", str(config), "--run-id", "live", "-q"])
    assert res.exit_code == 0, res.output
    live = tmp_path / "runs/live"
    res = runner.invoke(app, ["run", "-c", str(config), "--run-id", "replay", "-q",
                              "--predictions", str(live / "predictions.jsonl")])
    assert res.exit_code == 0, res.output
    a, b = metrics_of(live), metrics_of(tmp_path / "runs/replay")
    assert comparable(a) == comparable(b)
    assert a["provenance"]["system"]["url"] == baseline_url + "/ask"
    assert a["provenance"]["system"]["system_version"][0].startswith("ragassay-baseline/")
    # the same answers as the built-in pipeline's own run: the server is that pipeline
    res = runner.invoke(app, ["run", "-c", str(ROOT / "configs/eval/rag_quality_v1.yaml"),
                              "--output-root", str(tmp_path / "runs"), "--run-id", "builtin",
                              "-q"])
    assert res.exit_code == 0, res.output
    builtin = metrics_of(tmp_path / "runs/builtin")
    assert a["retrieval"] == {k: v for k, v in builtin["retrieval"].items() if k in a["retrieval"]}
    assert a["checks"] == builtin["checks"]


def test_the_chat_form_returns_texts_and_scores_the_same(tmp_path: Path,
                                                         baseline_url: str) -> None:
    ask = example_config(tmp_path, "config.yaml", baseline_url + "/ask")
    chat = example_config(tmp_path, "config_chat.yaml", baseline_url + "/v1/chat/completions")
    for config, run_id in ((ask, "ask"), (chat, "chat")):
        res = runner.invoke(app, ["run", "-c", str(config), "--run-id", run_id, "-q"])
        assert res.exit_code == 0, res.output
    a, c = metrics_of(tmp_path / "runs/ask"), metrics_of(tmp_path / "runs/chat")
    preds = [json.loads(line) for line in (tmp_path / "runs/chat/predictions.jsonl")
             .read_text(encoding="utf-8").splitlines()]
    # the chat endpoint names no chunk: every context is a text, cited by number
    assert all("text" in h and h["chunk_id"].startswith("#") for p in preds
               for h in p["retrieved"])
    assert c["gold"]["returned_texts"]["questions"] == 16
    # its texts are our chunks word for word: the same chunks, the same measures
    assert c["retrieval"] == a["retrieval"]
    assert c["checks"] == a["checks"]


def test_a_rerun_asks_only_the_questions_without_a_reply(tmp_path: Path,
                                                         fake_server: FakeOpenAIServer) -> None:
    # an OpenAI-compatible chat endpoint as the system: a fixed template and paths
    config = example_config(tmp_path, "config_chat.yaml",
                            fake_server.base_url + "/chat/completions",
                            reply={"answer": "choices.0.message.content"},
                            backoff_base_s=0.01, max_retries=0, fail_fast_after=None)
    fake_server.control.fail_next(3, status=400)  # three questions fail the first run
    res = runner.invoke(app, ["run", "-c", str(config), "--run-id", "one", "-q"])
    assert res.exit_code == 3, res.output
    assert "3 questions not measured" in res.output and "resume from the cache" in res.output
    first = fake_server.control.post_count
    res = runner.invoke(app, ["run", "-c", str(config), "--run-id", "two", "-q"])
    assert res.exit_code == 0, res.output
    assert fake_server.control.post_count - first == 3  # the 13 replies came from the cache


def test_retry_after_is_honoured_and_capped_for_the_system(fake_server: FakeOpenAIServer
                                                           ) -> None:
    sleeps: list[float] = []
    system = HttpSystem(SystemConfig(url=fake_server.base_url + "/chat/completions",
                                     request={"model": "m", "messages": [
                                         {"role": "user", "content": "{question}"}]},
                                     reply={"answer": "choices.0.message.content"},
                                     retry_after_cap_s=5),
                        [], sleep=sleeps.append)
    fake_server.control.fail_next(1, status=429, retry_after="2")
    fake_server.control.fail_next(1, status=503, retry_after="120")
    pred = system.ask({"model": "m", "messages": [{"role": "user", "content": "Hi?"}]},
                      "q1", "key")
    assert sleeps == [2.0, 5.0] and pred.question_id == "q1"


def test_a_system_that_is_not_there_stops_the_run_with_exit_3(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/ask"
    config = example_config(tmp_path, "config.yaml", dead, backoff_base_s=0.01)
    res = runner.invoke(app, ["run", "-c", str(config), "--run-id", "dead", "-q"])
    assert res.exit_code == 3, res.output
    assert "16 questions not measured" in res.output
    answers = [json.loads(line) for line in (tmp_path / "runs/dead/answers.jsonl")
               .read_text(encoding="utf-8").splitlines()]
    assert all(a["not_measured"].startswith("system call failed:") for a in answers)
    assert any("this call was not made" in a["not_measured"] for a in answers)  # fail fast
    assert not (tmp_path / "runs/dead/predictions.jsonl").exists()


def test_the_system_flag_replaces_the_configs_target(tmp_path: Path, baseline_url: str
                                                     ) -> None:
    config = example_config(tmp_path, "config.yaml", "http://127.0.0.1:1/nowhere")
    res = runner.invoke(app, ["run", "-c", str(config), "--run-id", "flag", "-q",
                              "--system", baseline_url + "/ask"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["run", "-c", str(config), "--system", baseline_url + "/ask",
                              "--predictions", "x.jsonl"])
    assert res.exit_code == 2 and "not both" in res.output
