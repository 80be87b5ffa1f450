"""ragassay against a real model: llama.cpp's server (xllamacpp) with SmolLM2-135M-Instruct,
started by ``ragassay serve-local`` on 127.0.0.1 (the session fixture ``local_llm``).

The assertions are about ragassay — the protocol, parsing, statuses, not-measured handling,
the cache, determinism at temperature 0 — never about how good a 135M-parameter model is.
Each call is kept short (a few retrieved chunks, a few dozen tokens) so that the whole file
runs in a minute or two on 2 cores. Whether a call made the model work is read from the
server's own counters (``/metrics``: tokens decoded), not from timings.
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any, get_args

import httpx
import pytest
import yaml
from builders import ROOT
from conftest import packaged_local_model
from typer.testing import CliRunner

from ragassay.answer.llm import LLMAnswerer
from ragassay.claims.verify import Source, check_answer
from ragassay.cli import app
from ragassay.endpoint import EndpointConfig, EndpointError, OpenAICompatClient
from ragassay.judge import Judge
from ragassay.localserver import (
    PACKAGED_MODEL,
    ServerProcess,
    check_model,
)
from ragassay.metrics.answer import is_declined
from ragassay.schema import Answer, AnswerStatus, Chunk, Citation

runner = CliRunner()

# q10, q11: English, answerable; q13: German, answerable; q16: English, not answerable
QUESTION_IDS = ("q10", "q11", "q13", "q16")
# two claims per language, one supported and one not
CLAIM_IDS = ("ko-01", "ko-02", "de-01", "de-02", "en-01", "en-02")


def decoded_tokens(server: ServerProcess) -> int:
    """Tokens the server has decoded since it started (any completion decodes some)."""
    text = httpx.get(server.base_url.removesuffix("/v1") + "/metrics", timeout=10,
                     trust_env=False).text
    match = re.search(r"^llamacpp:n_decode_total (\d+)", text, re.M)
    assert match, text
    return int(match.group(1))


def client(server: ServerProcess, cache_dir: Path | None = None,
           **cfg: Any) -> OpenAICompatClient:
    return OpenAICompatClient(EndpointConfig(**{
        "base_url": server.base_url, "model": "local", "max_tokens": 24, "timeout_s": 120,
        "max_retries": 0, "concurrency": 1, "cache_dir": cache_dir, **cfg}))


MESSAGES = [{"role": "user", "content": "Name one colour."}]


# --- (a) the protocol through ragassay's client --------------------------------------------


def test_the_packaged_model_is_the_recorded_file() -> None:
    path = packaged_local_model()
    assert path.stat().st_size == PACKAGED_MODEL.size
    assert check_model(path) == PACKAGED_MODEL.sha256


def listening_addresses(port: int) -> set[str]:
    """The local addresses of the sockets listening on ``port`` (Linux: /proc/net/tcp*)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table, encoding="ascii") as fh:
            for line in fh.readlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                address, hex_port = local.rsplit(":", 1)
                if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                    found.add(address)
    return found


def test_the_server_listens_on_loopback_only(local_llm: ServerProcess) -> None:
    assert local_llm.base_url.startswith("http://127.0.0.1:")
    if Path("/proc/net/tcp").is_file():
        port = int(local_llm.base_url.rsplit(":", 1)[1].split("/")[0])
        assert listening_addresses(port) == {"0100007F"}  # 127.0.0.1, nothing else
    models = httpx.get(local_llm.base_url + "/models", timeout=10, trust_env=False).json()
    assert [m["id"] for m in models["data"]] == [local_llm.model]
    assert local_llm.model == f"{PACKAGED_MODEL.filename}@sha256:{PACKAGED_MODEL.sha256[:16]}"


def test_chat_completion_text_usage_and_model(local_llm: ServerProcess) -> None:
    with client(local_llm) as c:
        result = c.chat(MESSAGES)
    assert isinstance(result.text, str) and result.text.strip()
    assert result.cached is False
    assert result.raw_model == local_llm.model
    assert result.usage is not None
    assert result.usage["prompt_tokens"] > 0
    assert 0 < result.usage["completion_tokens"] <= 24  # max_tokens is obeyed


def test_temperature_zero_gives_the_same_reply_twice(local_llm: ServerProcess) -> None:
    with client(local_llm) as c:  # no cache: both calls reach the model
        before = decoded_tokens(local_llm)
        first, second = c.chat(MESSAGES, max_tokens=16), c.chat(MESSAGES, max_tokens=16)
    assert decoded_tokens(local_llm) > before
    assert (first.text, first.usage) == (second.text, second.usage)


def test_the_cache_answers_a_repeated_call_without_the_model(local_llm: ServerProcess,
                                                             tmp_path: Path) -> None:
    with client(local_llm, tmp_path / "cache") as c:
        first = c.chat(MESSAGES, max_tokens=12)
        after_first = decoded_tokens(local_llm)
        again = c.chat(MESSAGES, max_tokens=12)
    assert decoded_tokens(local_llm) == after_first  # the model did no work
    assert (first.cached, again.cached) == (False, True)
    assert (again.text, again.usage, again.raw_model) == (first.text, first.usage,
                                                          first.raw_model)
    assert len(list((tmp_path / "cache").glob("*.json"))) == 1


def test_a_timeout_is_an_error_and_the_server_still_answers(local_llm: ServerProcess) -> None:
    long_prompt = [{"role": "user", "content": "Tell a long story about a lighthouse. " * 40}]
    with client(local_llm, timeout_s=0.05) as c, pytest.raises(EndpointError) as failed:
        c.chat(long_prompt, max_tokens=64)
    assert "within 0.05 s" in str(failed.value) and failed.value.attempts == 1
    with client(local_llm) as c:
        assert c.chat(MESSAGES).text.strip()


CONTEXT = [
    Chunk(chunk_id="rfp::chunk-001", doc_id="rfp", page_span=(3, 3),
          text="The warranty period is 24 months from acceptance."),
    Chunk(chunk_id="faq::chunk-002", doc_id="faq",
          text="Shipping costs 4.90 euros. Orders over 50 euros ship free."),
]


def test_llm_answerer_parses_real_replies(local_llm: ServerProcess, tmp_path: Path) -> None:
    answerer = LLMAnswerer(client(local_llm, tmp_path / "cache", max_tokens=32))
    questions = ["How long is the warranty period?", "Who is the mayor of the city?"]
    results = answerer.answer_many_with_usage([(q, CONTEXT) for q in questions])
    for result in results:
        assert not isinstance(result, Exception), result
        answer, usage = result
        assert answer.status in get_args(AnswerStatus)
        assert {c.chunk_id for c in answer.citations} <= {c.chunk_id for c in CONTEXT}
        assert usage["source"] == "reported" and usage["cached"] is False
        assert 0 < usage["completion_tokens"] <= 32
    before = decoded_tokens(local_llm)
    again = answerer.answer_many_with_usage([(q, CONTEXT) for q in questions])
    assert decoded_tokens(local_llm) == before
    assert [r[0] for r in again] == [r[0] for r in results]  # type: ignore[index]
    assert all(r[1]["cached"] for r in again)  # type: ignore[index]


# --- (b) the naive baseline with the LLM answerer and judge ---------------------------------


def jsonl_subset(source: Path, key: str, ids: tuple[str, ...], out: Path) -> Path:
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows
                           if r[key] in ids), encoding="utf-8")
    return out


def llm_config(tmp_path: Path, server: ServerProcess, cache: str = "cache",
               **answerer: Any) -> Path:
    """The shipped LLM config, pointed at the test server, on four questions with short
    contexts (top_k 2) and short replies."""
    shipped = ROOT / "configs/eval/rag_quality_v1_llm.yaml"
    cfg = yaml.safe_load(shipped.read_text(encoding="utf-8"))
    for key in ("index_dir", "source_dir"):
        cfg[key] = str((shipped.parent / cfg[key]).resolve())
    cfg["questions_path"] = str(jsonl_subset(ROOT / "data/eval/rag_questions.jsonl",
                                             "question_id", QUESTION_IDS,
                                             tmp_path / "questions.jsonl"))
    cfg["gold_evidence_path"] = str(jsonl_subset(ROOT / "data/eval/gold_evidence.jsonl",
                                                 "question_id", QUESTION_IDS,
                                                 tmp_path / "gold.jsonl"))
    cfg["output_root"] = str(tmp_path / "runs")
    cfg["pipeline"]["top_k"] = 2
    cfg["metrics"]["retrieval"] = ["recall_at_2", "mrr_at_2"]
    cfg["answerer"].update({"base_url": server.base_url, "max_tokens": 48,
                            "concurrency": 1, "cache_dir": str(tmp_path / cache), **answerer})
    cfg["judge"].update({"base_url": server.base_url, "cache_dir": str(tmp_path / cache),
                         "concurrency": 1, "timeout_s": 120})
    path = tmp_path / f"llm-{cache}.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return path


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_baseline_run_with_a_real_model_then_a_cached_rerun(local_llm: ServerProcess,
                                                            tmp_path: Path) -> None:
    config = llm_config(tmp_path, local_llm)
    result = runner.invoke(app, ["run", "-c", str(config), "--run-id", "real", "-q"])
    assert result.exit_code == 0, result.output
    run_dir = tmp_path / "runs/real"
    answers = rows(run_dir / "answers.jsonl")
    assert [a["question_id"] for a in answers] == list(QUESTION_IDS)
    for a in answers:
        assert a["answer"]["status"] in get_args(AnswerStatus)
        assert a["usage"]["source"] == "reported"
        assert 0 < a["usage"]["completion_tokens"] <= 48
        assert len(a["context_chunk_ids"]) == 2  # top_k
        # every parsed citation is one of the chunks the model was shown
        assert {c["chunk_id"] for c in a["answer"]["citations"]} <= set(a["context_chunk_ids"])
        assert a["not_measured"] is None and set(a["checks"]) == {"found", "grounded", "right"}
        assert a["judge"]["total"] == len(a["judge"]["verdicts"])
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["counts"]["answerer_errors"] == 0
    assert metrics["answerer"]["base_url"] == local_llm.base_url
    # A rerun is served from the cache: the model does no work and the answers are the same.
    before = decoded_tokens(local_llm)
    again = runner.invoke(app, ["run", "-c", str(config), "--run-id", "real", "-q", "--force"])
    assert again.exit_code == 0, again.output
    assert decoded_tokens(local_llm) == before
    assert [a["answer"] for a in rows(run_dir / "answers.jsonl")] == [a["answer"]
                                                                      for a in answers]


def test_timed_out_answers_are_not_measured(local_llm: ServerProcess, tmp_path: Path) -> None:
    config = llm_config(tmp_path, local_llm, cache="cold", timeout_s=0.05, max_retries=0)
    result = runner.invoke(app, ["run", "-c", str(config), "--run-id", "late", "-q"])
    assert result.exit_code == 3, result.output
    assert "4 questions not measured" in result.output
    metrics = json.loads((tmp_path / "runs/late/metrics.json").read_text(encoding="utf-8"))
    assert metrics["counts"]["answerer_errors"] == 4
    assert metrics["answer"]["groundedness"]["missing"] == 4
    assert metrics["retrieval"]["recall_at_2"]["n"] == 3  # retrieval is still measured
    failures = rows(tmp_path / "runs/late/failure_cases.jsonl")
    assert all("within 0.05 s" in json.dumps(f["evidence"]) for f in failures)


# --- (c) judge-check ------------------------------------------------------------------------


def test_judge_check_on_labelled_claims_is_repeatable(local_llm: ServerProcess,
                                                      tmp_path: Path) -> None:
    labelled = jsonl_subset(ROOT / "data/judge/labelled.jsonl", "id", CLAIM_IDS,
                            tmp_path / "labelled.jsonl")
    outputs = []
    for cache in ("first", "second", "second"):  # a fresh cache twice, then a cached rerun
        before = decoded_tokens(local_llm)
        result = runner.invoke(app, ["judge-check", str(labelled), "-c",
                                     str(llm_config(tmp_path, local_llm, cache=cache))])
        assert result.exit_code == 0, result.output
        outputs.append((result.output, decoded_tokens(local_llm) > before))
    (first, worked1), (second, worked2), (cached, worked3) = outputs
    assert (worked1, worked2, worked3) == (True, True, False)
    assert first == second == cached  # temperature 0: the same verdicts, called or cached
    match = re.search(r"n=(\d+) measured=(\d+) accuracy=\S+ kappa=\S+ (?:\[\S+ \S+\] )?"
                      r"confusion=(\{.*?\}) not measured=0 unparsable=0\.000", first)
    assert match, first
    assert (match.group(1), match.group(2)) == ("6", "6")
    assert sum(json.loads(match.group(3).replace("'", '"')).values()) == 6


# --- serve-local's bad input (no server needed) ---------------------------------------------


def test_serve_local_refuses_a_file_that_is_not_gguf(tmp_path: Path) -> None:
    bogus = tmp_path / "model.gguf"
    bogus.write_bytes(b"<html>not a model</html>")
    result = runner.invoke(app, ["serve-local", "--model", str(bogus), "--port", "0"])
    assert result.exit_code == 2
    assert f"{bogus}: field '--model': not a GGUF file" in result.output


def test_serve_local_refuses_a_packaged_file_with_another_checksum(tmp_path: Path) -> None:
    altered = tmp_path / PACKAGED_MODEL.filename
    altered.write_bytes(b"GGUF" + bytes(64))
    result = runner.invoke(app, ["serve-local", "--model", str(altered), "--port", "0"])
    assert result.exit_code == 2
    assert f"is not the recorded {PACKAGED_MODEL.sha256}" in result.output


def test_serve_local_refuses_a_taken_port(tmp_path: Path) -> None:
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF" + bytes(64))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = runner.invoke(app, ["serve-local", "--model", str(model), "--port", str(port)])
    assert result.exit_code == 2
    assert f"port {port} on 127.0.0.1 is taken" in result.output


# --- (d) the judge on citing answers, abstentions, a dead-slow judge -------------------------


CITING = Answer(text="The warranty period is 24 months [rfp::chunk-001]. Orders over 50 euros "
                     "are shipped without charge [faq::chunk-002].", status="supported",
                citations=[Citation(chunk_id="rfp::chunk-001"),
                           Citation(chunk_id="faq::chunk-002")])


def test_the_judge_judges_a_citing_answer_and_every_reply_parses(local_llm: ServerProcess,
                                                                 tmp_path: Path) -> None:
    """Properties that hold for any model: the judge is asked (the model decodes), every
    reply validates against the schema, verdicts are in the allowed set, and a rerun is
    served from the cache (the server decodes nothing)."""
    judge = Judge(client(local_llm, tmp_path / "cache", max_tokens=160))
    before = decoded_tokens(local_llm)
    result = judge.judge_answer(CITING, CONTEXT, "What are the warranty and shipping terms?")
    assert decoded_tokens(local_llm) > before  # the cited claims reached the model
    assert result.total == 2 and result.unparsable == 0
    assert all(v["label"] in ("entailed", "contradicted", "unsupported")
               for v in result.verdicts)
    assert result.usage["prompt_tokens"] > 0 and result.usage["completion_tokens"] > 0
    after = decoded_tokens(local_llm)
    again = judge.judge_answer(CITING, CONTEXT, "What are the warranty and shipping terms?")
    assert decoded_tokens(local_llm) == after
    assert [v["label"] for v in again.verdicts] == [v["label"] for v in result.verdicts]
    assert all(v["cached"] for v in again.verdicts)


def test_claims_the_checks_cannot_decide_go_to_the_real_judge(local_llm: ServerProcess,
                                                              tmp_path: Path) -> None:
    judge = Judge(client(local_llm, tmp_path / "cache", max_tokens=160))
    cited = [Source(CONTEXT[1].text, CONTEXT[1].chunk_id)]
    rep = check_answer("Orders over 50 euros are shipped without charge.", declined=False,
                       question="Is shipping free?", cited=cited, context=cited, gold=[],
                       judge=lambda c, s, q: judge.claim_verdict(c, s, q))
    v = rep.claims[0]["cited"]
    assert v["decided_by"] == "judge"  # a paraphrase: no deterministic check decides it
    assert v["verdict"] in ("entailed", "contradicted", "unsupported")


def test_an_abstention_of_the_real_model_is_not_scored_as_an_answer(
        local_llm: ServerProcess, tmp_path: Path) -> None:
    """Whatever the model says to a question its sources do not answer: its status says
    so, or the multilingual decline patterns recognise it, or the claim checks find no
    claim the context entails — never a sourced answer."""
    answerer = LLMAnswerer(client(local_llm, tmp_path / "cache", max_tokens=48))
    questions = ["Who is the mayor of the city?", "Wer ist der Bürgermeister der Stadt?",
                 "이 도시의 시장은 누구입니까?"]
    for result in answerer.answer_many_with_usage([(q, CONTEXT) for q in questions]):
        assert not isinstance(result, Exception), result
        answer, _ = result
        if is_declined(answer):
            continue
        rep = check_answer(answer.text, declined=False, question=None,
                           cited=[Source(c.text, c.chunk_id) for c in CONTEXT],
                           context=[], gold=[])
        assert not any(c["cited"]["verdict"] == "entailed"
                       and "mayor" in c["claim"].casefold() for c in rep.claims), answer


def test_a_dead_slow_judge_costs_a_bounded_number_of_attempts(local_llm: ServerProcess
                                                              ) -> None:
    """timeout_s 0.05 against a server that needs seconds: fail fast must stop the judge
    after ``fail_fast_after`` attempts in a row, not after 4 attempts per claim."""
    slow = client(local_llm, timeout_s=0.05, max_retries=3, fail_fast_after=3,
                  backoff_base_s=0.0)
    judge = Judge(slow)
    answers = [(Answer(text=f"The warranty period is {n} months [rfp::chunk-001].",
                       status="supported"), CONTEXT[:1], None) for n in range(16)]
    out = judge.judge_many(answers)
    assert all(isinstance(r, EndpointError) for r in out)
    attempts = sum(r.attempts for r in out if isinstance(r, EndpointError))
    assert attempts <= 3 + slow.concurrency, attempts  # before: 16 x 4 = 64
