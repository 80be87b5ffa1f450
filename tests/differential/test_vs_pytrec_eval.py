"""Our metrics against pytrec_eval (trec_eval's C code) on random qrels and runs, per query.

Generated cases cover graded and binary judgments, negative grades, tied scores (so the
doc-id tie-break is exercised), empty rankings, queries without relevant documents, queries
missing from the run or from the qrels, and rankings shorter than the cutoffs.

pytrec_eval quirks worked around here (see cvangysel/pytrec_eval#38 and #57): an evaluator
is used for one ``evaluate`` call only, every evaluator gets the same measure set, and the
uncut ``ndcg`` measure (which hung in our runs after many evaluators) is compared as
``ndcg_cut_1000``, which equals it for rankings and judgments shorter than 1000.
``recip_rank`` is uncut, so ``mrr_at_k`` is compared with ``recip_rank`` on the run cut to its
top k documents.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragassay.metrics.ir import evaluate, rank_documents
from ragassay.metrics.retrieval import dedupe_ranking, retrieval_scores

pytrec_eval = pytest.importorskip("pytrec_eval")

TOLERANCE = 1e-9
CUTS = (1, 3, 5, 10)
# Our measure name -> pytrec_eval measure name.
PAIRS: dict[str, str] = {
    **{f"precision_at_{k}": f"P_{k}" for k in CUTS},
    **{f"recall_at_{k}": f"recall_{k}" for k in CUTS},
    **{f"ndcg_at_{k}": f"ndcg_cut_{k}" for k in CUTS},
    **{f"hit_at_{k}": f"success_{k}" for k in (1, 5, 10)},
    "map_at_5": "map_cut_5",
    "map": "map",
    "mrr": "recip_rank",
    "r_precision": "Rprec",
    "ndcg": "ndcg_cut_1000",
    # the set measures read each query's own depth (an empty ranking's is 0)
    "utility": "utility",
    "set_p": "set_P",
    "set_relative_p": "set_relative_P",
    "set_recall": "set_recall",
    "set_map": "set_map",
    "set_f": "set_F",
}
REFERENCE_MEASURES = frozenset(PAIRS.values())

# Ids of different lengths and cases, so the tie-break's byte order matters ("d10" < "d2").
DOC_IDS = ["d1", "d2", "d10", "d11", "D3", "a", "b9", "zz", "d0", "x-1", "y", "d12"]
QUERY_IDS = ["q1", "q2", "q10", "Q3"]

docs = st.sampled_from(DOC_IDS)
graded = st.integers(min_value=-1, max_value=3)
binary = st.integers(min_value=0, max_value=1)
# Few distinct values so that ties are common; floats with a fraction too.
scores = st.one_of(st.integers(0, 3).map(float), st.sampled_from([0.5, -1.25, 2.75, 1e-3]))


@st.composite
def qrels_and_run(draw: st.DrawFn) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    grade = draw(st.sampled_from([graded, binary]))
    qids = draw(st.lists(st.sampled_from(QUERY_IDS), min_size=1, max_size=4, unique=True))
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for qid in qids:
        if draw(st.integers(0, 9)) > 0:  # sometimes judged, sometimes not
            qrels[qid] = draw(st.dictionaries(docs, grade, max_size=6))
        if draw(st.integers(0, 9)) > 0:  # sometimes retrieved (possibly nothing)
            run[qid] = draw(st.dictionaries(docs, scores, max_size=12))
    return qrels, run


def reference(qrels: Mapping, run: Mapping, measures: frozenset[str]) -> dict:
    # A fresh evaluator per call: reusing one changes results (pytrec_eval#38).
    return pytrec_eval.RelevanceEvaluator(qrels, set(measures)).evaluate(run)


def cut_run(run: Mapping[str, Mapping[str, float]], k: int) -> dict[str, dict[str, float]]:
    """The run with each query cut to its top k documents (scores kept)."""
    return {q: {d: s[d] for d in rank_documents(s)[:k]} for q, s in run.items()}


@given(qrels_and_run())
@settings(max_examples=800, deadline=None)
def test_evaluate_matches_pytrec_eval(case: tuple[dict, dict]) -> None:
    qrels, run = case
    ours = evaluate(qrels, run, list(PAIRS), missing_queries="skip")["per_query"]
    ref = reference(qrels, run, REFERENCE_MEASURES)
    assert sorted(ours) == sorted(ref)
    for qid, values in ref.items():
        for name, ref_name in PAIRS.items():
            assert ours[qid][name] == pytest.approx(values[ref_name], abs=TOLERANCE), (
                qid, name
            )


@given(qrels_and_run(), st.sampled_from(CUTS))
@settings(max_examples=300, deadline=None)
def test_mrr_at_k_matches_recip_rank_on_cut_run(case: tuple[dict, dict], k: int) -> None:
    qrels, run = case
    ours = evaluate(qrels, run, [f"mrr_at_{k}"], missing_queries="skip")["per_query"]
    ref = reference(qrels, cut_run(run, k), frozenset({"recip_rank"}))
    for qid, values in ref.items():
        assert ours[qid][f"mrr_at_{k}"] == pytest.approx(values["recip_rank"], abs=TOLERANCE)


def test_missing_queries_zero_matches_trec_eval_c() -> None:
    # trec_eval -c scores judged queries absent from the run as 0 (pytrec_eval has no -c,
    # so the absent query is given an empty ranking, which trec_eval scores the same way).
    qrels = {"q1": {"a": 1}, "q2": {"b": 2}}
    run = {"q1": {"a": 1.0, "b": 0.5}}
    ours = evaluate(qrels, run, list(PAIRS))["per_query"]
    ref = reference(qrels, {**run, "q2": {}}, REFERENCE_MEASURES)
    for qid in ("q1", "q2"):
        for name, ref_name in PAIRS.items():
            assert ours[qid][name] == pytest.approx(ref[qid][ref_name], abs=TOLERANCE)


# --- the per-question RAG metrics (metrics.retrieval) ---------------------------------------

ranked_lists = st.lists(docs, max_size=14)  # duplicates allowed: de-duplicated by the metric
gold_maps = st.dictionaries(docs, st.one_of(graded, binary), max_size=5)


@given(ranked_lists, gold_maps)
@settings(max_examples=800, deadline=None)
def test_retrieval_scores_match_pytrec_eval(ranked: list[str], gold: dict[str, int]) -> None:
    ours = retrieval_scores(ranked, gold, ks=CUTS)
    if not any(g >= 1 for g in gold.values()):
        assert ours["map"] is None  # not measurable; trec_eval would report 0
        return
    ranking = dedupe_ranking(ranked)
    # Strictly decreasing scores make trec_eval rank the documents in the given order.
    run = {"q": {doc: float(len(ranking) - i) for i, doc in enumerate(ranking)}}
    qrels = {"q": gold}
    ref = reference(qrels, run, REFERENCE_MEASURES)["q"]
    for k in CUTS:
        assert ours[f"recall_at_{k}"] == pytest.approx(ref[f"recall_{k}"], abs=TOLERANCE)
        assert ours[f"precision_at_{k}"] == pytest.approx(ref[f"P_{k}"], abs=TOLERANCE)
        assert ours[f"ndcg_at_{k}"] == pytest.approx(ref[f"ndcg_cut_{k}"], abs=TOLERANCE)
        if k in (1, 5, 10):
            assert ours[f"hit_at_{k}"] == ref[f"success_{k}"]
        cut = reference(qrels, cut_run(run, k), frozenset({"recip_rank"}))["q"]
        assert ours[f"mrr_at_{k}"] == pytest.approx(cut["recip_rank"], abs=TOLERANCE)
    assert ours["map"] == pytest.approx(ref["map"], abs=TOLERANCE)
    rank = ours["rank"]
    assert (1 / rank if rank else 0.0) == pytest.approx(ref["recip_rank"], abs=TOLERANCE)
