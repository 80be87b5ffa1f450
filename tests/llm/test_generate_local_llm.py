"""`ragassay generate` against the real model: llama.cpp's server with SmolLM2-135M-Instruct
(the session fixture ``local_llm``, started by ``ragassay serve-local``).

A 135M-parameter model keeps few items, often none: these tests check the machinery, never
the model's quality — structured output requested and read, every reply either kept or
dropped with a recorded reason, every kept label ``ok`` in ``ragassay gold audit``, every kept
question in its document's language, and a rerun with the same seed, model and chunks made
from the cache without the model decoding a single token (read from the server's
``/metrics``). Calls are kept short (small chunks, ``--max-tokens 160``)."""

from __future__ import annotations

import json
from pathlib import Path

from builders import ROOT
from generated_set import write_docs
from test_local_llm import decoded_tokens
from typer.testing import CliRunner

from ragassay.cli import app
from ragassay.generate import DROP_REASONS, question_language
from ragassay.localserver import ServerProcess

runner = CliRunner()


def generate(server: ServerProcess, docs: Path, out: Path, *extra: str) -> int:
    res = runner.invoke(app, ["generate", "--source", str(docs), "--out", str(out),
                              "--base-url", server.base_url, "--cache-dir",
                              str(out.parent / "cache"), "--max-tokens", "160",
                              "--no-progress", *extra])
    assert res.exit_code in (0, 3), res.output  # 3: fewer kept than asked, folder written
    assert "Traceback" not in res.output
    return res.exit_code


def check_machinery(out: Path) -> dict:  # type: ignore[type-arg]
    report = json.loads((out / "generation.json").read_text(encoding="utf-8"))
    assert report["usage"]["calls"] >= report["counts"]["candidates"] > 0
    assert report["model"]["reply_models"] and report["model"]["reply_models"][0].startswith(
        "SmolLM2-135M-Instruct")
    for d in report["dropped"]:
        assert d.get("reason", "surplus") in (*DROP_REASONS, "surplus"), d
        assert d["replies"] or d["reason"] == "endpoint_error"
    assert sum(report["drop_reasons"].values()) == report["counts"]["dropped"]
    if report["counts"]["kept"]:
        audit = runner.invoke(app, ["gold", "audit", "--gold", str(out / "gold.jsonl"),
                                    "--questions", str(out / "questions.jsonl"), "--index",
                                    str(out / "index"), "--format", "json"])
        assert audit.exit_code == 0, audit.output
        states = json.loads(audit.stdout)["states"]
        assert states["ok"] == sum(states.values())  # every kept label is ok
        for line in (out / "questions.jsonl").read_text(encoding="utf-8").splitlines():
            q = json.loads(line)
            assert question_language(q["question"]) == q["metadata"]["language"]
    return report


def test_generate_with_the_local_model_and_again_from_the_cache(
        local_llm: ServerProcess, tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs")
    args = ("--n", "2", "--kinds", "factoid,unanswerable", "--oversample", "2")
    code = generate(local_llm, docs, tmp_path / "a", *args)
    first = check_machinery(tmp_path / "a")
    assert first["usage"]["cached_calls"] == 0
    before = decoded_tokens(local_llm)
    assert generate(local_llm, docs, tmp_path / "b", *args) == code
    assert decoded_tokens(local_llm) == before  # the model did no work the second time
    again = check_machinery(tmp_path / "b")
    assert again["usage"]["cached_calls"] == again["usage"]["calls"] == first["usage"]["calls"]
    strip = ("seconds", "command", "usage")  # usage differs in cached_calls only
    assert {k: v for k, v in again.items() if k not in strip} == \
        {k: v for k, v in first.items() if k not in strip}
    assert {**again["usage"], "cached_calls": 0} == first["usage"]


def test_generate_on_the_fixture_documents(local_llm: ServerProcess, tmp_path: Path) -> None:
    out = tmp_path / "set"
    code = generate(local_llm, ROOT / "data/raw", out, "--n", "1", "--kinds", "unanswerable",
                    "--oversample", "2")
    report = check_machinery(out)
    assert (code == 0) == (report["counts"]["kept"] == 1)
    if code == 0:  # a kept item: the set runs as it is (the scripted test always checks it)
        run = runner.invoke(app, ["run", "-c", str(out / "config.yaml"), "--run-id", "r",
                                  "--output-root", str(tmp_path / "runs"), "-q"])
        assert run.exit_code == 0, run.output
