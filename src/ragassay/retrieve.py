# Over 400 lines: the three built-in backends and their registry are one concept (a ranking).
"""Retrieval over an index, all with deterministic ties (score descending, position ascending).

- :class:`VectorRetriever`: dense search through :mod:`ragassay.vector`, exact (the naive
  baseline's: inner product against every chunk) or approximate (HNSW).
- :class:`BM25Retriever`: lexical BM25 with a language-aware tokenizer (Korean morphemes).
- :class:`HybridRetriever`: reciprocal rank fusion of any of them.

A retriever backend is one class registered with ``@register_retriever``: its ``backend``
name is the config's ``pipeline.retrieval_backend``, and its ``from_config(index, cfg)``
builds it for a pipeline (:func:`build_retriever`, used by :mod:`ragassay.pipeline`). The
presets that use a backend are rows of :data:`ragassay.config.PRESETS`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from .embed import Embedder, embedder_difference
from .errors import InputError, MissingPackage
from .store import Index
from .tokens import tokenize_all, tokenizer_for
from .vector import ExactSearch, VectorSearch, top_k

if TYPE_CHECKING:
    from .config import EvalConfig

__all__ = [
    "rank_in",
    "BM25Retriever",
    "Hit",
    "HybridRetriever",
    "Ranking",
    "Retriever",
    "VectorRetriever",
    "RETRIEVERS",
    "apply_min_score",
    "build_retriever",
    "check_query_embedder",
    "register_retriever",
    "ranking_from_scores",
    "ranking_from_sparse",
    "top_k",
]


@dataclass(frozen=True)
class Hit:
    chunk_id: str
    position: int  # row in the index
    score: float


@dataclass(frozen=True)
class Ranking:
    """The top-k hits of one query, plus the rank in the whole index of the rows asked for
    at search time (``track``: a question's gold chunks). Its size is O(k + tracked rows),
    never O(index): no per-row score vector is kept."""

    hits: list[Hit]
    ranks: dict[int, int] = field(default_factory=dict)  # tracked row → 1-based rank

    def rank_of(self, position: int) -> int:
        """1-based rank of an index row in the full ranking (score descending, ties by lower
        row): a tracked row's, or a hit's (hits are the ranking's first rows). Any other row
        → ``KeyError``: its rank was not computed at search time."""
        if position in self.ranks:
            return self.ranks[position]
        for rank, hit in enumerate(self.hits, start=1):
            if hit.position == position:
                return rank
        raise KeyError(f"row {position} was neither tracked nor retrieved: its rank in the "
                       "index is unknown (pass it in `track` to search)")


def rank_in(scores: np.ndarray, position: int) -> int:
    """1-based rank of row ``position`` among ``scores``: the rows scoring higher, plus the
    rows before it scoring the same, plus one (the tie rule of :func:`top_k`)."""
    s = scores[position]
    ahead = int(np.count_nonzero(scores > s))
    tied_before = int(np.count_nonzero(scores[:position] == s))
    return ahead + tied_before + 1


# --- retrievers: shared rules --------------------------------------------------------
#
# Every retriever below answers ``search(queries, k, track) -> list[Ranking]``: hits best
# first, ties by index position (:func:`ragassay.vector.top_k`), and the rank in the whole
# index of each row in ``track[i]`` for query i, computed from the query's score vector
# while it exists (it is not kept). ``min_score`` (optional) drops hits scoring below it;
# tracked ranks stay ranks in the whole index.


class Retriever(Protocol):
    """What the pipeline needs from a retriever."""

    backend: str
    index: Index

    def search(self, queries: Sequence[str], k: int,
               track: Sequence[Iterable[int]] | None = None) -> list[Ranking]: ...


RETRIEVERS: dict[str, Any] = {}  # backend name → registered retriever class
_R = TypeVar("_R")


def register_retriever(cls: type[_R]) -> type[_R]:
    """Register a retriever class under its ``backend`` name. The class implements
    :class:`Retriever` and ``from_config(index, cfg)`` (a classmethod building it for a
    pipeline). A name registered twice raises :class:`ValueError`."""
    name = getattr(cls, "backend", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"{cls.__name__}: a retriever class needs a `backend` name")
    if name in RETRIEVERS:
        raise ValueError(f"retriever backend {name!r} is registered twice")
    if not callable(getattr(cls, "from_config", None)):
        raise ValueError(f"{cls.__name__}: a retriever class needs from_config(index, cfg)")
    RETRIEVERS[name] = cls
    return cls


def build_retriever(index: Index, cfg: EvalConfig) -> Retriever:
    """The retriever of ``cfg.pipeline.retrieval_backend`` over ``index``."""
    backend = cfg.pipeline.retrieval_backend
    if backend not in RETRIEVERS:
        raise InputError(cfg.path or "config", f"unknown retrieval backend {backend!r}; "
                         f"known: {', '.join(RETRIEVERS)}", field="pipeline.retrieval_backend")
    retriever: Retriever = RETRIEVERS[backend].from_config(index, cfg)
    return retriever


def _dense_needs_embeddings(index: Index, cfg: EvalConfig) -> dict[str, Any]:
    """The index's embedding record, checked against the preset (e.g. ``dense_e5`` needs
    an index built with ``--embedder e5-small``)."""
    from .config import PRESET_EMBEDDER

    backend = cfg.pipeline.retrieval_backend
    if not index.meta.get("embedding"):
        raise InputError(index.path, f"{backend} retrieval needs an index with embeddings "
                         "(build one with `ragassay index`); a chunk file can only score "
                         "predictions")
    embedding: dict[str, Any] = index.meta["embedding"]
    want = PRESET_EMBEDDER.get(cfg.pipeline.name)
    if want and embedding.get("backend") != want:
        raise InputError(index.path, f"the {cfg.pipeline.name} preset needs an index built with "
                         f"`--embedder {want}`, this one has {embedding.get('backend')!r}")
    return embedding


def ranking_from_scores(index: Index, scores: np.ndarray, k: int, *,
                        min_score: float | None = None, positive_only: bool = False,
                        track: Iterable[int] = ()) -> Ranking:
    """The :class:`Ranking` of one query from its score per index row.

    Hits are the first k rows by :func:`top_k` (score descending, position ascending), less
    those scoring under ``min_score`` and, with ``positive_only``, those scoring <= 0 (rows
    that matched nothing: a lexical or fused score of 0 says "not retrieved"). Each row of
    ``track`` gets its rank in the whole index (:func:`rank_in`).
    """
    positions = top_k(scores, k)
    keep = [int(p) for p in positions
            if (min_score is None or scores[p] >= min_score)
            and (not positive_only or scores[p] > 0)]
    hits = [Hit(index.chunks[p].chunk_id, p, float(scores[p])) for p in keep]
    return Ranking(hits=hits, ranks={int(p): rank_in(scores, int(p)) for p in track})


def ranking_from_sparse(index: Index, positions: Sequence[int], scores: Sequence[float],
                        k: int, *, default: float, min_score: float | None = None,
                        track: Iterable[int] = ()) -> Ranking:
    """The :class:`Ranking` that :func:`ranking_from_scores` gives for a score vector in
    which only ``positions`` have scores (``scores``, each above ``default``) and every
    other row scores ``default`` (-inf: not returned by an approximate search; 0: in no
    fused list), without building that vector: O(listed rows + tracked rows), not
    O(index). Rows scoring ``default`` are never hits. A tracked row's rank in the whole
    index follows the tie rule of :func:`top_k`: for a listed row, the listed rows scoring
    higher plus those before it scoring the same, plus one; for another row p, every
    listed row, plus the unlisted rows before p, plus one.
    """
    pos = np.asarray(positions, dtype=np.int64)
    val = np.asarray(scores, dtype=np.float64)
    order = np.lexsort((pos, -val))
    pos, val = pos[order], val[order]
    hits = [Hit(index.chunks[int(p)].chunk_id, int(p), float(v))
            for p, v in zip(pos[:k], val[:k], strict=True)
            if min_score is None or v >= min_score]
    rank_of = {int(p): r for r, p in enumerate(pos.tolist(), start=1)}
    listed = np.sort(pos)
    ranks = {}
    for p in track:
        p = int(p)
        ranks[p] = (rank_of[p] if p in rank_of
                    else len(pos) + p - int(np.searchsorted(listed, p)) + 1)
    return Ranking(hits=hits, ranks=ranks)


def apply_min_score(ranking: Ranking, min_score: float | None) -> Ranking:
    """The ranking without its hits scoring under ``min_score`` (``None``: unchanged).

    For a retriever built without a ``min_score`` of its own.
    """
    if min_score is None:
        return ranking
    return Ranking([h for h in ranking.hits if h.score >= min_score], ranking.ranks)


def check_query_embedder(index: Index, embedder: Embedder) -> None:
    """Refuse (``ValueError``) to embed queries for ``index`` with another embedder.

    The index's ``embedding`` record (backend, model, dimension, params) must equal the
    embedder's :meth:`~ragassay.embed.Embedder.describe`; vectors of different models are
    not comparable even when their dimensions agree. A chunk file (no embeddings) is refused
    too. Use ``embedder_from_meta(index.meta["embedding"])`` to get the right embedder.
    """
    built = index.meta.get("embedding")
    if not built:
        raise ValueError(f"{index.path} has no embeddings (a chunk file?): dense retrieval "
                         "needs an index built with `ragassay index`")
    key = embedder_difference(built, embedder)
    if key is not None:
        want = json.loads(json.dumps(embedder.describe()))  # params as recorded: lists
        raise ValueError(
            f"the index {index.path} was embedded with {built.get('backend')!r} (model "
            f"{built.get('model')!r}, params {built.get('params')}), but the queries would "
            f"be embedded with {want['backend']!r} (model {want['model']!r}, params "
            f"{want['params']}): their {key} differs. Query with the index's own embedder "
            "(embedder_from_meta), or rebuild the index with `ragassay index --embedder`")


@register_retriever
class VectorRetriever:
    """Dense retrieval through a :mod:`ragassay.vector` search (exact or HNSW).

    The default, exact search scores every chunk (queries in batches of ``batch_size``), so
    tracked rows get their rank among every row's score; each score depends only on its
    query and chunk, never on the batch, the query order or the BLAS threads
    (:class:`~ragassay.vector.ExactSearch`). With an approximate search, rows the search
    did not return score ``-inf``, so a tracked row's rank is meaningful for hits only.
    The embedder must be the index's (:func:`check_query_embedder`).
    """

    backend = "dense"

    @classmethod
    def from_config(cls, index: Index, cfg: EvalConfig) -> VectorRetriever:
        """The index's embedder; exact search below the size threshold
        (``vector.ANN_THRESHOLD``), above it the approximate search whose recall the build
        measured and recorded (``index.json`` → ``search``)."""
        from .embed import embedder_from_meta
        from .vector import ApproximateSearch

        embedder = embedder_from_meta(_dense_needs_embeddings(index, cfg))
        search: VectorSearch = (ApproximateSearch(index.embeddings) if "search" in index.meta
                                else ExactSearch(index.embeddings))
        return cls(index, embedder, search)

    def __init__(self, index: Index, embedder: Embedder, search: VectorSearch | None = None,
                 *, min_score: float | None = None, batch_size: int = 256) -> None:
        check_query_embedder(index, embedder)
        self.index = index
        self.embedder = embedder
        self.search_engine: VectorSearch = search or ExactSearch(index.embeddings)
        if self.search_engine.size != len(index.chunks):
            raise ValueError(f"the search holds {self.search_engine.size} vectors but the "
                             f"index {len(index.chunks)} chunks")
        self.min_score = min_score
        self.batch_size = batch_size

    def search(self, queries: Sequence[str], k: int,
               track: Sequence[Iterable[int]] | None = None) -> list[Ranking]:
        out: list[Ranking] = []
        engine = self.search_engine
        ids = [c.chunk_id for c in self.index.chunks]  # once per call, not once per hit
        for start in range(0, len(queries), self.batch_size):
            batch = list(queries[start : start + self.batch_size])
            q = self.embedder.embed_queries(batch).astype(np.float32, copy=False)
            if isinstance(engine, ExactSearch):
                wanted = track[len(out) : len(out) + len(batch)] if track is not None else None
                found, ranks = engine.search_tracked(q, k, wanted)
                if self.min_score is not None:  # float32 scores against it, as ever
                    keep = found.scores >= self.min_score
                    rows = [(p[m].tolist(), v[m].tolist()) for p, v, m in
                            zip(found.positions, found.scores, keep, strict=True)]
                else:  # the batch's lists at once: a conversion per query cost more
                    rows = list(zip(found.positions.tolist(), found.scores.tolist(),
                                    strict=True))
                for (positions, scores), tracked in zip(rows, ranks, strict=True):
                    hits = [Hit(ids[p], p, s) for p, s in zip(positions, scores, strict=True)]
                    out.append(Ranking(hits=hits, ranks=tracked))
                continue
            found = engine.search(q, k)
            for i in range(len(batch)):
                # rows the search did not return score -inf (no vector of the index's size)
                positions, scores = found.row(i)
                out.append(ranking_from_sparse(
                    self.index, positions.tolist(), scores.astype(np.float32).tolist(),
                    len(positions), default=-np.inf, min_score=self.min_score,
                    track=track[len(out)] if track is not None else ()))
        return out


@register_retriever
class BM25Retriever:
    """Lexical retrieval with BM25 (``bm25s``, Lucene variant) over the index's chunk texts.

    For a query with distinct terms t (by :func:`ragassay.tokens.tokenizer_for`;
    a repeated query term counts once) and a chunk d of length |d| terms:

        score(q, d) = Σ_t idf(t) · tf(t, d) / (tf(t, d) + k1 · (1 − b + b · |d| / avgdl))
        idf(t) = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))

    with N chunks, df(t) the chunks holding t and avgdl their mean length. Only chunks
    holding at least one query term are hits (score > 0); a query without known terms
    gets no hits and a zero score vector. The BM25 matrix is built in memory at
    construction. ``tokenizer`` is ``"ko"``, ``"de"``, ``"en"`` or ``"auto"``.
    Missing ``bm25s`` (or ``kiwipiepy`` for Korean text) →
    :class:`~ragassay.errors.MissingPackage` with the install line (exit 2).
    """

    backend = "bm25"

    @classmethod
    def from_config(cls, index: Index, cfg: EvalConfig) -> BM25Retriever:
        return cls(index)

    def __init__(self, index: Index, tokenizer: str = "auto", k1: float = 1.5,
                 b: float = 0.75, *, min_score: float | None = None) -> None:
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
        self.index = index
        self.tokenizer = tokenizer
        self.tokenize = tokenizer_for(tokenizer)
        self.k1, self.b = float(k1), float(b)
        self.min_score = min_score
        self.vocabulary: dict[str, int] = {}
        docs = tokenize_all([c.text for c in index.chunks], tokenizer)
        # Our own vocabulary, ids in first-occurrence order: bm25s numbers terms by
        # iterating a set, which would vary with PYTHONHASHSEED.
        ids = [[self.vocabulary.setdefault(t, len(self.vocabulary)) for t in d] for d in docs]
        self._bm25: Any = None
        if self.vocabulary:
            bm25s = _bm25s()
            self._bm25 = bm25s.BM25(k1=self.k1, b=self.b, method="lucene")
            self._bm25.index((ids, dict(self.vocabulary)), create_empty_token=False,
                             show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        """The BM25 score of every index row for ``query`` (float32; zeros without terms)."""
        terms = dict.fromkeys(self.tokenize(query))  # distinct, in query order
        known = [self.vocabulary[t] for t in terms if t in self.vocabulary]
        if not known:
            return np.zeros(len(self.index.chunks), dtype=np.float32)
        return np.asarray(self._bm25.get_scores(known), dtype=np.float32)

    def search(self, queries: Sequence[str], k: int,
               track: Sequence[Iterable[int]] | None = None) -> list[Ranking]:
        return [ranking_from_scores(self.index, self.scores(q), k, min_score=self.min_score,
                                    positive_only=True,
                                    track=track[i] if track is not None else ())
                for i, q in enumerate(queries)]


def _bm25s() -> Any:
    try:
        import bm25s
    except ImportError:
        raise MissingPackage("pipeline.name: bm25", "bm25s", "bm25", "BM25 retrieval") from None
    return bm25s


@register_retriever
class HybridRetriever:
    """Reciprocal rank fusion (Cormack et al. 2009) of several retrievers over one index.

    Each retriever r is asked for its first ``depth`` hits; a row p at 1-based rank
    rank_r(p) in r's hits gets

        fused(p) = Σ_r 1 / (k_rrf + rank_r(p))

    summed over the retrievers that returned p (0 for a row in no list). Hits are the k
    rows of highest fused score, ties by index position; rows with fused score 0 are never
    hits. :meth:`scores` gives the fused score of every row (float64).
    """

    backend = "hybrid"

    @classmethod
    def from_config(cls, index: Index, cfg: EvalConfig) -> HybridRetriever:
        """Dense (as :meth:`VectorRetriever.from_config`) fused with BM25."""
        return cls([VectorRetriever.from_config(index, cfg), BM25Retriever(index)])

    def __init__(self, retrievers: Sequence[Retriever], k_rrf: float = 60, depth: int = 50,
                 *, min_score: float | None = None) -> None:
        if not retrievers:
            raise ValueError("hybrid retrieval needs at least one retriever")
        if k_rrf < 0 or depth < 1:
            raise ValueError(f"need k_rrf >= 0 and depth >= 1, got k_rrf={k_rrf}, "
                             f"depth={depth}")
        self.index = retrievers[0].index
        ids = [c.chunk_id for c in self.index.chunks]
        for r in retrievers[1:]:
            if r.index is not self.index and [c.chunk_id for c in r.index.chunks] != ids:
                raise ValueError(f"retriever {r.backend!r} searches another index than "
                                 f"{retrievers[0].backend!r}: fusion needs the same chunks")
        self.retrievers = list(retrievers)
        self.k_rrf, self.depth = float(k_rrf), int(depth)
        self.min_score = min_score

    def fuse(self, rankings: Sequence[Ranking]) -> np.ndarray:
        """The fused score of every index row from one query's rankings (one per retriever)."""
        fused = np.zeros(len(self.index.chunks), dtype=np.float64)
        for position, score in self.fused(rankings).items():
            fused[position] = score
        return fused

    def scores(self, query: str) -> np.ndarray:
        """The fused score of every index row for ``query``."""
        return self.fuse([r.search([query], self.depth)[0] for r in self.retrievers])

    def fused(self, rankings: Sequence[Ranking]) -> dict[int, float]:
        """The rows of nonzero fused score and their scores (:meth:`fuse` without the rows
        of score 0; the same additions in the same order, so the same floats)."""
        fused: dict[int, float] = {}
        for ranking in rankings:
            for rank, hit in enumerate(ranking.hits[: self.depth], start=1):
                fused[hit.position] = fused.get(hit.position, 0.0) + 1.0 / (self.k_rrf + rank)
        return fused

    def search(self, queries: Sequence[str], k: int,
               track: Sequence[Iterable[int]] | None = None) -> list[Ranking]:
        per_retriever = [r.search(queries, self.depth) for r in self.retrievers]
        out = []
        for i in range(len(queries)):
            fused = self.fused([rs[i] for rs in per_retriever])
            out.append(ranking_from_sparse(
                self.index, list(fused), list(fused.values()), k, default=0.0,
                min_score=self.min_score, track=track[i] if track is not None else ()))
        return out
