"""Claim splitting, verdict parsing, Cohen's kappa by hand, and the judge against the fake
model (yes when every number of the claim is in the sources and more than half of its
words are)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from builders import ROOT
from hypothesis import given
from hypothesis import strategies as st
from openai_server import FakeOpenAIServer

from ragassay.endpoint import EndpointConfig, EndpointError, OpenAICompatClient
from ragassay.errors import InputError
from ragassay.judge import (
    JUDGE_QUESTION,
    NO_SOURCE,
    Judge,
    JudgeResult,
    judge_messages,
    parse_verdict,
    split_claims,
)
from ragassay.judgecheck import cohen_kappa, judge_check
from ragassay.schema import Answer, Chunk

LABELLED = ROOT / "data" / "judge" / "labelled.jsonl"


def judge(server: FakeOpenAIServer, **cfg: Any) -> Judge:
    config = EndpointConfig(**{"base_url": server.base_url, "model": "fake-model",
                               "backoff_base_s": 0.01, **cfg})
    return Judge(OpenAICompatClient(config, sleep=lambda s: None))


# --- claims ------------------------------------------------------------------------------


def test_split_claims_drops_markers_and_citation_only_sentences() -> None:
    text = ("Die Gewährleistung beträgt 24 Monate [faq::chunk-001]. "
            "Der Versand kostet 4,90 €. [faq::chunk-002] [faq::chunk-003]\n"
            "[faq::chunk-004]\n\n"
            "하자보수 기간은 2년이다. [rfp::chunk-001]")
    assert split_claims(text) == ["Die Gewährleistung beträgt 24 Monate.",
                                  "Der Versand kostet 4,90 €.",
                                  "하자보수 기간은 2년이다."]


def test_split_claims_keeps_numbers_whole() -> None:
    assert split_claims("Availability is 99.95% per month. Fee: 4.90 euros.") == [
        "Availability is 99.95% per month.", "Fee: 4.90 euros."]


def test_split_claims_of_nothing() -> None:
    assert split_claims("") == []
    assert split_claims("[a::chunk-001] [b::chunk-002]") == []


# --- verdicts ----------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "verdict"), [
    ("yes", "yes"), ("Yes.", "yes"), ("**Yes**", "yes"), ("YES, it follows.", "yes"),
    ("No", "no"), ("**No**", "no"), ("no.", "no"), ("`no`", "no"),
    ("Ja.", "yes"), ("ja", "yes"), ("Nein", "no"), ("nein, die Zahl stimmt nicht", "no"),
    ("네", "yes"), ("네, 따릅니다.", "yes"), ("예.", "yes"),
    ("아니요", "no"), ("아니요.", "no"), ("아니오", "no"),
    ("Answer: yes", "yes"),  # first word is neither: the only verdict word decides
    ("The claim does not follow, so no.", "no"),
    ("", "unparsable"), ("Maybe.", "unparsable"), ("yes and no", "yes"),
    ("It is hard to say: no and yes both fit", "unparsable"),
])
def test_parse_verdict(raw: str, verdict: str) -> None:
    assert parse_verdict(raw) == verdict


@given(st.text(max_size=40))
def test_parse_verdict_always_gives_one_of_three(raw: str) -> None:
    assert parse_verdict(raw) in {"yes", "no", "unparsable"}


# --- kappa by hand -----------------------------------------------------------------------


def test_cohen_kappa_hand_worked_table() -> None:
    # judge yes/label yes 20, yes/no 5, no/yes 10, no/no 15; n = 50
    # p_o = (20 + 15) / 50 = 0.7
    # p_e = ((20 + 5)(20 + 10) + (10 + 15)(5 + 15)) / 50² = (750 + 500) / 2500 = 0.5
    # κ = (0.7 − 0.5) / (1 − 0.5) = 0.4
    assert cohen_kappa(tp=20, fp=5, fn=10, tn=15) == pytest.approx(0.4)


def test_cohen_kappa_edges() -> None:
    assert cohen_kappa(tp=10, fp=0, fn=0, tn=10) == pytest.approx(1.0)   # full agreement
    assert cohen_kappa(tp=0, fp=10, fn=10, tn=0) == pytest.approx(-1.0)  # full disagreement
    assert cohen_kappa(tp=0, fp=0, fn=0, tn=0) is None                   # nothing to compare
    assert cohen_kappa(tp=7, fp=0, fn=0, tn=0) is None                   # p_e = 1: undefined


@given(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30), st.integers(0, 30))
def test_cohen_kappa_is_at_most_one_and_symmetric_in_the_raters(tp: int, fp: int, fn: int,
                                                                 tn: int) -> None:
    k, swapped = cohen_kappa(tp, fp, fn, tn), cohen_kappa(tp, fn, fp, tn)
    assert (k is None and swapped is None) or k == pytest.approx(swapped)
    assert k is None or k <= 1.0 + 1e-12


# --- judging answers over HTTP -----------------------------------------------------------

CHUNKS = [Chunk(chunk_id="faq::chunk-001", doc_id="faq",
                text="Der Versand kostet 4,90 €. Ab 50 € ist der Versand kostenlos.")]


def test_the_judge_prompt(fake_server: FakeOpenAIServer) -> None:
    judge(fake_server).verdict("Der Versand kostet 4,90 €.", [CHUNKS[0].text])
    messages = fake_server.control.last_body["messages"]
    assert messages == judge_messages("Der Versand kostet 4,90 €.", [CHUNKS[0].text])
    assert messages[1]["content"] == (
        "Sources:\n[1] Der Versand kostet 4,90 €. Ab 50 € ist der Versand kostenlos.\n\n"
        f"Claim: Der Versand kostet 4,90 €.\n\n{JUDGE_QUESTION}")


def test_the_claim_goes_with_its_question(fake_server: FakeOpenAIServer) -> None:
    # "68" alone says nothing a source could support; "68" as the answer to a question does
    j = judge(fake_server)
    assert j.verdict("68.", ["Die Frist beträgt 68 Tage."])["verdict"] == "no"
    v = j.verdict("68.", ["Die Frist beträgt 68 Tage."], "Wie viele Tage beträgt die Frist?")
    assert v["verdict"] == "yes"
    assert fake_server.control.last_body["messages"][1]["content"] == (
        "Sources:\n[1] Die Frist beträgt 68 Tage.\n\n"
        "Question: Wie viele Tage beträgt die Frist?\n"
        f"Claim: 68.\n\n{JUDGE_QUESTION}")


def test_judge_answer_sends_the_question_with_each_claim(fake_server: FakeOpenAIServer
                                                         ) -> None:
    answer = Answer(text="Der Versand kostet 4,90 € [1]. Ab 50 € kostenlos. [1]",
                    status="supported")
    judge(fake_server).judge_many([(answer, CHUNKS, "Was kostet der Versand?")])
    prompts = [r.body["messages"][1]["content"] for r in fake_server.control.requests
               if r.method == "POST"]
    assert len(prompts) == 2
    assert all("\nQuestion: Was kostet der Versand?\nClaim: " in p for p in prompts)


def test_judge_answer_claim_by_claim(fake_server: FakeOpenAIServer) -> None:
    answer = Answer(text="Der Versand kostet 4,90 € [faq::chunk-001]. "
                         "Ab 40 € ist der Versand kostenlos. [faq::chunk-001]",
                    status="supported")
    result = judge(fake_server).judge_answer(answer, CHUNKS)
    assert (result.supported, result.total, result.unparsable) == (1, 2, 0)
    assert [(v["claim"], v["label"], v["verdict"], v["attempts"]) for v in result.verdicts] == [
        ("Der Versand kostet 4,90 €.", "entailed", "yes", 1),
        ("Ab 40 € ist der Versand kostenlos.", "unsupported", "no", 1)]
    assert result.score == 1 / 2
    # the judge's tokens, as the fake server counts them (words), summed over both calls
    assert result.usage == {
        "prompt_tokens": sum(v["usage"]["prompt_tokens"] for v in result.verdicts),
        "completion_tokens": 8}


def test_a_declined_answer_claims_nothing(fake_server: FakeOpenAIServer) -> None:
    answer = Answer(text="I don't know.", status="insufficient")
    assert judge(fake_server).judge_answer(answer, []) == JudgeResult(supported=0, total=0)
    assert fake_server.control.request_count == 0


def test_without_cited_sources_every_claim_is_no_without_a_call(
        fake_server: FakeOpenAIServer) -> None:
    answer = Answer(text="Der Versand kostet 4,90 €.", status="supported")
    result = judge(fake_server).judge_answer(answer, [])
    assert [(v["claim"], v["label"], v["raw"]) for v in result.verdicts] == [
        ("Der Versand kostet 4,90 €.", "unsupported", NO_SOURCE)]
    assert fake_server.control.request_count == 0


def test_a_failed_call_leaves_the_answer_unmeasured(fake_server: FakeOpenAIServer) -> None:
    answer = Answer(text="Der Versand kostet 4,90 €. Ab 50 € ist er kostenlos.",
                    status="supported")
    fake_server.control.fail_next(1, status=400)  # the 1st claim's call; the 2nd would work
    j = judge(fake_server, concurrency=1)  # one thread: the scripted failure hits answer 1
    with pytest.raises(EndpointError):
        j.judge_answer(answer, CHUNKS)
    fake_server.control.fail_next(1, status=400)
    out = j.judge_many([(answer, CHUNKS, None), (answer, CHUNKS, None)])
    assert isinstance(out[0], EndpointError)
    assert isinstance(out[1], JudgeResult) and out[1].total == 2


def test_unparsable_replies_are_counted_apart() -> None:
    result = JudgeResult(supported=1, total=3, unparsable=1)
    assert result.score == 1 / 2
    assert JudgeResult(supported=0, total=1, unparsable=1).score is None


# --- judge_check -------------------------------------------------------------------------


def test_the_shipped_labelled_set_is_balanced_and_trilingual() -> None:
    rows = [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 24
    assert sum(r["label"] == "yes" for r in rows) == 12
    assert sorted({r["lang"] for r in rows}) == ["de", "en", "ko"]


def test_judge_check_on_the_shipped_set_with_the_fake_judge(fake_server: FakeOpenAIServer
                                                            ) -> None:
    report = judge_check(LABELLED, judge(fake_server))
    # The word-overlap fake says yes to most claims: it catches wrong numbers that are in
    # no source but not wrong units, other agencies or extra requirements.
    # tp 10, fp 10, fn 2, tn 2 → p_o = 12/24 = 0.5,
    # p_e = ((10+10)(10+2) + (2+2)(10+2)) / 24² = (240 + 48) / 576 = 0.5 → κ = 0
    assert report["confusion"] == {"tp": 10, "fp": 10, "fn": 2, "tn": 2}
    assert report["accuracy"] == pytest.approx(12 / 24)
    assert report["cohen_kappa"] == pytest.approx(0.0)
    assert (report["n"], report["measured"], report["not_measured"]) == (24, 24, 0)
    assert report["disagreements"] == ["ko-04", "ko-05", "ko-07", "ko-08", "de-04", "de-05",
                                       "de-07", "de-08", "en-02", "en-04", "en-05", "en-07"]


def test_judge_check_counts_failed_calls_as_not_measured(fake_server: FakeOpenAIServer,
                                                         tmp_path: Path) -> None:
    path = tmp_path / "labelled.jsonl"
    rows = [
        {"id": "a", "claim": "Ab 50 € ist der Versand kostenlos.", "sources": [CHUNKS[0].text],
         "label": "yes"},
        {"id": "b", "claim": "Ab 40 € ist der Versand kostenlos.", "sources": [CHUNKS[0].text],
         "label": "no"},
        {"id": "c", "claim": "Der Versand kostet 4,90 €.", "sources": [CHUNKS[0].text],
         "label": "yes"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    fake_server.control.fail_next(1, status=400)  # concurrency 1: item "a" fails
    report = judge_check(path, judge(fake_server, concurrency=1))
    assert report["not_measured"] == 1 and report["not_measured_ids"] == ["a"]
    assert report["confusion"] == {"tp": 1, "fp": 0, "fn": 0, "tn": 1}
    assert report["accuracy"] == 1.0
    assert report["cohen_kappa"] == pytest.approx(1.0)


def test_judge_check_sends_a_labelled_claims_question(fake_server: FakeOpenAIServer,
                                                     tmp_path: Path) -> None:
    path = tmp_path / "labelled.jsonl"
    row = {"id": "a", "claim": "4,90 €.", "sources": [CHUNKS[0].text], "label": "yes",
           "question": "Was kostet der Versand?"}
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    assert judge_check(path, judge(fake_server))["confusion"]["tp"] == 1
    assert fake_server.control.last_body["messages"] == judge_messages(
        "4,90 €.", [CHUNKS[0].text], "Was kostet der Versand?")


def test_judge_check_reports_a_bad_line_with_its_place(tmp_path: Path,
                                                       fake_server: FakeOpenAIServer) -> None:
    path = tmp_path / "labelled.jsonl"
    path.write_text('{"id": "a", "claim": "c", "sources": [], "label": "yes"}\n'
                    '{"id": "b", "claim": "c", "sources": [], "label": "maybe"}\n',
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"labelled.jsonl:2: field 'label'"):
        judge_check(path, judge(fake_server))


# --- replies that always parse -------------------------------------------------------------


def test_a_judge_request_carries_the_reply_schema(fake_server: FakeOpenAIServer) -> None:
    v = judge(fake_server).claim_verdict("Der Versand kostet 4,90 €.", [CHUNKS[0].text])
    body = fake_server.control.last_body
    assert body["response_format"]["type"] == "json_schema"
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["verdict"]["enum"] == ["entailed", "contradicted",
                                                       "unsupported"]
    assert (v["label"], v["attempts"]) == ("entailed", 1)


def test_an_invalid_reply_is_retried_once_with_the_validation_error(
        fake_server: FakeOpenAIServer) -> None:
    fake_server.control.fail_next(1, reply='{"verdict": "maybe", "evidence": ""}')
    v = judge(fake_server).claim_verdict("Der Versand kostet 4,90 €.", [CHUNKS[0].text])
    assert (v["label"], v["attempts"]) == ("entailed", 2)
    retry = fake_server.control.last_body["messages"]
    assert retry[-2] == {"role": "assistant", "content": '{"verdict": "maybe", "evidence": ""}'}
    assert retry[-1]["content"].startswith("That reply is invalid: field 'verdict': Input "
                                           "should be 'entailed', 'contradicted' or "
                                           "'unsupported'")


def test_two_invalid_replies_are_not_measured_with_the_reason(
        fake_server: FakeOpenAIServer) -> None:
    fake_server.control.fail_next(2, reply="Yes, it does.")
    j = judge(fake_server, concurrency=1)
    v = j.claim_verdict("Der Versand kostet 4,90 €.", [CHUNKS[0].text])
    assert (v["label"], v["verdict"], v["attempts"]) == (None, "unparsable", 2)
    assert v["reason"].startswith("judge reply invalid twice: not JSON")
    fake_server.control.fail_next(2, reply="Yes, it does.")
    answer = Answer(text="Der Versand kostet 4,90 €. Ab 50 € ist er kostenlos.",
                    status="supported")
    result = j.judge_answer(answer, CHUNKS)
    assert (result.total, result.unparsable, result.score) == (2, 1, 1.0)


def test_judge_check_reports_kappa_ci_three_way_confusion_and_flip_rate(
        fake_server: FakeOpenAIServer, tmp_path: Path) -> None:
    path = tmp_path / "labelled.jsonl"
    rows = [
        {"id": "a", "claim": "Ab 50 € ist der Versand kostenlos.", "sources": [CHUNKS[0].text],
         "label": "entailed"},
        {"id": "b", "claim": "Ab 40 € ist der Versand kostenlos.", "sources": [CHUNKS[0].text],
         "label": "contradicted"},
        {"id": "c", "claim": "Die Lieferung dauert drei Wochen.", "sources": [CHUNKS[0].text],
         "label": "unsupported"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report = judge_check(path, judge(fake_server, concurrency=1), rejudge=2)
    # the fake says entailed / unsupported / unsupported, the same every time
    assert report["confusion3"]["entailed"]["entailed"] == 1
    assert report["confusion3"]["unsupported"] == {"entailed": 0, "contradicted": 1,
                                                   "unsupported": 1}
    assert report["confusion"] == {"tp": 1, "fp": 0, "fn": 0, "tn": 2}
    assert report["flip_rate"] == 0.0 and report["flips"] == {}
    assert fake_server.control.request_count == 9  # 3 items x (1 + 2 rejudges)
    low, high = report["kappa_ci"]
    assert low is not None and low <= report["cohen_kappa"] <= high
    assert report["unparsable_share"] == 0.0


def test_flip_rate_counts_changed_verdicts(fake_server: FakeOpenAIServer, tmp_path: Path
                                           ) -> None:
    path = tmp_path / "labelled.jsonl"
    path.write_text(json.dumps({"id": "a", "claim": "Der Versand kostet 4,90 €.",
                                "sources": [CHUNKS[0].text], "label": "yes"}) + "\n",
                    encoding="utf-8")
    # first verdict entailed (normal), rejudge 1 contradicted, rejudge 2 normal → 1 of 2
    fake_server.control.fail_next(0)
    j = judge(fake_server, concurrency=1)
    original = j.claim_verdict
    calls = iter([None, '{"verdict": "contradicted", "evidence": ""}', None])

    def scripted(*args: Any, **kw: Any) -> dict[str, Any]:
        reply = next(calls)
        if reply is not None:
            fake_server.control.fail_next(1, reply=reply)
        return original(*args, **kw)

    j.claim_verdict = scripted  # type: ignore[method-assign]
    report = judge_check(path, j, rejudge=2)
    assert report["flip_rate"] == 0.5 and report["flips"] == {"a": 0.5}
