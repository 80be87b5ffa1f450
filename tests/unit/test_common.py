"""Invariants every registered extension must keep, in the style of scikit-learn's
``test_common.py``: a new failure detector, retriever backend or retrieval measure is tested
by being registered (each test is parametrized over the registry, so it cannot be forgotten).

- every failure label: documented in ``docs/taxonomy.md``; a detector says nothing about a
  question that passes every check and returns JSON evidence (or None) on a failing one;
- every retriever backend: at most k hits, distinct rows of the index, scores best first,
  the same ranking whatever the other queries of the call and their order, and a preset that
  uses it (``config.PRESETS``), listed in ``docs/formats.md``;
- every retrieval measure of the measure table (``metrics.list_measures``): values in
  [0, 1], a perfect ranking scoring at least a reversed one in the measure's direction, an
  empty ranking scoring 0, the same values whatever the order of the queries, and its
  name in ``docs/metrics.md``.
"""

from __future__ import annotations

import json
import random

import pytest
from builders import FIXTURE_INDEX, ROOT, make_case

import ragassay.diagnose as diagnose
from ragassay.config import PRESETS, DiagnoseConfig, EvalConfig
from ragassay.index import load_index
from ragassay.metrics import evaluate, list_measures
from ragassay.retrieve import RETRIEVERS
from ragassay.schema import Answer

DOCS = ROOT / "docs"


# --- failure detectors -------------------------------------------------------------------


@pytest.mark.parametrize("label", diagnose.labels())
def test_every_label_is_documented_in_the_taxonomy(label: str) -> None:
    category, name = label.split(".")
    text = (DOCS / "taxonomy.md").read_text(encoding="utf-8")
    assert f"## {category}" in text and f"`{name}`" in text


@pytest.mark.parametrize("label", sorted(diagnose.DETECTORS))
def test_a_detector_is_silent_on_a_question_that_passes(label: str) -> None:
    case = make_case()  # found at rank 1, grounded, right: no failure
    assert case.checks.passed
    assert diagnose.DETECTORS[label](case, DiagnoseConfig()) is None


@pytest.mark.parametrize("label", sorted(diagnose.DETECTORS))
def test_a_detector_returns_json_evidence_or_none(label: str) -> None:
    # Gold missed, an answer with a number its (uncited) source does not hold.
    case = make_case(ranked=["b::chunk-001", "a::chunk-002", "b::chunk-002"],
                     answer=Answer(text="3년으로 한다.", status="supported"),
                     scores={"correct": 0, "groundedness": 0, "hallucination_flag": 1,
                             "groundedness_reason": "no source"})
    evidence = diagnose.DETECTORS[label](case, DiagnoseConfig())
    assert evidence is None or (isinstance(evidence, dict) and json.loads(json.dumps(evidence)))


def test_the_counts_hold_every_label_in_taxonomy_order() -> None:
    counts = diagnose.count_labels([])
    assert list(counts) == list(diagnose.labels()) and set(counts.values()) == {0}
    assert set(diagnose.DETECTORS) | set(diagnose.UNOBSERVABLE) == set(counts)


# --- retriever backends ------------------------------------------------------------------

QUERIES = ["하자보수 기간은 몇 년인가?", "availability of the server", "Gewährleistung",
           "zzz-not-a-word", ""]


@pytest.fixture(scope="module")
def index():  # type: ignore[no-untyped-def]
    return load_index(FIXTURE_INDEX)  # the committed fixture index (hashing)


@pytest.mark.parametrize("backend", sorted(RETRIEVERS))
def test_a_retriever_ranks_at_most_k_distinct_rows_best_first(backend: str, index) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("bm25s") if backend in ("bm25", "hybrid") else None
    cfg = EvalConfig(pipeline={"retrieval_backend": backend})
    retriever = RETRIEVERS[backend].from_config(index, cfg)
    assert retriever.backend == backend
    rankings = retriever.search(QUERIES, 5)
    assert len(rankings) == len(QUERIES)
    for ranking in rankings:
        positions = [h.position for h in ranking.hits]
        assert len(positions) <= 5 and len(set(positions)) == len(positions)
        assert all(index.chunks[h.position].chunk_id == h.chunk_id for h in ranking.hits)
        scores = [h.score for h in ranking.hits]
        assert scores == sorted(scores, reverse=True)
    # Each query's ranking depends on that query only: alone, or the calls' order reversed.
    alone = [retriever.search([q], 5)[0] for q in QUERIES]
    backwards = retriever.search(QUERIES[::-1], 5)[::-1]
    assert [r.hits for r in rankings] == [r.hits for r in alone] == [r.hits for r in backwards]


@pytest.mark.parametrize("backend", sorted(RETRIEVERS))
def test_a_retriever_has_a_preset_and_is_documented(backend: str) -> None:
    assert any(p["retrieval_backend"] == backend for p in PRESETS.values())
    assert f"`{backend}`" in (DOCS / "formats.md").read_text(encoding="utf-8")


# --- retrieval measures ------------------------------------------------------------------

QRELS = {"q1": {"d1": 2, "d4": 1}, "q2": {"d2": 1}, "q3": {"d9": 1}}
PERFECT = {"q1": ["d1", "d4", "d2", "d3"], "q2": ["d2", "d1", "d3"], "q3": ["d9", "d1"]}
REVERSED = {q: docs[::-1] for q, docs in PERFECT.items()}


# trec_eval's utility is a count (relevant retrieved minus non-relevant retrieved), not a share
NOT_A_SHARE = {"utility"}


def measure_names(shares_only: bool = False) -> list[str]:
    """One spelling per family of the table: with a cutoff when the family takes one."""
    return [f"{m.name}@3" if m.takes_cutoff else m.name for m in list_measures("retrieval")
            if not (shares_only and m.name in NOT_A_SHARE)]


@pytest.mark.parametrize("name", measure_names(shares_only=True))
def test_a_measure_stays_in_0_1_and_follows_its_direction(name: str) -> None:
    info = next(m for m in list_measures("retrieval") if name.startswith(m.name))
    best = evaluate(QRELS, PERFECT, [name])["per_query"]
    worst = evaluate(QRELS, REVERSED, [name])["per_query"]
    for qid in QRELS:
        (b,), (w,) = best[qid].values(), worst[qid].values()
        assert 0.0 <= w <= 1.0 and 0.0 <= b <= 1.0
        assert (b >= w) if info.higher_is_better else (b <= w)


@pytest.mark.parametrize("name", measure_names(shares_only=True))
def test_a_measure_of_an_empty_ranking_is_0(name: str) -> None:
    got = evaluate(QRELS, {q: [] for q in QRELS}, [name])["per_query"]
    assert all(v == 0.0 for row in got.values() for v in row.values())


@pytest.mark.parametrize("name", measure_names())
def test_a_measure_does_not_depend_on_the_order_of_the_queries(name: str) -> None:
    order = list(PERFECT)
    random.Random(7).shuffle(order)
    shuffled = {q: PERFECT[q] for q in reversed(order)}
    assert evaluate(QRELS, PERFECT, [name]) == evaluate(QRELS, shuffled, [name])


@pytest.mark.parametrize("info", list_measures("retrieval"), ids=lambda m: m.name)
def test_a_measure_is_listed_in_the_metrics_docs(info) -> None:  # type: ignore[no-untyped-def]
    text = "".join((DOCS / name).read_text(encoding="utf-8")
                   for name in ("metrics.md", "trec_eval.md")).casefold()
    assert info.name.casefold() in text or info.name.replace("_", "@") in text

