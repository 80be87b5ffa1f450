"""The LLM decomposition of an answer into claims, against the scripted local server
(tests/openai_server.py on 127.0.0.1): the request's schema, validation, one retry with
the validation error, the fallback to the splitter, and a run that records which split the
answers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai_server import FakeOpenAIServer
from pydantic import ValidationError

from ragassay import evaluate_rag
from ragassay.claims.decompose import CLAIM_CHARS, MAX_CLAIMS, decompose, parse_decomposition
from ragassay.claims.verify import Source, check_answer
from ragassay.config import EvalConfig
from ragassay.endpoint import EndpointConfig, OpenAICompatClient
from ragassay.schema import (
    Answer,
    Chunk,
    Citation,
    GoldEvidence,
    GoldRecord,
    Prediction,
    Question,
    RetrievedChunk,
)

ANSWER = "The warranty is 24 months [rfp::1], and shipping costs 4.90 euros."
TWO = json.dumps({"claims": ["The warranty is 24 months.", "Shipping costs 4.90 euros."]})


def client(server: FakeOpenAIServer, **cfg: Any) -> OpenAICompatClient:
    return OpenAICompatClient(EndpointConfig(**{
        "base_url": server.base_url, "model": "fake-model", "backoff_base_s": 0.01,
        "concurrency": 1, **cfg}), sleep=lambda s: None)


def test_the_request_carries_the_claims_schema_and_the_reply_is_used(
        fake_server: FakeOpenAIServer) -> None:
    fake_server.control.fail_next(1, reply=TWO)
    parts = decompose(client(fake_server), ANSWER, "Warranty and shipping?")
    assert (parts.claims, parts.decomposed_by, parts.attempts) == (
        ["The warranty is 24 months.", "Shipping costs 4.90 euros."], "llm", 1)
    body = fake_server.control.last_body
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["claims"] == {
        "type": "array", "minItems": 1, "maxItems": MAX_CLAIMS,
        "items": {"type": "string", "minLength": 1, "maxLength": CLAIM_CHARS}}
    assert "Question: Warranty and shipping?" in body["messages"][-1]["content"]
    assert ANSWER in body["messages"][-1]["content"]
    assert parts.usage["prompt_tokens"] > 0


@pytest.mark.parametrize(("raw", "error"), [
    ("The warranty is 24 months.", "not JSON"),
    ('{"claims": "one"}', "field 'claims': Input should be a valid list"),
    ('{"claims": []}', "field 'claims': no claim listed"),
    (json.dumps({"claims": ["x"] * (MAX_CLAIMS + 1)}), "field 'claims': List should have at "
                                                       "most 8 items"),
    (json.dumps({"claims": ["x" * (CLAIM_CHARS + 1)]}), "field 'claims.0': String should "
                                                        "have at most 200 characters"),
    ('{"claims": ["a"], "more": 1}', "field 'more': Extra inputs are not permitted"),
])
def test_what_a_reply_must_be(raw: str, error: str) -> None:
    with pytest.raises(ValueError, match=error.replace(".", r"\.")):
        parse_decomposition(raw)


def test_an_invalid_reply_is_retried_once_with_the_validation_error(
        fake_server: FakeOpenAIServer) -> None:
    fake_server.control.fail_next(1, reply='{"claims": []}')
    fake_server.control.fail_next(1, reply=TWO)
    parts = decompose(client(fake_server), ANSWER)
    assert (parts.decomposed_by, parts.attempts) == ("llm", 2)
    retry = fake_server.control.last_body["messages"]
    assert retry[-2] == {"role": "assistant", "content": '{"claims": []}'}
    assert retry[-1]["content"] == ("That reply is invalid: field 'claims': no claim listed. "
                                    "Reply with the JSON object only.")
    assert retry[-1]["role"] == "user"
    assert fake_server.control.last_body["response_format"]["type"] == "json_schema"


def test_two_invalid_replies_fall_back_to_the_splitter_and_say_so(
        fake_server: FakeOpenAIServer) -> None:
    fake_server.control.fail_next(2, reply="Sure! Here are the claims:")
    parts = decompose(client(fake_server), ANSWER)
    assert parts.claims == ["The warranty is 24 months", "shipping costs 4.90 euros."]
    assert parts.decomposed_by == "sentences" and parts.attempts == 2
    assert parts.reason.startswith("decomposition reply invalid twice: not JSON")


def test_an_empty_answer_is_not_sent(fake_server: FakeOpenAIServer) -> None:
    parts = decompose(client(fake_server), " [rfp::1] ")
    assert parts.claims == [] and fake_server.control.requests == []


def test_replies_are_cached_like_the_judge(fake_server: FakeOpenAIServer,
                                           tmp_path: Any) -> None:
    fake_server.control.fail_next(1, reply=TWO)
    first = decompose(client(fake_server, cache_dir=tmp_path), ANSWER)
    posts = [r for r in fake_server.control.requests if r.method == "POST"]
    again = decompose(client(fake_server, cache_dir=tmp_path), ANSWER)
    assert again.claims == first.claims and again.decomposed_by == "llm"
    assert [r for r in fake_server.control.requests if r.method == "POST"] == posts


def test_a_reworded_claim_is_checked_against_the_sources_as_any_other() -> None:
    """"The warranty period is 36 months" is not a piece of the answer's text; the number check
    contradicts it against the cited chunk all the same."""
    cited = [Source("The warranty period is 24 months.", "rfp::1")]
    rep = check_answer(ANSWER, declined=False, question=None, cited=cited, context=cited,
                       gold=[], claims=["The warranty period is 24 months.",
                                        "The warranty period is 36 months."])
    assert [(c["claim"], c["cited"]["verdict"], c["cited"]["decided_by"])
            for c in rep.claims] == [
        ("The warranty period is 24 months.", "entailed", "numbers"),
        ("The warranty period is 36 months.", "contradicted", "numbers")]


CHUNKS = [Chunk(chunk_id="rfp::1", doc_id="rfp", text="The warranty period is 24 months."),
          Chunk(chunk_id="faq::2", doc_id="faq", text="Shipping costs 4.90 euros.")]


def run(cfg: EvalConfig) -> Any:
    question = Question(question_id="q1", question="Warranty and shipping?", answerable=True,
                        must_contain=["24 months"])
    gold = GoldRecord(question_id="q1", gold_evidence=[GoldEvidence(chunk_id="rfp::1",
                                                                    doc_id="rfp")])
    pred = Prediction(question_id="q1", retrieved=[RetrievedChunk(chunk_id="rfp::1", score=1),
                                                   RetrievedChunk(chunk_id="faq::2", score=.5)],
                      answer=Answer(text=ANSWER, status="supported",
                                    citations=[Citation(chunk_id="rfp::1")]))
    return evaluate_rag([question], [gold], [pred], CHUNKS, cfg)


def test_a_run_records_that_the_llm_split_the_answer(fake_server: FakeOpenAIServer) -> None:
    judge = {"base_url": fake_server.base_url, "model": "fake-model", "concurrency": 1}
    fake_server.control.fail_next(1, reply=json.dumps(
        {"claims": ["The warranty period is 24 months.", "Shipping costs 4.90 euros."]}))
    result = run(EvalConfig(judge=judge, claims={"decompose": "llm"}))
    q = result.question("q1")
    assert q.claims["decomposed_by"] == "llm" and "decompose_reason" not in q.claims
    assert [c["claim"] for c in q.claims["claims"]] == [
        "The warranty period is 24 months.", "Shipping costs 4.90 euros."]
    assert q.claims["judge_usage"]["calls"] == 1  # the checks decided both claims
    assert result.metrics.claims["decomposed_by_llm"] == 1
    # off by default: the splitter, no request
    fake_server.control.reset()
    plain = run(EvalConfig(judge=judge)).question("q1")
    assert plain.claims["decomposed_by"] == "sentences"
    assert [c["claim"] for c in plain.claims["claims"]] == [
        "The warranty is 24 months", "shipping costs 4.90 euros."]


def test_llm_decomposition_needs_the_judge_endpoint() -> None:
    with pytest.raises(ValidationError, match="decompose: llm sends answers to the judge"):
        EvalConfig(claims={"decompose": "llm"})
