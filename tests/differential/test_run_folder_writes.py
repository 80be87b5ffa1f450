"""The run folder's fast writing paths against their plain versions, on seeded generated
questions and on hand-written tricky cases: a question's three rows from one dump of it
(:func:`ragassay.runrows.question_rows`) against the row models built and dumped, and the
page's JSON element read for unsafe text (:func:`ragassay.report.rows.json_script`) against
the walk of every string through ``shown``. Each must give exactly what the plain one gives."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from ragassay.checks import Checks
from ragassay.jsonio import jsonl_text
from ragassay.report.rows import (
    Strings,
    json_script,
    json_script_reference,
    retrieved_entries,
    retrieved_entries_reference,
    shown,
)
from ragassay.runrows import (
    QuestionResult,
    RankedChunk,
    question_rows,
    question_rows_reference,
)
from ragassay.schema import Answer, Citation

# texts a page must clean (control, bidi, line breaks), texts that only look like it in JSON
# (an escaped backslash before r, b, f, u0001), and plain ones
TRICKY = ["", "plain", "ünïcödé", "한국어 기간은 2년", "a\r\nb", "a\rb", "tab\there", "new\nline",
          "esc\x1b[31m", "bidi\u202eevil", "\u2028sep\u2029", "del\x7f", "c1\x85", "\x00nul",
          "\x0bvt\x0cff\x08", "\u200emark\u200f", "\u061c", "\u2066iso\u2069", "back\\slash",
          "back\\r not a CR", "\\u0001 written", "\\\\b", "quote\"s", "</script><!--", "~7",
          "~", "x" * 40]
WORDS = ["Kaza", "pelili", "fesi", "Rozu", "Vertrag", "Frist", "계약", "검수", "delivery"]
LABELS = ["retrieval_failure.gold_evidence_not_in_top_k", "answer_failure.failed_to_abstain",
          "citation_failure.correct_answer_wrong_citation"]


def _text(rng: random.Random) -> str:
    pool = TRICKY if rng.random() < 0.3 else WORDS
    return " ".join(rng.choice(pool) for _ in range(rng.randint(0, 4)))


def _id(rng: random.Random) -> str:
    return f"{rng.choice(WORDS).lower()}-{rng.randint(0, 40):04d}::chunk-{rng.randint(1, 9):03d}"


def _value(rng: random.Random, depth: int = 0) -> Any:
    """A value a free-form field (scores, evidence, claims) may hold."""
    kind = rng.randrange(12 if depth < 3 else 7)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.randint(-3, 10**6)
    if kind == 3:
        return rng.choice([0.0, 1.0, 0.1, 1e-05, 1e16, 0.27876442670822144, -2.5,
                           float("inf"), float("nan")])
    if kind in (4, 5, 6):
        return _text(rng)
    if kind in (7, 8):
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if kind == 9:
        return tuple(_value(rng, depth + 1) for _ in range(rng.randint(0, 3)))
    return {_text(rng): _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _claims(rng: random.Random) -> dict[str, Any]:
    def verdict() -> dict[str, Any] | None:
        return None if rng.random() < 0.2 else {
            "verdict": rng.choice(["entailed", "contradicted", None]),
            "decided_by": rng.choice(["overlap", "judge", "number"]),
            "evidence": _text(rng), "reason": _text(rng), "chunk": _id(rng)}
    claims = [{"claim": _text(rng), "cited": verdict() or {"verdict": None, "decided_by": "x"},
               "context": verdict(), "gold": verdict()} for _ in range(rng.randint(0, 3))]
    return {"claims": claims, "gold_claims": [{"claim": _text(rng), "answer": verdict()}],
            "judge_usage": _value(rng)}


def _question(rng: random.Random, i: int) -> QuestionResult:
    ids = [_id(rng) for _ in range(rng.randint(0, 12))]
    gold = {cid: rng.randint(1, 3) for cid in rng.sample(ids, min(len(ids), rng.randint(0, 2)))}
    answer = None if rng.random() < 0.15 else Answer(
        text=_text(rng), status=rng.choice(["supported", "insufficient", "abstained"]),
        citations=[Citation(chunk_id=_id(rng), page=rng.choice([None, 1, 7]),
                            raw=rng.choice([None, "1", "chunk-001"]))
                   for _ in range(rng.randint(0, 3))])
    retrieval: dict[str, float | int | None] = {
        "recall_at_5": rng.choice([0.0, 0.5, 1.0, None]), "hit_at_5": rng.choice([0, 1]),
        "rank": rng.choice([None, 0, 1, 3, 12, 2.0]), "num_gold": len(gold)}
    failures = {label: {_text(rng): _value(rng) for _ in range(rng.randint(0, 3))}
                for label in rng.sample(LABELS, rng.randint(0, 3))}
    q = QuestionResult(
        question_id=f"q{i:05d}", question=_text(rng), topic=rng.choice([None, "Lezabe 0000"]),
        answerable=rng.random() < 0.6, gold_grades=gold,
        gold_alternatives={cid: cid for cid in list(gold)[:1]} if rng.random() < 0.2 else {},
        retrieved=[RankedChunk(rank=r, chunk_id=cid, score=rng.choice([None, rng.random()]),
                               gold=cid in gold) for r, cid in enumerate(ids, 1)],
        gold_rank_in_index={cid: rng.randint(1, 50) for cid in gold},
        retrieval=retrieval, answer=answer, context_chunk_ids=ids[:3],
        scores={"cited_ids": ids[:1], "groundedness_reason": rng.choice(["", _text(rng)]),
                "correct": rng.choice([0, 1, None]), "extra": _value(rng)},
        missing={"answer_relevancy": _text(rng)} if rng.random() < 0.5 else {},
        usage=rng.choice([None, {"prompt_tokens": 10, "source": "counted"}]),
        judge=rng.choice([None, {"score": 0.5, "reason": _text(rng)}]),
        claims=rng.choice([None, _claims(rng)]),
        latency_ms=rng.choice([None, 12.5, 3, {"answer": 1.5, "retrieve": 2}]),
        failures=failures,
        checks=Checks(found=rng.choice([True, False, None]), grounded=rng.choice([True, None])),
        not_measured=rng.choice([None, None, "no prediction"]))
    if rng.random() < 0.3:  # as the claim checks do: fields set after the record is made
        q.claims = {"error": _text(rng), "parts": (1, 2.5, _text(rng))}
        q.scores["claim_recall"] = rng.choice([None, 0.5, float("inf")])
        q.checks = Checks(right=False)
    return q


@pytest.mark.parametrize("seed", range(3))
def test_question_rows_equal_the_row_models_dumped(seed: int) -> None:
    rng = random.Random(seed)
    with_failures = 0
    for i in range(400):
        q = _question(rng, i)
        fast, plain = question_rows("run-1", q), question_rows_reference("run-1", q)
        assert fast == plain, q.question_id
        # the same bytes too: key order and int / float kept apart
        assert [jsonl_text([r]) if r is not None else None for r in fast] == \
            [jsonl_text([r]) if r is not None else None for r in plain], q.question_id
        with_failures += fast[2] is not None
    assert 100 < with_failures < 400  # both kinds of question are met


def test_question_rows_hand_written_cases() -> None:
    rng = random.Random(7)
    q = _question(rng, 0)
    q.answer, q.failures, q.retrieved = None, {LABELS[0]: {}}, []
    assert question_rows("r", q) == question_rows_reference("r", q)
    q.retrieval["rank"] = 4.0  # a rank held as a float is written as the integer
    fast = question_rows("r", q)
    assert fast == question_rows_reference("r", q)
    assert fast[2] is not None and fast[2]["rank"] == 4 and fast[2]["answer_text"] is None
    q.failures = {}
    assert question_rows("r", q)[2] is None


def _page_data(rng: random.Random) -> Any:
    return {"k": rng.randint(1, 10), "strings": [_text(rng) for _ in range(rng.randint(0, 8))],
            "rows": [[_text(rng), _value(rng), [rng.randint(0, 9), round(rng.random(), 4)]]
                     for _ in range(rng.randint(0, 6))], "free": _value(rng)}


@pytest.mark.parametrize("seed", range(3))
def test_json_script_equals_the_walk_of_every_string(seed: int) -> None:
    rng = random.Random(100 + seed)
    walked = 0
    for _ in range(1500):
        data = _page_data(rng)
        assert json_script("rows", data) == json_script_reference("rows", data), data
        walked += json.dumps(shown(data)) != json.dumps(data)
    assert walked > 300  # texts to clean were met


@pytest.mark.parametrize("data", [
    {"a": 1, "a\u202e": 2},  # keys that are one key once cleaned: the walk merges them
    {"x": "\r\n\r\u2028"}, ["\\r", "\\\\r", "\\\\\r"], ("t\tab", "n\nl"), "\x7f", "\x9f\x80",
    {"<b>": "</script>"}, {1: "one", 2.5: None, False: "no", None: "none"}, [], {}, "", None,
    "plain ASCII text", "한국어\u2029줄", ["\x1b", {"\x1b": "\x1b"}],
])
def test_json_script_hand_written_cases(data: Any) -> None:
    assert json_script("x", data) == json_script_reference("x", data)


@pytest.mark.parametrize("seed", range(2))
def test_jsonl_text_equals_json_dumps_of_each_row(seed: int) -> None:
    rng = random.Random(200 + seed)
    rows = [_value(rng) for _ in range(2000)] + [{1: "one", 2.5: None, False: "no", None: "n"}]
    assert jsonl_text(rows) == "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    loop: list[Any] = []
    loop.append(loop)
    for bad, error in ((loop, ValueError), ({"x": {1, 2}}, TypeError)):
        with pytest.raises(error):
            jsonl_text([{"ok": 1}, bad])
    assert jsonl_text([{"ok": [1]}]) == '{"ok": [1]}\n'  # a failed call leaves nothing behind


@pytest.mark.parametrize("seed", range(2))
def test_retrieved_entries_equal_the_reference(seed: int) -> None:
    rng = random.Random(300 + seed)
    for i in range(400):
        q = _question(rng, i)
        for h in q.retrieved:  # what a record may hold after it was made
            if rng.random() < 0.2:
                h.score = rng.choice([1, True, float("inf"), float("nan"), -0.00004, 2.5])
            if rng.random() < 0.1:
                h.rank, h.gold = rng.randint(1, 30), not h.gold
        k = rng.choice([1, 3, 10, 25])
        fast, plain = Strings(), Strings()
        fast.positions = {"taken": 0}  # a table already holding strings
        plain.positions = {"taken": 0}
        assert retrieved_entries(q, k, fast) == retrieved_entries_reference(q, k, plain)
        assert fast.table == plain.table
