"""The LLM answerer against the fake model of tests/openai_server.py, over real HTTP.

The fake model answers with the first sentence of the source sharing the most words with
the question, followed by its source number `` [n]`` (or, when told, its id), or with the
decline phrase of the system message when no source shares a word."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from builders import ROOT
from openai_server import FakeOpenAIServer

from ragassay.answer.extractive import Answerer
from ragassay.answer.llm import LLMAnswerer, parse_reply, system_message
from ragassay.answer.prompt import TOKENIZER, build_prompt, count_tokens
from ragassay.endpoint import EndpointConfig, EndpointError, OpenAICompatClient, canonical_json
from ragassay.index.format import load_index
from ragassay.metrics.answer import DEFAULT_DECLINE_PHRASES, score_answer
from ragassay.schema import Answer, Chunk, Citation, Question


def chunk(cid: str, text: str, pages: tuple[int, int] | None = None) -> Chunk:
    return Chunk(chunk_id=cid, doc_id=cid.split("::")[0], text=text, page_span=pages)


CONTEXT = [
    chunk("rfp::chunk-001", "The warranty period is 24 months from acceptance. "
          "Defects are fixed within 5 days.", (3, 4)),
    chunk("faq::chunk-002", "Shipping costs 4.90 euros. Orders over 50 euros ship free."),
]


def answerer(server: FakeOpenAIServer, **cfg: Any) -> LLMAnswerer:
    kwargs = {"base_url": server.base_url, "model": "fake-model", "backoff_base_s": 0.01,
              **cfg}
    decline = kwargs.pop("decline_phrase", "I don't know")
    client = OpenAICompatClient(EndpointConfig(**kwargs), sleep=lambda s: None)
    return LLMAnswerer(client, decline_phrase=decline)


def test_is_an_answerer(fake_server: FakeOpenAIServer) -> None:
    a: Answerer = answerer(fake_server)
    assert isinstance(a.answer("What is the warranty period?", CONTEXT), Answer)


def test_answer_cites_the_chunk_with_its_first_page(fake_server: FakeOpenAIServer) -> None:
    a = answerer(fake_server).answer("What is the warranty period?", CONTEXT)
    assert a == Answer(text="The warranty period is 24 months from acceptance. [1]",
                       status="supported",
                       citations=[Citation(chunk_id="rfp::chunk-001", page=3, raw="1")])


@pytest.mark.parametrize(("cite", "raw"), [("number", "2"), ("id", "faq::chunk-002"),
                                           ("short", "chunk-002")])
def test_every_citation_style_maps_to_the_chunk(fake_server: FakeOpenAIServer, cite: str,
                                                raw: str) -> None:
    fake_server.control.cite = cite
    a = answerer(fake_server).answer("How much does shipping cost?", CONTEXT)
    assert a.text == f"Shipping costs 4.90 euros. [{raw}]"
    assert a.citations == [Citation(chunk_id="faq::chunk-002", raw=raw)]


def test_citation_without_page_span_has_no_page(fake_server: FakeOpenAIServer) -> None:
    a = answerer(fake_server).answer("How much does shipping cost?", CONTEXT)
    assert a.citations == [Citation(chunk_id="faq::chunk-002", page=None, raw="2")]


def test_the_prompt_numbers_the_sources_and_asks_for_the_questions_language() -> None:
    assert build_prompt("보증 기간은?", CONTEXT) == (
        "Answer the question from the sources below only. Cite every source you use by "
        "its number in square brackets, like [1]. If the sources do not answer it, say "
        "that you don't know.\n\n"
        "[1] rfp::chunk-001 (page 3)\n"
        "The warranty period is 24 months from acceptance. Defects are fixed within 5 "
        "days.\n\n"
        "[2] faq::chunk-002\n"
        "Shipping costs 4.90 euros. Orders over 50 euros ship free.\n\n"
        "Question: 보증 기간은?\n"
        "Answer in Korean, the language of the question.")
    assert build_prompt("Wie lange dauert der Versand?", []).endswith(
        "Answer in German, the language of the question.")
    assert build_prompt("How long?", []).endswith("Answer in English, the language of the "
                                                  "question.")


def test_the_exact_prompt_sent(fake_server: FakeOpenAIServer) -> None:
    answerer(fake_server, decline_phrase="Weiß ich nicht.").answer("Wie lange?", CONTEXT)
    body = fake_server.control.last_body
    assert body["messages"] == [
        {"role": "system", "content": system_message("Weiß ich nicht.")},
        {"role": "user", "content": build_prompt("Wie lange?", CONTEXT)},
    ]
    assert body["messages"][0]["content"].endswith("reply exactly: Weiß ich nicht.")
    assert (body["temperature"], body["max_tokens"]) == (0.0, 512)


def test_a_prompt_builder_can_replace_the_messages(fake_server: FakeOpenAIServer) -> None:
    a = answerer(fake_server)
    a.prompt_builder = lambda q, ctx: [{"role": "user", "content": f"only: {q}"}]
    a.answer("q?", CONTEXT)
    assert fake_server.control.last_body["messages"] == [{"role": "user", "content": "only: q?"}]


def test_decline_gives_status_insufficient(fake_server: FakeOpenAIServer) -> None:
    # no source shares a word with the question → the fake replies with the decline phrase
    a = answerer(fake_server, decline_phrase="제공된 문서에서 답을 찾을 수 없습니다.").answer(
        "Quelle est la capitale?", CONTEXT)
    assert a == Answer(text="제공된 문서에서 답을 찾을 수 없습니다.", status="insufficient",
                       citations=[])


# --- parsing replies (no server needed) ----------------------------------------------------


PHRASES = ("I don't know", *DEFAULT_DECLINE_PHRASES)


def test_parse_maps_every_marker_once_in_order_of_first_appearance() -> None:
    text = "Fee 4.90 [faq::chunk-002] per order [1], see [2] and [Source 1]. [sic]"
    a = parse_reply(text, CONTEXT, PHRASES)
    assert a.text == text
    assert a.citations == [Citation(chunk_id="faq::chunk-002", raw="faq::chunk-002"),
                           Citation(chunk_id="rfp::chunk-001", page=3, raw="1")]
    assert a.status == "supported"


def test_parse_comma_separated_markers_in_order_of_first_appearance() -> None:
    a = parse_reply("Both apply. [faq::chunk-002, rfp::chunk-001]", CONTEXT, PHRASES)
    assert [c.chunk_id for c in a.citations] == ["faq::chunk-002", "rfp::chunk-001"]
    a = parse_reply("Both apply. [2; 1]", CONTEXT, PHRASES)
    assert [c.chunk_id for c in a.citations] == ["faq::chunk-002", "rfp::chunk-001"]


def test_a_citation_that_names_no_source_stays_a_citation_of_an_unseen_source() -> None:
    # source 3 of 2, an id outside the context: kept as written, in brackets, so that the
    # metrics fail them as "source not in context", never dropped
    a = parse_reply("Fee 4.90 [3], see [other::chunk-009] [chunk-007].", CONTEXT, PHRASES)
    assert a.citations == [Citation(chunk_id="[3]", raw="3"),
                           Citation(chunk_id="[other::chunk-009]", raw="other::chunk-009"),
                           Citation(chunk_id="[chunk-007]", raw="chunk-007")]
    assert a.status == "supported"


def test_an_only_citation_reply_is_insufficient() -> None:
    # a small model's reply with nothing but a source: it states nothing
    for reply in ("[1]", "[rfp::chunk-001].", " [1] [2] ", "**[Source 2]**"):
        a = parse_reply(reply, CONTEXT, PHRASES)
        assert a.status == "insufficient", reply
        assert a.citations  # what it cited stays on record


@pytest.mark.parametrize("reply", [
    "I don't know.",
    "I do not know the answer from these sources.",
    "Die bereitgestellten Dokumente beantworten diese Frage nicht.",
    "문서에서 답을 찾을 수 없습니다.",
])
def test_any_default_decline_phrase_without_citation_is_insufficient(reply: str) -> None:
    assert parse_reply(reply, CONTEXT, PHRASES).status == "insufficient"


def test_a_decline_phrase_with_a_citation_is_still_supported() -> None:
    # it cites a source, so it claims something: judged by the metrics, not excused
    a = parse_reply("I don't know the exact date, but shipping is free over 50 euros. "
                    "[2]", CONTEXT, PHRASES)
    assert a.status == "supported"


def test_an_empty_reply_is_a_supported_answer_without_source() -> None:
    assert parse_reply("  ", CONTEXT, PHRASES) == Answer(text="", status="supported",
                                                         citations=[])


def test_blank_decline_phrase_is_refused(fake_server: FakeOpenAIServer) -> None:
    client = OpenAICompatClient(EndpointConfig(base_url=fake_server.base_url, model="m"))
    with pytest.raises(ValueError, match="decline_phrase"):
        LLMAnswerer(client, decline_phrase=" ")


# --- usage -------------------------------------------------------------------------------


def test_usage_reported_by_the_server(fake_server: FakeOpenAIServer) -> None:
    _, usage = answerer(fake_server).answer_with_usage("What is the warranty period?",
                                                       CONTEXT)
    messages = fake_server.control.last_body["messages"]
    # the fake counts whitespace-separated words
    assert usage == {"prompt_tokens": sum(len(m["content"].split()) for m in messages),
                     "completion_tokens": 9, "source": "reported", "cached": False}


def test_usage_counted_when_the_server_reports_none(fake_server: FakeOpenAIServer) -> None:
    fake_server.control.no_usage = True
    a, usage = answerer(fake_server).answer_with_usage("What is the warranty period?",
                                                       CONTEXT)
    messages = fake_server.control.last_body["messages"]
    assert usage == {"prompt_tokens": sum(count_tokens(m["content"]) for m in messages),
                     "completion_tokens": count_tokens(a.text), "source": "counted",
                     "tokenizer": TOKENIZER, "cached": False}


@pytest.mark.parametrize("reported", [{"prompt_tokens": -5, "completion_tokens": 3},
                                      {"prompt_tokens": 2.5, "completion_tokens": 3},
                                      {"prompt_tokens": True, "completion_tokens": 3}])
def test_usage_that_is_not_a_count_is_counted_and_the_answer_kept(
        fake_server: FakeOpenAIServer, reported: dict[str, Any]) -> None:
    """A server reporting ``prompt_tokens: -5`` (or 2.5, or true) is not believed: the
    answer is kept, its tokens are counted here, and the Usage record accepts them."""
    from ragassay.schema import Usage

    fake_server.control.fail_next(usage=reported)
    a, usage = answerer(fake_server).answer_with_usage("What is the warranty period?",
                                                       CONTEXT)
    assert a.text and usage["source"] == "counted"
    Usage(prompt_tokens=usage["prompt_tokens"], completion_tokens=usage["completion_tokens"],
          source=usage["source"])


# --- batches, failures and the cache -----------------------------------------------------


QUESTIONS = [
    ("What is the warranty period?", CONTEXT),
    ("How much does shipping cost?", CONTEXT),
    ("Quelle est la capitale?", CONTEXT),
    ("When are defects fixed?", CONTEXT[:1]),
]
EXPECTED_TEXT = [
    "The warranty period is 24 months from acceptance. [1]",
    "Shipping costs 4.90 euros. [2]",
    "I don't know",
    "The warranty period is 24 months from acceptance. [1]",
]


def texts(results: list[Any]) -> list[str]:
    return [r.text if isinstance(r, Answer) else f"error: {r}" for r in results]


def test_answer_many_keeps_order(fake_server: FakeOpenAIServer) -> None:
    assert texts(answerer(fake_server, concurrency=3).answer_many(QUESTIONS)) == EXPECTED_TEXT


def test_one_failed_question_is_an_error_value(fake_server: FakeOpenAIServer) -> None:
    fake_server.control.fail_next(1, status=400)
    out = answerer(fake_server, concurrency=1).answer_many(QUESTIONS)
    assert isinstance(out[0], EndpointError) and out[0].status == 400
    assert texts(out[1:]) == EXPECTED_TEXT[1:]


def test_endpoint_failure_raises_from_answer(fake_server: FakeOpenAIServer) -> None:
    fake_server.control.fail_next(3, status=503)
    with pytest.raises(EndpointError, match="HTTP 503"):
        answerer(fake_server, max_retries=2).answer("What is the warranty period?", CONTEXT)


def test_rerun_from_cache_makes_no_request_and_gives_identical_answers(
        fake_server: FakeOpenAIServer, tmp_path: Path) -> None:
    first = answerer(fake_server, cache_dir=tmp_path).answer_many_with_usage(QUESTIONS)
    assert fake_server.control.post_count == 4
    again = answerer(fake_server, cache_dir=tmp_path).answer_many_with_usage(QUESTIONS)
    assert fake_server.control.post_count == 4
    assert [a for a, _ in again] == [a for a, _ in first]
    # the counts are the original call's; only the cached flag differs
    assert [{**u, "cached": False} for _, u in again] == [u for _, u in first]
    assert all(u["cached"] for _, u in again)


def test_an_interrupted_batch_resumes_from_the_cache(fake_server: FakeOpenAIServer,
                                                     tmp_path: Path) -> None:
    # First run: killed (Ctrl-C) while building the 3rd prompt; two answers were cached.
    a = answerer(fake_server, cache_dir=tmp_path, concurrency=1)
    calls = 0

    def build(question: str, context: Any) -> str:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise KeyboardInterrupt
        return build_prompt(question, context)

    a.prompt_builder = build
    with pytest.raises(KeyboardInterrupt):
        a.answer_many(QUESTIONS)
    assert fake_server.control.post_count == 2
    assert len(list(tmp_path.glob("*.json"))) == 2
    assert not list(tmp_path.glob("*.tmp"))
    # Second run: only the two missing questions are asked.
    second = answerer(fake_server, cache_dir=tmp_path, concurrency=1).answer_many(QUESTIONS)
    assert fake_server.control.post_count == 4
    assert texts(second) == EXPECTED_TEXT


def test_a_failed_question_is_asked_again_on_the_next_run(fake_server: FakeOpenAIServer,
                                                          tmp_path: Path) -> None:
    fake_server.control.fail_next(1, status=500)
    first = answerer(fake_server, cache_dir=tmp_path, concurrency=1,
                     max_retries=0).answer_many(QUESTIONS)
    assert isinstance(first[0], EndpointError)
    assert texts(first[1:]) == EXPECTED_TEXT[1:]
    second = answerer(fake_server, cache_dir=tmp_path, concurrency=1).answer_many(QUESTIONS)
    assert fake_server.control.post_count == 4 + 1
    assert texts(second) == EXPECTED_TEXT
    assert fake_server.control.last_body["messages"][1]["content"] == \
        build_prompt(*QUESTIONS[0])


def test_run_deadline_past_answers_nothing(fake_server: FakeOpenAIServer,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    a = answerer(fake_server, run_timeout_s=1.0)
    # the deadline is computed from time.monotonic(); make it already passed for the run
    import ragassay.answer.llm as llm

    monkeypatch.setattr(llm, "deadline_after", lambda seconds: 0.0)
    out = a.answer_many(QUESTIONS)
    assert all(isinstance(r, EndpointError) and "run timeout" in str(r) for r in out)
    assert fake_server.control.post_count == 0


# --- replies of a real model (recorded, see the fixture's how_recorded) ----------------------

RECORDED = json.loads((ROOT / "tests/fixtures/llm_replies_smollm2.json").read_text("utf-8"))
# By hand, from reading each reply: SmolLM2-135M cites almost nothing. Once it went on
# writing the prompt's pattern and made up a 4th source header, "[4] stadtwerke-…::chunk-002",
# after 3 sources: a citation of a source it never saw, not a guess at one of the three.
EXPECTED_CITATIONS = {("q13", 3): [Citation(chunk_id="[4]", raw="4")]}


def recorded() -> list[tuple[dict[str, Any], list[Chunk]]]:
    index = load_index(ROOT / "data/index")
    return [(r, [index.chunk(c) for c in r["context_chunk_ids"]]) for r in RECORDED["replies"]]


def test_the_recorded_replies_answer_this_prompt() -> None:
    # A changed prompt makes the recordings stale: record them again (see how_recorded).
    a = LLMAnswerer(OpenAICompatClient(EndpointConfig(base_url="http://127.0.0.1:9/v1",
                                                      model="local")))
    for r, context in recorded():
        sent = canonical_json(a.messages(r["question"], context))
        assert hashlib.sha256(sent.encode()).hexdigest() == r["messages_sha256"], \
            r["question_id"]


def test_recorded_replies_parse_as_read_by_hand() -> None:
    for r, context in recorded():
        answer = parse_reply(r["reply"], context, PHRASES)
        assert answer.text == r["reply"].strip()
        assert answer.status == "supported", r["question_id"]  # none declined, none bare
        assert answer.citations == EXPECTED_CITATIONS.get((r["question_id"], r["top_k"]), [])


def test_a_made_up_source_number_fails_grounding() -> None:
    (r, context), = [(r, c) for r, c in recorded() if r["question_id"] == "q13"]
    index = load_index(ROOT / "data/index")
    scores = score_answer(
        Question(question_id="q13", question=r["question"], answerable=True),
        parse_reply(r["reply"], context, PHRASES), context_ids=r["context_chunk_ids"],
        gold_ids=[], chunk_texts={c.chunk_id: c.text for c in index.chunks})
    assert (scores.groundedness, scores.groundedness_reason) == (0, "source not in "
                                                                 "context: [4]")
    assert scores.unknown_citations == ["[4]"]


def test_recorded_replies_over_http_give_the_same_answers(fake_server: FakeOpenAIServer
                                                          ) -> None:
    a = answerer(fake_server, model="local", concurrency=1)
    for r, context in recorded():
        fake_server.control.fail_next(1, reply=r["reply"])
        assert a.answer(r["question"], context) == parse_reply(r["reply"], context, PHRASES)
