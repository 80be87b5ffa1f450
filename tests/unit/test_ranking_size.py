"""A ranking keeps its top k and the ranks of the rows tracked at search time: O(k), not O(n)."""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ragassay.retrieve import Ranking, apply_min_score, ranking_from_scores, ranking_from_sparse
from ragassay.schema import Chunk
from ragassay.store import Index, store_of_chunks


def make_index(n: int) -> Index:
    return store_of_chunks([Chunk.model_construct(chunk_id=f"c{i}", doc_id="d", text="x")
                            for i in range(n)], "mem")


def full_rank(scores: np.ndarray, position: int) -> int:
    """The rank by sorting every row: score descending, ties by lower row."""
    order = sorted(range(len(scores)), key=lambda r: (-scores[r], r))
    return order.index(position) + 1


def test_tracked_ranks_follow_the_tie_rule() -> None:
    rng = np.random.default_rng(5)
    index = store_of_chunks([Chunk.model_construct(chunk_id=f"c{i}", doc_id="d", text="x")
                             for i in range(60)], "mem")
    for _ in range(40):
        scores = rng.integers(0, 6, 60).astype(np.float32)  # many ties
        scores[rng.integers(0, 60, 5)] = -np.inf
        track = [int(p) for p in rng.integers(0, 60, 4)]
        ranking = ranking_from_scores(index, scores, 7, track=track, positive_only=True)
        assert ranking.ranks == {p: full_rank(scores, p) for p in track}
        for rank, hit in enumerate(ranking.hits, 1):
            assert ranking.rank_of(hit.position) == rank == full_rank(scores, hit.position)
        cut = apply_min_score(ranking, 3.0)
        assert cut.ranks == ranking.ranks


def test_a_ranking_over_100000_chunks_holds_o_of_k() -> None:
    n, k = 100_000, 10
    index = store_of_chunks([Chunk.model_construct(chunk_id=f"c{i}", doc_id="d", text="x")
                             for i in range(n)], "mem")
    scores = np.random.default_rng(0).random(n, dtype=np.float32)
    ranking = ranking_from_scores(index, scores, k, track=[17, 99_999])
    assert len(ranking.hits) == k and set(ranking.ranks) == {17, 99_999}
    assert ranking.ranks[17] == int(np.count_nonzero(scores > scores[17])) + 1
    values = [getattr(ranking, f.name) for f in dataclasses.fields(Ranking)]
    assert not any(isinstance(v, np.ndarray) for v in values)
    held = sum(sys.getsizeof(v) for v in values) + sum(sys.getsizeof(h) for h in ranking.hits)
    assert held < 10_000  # a 100,000-row float32 score vector alone is 400,000 bytes
    try:
        ranking.rank_of(5)
    except KeyError as exc:
        assert "neither tracked nor retrieved" in str(exc)
    else:
        raise AssertionError("an untracked row has no rank")


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_sparse_ranking_equals_the_ranking_of_its_full_vector(data: st.DataObject) -> None:
    """ranking_from_sparse against ranking_from_scores on the vector it stands for."""
    n = data.draw(st.integers(1, 40))
    default = data.draw(st.sampled_from([0.0, -np.inf]))
    listed = data.draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
    # few distinct values, so that ties are common
    values = data.draw(st.lists(st.sampled_from([0.25, 0.5, 1.0, 2.0]),
                                min_size=len(listed), max_size=len(listed)))
    k = data.draw(st.integers(0, n + 2))
    min_score = data.draw(st.sampled_from([None, 0.5, 1.5]))
    track = data.draw(st.lists(st.integers(0, n - 1), max_size=5))
    index = make_index(n)
    full = np.full(n, default, dtype=np.float64)
    full[listed] = values
    want = ranking_from_scores(index, full, min(k, len(listed)), min_score=min_score,
                               track=track)
    got = ranking_from_sparse(index, listed, values, k, default=default,
                              min_score=min_score, track=track)
    assert got == want
