"""The fast paths of evaluate give what the general paths give, bit for bit.

- from dicts: the batch path (scores looked up with dict.get, ranks by binary search in each
  query's sorted scores) against the query-by-query path (each ranking sorted by
  :func:`rank_documents`);
- from columns: :func:`join_grouped` (a run grouped by query: per-query sorted hashes and
  scores) against :func:`join_sorted` (a sort of all pair hashes), on grouped, shuffled,
  tied, ragged and repeated rows, and with a hash that collides on purpose.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from ragassay.metrics import ir
from ragassay.metrics.columnar import (
    Joined,
    Table,
    join_grouped,
    join_sorted,
    rank_in_rows,
)
from ragassay.metrics.columnar import joins as columns
from ragassay.metrics.ir import evaluate, parse_measures, qrels_table, run_table

MEASURES = ["ndcg@3", "ndcg", "mrr@5", "mrr", "recall@4", "recall", "map", "map@2", "P@3",
            "hit@1", "r_precision"]


def random_case(rng: random.Random) -> tuple[dict[str, dict[str, int]],
                                             dict[str, dict[str, float]]]:
    """Small qrels and run: ties (integer scores), negative and zero grades, judged
    documents not retrieved, queries only in the qrels or only in the run, ragged depths."""
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in rng.sample(range(40), rng.randint(1, 12)):
        docs = rng.sample(range(60), rng.choice([1, 2, 5, 9, 20]))
        tied = rng.random() < 0.4
        run[f"q{q}"] = {f"d{d}": float(rng.randint(-2, 3)) if tied else rng.uniform(-1, 1)
                        for d in docs}
        if rng.random() < 0.85:
            judged = rng.sample(range(60), rng.randint(1, 12))
            qrels[f"q{q}"] = {f"d{d}": rng.choice([-1, 0, 1, 1, 2, 3]) for d in judged}
    qrels["only_judged"] = {"d1": 2}
    return qrels, run


def normalized(j: Joined) -> tuple[object, ...]:
    """A join's content with the judged rows in (query, rank) order."""
    order = np.lexsort((j.hit_rank, j.hit_q))
    return (j.qids.tolist(), j.judged_query.tolist(), j.in_run.tolist(), j.size.tolist(),
            j.hit_q[order].tolist(), j.hit_grade[order].tolist(), j.hit_rank[order].tolist(),
            j.qrels_q.tolist(), j.qrels_grade.tolist())


def shuffled(t: Table, rng: random.Random) -> Table:
    order = np.array(rng.sample(range(len(t)), len(t)), dtype=np.int64)
    return Table(t.qid[order], t.docid[order], t.value[order], t.line[order])


@pytest.mark.parametrize("round_keys", [1 << 17, 8])
def test_dict_batch_path_is_the_query_by_query_path(monkeypatch: pytest.MonkeyPatch,
                                                    round_keys: int) -> None:
    monkeypatch.setattr(columns, "_ROUND", round_keys)  # 8: ranks in rounds of few queries
    rng = random.Random(3)
    measures = parse_measures(MEASURES)
    for _ in range(300):
        qrels, run = random_case(rng)
        qids = sorted(q for q in qrels if q in run)
        fast = ir._score_columns(qrels, run, qids, measures, keep_order=False)
        slow = ir._score_columns_by_query(qrels, run, qids, measures, keep_order=False)
        assert fast.keys() == slow.keys()
        for name in fast:
            assert fast[name].tolist() == slow[name].tolist(), name


@pytest.mark.parametrize("round_keys", [1 << 17, 8])
def test_grouped_join_is_the_sorted_join(monkeypatch: pytest.MonkeyPatch,
                                         round_keys: int) -> None:
    monkeypatch.setattr(columns, "_ROUND", round_keys)  # 8: a round of one or few queries
    rng = random.Random(5)
    taken = 0
    for _ in range(300):
        qrels, run = random_case(rng)
        q, r = qrels_table(qrels), run_table(run)
        grouped = join_grouped(q, r)
        if grouped is None:  # a ragged run: the sorted join only
            continue
        taken += 1
        assert normalized(grouped) == normalized(join_sorted(q, r))
    assert taken > 200


def test_columns_in_any_row_order_give_the_dict_values() -> None:
    rng = random.Random(11)
    for _ in range(150):
        qrels, run = random_case(rng)
        expected = evaluate(qrels, run, MEASURES)
        q, r = qrels_table(qrels), run_table(run)
        for q_cols, r_cols in ((q, r), (shuffled(q, rng), shuffled(r, rng))):
            got = evaluate((q_cols.qid, q_cols.docid, q_cols.value),
                           (r_cols.qid, r_cols.docid, r_cols.value), MEASURES)
            assert got == expected


def test_colliding_hashes_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a hash of 4 bits every query has many equal hashes: the ids decide."""
    real = columns.id_hash
    monkeypatch.setattr(columns, "id_hash", lambda ids: real(ids) & np.uint64(0xF << 60))
    rng = random.Random(13)
    for _ in range(150):
        qrels, run = random_case(rng)
        q, r = qrels_table(qrels), run_table(run)
        grouped = join_grouped(q, r)
        if grouped is not None:
            assert normalized(grouped) == normalized(join_sorted(q, r))


@pytest.mark.parametrize("layout", ["grouped", "shuffled"])
def test_a_repeated_run_row_is_refused_in_any_layout(layout: str) -> None:
    qid = np.array(["q1", "q1", "q1", "q2", "q2"])
    doc = np.array(["a", "b", "a", "a", "c"])
    score = np.array([0.5, 0.4, 0.3, 0.2, 0.1])
    if layout == "shuffled":
        order = [3, 0, 4, 1, 2]
        qid, doc, score = qid[order], doc[order], score[order]
    qrels = {"q1": {"a": 1}, "q2": {"c": 1}}
    with pytest.raises(ValueError, match="query 'q1': document 'a' appears more than once"):
        evaluate(qrels, (qid, doc, score), ["map"])


def test_binary_search_in_rows_is_searchsorted() -> None:
    rng = np.random.default_rng(0)
    matrix = np.sort(rng.integers(0, 6, size=(7, 9)).astype(np.float64), axis=1)
    rows = rng.integers(0, 7, size=200)
    values = rng.integers(-1, 8, size=200).astype(np.float64)
    expected = [np.searchsorted(matrix[r], v, side="right") for r, v in zip(rows, values,
                                                                            strict=True)]
    assert columns._search_rows(matrix, rows, values).tolist() == expected


@pytest.mark.parametrize("round_keys", [1 << 17, 4])
def test_rank_in_rows_by_hand(monkeypatch: pytest.MonkeyPatch, round_keys: int) -> None:
    monkeypatch.setattr(columns, "_ROUND", round_keys)  # 4: a round per row
    # row 0: 0.9 0.5 0.5 0.1; row 1: 3 scores and the -inf padding
    scores = np.array([[0.5, 0.9, 0.1, 0.5], [2.0, 1.0, 3.0, -np.inf]])
    rank, tied = rank_in_rows(scores, np.array([0, 0, 0, 1, 1]),
                              np.array([0.9, 0.5, 0.1, 1.0, 3.0]))
    assert rank.tolist() == [0, 1, 3, 2, 0]
    assert tied.tolist() == [False, True, False, False, False]
