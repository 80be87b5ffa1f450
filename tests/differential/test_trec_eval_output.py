"""Printed trec_eval output against pytrec_eval: the same digits, per query and ``all``.

trec_eval's ``all`` line is the per-query values added left to right in query order and
divided by the number of queries, printed with ``%.4f``; the expected text is built that way
from pytrec_eval's per-query values (trec_eval's C code) and compared character for
character with ours.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from ragassay.metrics.ir import evaluate
from ragassay.metrics.trec import format_results

from .test_vs_pytrec_eval import qrels_and_run, reference

pytest.importorskip("pytrec_eval")

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
