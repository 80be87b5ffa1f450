"""Printed trec_eval output against pytrec_eval: the same digits, per query and ``all``.

trec_eval's ``all`` line is the per-query values added left to right in query order and
divided by the number of queries, printed with ``%.4f``; the expected text is built that way
from pytrec_eval's per-query values (trec_eval's C code) and compared character for
character with ours.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragassay.metrics.ir import evaluate, rank_documents
from ragassay.metrics.reference import c_float
from ragassay.metrics.trec import format_results, trec_eval_measures, trec_eval_text

from .test_vs_pytrec_eval import qrels_and_run, reference

pytrec_eval = pytest.importorskip("pytrec_eval")

# Our measure -> trec_eval name, in trec_eval's print order.
MEASURES = {
    "map": "map", "r_precision": "Rprec", "mrr": "recip_rank",
    "precision_at_5": "P_5", "precision_at_10": "P_10",
    "recall_at_5": "recall_5", "recall_at_10": "recall_10",
    "ndcg_at_5": "ndcg_cut_5", "ndcg_at_10": "ndcg_cut_10", "map_at_5": "map_cut_5",
    "hit_at_1": "success_1", "hit_at_5": "success_5",
}


def expected_text(ref: dict[str, dict[str, float]]) -> str:
    lines = []
    qids = sorted(ref)
    for qid in qids:
        lines += [f"{name:<22}\t{qid}\t{ref[qid][name]:.4f}" for name in MEASURES.values()]
    for name in MEASURES.values():
        total = 0.0
        for qid in qids:
            total += ref[qid][name]
        lines.append(f"{name:<22}\tall\t{total / len(qids):.4f}")
    return "".join(line + "\n" for line in lines)


@given(qrels_and_run())
@settings(max_examples=400, deadline=None)
def test_printed_output_matches_trec_eval(case: tuple[dict, dict]) -> None:
    qrels, run = case
    ref = reference(qrels, run, frozenset(MEASURES.values()))
    if not ref:
        return
    ours = evaluate(qrels, run, list(MEASURES), missing_queries="skip")
    for qid, values in ref.items():  # bit-equal per query, not only to 1e-9
        for name, trec_name in MEASURES.items():
            assert ours["per_query"][qid][name] == values[trec_name], (qid, name)
    assert format_results(ours, per_query=True) == expected_text(ref)


OFFICIAL_NAMES = ["num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank",
                  *(f"iprec_at_recall_{k / 10:.2f}" for k in range(11)),
                  *(f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
                  *(f"ndcg_cut_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000))]
COUNT_NAMES = {"num_ret", "num_rel", "num_rel_ret"}


@given(qrels_and_run(), st.integers(1, 3), st.sampled_from([None, 1, 3]), st.booleans(),
       st.booleans())
@settings(max_examples=300, deadline=None)
def test_options_match_trec_eval(case: tuple[dict, dict], level: int, max_docs: int | None,
                                 judged_only: bool, complete: bool) -> None:
    """The official measures that pytrec_eval computes per query (all but runid and
    gm_map) and ndcg_cut, with -q -l -M -J -c, against pytrec_eval on the same input cut
    the way trec_eval does it. pytrec_eval has no -c: a judged query missing from the
    run is given an empty ranking there, scores 0 (as in trec_eval), and its own lines are
    left out (trec_eval prints none for it)."""
    qrels, run = case
    # pytrec_eval has no -M: the run is cut to its top documents; -J is its own flag
    cut = {qid: {d: scores[d] for d in rank_documents(scores)[:max_docs]}
           for qid, scores in run.items()}
    missing = [q for q, j in qrels.items() if j and q not in run] if complete else []
    cut.update({q: {} for q in missing})
    ref = pytrec_eval.RelevanceEvaluator(
        qrels, {"official", "bpref", "iprec_at_recall", "ndcg_cut"}, relevance_level=level,
        judged_docs_only_flag=judged_only).evaluate(cut)
    for qid in missing:  # pytrec_eval's iprec_at_recall of no document is 0 / 0
        ref[qid] = {n: v if n in COUNT_NAMES else 0.0 for n, v in ref[qid].items()}
    measures = trec_eval_measures(["num_q", "num_ret", "num_rel", "num_rel_ret", "map",
                                   "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P",
                                   "ndcg_cut"])
    if not set(ref) - set(missing):
        with pytest.raises(ValueError, match="no query"):
            trec_eval_text(qrels, run, measures, level=level, max_docs=max_docs,
                           judged_only=judged_only, complete=complete)
        return
    ours = trec_eval_text(qrels, run, measures, per_query=True, level=level,
                          max_docs=max_docs, judged_only=judged_only, complete=complete)
    qids = sorted(ref)
    lines = []

    def show(name: str, qid: str, value: float) -> str:
        return (f"{name:<22}\t{qid}\t{int(value)}" if name in COUNT_NAMES | {"num_q"}
                else f"{name:<22}\t{qid}\t{c_float(value)}")

    for qid in qids:
        if qid not in missing:
            lines += [show(name, qid, ref[qid][name]) for name in OFFICIAL_NAMES]
    lines.append(show("num_q", "all", len(qids)))
    for name in OFFICIAL_NAMES:
        total = 0.0
        for qid in qids:
            total += ref[qid][name]
        lines.append(show(name, "all", total if name in COUNT_NAMES else total / len(qids)))
    assert ours == "".join(line + "\n" for line in lines)
