"""`ragassay generate` end to end against the fake OpenAI-compatible server on 127.0.0.1 with
scripted replies: what is kept and dropped (and why), the folder `ragassay run` and
`ragassay gold audit` take as it is, the cache, exit codes, a dead endpoint, and
`ragassay generate apply`. The real model's run is in `test_generate_local_llm.py`."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from builders import ROOT
from generated_set import GOOD, factoid_order, numeric_replies, script, write_docs
from openai_server import FakeOpenAIServer
from typer.testing import CliRunner

from ragassay.cli import app
from ragassay.endpoint import EndpointConfig, OpenAICompatClient
from ragassay.generate import generate_set

runner = CliRunner()


def posts(server: FakeOpenAIServer) -> list:  # type: ignore[type-arg]
    return [r for r in server.control.requests if r.method == "POST"]


def gen_args(server: FakeOpenAIServer, docs: Path, out: Path, *extra: str) -> list[str]:
    return ["generate", "--source", str(docs), "--out", str(out), "--base-url",
            server.base_url, "--cache-dir", str(out.parent / "cache"), "--no-progress", *extra]


def test_kept_dropped_and_why(fake_server: FakeOpenAIServer, tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs")
    order = factoid_order(docs)
    replies = dict(GOOD)
    replies["de::chunk-001"] = ("Sure! Here is a question: Wie viel kostet der Versand?", None)
    ko_reply = GOOD["ko::chunk-001"][0]
    replies["ko::chunk-001"] = (ko_reply, {"answer": "36개월"})  # the second call disagrees
    script(fake_server, order, replies)
    res = runner.invoke(app, gen_args(fake_server, docs, tmp_path / "set", "--n", "3",
                                      "--kinds", "factoid"))
    assert res.exit_code == 3, res.output  # 1 of 3 kept: said, and the folder is written
    assert "kept 1 of 3 items asked" in res.output
    report = json.loads((tmp_path / "set/generation.json").read_text(encoding="utf-8"))
    assert report["counts"] == {"asked": 3, "candidates": 3, "kept": 1, "dropped": 2,
                                "surplus": 0}
    assert report["drop_reasons"]["unparsable_reply"] == 1
    assert report["drop_reasons"]["not_answerable_from_chunk"] == 1
    dropped = {d["chunk_ids"][0]: d for d in report["dropped"]}
    assert dropped["ko::chunk-001"]["second_answer"] == "36개월"
    assert dropped["de::chunk-001"]["replies"] == [replies["de::chunk-001"][0]]
    assert [k["chunk_ids"] for k in report["kept"]] == [["en::chunk-001"]]
    assert report["usage"]["calls"] == 3 + 2  # 3 proposals, 2 second calls
    assert report["usage"]["cost"] is None  # no prices configured: unknown, not 0
    assert report["model"]["served"][0]["id"] == "fake-model"
    assert all(r.body["response_format"]["type"] == "json_schema"
               for r in posts(fake_server))
    questions = [json.loads(line) for line in
                 (tmp_path / "set/questions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert questions == [{"question_id": "gen-0001", "question": "How long is the warranty "
                          "period?", "answerable": True, "query_type": "factoid",
                          "expected_answer": "12 months", "must_contain": ["12 months"],
                          "metadata": questions[0]["metadata"]}]
    assert questions[0]["metadata"]["language"] == "en"


def test_a_set_from_data_raw_runs_as_it_is(fake_server: FakeOpenAIServer,
                                           tmp_path: Path) -> None:
    docs = ROOT / "data/raw"
    order, replies = numeric_replies(docs, 3, seed=7)
    script(fake_server, order, replies)
    out = tmp_path / "set"
    res = runner.invoke(app, gen_args(fake_server, docs, out, "--n", "3", "--seed", "7",
                                      "--kinds", "factoid"))
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == [
        "config.bm25.yaml", "config.hybrid.yaml", "config.yaml", "documents", "generation.html",
        "generation.json", "gold.jsonl", "index", "questions.jsonl"]
    audit = runner.invoke(app, ["gold", "audit", "--gold", str(out / "gold.jsonl"),
                                "--questions", str(out / "questions.jsonl"),
                                "--index", str(out / "index"), "--format", "json"])
    assert audit.exit_code == 0, audit.output
    states = json.loads(audit.stdout)["states"]
    assert states["ok"] == 3 and sum(states.values()) == 3  # every kept label is ok
    run = runner.invoke(app, ["run", "-c", str(out / "config.yaml"), "--run-id", "r",
                              "--output-root", str(tmp_path / "runs"), "-q"])
    assert run.exit_code == 0, run.output
    metrics = json.loads((tmp_path / "runs/r/metrics.json").read_text(encoding="utf-8"))
    assert metrics["counts"]["questions"] == 3 if "counts" in metrics else True


def test_the_same_seed_model_and_chunks_make_no_new_call(fake_server: FakeOpenAIServer,
                                                         tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs")
    script(fake_server, factoid_order(docs), GOOD)
    first = runner.invoke(app, gen_args(fake_server, docs, tmp_path / "a", "--n", "2",
                                        "--kinds", "factoid", "--cache-dir",
                                        str(tmp_path / "cache")))
    assert first.exit_code == 0, first.output
    posts = fake_server.control.post_count
    again = runner.invoke(app, gen_args(fake_server, docs, tmp_path / "b", "--n", "2",
                                        "--kinds", "factoid", "--cache-dir",
                                        str(tmp_path / "cache")))
    assert again.exit_code == 0, again.output
    assert fake_server.control.post_count == posts  # every reply came from the cache
    for name in ("questions.jsonl", "gold.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    usage = json.loads((tmp_path / "b/generation.json").read_text(encoding="utf-8"))["usage"]
    assert usage["calls"] == usage["cached_calls"] > 0


def test_unparsable_replies_are_counted_never_a_crash(fake_server: FakeOpenAIServer,
                                                      tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs")
    order = factoid_order(docs)
    bad = ["", "{not json", json.dumps({"question": "Wie?", "answer": 5, "sentence": "x"})]
    script(fake_server, order, {cid: (text, None) for cid, text in zip(order, bad,
                                                                        strict=True)})
    res = runner.invoke(app, gen_args(fake_server, docs, tmp_path / "set", "--n", "1",
                                      "--kinds", "factoid", "--no-cache"))
    assert res.exit_code == 3, res.output
    report = json.loads((tmp_path / "set/generation.json").read_text(encoding="utf-8"))
    # 2 tried in the first round (twice the 1 missing), the last chunk in the second
    assert report["drop_reasons"]["unparsable_reply"] == 3
    assert report["stopped"] == "no more chunks to sample for factoid"
    assert report["counts"]["kept"] == 0
    assert sorted(p.name for p in (tmp_path / "set").iterdir()) == ["generation.html",
                                                                     "generation.json"]


def test_a_reply_in_a_code_fence_is_read_without_structured_output(
        fake_server: FakeOpenAIServer, tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs")
    order = factoid_order(docs)
    fenced = {cid: ("Here you go:\n```json\n" + json.dumps(GOOD[cid][0]) + "\n```",
                    GOOD[cid][1]) for cid in order}
    script(fake_server, order[:2], fenced)
    res = runner.invoke(app, gen_args(fake_server, docs, tmp_path / "set", "--n", "1",
                                      "--kinds", "factoid", "--no-structured", "--no-cache"))
    assert res.exit_code == 0, res.output
    assert not any("response_format" in r.body for r in posts(fake_server))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_dead_endpoint_fails_fast_with_exit_2(tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs")
    res = runner.invoke(app, ["generate", "--source", str(docs), "--out", str(tmp_path / "s"),
                              "--base-url", f"http://127.0.0.1:{free_port()}/v1", "--n", "1"])
    assert res.exit_code == 2, res.output
    assert "nothing answers at" in res.output
    assert not (tmp_path / "s").exists()


def test_an_endpoint_that_dies_midway_stops_the_rounds(fake_server: FakeOpenAIServer,
                                                       tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs")
    cfg = EndpointConfig(base_url=f"http://127.0.0.1:{free_port()}/v1", model="m",
                         max_retries=0, fail_fast_after=1)
    with OpenAICompatClient(cfg) as client:
        gen = generate_set(docs, client, tmp_path / "set", n=3, kinds={"factoid": 1.0})
    assert gen.short and gen.stopped is not None and "unreachable" in gen.stopped
    reasons = {r.drop.reason for r in gen.records if r.drop}
    assert reasons == {"endpoint_error"}
    assert (tmp_path / "set/generation.json").is_file()


def test_prices_give_a_cost(fake_server: FakeOpenAIServer, tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs")
    script(fake_server, factoid_order(docs), GOOD)
    cfg = EndpointConfig(base_url=fake_server.base_url, model="m",
                         prompt_price_per_mtok=1.0, completion_price_per_mtok=2.0)
    with OpenAICompatClient(cfg) as client:
        gen = generate_set(docs, client, tmp_path / "set", n=2, kinds={"factoid": 1.0})
    u = gen.usage
    assert u.cost == pytest.approx((u.prompt_tokens * 1.0 + u.completion_tokens * 2.0) / 1e6)


# --- apply ------------------------------------------------------------------------------


def generated(fake_server: FakeOpenAIServer, tmp_path: Path) -> Path:
    docs = write_docs(tmp_path / "docs")
    script(fake_server, factoid_order(docs), GOOD)
    res = runner.invoke(app, gen_args(fake_server, docs, tmp_path / "set", "--n", "3",
                                      "--kinds", "factoid", "--no-cache"))
    assert res.exit_code == 0, res.output
    return tmp_path / "set"


def decisions_file(path: Path, set_dir: Path, rows: list[dict[str, object]]) -> Path:
    from ragassay.generate.review import REVIEW_SCHEMA, set_id
    from ragassay.gold import read_questions

    head = {"review": REVIEW_SCHEMA, "set_id": set_id(read_questions(set_dir /
                                                                     "questions.jsonl"))}
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [head, *rows]),
                    encoding="utf-8")
    return path


def question_of(set_dir: Path, chunk: str) -> str:
    for line in (set_dir / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        if q["metadata"]["chunk_ids"] == [chunk]:
            return str(q["question_id"])
    raise AssertionError(chunk)


def test_apply_writes_the_reviewed_set(fake_server: FakeOpenAIServer, tmp_path: Path) -> None:
    s = generated(fake_server, tmp_path)
    ko, de, en = (question_of(s, f"{d}::chunk-001") for d in ("ko", "de", "en"))
    dec = decisions_file(tmp_path / "d.jsonl", s, [
        {"question_id": ko, "decision": "accept"},
        {"question_id": de, "decision": "reject"},
        {"question_id": en, "decision": "edit", "question": "What is the warranty period?",
         "answer": "12 months from acceptance"}])
    res = runner.invoke(app, ["generate", "apply", str(dec), "--set", str(s), "--out",
                              str(tmp_path / "new")])
    assert res.exit_code == 0, res.output
    assert f"rejected {de}" in res.output
    new = tmp_path / "new"
    rows = {json.loads(x)["question_id"]: json.loads(x) for x in
            (new / "questions.jsonl").read_text(encoding="utf-8").splitlines()}
    assert sorted(rows) == sorted([ko, en])
    assert rows[en]["question"] == "What is the warranty period?"
    assert rows[en]["must_contain"] == ["12 months from acceptance"]
    review = json.loads((new / "review.json").read_text(encoding="utf-8"))
    assert (review["rejected"], review["accepted"], review["edited"]) == ([de], [ko], [en])
    run = runner.invoke(app, ["run", "-c", str(new / "config.yaml"), "--run-id", "r",
                              "--output-root", str(tmp_path / "runs"), "-q"])
    assert run.exit_code == 0, run.output
    assert (s / "questions.jsonl").read_text(encoding="utf-8").count("\n") == 3  # untouched


@pytest.mark.parametrize(("row", "field"), [
    ({"decision": "edit", "answer": "36 months"}, "answer"),  # not in the support sentence
    ({"decision": "maybe"}, "decision"),
    ({"decision": "accept", "question_id": "gen-0999"}, "question_id"),
])
def test_apply_refuses_bad_decisions(fake_server: FakeOpenAIServer, tmp_path: Path,
                                     row: dict[str, object], field: str) -> None:
    s = generated(fake_server, tmp_path)
    en = question_of(s, "en::chunk-001")
    dec = decisions_file(tmp_path / "d.jsonl", s, [{"question_id": en, **row}])
    res = runner.invoke(app, ["generate", "apply", str(dec), "--set", str(s), "--out",
                              str(tmp_path / "new")])
    assert res.exit_code == 2, res.output
    assert f"d.jsonl:2: field '{field}':" in " ".join(res.output.split())
    assert not (tmp_path / "new").exists()


def test_apply_refuses_decisions_of_another_set(fake_server: FakeOpenAIServer,
                                                tmp_path: Path) -> None:
    s = generated(fake_server, tmp_path)
    dec = tmp_path / "d.jsonl"
    dec.write_text('{"review": "ragassay.review/1", "set_id": "0000"}\n', encoding="utf-8")
    res = runner.invoke(app, ["generate", "apply", str(dec), "--set", str(s), "--out",
                              str(tmp_path / "new")])
    assert res.exit_code == 2 and "made for another set" in res.output
