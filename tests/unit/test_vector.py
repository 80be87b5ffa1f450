"""Exact search against brute force, HNSW recall against exact, and the vector retriever."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ragassay import vector
from ragassay.embed import get_embedder
from ragassay.errors import MissingPackage
from ragassay.index import Index, build_index, load_index
from ragassay.retrieve import VectorRetriever
from ragassay.vector import (
    ApproximateSearch,
    ExactSearch,
    Neighbours,
    ann_recall,
    search_for,
    top_k,
)


def unit_rows(rng: np.random.Generator, n: int, d: int, clusters: int = 0) -> np.ndarray:
    """n unit vectors; with clusters, scattered around that many random centres."""
    if clusters:
        centres = rng.standard_normal((clusters, d))
        x = centres[rng.integers(0, clusters, n)] + 0.5 * rng.standard_normal((n, d))
    else:
        x = rng.standard_normal((n, d))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def exact_scores(emb: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The exact inner products of the snapped vectors (``math.fsum``: no rounding but the
    last), as float32: what ``ExactSearch`` must give, written plainly."""
    bits = vector.quantization_bits(emb.shape[1])
    se, sq = vector.snap(emb, bits).astype(float), vector.snap(q, bits).astype(float)
    return np.array([[math.fsum(a * b) for b in se] for a in sq], dtype=np.float32)


def brute_force(scores: np.ndarray, k: int) -> list[list[int]]:
    """Sort every row by (score descending, position ascending), written plainly."""
    return [sorted(range(len(s)), key=lambda p: (-float(s[p]), p))[:k] for s in scores]


# --- exact ---------------------------------------------------------------------------


# Small integers make many ties, which is where a tie rule shows.
score_matrices = hnp.arrays(np.float32, st.tuples(st.integers(1, 4), st.integers(1, 12)),
                            elements=st.integers(-3, 3).map(float))


@settings(max_examples=80, deadline=None)
@given(score_matrices, st.integers(0, 14))
def test_top_k_is_score_descending_then_lower_row_first(scores: np.ndarray, k: int) -> None:
    for row in scores:
        want = sorted(range(len(row)), key=lambda p: (-float(row[p]), p))[:max(k, 0)]
        assert top_k(row, k).tolist() == want


@settings(max_examples=80, deadline=None)
@given(score_matrices, st.integers(0, 14))
def test_exact_search_uses_top_k_per_row(scores: np.ndarray, k: int) -> None:
    # Identity queries make the search's score matrix the given one.
    found = ExactSearch(scores.T.copy()).search(np.eye(scores.shape[0], dtype=np.float32), k)
    assert found.positions.shape == (scores.shape[0], min(k, scores.shape[1]))
    for i, row in enumerate(scores):
        assert found.positions[i].tolist() == top_k(row, k).tolist()
        assert found.scores[i].tolist() == row[top_k(row, k)].tolist()


def test_exact_search_is_brute_force() -> None:
    rng = np.random.default_rng(1)
    emb, q = unit_rows(rng, 500, 16), unit_rows(rng, 20, 16)
    found = ExactSearch(emb).search(q, 7)
    want = exact_scores(emb, q)
    assert found.positions.tolist() == brute_force(want, 7)
    assert found.scores.tobytes() == np.take_along_axis(want, found.positions, 1).tobytes()
    # Snapping moves a score by about one float32 rounding of it.
    np.testing.assert_allclose(found.scores, np.take_along_axis(
        q.astype(float) @ emb.T.astype(float), found.positions, axis=1), rtol=0, atol=1e-6)
    assert found.positions.tolist() == brute_force(q @ emb.T, 7)  # no near ties here


def test_snap_is_exact_and_bounded() -> None:
    assert [vector.quantization_bits(d) for d in (1, 32, 384, 768, 1024, 1536, 3072)] == \
        [24, 24, 22, 21, 21, 21, 20]
    rng = np.random.default_rng(6)
    x = np.concatenate([unit_rows(rng, 50, 1024), np.zeros((1, 1024), np.float32),
                        1e-30 * unit_rows(rng, 1, 1024), 1e20 * unit_rows(rng, 1, 1024)])
    s = vector.snap(x, 21)
    assert s.dtype == np.float32
    peak = np.abs(x).max(axis=1, keepdims=True).astype(float)
    _, e = np.frexp(peak)
    step = np.ldexp(1.0, e - 21)
    ints = s / step
    assert np.array_equal(ints, np.rint(ints)) and np.abs(ints).max() <= 2 ** 21
    assert (np.abs(s - x.astype(float)) <= step / 2).all()
    assert not s[50].any()
    with pytest.raises(ValueError, match="NaN or infinite"):
        vector.snap(np.array([[0.0, np.nan]]), 21)
    with pytest.raises(ValueError, match="NaN or infinite"):
        ExactSearch(np.array([[np.inf, 0.0]], np.float32))


def test_exact_search_ties_and_edges() -> None:
    emb = np.array([[1, 0], [0, 1], [1, 0], [0.6, 0.8]], dtype=np.float32)
    search = ExactSearch(emb)
    # Rows 0 and 2 tie at 1.0: the lower position first; then 0.6; then 0.
    assert search.search(np.array([[1, 0]], np.float32), 4).positions.tolist() == [[0, 2, 3, 1]]
    assert search.search(np.array([[1, 0]], np.float32), 10).positions.shape == (1, 4)
    assert search.search(np.array([[1, 0]], np.float32), 0).positions.shape == (1, 0)
    assert search.search(np.zeros((0, 2), np.float32), 3).positions.shape == (0, 3)
    with pytest.raises(ValueError, match="3 dimensions, the searched vectors 2"):
        search.search(np.ones((1, 3), np.float32), 1)
    assert search.describe() == {"kind": "exact", "size": 4}


def test_exact_search_batches_do_not_change_results() -> None:
    rng = np.random.default_rng(2)
    emb, q = unit_rows(rng, 300, 8), unit_rows(rng, 25, 8)
    whole = ExactSearch(emb).search(q, 5)
    small = ExactSearch(emb)
    small.batch_size = 4  # 7 batches instead of one
    small._block = 7  # and rows in blocks of 7
    part = small.search(q, 5)
    assert whole.positions.tobytes() == part.positions.tobytes()
    assert whole.scores.tobytes() == part.scores.tobytes()  # exact sums: bit for bit
    alone = np.concatenate([ExactSearch(emb).scores(q[i : i + 1]) for i in range(len(q))])
    assert alone.tobytes() == ExactSearch(emb).scores(q).tobytes()


def test_neighbours_row_drops_padding() -> None:
    n = Neighbours(np.array([[3, -1]]), np.array([[0.5, -np.inf]], np.float32))
    positions, scores = n.row(0)
    assert positions.tolist() == [3] and scores.tolist() == [0.5]


# --- approximate ---------------------------------------------------------------------


def test_hnsw_recall_on_a_few_thousand_vectors() -> None:
    pytest.importorskip("faiss")
    rng = np.random.default_rng(3)
    emb = unit_rows(rng, 4000, 32, clusters=40)
    q = unit_rows(rng, 100, 32, clusters=40)
    approx = ApproximateSearch(emb)
    assert ann_recall(ExactSearch(emb), approx, q, 10) >= 0.95
    assert approx.describe()["library"] == "faiss-cpu"
    assert approx.describe()["connectivity"] == 32


def test_hnsw_builds_and_answers_the_same_twice() -> None:
    pytest.importorskip("faiss")
    rng = np.random.default_rng(4)
    emb, q = unit_rows(rng, 2000, 16), unit_rows(rng, 50, 16)
    a = ApproximateSearch(emb, connectivity=8, ef_construction=32, ef_search=16).search(q, 10)
    b = ApproximateSearch(emb, connectivity=8, ef_construction=32, ef_search=16).search(q, 10)
    assert a.positions.tobytes() == b.positions.tobytes()
    assert a.scores.tobytes() == b.scores.tobytes()


def test_hnsw_orders_ties_by_position_and_pads() -> None:
    pytest.importorskip("faiss")
    emb = np.array([[1, 0], [0, 1], [1, 0], [1, 0]], dtype=np.float32)
    found = ApproximateSearch(emb).search(np.array([[1, 0]], np.float32), 3)
    assert found.positions.tolist() == [[0, 2, 3]]
    assert ApproximateSearch(emb).search(np.array([[1, 0]], np.float32), 9).positions.shape \
        == (1, 4)
    with pytest.raises(ValueError, match="connectivity must be at least 1"):
        ApproximateSearch(emb, connectivity=0)


def test_missing_faiss_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "faiss", None)
    assert not vector.ann_available()
    emb = np.eye(3, dtype=np.float32)
    with pytest.raises(MissingPackage, match=r"pip install 'faiss-cpu>=1\.9'  \(the \[ann\] "
                       r"extra; in a clone: pip install -e '\.\[ann\]'\)"):
        ApproximateSearch(emb)
    assert isinstance(search_for(emb, threshold=10), ExactSearch)  # exact needs no faiss


def test_search_for_switches_at_the_threshold() -> None:
    pytest.importorskip("faiss")
    emb = unit_rows(np.random.default_rng(5), 100, 8)
    assert isinstance(search_for(emb, threshold=101), ExactSearch)
    hnsw = search_for(emb, threshold=100, connectivity=4)
    assert isinstance(hnsw, ApproximateSearch) and hnsw.connectivity == 4


class Half:
    """A search that finds only the even rows of the exact answer."""

    kind, size, dimension = "fake", 0, 0

    def __init__(self, exact: ExactSearch) -> None:
        self.exact = exact

    def search(self, queries: np.ndarray, k: int) -> Neighbours:
        found = self.exact.search(queries, k)
        positions = np.where(found.positions % 2 == 0, found.positions, -1)
        return Neighbours(positions, np.where(positions >= 0, found.scores, -np.inf))

    def describe(self) -> dict[str, object]:
        return {}


def test_ann_recall_by_hand() -> None:
    emb = np.eye(4, dtype=np.float32)
    exact = ExactSearch(emb)
    q = np.array([[1, 0.9, 0, 0], [0, 0, 0.9, 1]], np.float32)
    # Exact top-2: {0, 1} and {3, 2}; the fake keeps {0} and {2}: (1/2 + 1/2) / 2.
    assert ann_recall(exact, Half(exact), q, 2) == pytest.approx(0.5)
    assert ann_recall(exact, exact, q, 2) == 1.0
    assert ann_recall(exact, Half(exact), q[:0], 2) == 1.0


# --- the vector retriever ------------------------------------------------------------


@pytest.fixture
def hashing_index(tmp_path: Path) -> Index:
    src = tmp_path / "raw"
    src.mkdir()
    for i, text in enumerate(["하자보수 기간은 2년이다.", "지체상금률은 0.5%이다.",
                              "Gewährleistung 24 Monate.", "Availability 99.5 percent.",
                              "제안서는 5부를 제출한다."]):
        (src / f"d{i}.md").write_text(text * 8, encoding="utf-8")
    build_index(src, tmp_path / "idx", chunk_size=60, overlap=10, progress=False)
    return load_index(tmp_path / "idx")


QUERIES = ["하자보수 기간", "Gewährleistung", "availability", "제출 부수", "지체상금"]


def test_exact_vector_retriever_is_the_plain_inner_product(hashing_index: Index) -> None:
    """The naive baseline's dense search: every chunk scored by the exact inner product of
    the snapped vectors, top k by (score descending, row ascending), bit for bit."""
    emb = get_embedder("hashing")
    q = emb.embed_queries(QUERIES).astype(np.float32)
    scores = exact_scores(hashing_index.embeddings, q)
    np.testing.assert_allclose(scores, q @ hashing_index.embeddings.T, rtol=0, atol=1e-6)
    n = len(hashing_index.chunks)
    exact = VectorRetriever(hashing_index, emb).search(QUERIES, 4, [range(n)] * len(QUERIES))
    for row, ranking in zip(scores, exact, strict=True):
        assert [h.position for h in ranking.hits] == top_k(row, 4).tolist()
        assert [h.score for h in ranking.hits] == [float(row[p]) for p in top_k(row, 4)]
        # every row's rank in the whole index, as tracked at search time
        assert ranking.ranks == {int(p): r for r, p in enumerate(top_k(row, n), 1)}


def test_vector_retriever_with_hnsw(hashing_index: Index) -> None:
    pytest.importorskip("faiss")
    emb = get_embedder("hashing")
    approx = VectorRetriever(hashing_index, emb, ApproximateSearch(hashing_index.embeddings))
    exact = VectorRetriever(hashing_index, emb)
    every = [range(len(hashing_index.chunks))] * len(QUERIES)
    for a, b in zip(approx.search(QUERIES, 3, every), exact.search(QUERIES, 3), strict=True):
        # A small graph is searched exhaustively: the same hits, the scores up to float error.
        assert [h.position for h in a.hits] == [h.position for h in b.hits]
        assert [h.score for h in a.hits] == pytest.approx([h.score for h in b.hits], abs=1e-6)
        # rows not returned score -inf: ranked after the hits, by row
        rest = [p for p in range(len(hashing_index.chunks)) if p not in
                {h.position for h in a.hits}]
        assert [a.ranks[p] for p in rest] == list(range(4, len(rest) + 4))


def test_vector_retriever_min_score_and_size_check(hashing_index: Index) -> None:
    emb = get_embedder("hashing")
    full = VectorRetriever(hashing_index, emb).search(QUERIES[:1], 5)[0]
    cut = VectorRetriever(hashing_index, emb, min_score=full.hits[1].score).search(
        QUERIES[:1], 5, [[full.hits[4].position]])[0]
    assert cut.hits == [h for h in full.hits if h.score >= full.hits[1].score]
    assert cut.rank_of(full.hits[4].position) == 5
    with pytest.raises(ValueError, match="holds 3 vectors"):
        VectorRetriever(hashing_index, emb, ExactSearch(hashing_index.embeddings[:3]))


# --- the float32 pass of exact search: the same answer as scoring every row exactly ---


def near_ties(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """Rows in clusters of copies a few float32 steps apart (and exact copies): many rows
    whose float32 scores are within the search's error bound of each other."""
    base = unit_rows(rng, max(n // 8, 1), d)[rng.integers(0, max(n // 8, 1), n)]
    steps = rng.integers(-3, 4, (n, d)) * np.spacing(np.abs(base))
    rows = (base + np.where(rng.random((n, 1)) < 0.5, steps, 0)).astype(np.float32)
    return rows


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 40), st.sampled_from([3, 16, 200]))
def test_exact_search_equals_every_row_scored_exactly(seed: int, k: int, d: int) -> None:
    rng = np.random.default_rng(seed)
    emb = near_ties(rng, 120, d)
    q = np.concatenate([emb[rng.integers(0, len(emb), 4)], unit_rows(rng, 3, d)])
    search = ExactSearch(emb)
    full = search.scores(q)  # every row, exact float64 sums
    track = [rng.integers(0, len(emb), 6).tolist() for _ in q]
    found, ranks = search.search_tracked(q, k, track)
    for i, row in enumerate(full):
        assert found.positions[i].tolist() == top_k(row, k).tolist()
        assert found.scores[i].tobytes() == row[top_k(row, k)].tobytes()
        order = top_k(row, len(row)).tolist()
        assert ranks[i] == {p: order.index(p) + 1 for p in track[i]}


def test_exact_search_rescoring_by_hand() -> None:
    # Rows 0 and 1 differ by one float32 step in one coordinate: their float32 products may
    # tie or swap, their exact scores do not. Row 2 is row 0 again: tied, the lower first.
    a = np.float32(0.6)
    emb = np.array([[a, 0.8], [np.nextafter(a, np.float32(1)), 0.8], [a, 0.8], [0, 1]],
                   np.float32)
    q = np.array([[1, 0]], np.float32)
    found, ranks = ExactSearch(emb).search_tracked(q, 2, [[0, 1, 2, 3]])
    assert found.positions.tolist() == [[1, 0]]
    assert ranks == [{1: 1, 0: 2, 2: 3, 3: 4}]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.floats(-35, 35), st.sampled_from([20, 21, 22, 24]))
def test_snap_in_float32_gives_the_float64_bits(seed: int, exponent: float, bits: int) -> None:
    """The float32 fast path of snap against the definition computed in float64, on rows of
    every magnitude (the fast path stops where its powers of two leave float32), with zeros
    and values halfway between grid points (rint: half to even)."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((int(rng.integers(1, 30)), int(rng.integers(1, 80))))
         * 10.0**exponent).astype(np.float32)
    x[rng.random(x.shape) < 0.3] = 0
    if seed % 2:  # rows of peak 0.75 (grid 2**-bits) whose values lie halfway on the grid
        halves = rng.integers(-2**10, 2**10, x.shape) + 0.5
        x = (halves * 2.0**-bits).astype(np.float32)
        x[:, 0] = 0.75
    peak = np.abs(x).max(axis=1).astype(np.float64)
    shift = np.clip(bits - np.frexp(peak)[1], -1000, 1000)[:, None]
    want = (np.rint(x.astype(np.float64) * np.ldexp(1.0, shift))
            * np.ldexp(1.0, -shift)).astype(np.float32)
    assert vector.snap(x, bits).tobytes() == want.tobytes()
