"""Joins of a run with its qrels, on columns (the fast path): each judged run row's grade
and rank in trec_eval's order (:class:`Joined`), by one of two joins that give the same rows:
:func:`join_grouped` for the usual layout (a query's rows together), :func:`join_sorted` for
any run. :mod:`.relevance` turns a join into what the kernels read; :mod:`.ranking` holds the
ranking both joins share. The plain loops that define the same results are
:mod:`ragassay.metrics.reference`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .keys import id_hash, run_blocks
from .ranking import block_starts, blocks_by_query, padded, rank_in_rows, rank_rows
from .reader import Table

_ROUND = 1 << 17  # keys per round of the grouped join: its temporaries stay in the cache


def qid_codes(*columns: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The sorted distinct ids of the columns and each column's codes (index into them)."""
    distinct, heads = _head_codes(*columns)
    return distinct, [np.repeat(codes, np.diff(np.append(starts, len(col))))
                      for col, (starts, codes) in zip(columns, heads, strict=True)]


def _head_codes(*columns: np.ndarray) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """:func:`qid_codes` per block of equal ids: each column's block starts and their codes.

    Rows of one query usually come together, so only the first id of each block is sorted.
    """
    heads, starts = [], []
    for col in columns:
        starts.append(run_blocks(col))
        heads.append(col[starts[-1]])
    width = max([8, *(h.dtype.itemsize for h in heads)])
    distinct, inverse = np.unique(np.concatenate([h.astype(f"S{width}") for h in heads]),
                                  return_inverse=True)
    codes, at = [], 0
    for head, first in zip(heads, starts, strict=True):
        codes.append((first, inverse[at:at + len(head)].astype(np.int64)))
        at += len(head)
    return distinct, codes


def judged_rows(run: Table, qrels: Table, run_q: np.ndarray, qrels_q: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """The (run row, qrels row) pairs of the same (query, document), run rows ascending.
    ``run_q``/``qrels_q``: the query codes of one :func:`qid_codes` call; neither table
    repeats a pair.

    The run's pair hashes (computed once per table, also for the duplicate check) are
    sorted and each judgment is looked up in them (a run has ~100x more rows than
    judgments); the ids of every match are compared, and a hash collision falls back to
    comparing sorted bytes."""
    none = np.array([], dtype=np.int64)
    if not len(qrels) or not len(run):
        return none, none
    order = np.argsort(run.pairs)
    sorted_h = run.pairs[order]
    if bool((sorted_h[1:] == sorted_h[:-1]).any()):  # a collision (no pair repeats)
        return _judged_rows_exact(run_q, run.docid, qrels_q, qrels.docid)
    qh = qrels.pairs
    pos = np.minimum(np.searchsorted(sorted_h, qh), len(sorted_h) - 1)
    hit = np.flatnonzero(sorted_h[pos] == qh)
    rows = order[pos[hit]]
    if not bool(((run_q[rows] == qrels_q[hit]) & (run.docid[rows] == qrels.docid[hit])).all()):
        return _judged_rows_exact(run_q, run.docid, qrels_q, qrels.docid)
    by_row = np.argsort(rows)
    return rows[by_row], hit[by_row]


def _judged_rows_exact(run_q: np.ndarray, run_doc: np.ndarray, qrels_q: np.ndarray,
                       qrels_doc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`judged_rows` by sorting the documents' bytes (after a hash collision)."""
    width = max(run_doc.dtype.itemsize, qrels_doc.dtype.itemsize, 8)
    docs, inverse = np.unique(np.concatenate([run_doc.astype(f"S{width}"),
                                              qrels_doc.astype(f"S{width}")]),
                              return_inverse=True)
    n = len(docs)
    rk = run_q * n + inverse[:len(run_q)]
    qk = qrels_q * n + inverse[len(run_q):]
    order = np.argsort(qk)
    pos = np.minimum(np.searchsorted(qk[order], rk), len(qk) - 1)
    rows = np.flatnonzero(qk[order][pos] == rk)
    return rows, order[pos[rows]]


@dataclass(frozen=True)
class Joined:
    """A run joined with its qrels. ``qids``: the distinct ids of both (``S``, sorted, so a
    code is also trec_eval's query order); per code: judged, in the run, number of run rows;
    the judged run rows (code, grade, rank from 0 in trec_eval's order); the qrels rows."""

    qids: np.ndarray
    judged_query: np.ndarray
    in_run: np.ndarray
    size: np.ndarray
    hit_q: np.ndarray
    hit_grade: np.ndarray
    hit_rank: np.ndarray
    qrels_q: np.ndarray
    qrels_grade: np.ndarray


def join(qrels: Table, run: Table, *, keep_order: bool = False,
         run_queries: np.ndarray | None = None) -> Joined:
    """Look up each run row's grade in ``qrels`` and rank the judged rows within their
    query (see :func:`rank_rows`; ``keep_order``: the rows' order is the ranking).
    ``run_queries`` adds ids of queries present in the run with an empty ranking.

    Only judged rows are ranked, each by counting its query's rows scored above it: no
    measure reads the order of unjudged documents, so the run is not sorted (a query where
    a judged row's score is tied is sorted, for the doc-id tie-break). A run grouped by
    query takes :func:`join_grouped`, any other :func:`join_sorted`; both give the same
    judged rows (perhaps in another order)."""
    if not keep_order:
        grouped = join_grouped(qrels, run, run_queries)
        if grouped is not None:
            return grouped
    return join_sorted(qrels, run, keep_order=keep_order, run_queries=run_queries)


def join_sorted(qrels: Table, run: Table, *, keep_order: bool = False,
                run_queries: np.ndarray | None = None) -> Joined:
    """:func:`join` for any run, by sorting the 64-bit hashes of its (query, document)
    pairs."""
    extra = [] if run_queries is None else [run_queries]
    qids, codes = qid_codes(qrels.qid, run.qid, *extra)
    qrels_q, run_q = codes[0], codes[1]
    n = len(qids)
    hits, judgment = judged_rows(run, qrels, run_q, qrels_q)
    rank = _ranks(run_q, run.value, run.docid, hits, n, keep_order)
    size = np.bincount(run_q, minlength=n)
    in_run = size > 0
    if extra:
        in_run[codes[2]] = True
    return Joined(qids, np.bincount(qrels_q, minlength=n) > 0, in_run, size, run_q[hits],
                  qrels.value[judgment], rank, qrels_q, qrels.value)


def _ranks(run_q: np.ndarray, score: np.ndarray, docid: np.ndarray, rows: np.ndarray,
           n: int, keep_order: bool) -> np.ndarray:
    """The rank (from 0) of each of ``rows`` within its query, in trec_eval's order."""
    order = (np.argsort(run_q, kind="stable") if keep_order else blocks_by_query(run_q))
    grouped = run_q[order]
    first, size = block_starts(grouped, n)
    width = int(size.max()) if len(size) else 0
    if keep_order or n * width > 4 * len(run_q) + 4096:  # the positions in a full sort
        if not keep_order:
            order = rank_rows(run_q, score, docid)
        position = np.empty(len(run_q), dtype=np.int64)
        position[order] = np.arange(len(run_q)) - first[run_q[order]]
        return position[rows]
    scores = np.full((n, max(width, 1)), -np.inf)  # no finite score is below -inf
    scores[grouped, np.arange(len(run_q)) - first[grouped]] = score[order]
    q, s = run_q[rows], score[rows]
    rank = np.zeros(len(rows), dtype=np.int64)
    tied = np.zeros(len(rows), dtype=bool)
    step = max(1, 4_000_000 // max(width, 1))  # bounds the (rows, width) comparison
    for lo in range(0, len(rows), step):
        block, at = scores[q[lo:lo + step]], s[lo:lo + step, None]
        rank[lo:lo + step] = (block > at).sum(axis=1)
        tied[lo:lo + step] = (block == at).sum(axis=1) > 1
    if tied.any():  # sort the queries with ties, to break them by doc id
        ties = np.zeros(n, dtype=bool)
        ties[q[tied]] = True
        sub = np.flatnonzero(ties[run_q])
        sub_order = sub[rank_rows(run_q[sub], score[sub], docid[sub])]
        sub_first, _ = block_starts(run_q[sub_order], n)
        position = np.empty(len(run_q), dtype=np.int64)
        position[sub_order] = np.arange(len(sub)) - sub_first[run_q[sub_order]]
        redo = ties[q]
        rank[redo] = position[rows[redo]]
    return rank


def join_grouped(qrels: Table, run: Table, run_queries: np.ndarray | None = None
                 ) -> Joined | None:
    """:func:`join` for a run whose rows of one query come together (the usual layout) with
    about as many rows for each query; None for any other run, and for a run that repeats
    a (query, document) pair: both are left to :func:`join`.

    Nothing is sorted over the whole run. Per query, the documents' hashes are sorted, to
    find a repeat and each judgment's row (by binary search; the ids of equal hashes are
    compared), and so are the scores: a judged row's rank is the number of its query's rows
    scored above it, also a binary search. A query where a judged row's score is tied is
    ranked in full by :func:`rank_rows`, for the doc-id tie-break."""
    n_run = len(run)
    if not n_run or not len(qrels):
        return None
    starts = run_blocks(run.qid)
    sizes = np.diff(np.append(starts, n_run))
    width = int(sizes.max())
    if len(starts) * width > 2 * n_run + 4096 or width > 1 << 24:
        return None  # ragged: a padded matrix would cost more than sorting
    extra = [] if run_queries is None else [run_queries]
    qids, heads = _head_codes(qrels.qid, run.qid[starts], *extra)
    n = len(qids)
    block_code = heads[1][1]
    if len(np.unique(block_code)) < len(block_code):
        return None  # a query in two places of the run
    block_of = np.full(n, -1, dtype=np.int64)
    block_of[block_code] = np.arange(len(starts))
    n_blocks = len(starts)
    place_bits = max(1, (width - 1).bit_length())
    if 64 - max(1, (n_blocks - 1).bit_length()) - place_bits < 24:
        return None  # too few bits left for the hash in a 64-bit key
    # Judgments, by block: each qrels row's key with place 0
    qrels_starts, qrels_heads = heads[0]
    qrels_q = np.repeat(qrels_heads, np.diff(np.append(qrels_starts, len(qrels))))
    judgment = np.flatnonzero(block_of[qrels_q] >= 0)
    j_block = block_of[qrels_q[judgment]]
    if len(j_block) > 1 and not bool((np.diff(j_block) >= 0).all()):
        by_block = np.argsort(j_block, kind="stable")
        judgment, j_block = judgment[by_block], j_block[by_block]
    wanted = _keys(id_hash(qrels.docid[judgment]), j_block, n_blocks, place_bits, 0)
    # The run in rounds of blocks, each round's keys and scores small enough for the cache
    step = max(1, _ROUND // width)
    firsts = np.arange(0, n_blocks, step)
    edges = np.append(np.searchsorted(j_block, firsts), len(j_block))
    places = np.arange(width, dtype=np.uint64)
    parts: list[tuple[np.ndarray, ...]] = []
    for c, lo in enumerate(firsts.tolist()):
        hi = min(lo + step, n_blocks)
        r0, r1 = int(starts[lo]), (int(starts[hi]) if hi < n_blocks else n_run)
        begin, count = starts[lo:hi], sizes[lo:hi]
        keys = padded(id_hash(run.docid[r0:r1]), begin - r0, count, width,
                       np.iinfo(np.uint64).max)
        _keys(keys, np.arange(lo, hi)[:, None], n_blocks, place_bits, places)
        keys.sort(axis=1)  # the round's keys read flat are sorted: rows are in the key
        if _repeats(keys, place_bits, begin, count, run.docid):
            return None
        j0, j1 = int(edges[c]), int(edges[c + 1])
        if j0 == j1:
            continue
        row, judged, block = _find(keys.reshape(-1), wanted[j0:j1], judgment[j0:j1],
                                   j_block[j0:j1] - lo, place_bits, begin, count,
                                   run.docid, qrels.docid)
        rank, tied = rank_in_rows(padded(run.value[r0:r1], begin - r0, count, width,
                                          -np.inf), block, run.value[row])
        parts.append((row, judged, block + lo, rank, tied))
    if not parts:
        none = np.array([], dtype=np.int64)
        parts.append((none, none, none, none, np.array([], dtype=bool)))
    hit_row, hit_judgment, hit_block, rank, tied = (np.concatenate(c)
                                                    for c in zip(*parts, strict=True))
    if tied.any():
        _rank_ties(run, starts, sizes, hit_block, hit_row, rank, tied)
    size = np.zeros(n, dtype=np.int64)
    size[block_code] = sizes
    in_run = size > 0
    if extra:
        in_run[heads[2][1]] = True
    return Joined(qids, np.bincount(qrels_q, minlength=n) > 0, in_run, size,
                  qrels_q[hit_judgment], qrels.value[hit_judgment], rank, qrels_q,
                  qrels.value)


def _keys(hashes: np.ndarray, rows: np.ndarray | int, n_rows: int, place_bits: int,
          place: np.ndarray | int) -> np.ndarray:
    """64-bit keys ordered by (row, hash, place): the row in the high bits, then the high
    bits of the hash, then ``place_bits`` bits of the place (modified in place)."""
    row_bits = max(1, (n_rows - 1).bit_length())
    hashes >>= np.uint64(row_bits + place_bits)
    hashes <<= np.uint64(place_bits)
    hashes |= np.asarray(place, dtype=np.uint64)
    hashes |= np.asarray(rows, dtype=np.uint64) << np.uint64(64 - row_bits)
    return hashes


def _repeats(keys: np.ndarray, place_bits: int, begin: np.ndarray, count: np.ndarray,
             docid: np.ndarray) -> bool:
    """Does a block repeat a document? ``keys``: the sorted :func:`_keys` of blocks whose
    rows start at ``begin`` (``count`` rows each, the rest padding). Equal hashes next to
    each other are a repeat when their ids are equal (else two hashes alike in their
    bits)."""
    low = np.uint64((1 << place_bits) - 1)
    same = (keys[:, 1:] ^ keys[:, :-1]) <= low  # equal row and hash
    if not same.any():
        return False
    b, c = np.nonzero(same)
    ra, rb = (keys[b, c] & low).astype(np.int64), (keys[b, c + 1] & low).astype(np.int64)
    real = (ra < count[b]) & (rb < count[b])  # not the padding
    ra, rb = begin[b[real]] + ra[real], begin[b[real]] + rb[real]
    return bool((docid[ra] == docid[rb]).any())


def _find(flat: np.ndarray, wanted: np.ndarray, judgment: np.ndarray, block: np.ndarray,
          place_bits: int, begin: np.ndarray, count: np.ndarray, docid: np.ndarray,
          judged_docid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The run rows of the ``judgment`` rows found among sorted keys: (run row, judgment
    row, block) for each found. ``wanted``: their keys with place 0; ``block``: their block
    (a row of the keys), whose run rows start at ``begin``."""
    low = np.uint64((1 << place_bits) - 1)
    at = np.searchsorted(flat, wanted)
    found = []
    while len(judgment):  # one candidate of equal hash per round (more are rare)
        key = flat[np.minimum(at, len(flat) - 1)]
        place = (key & low).astype(np.int64)
        maybe = (at < len(flat)) & ((key ^ wanted) <= low) & (place < count[block])
        judgment, block, wanted, at = judgment[maybe], block[maybe], wanted[maybe], at[maybe]
        row = begin[block] + place[maybe]
        equal = docid[row] == judged_docid[judgment]
        found.append((row[equal], judgment[equal], block[equal]))
        judgment, block, wanted, at = (judgment[~equal], block[~equal], wanted[~equal],
                                       at[~equal] + 1)
    if not found:
        none = np.array([], dtype=np.int64)
        return none, none, none
    row, judged, blocks = (np.concatenate(c) for c in zip(*found, strict=True))
    return row, judged, blocks


def _rank_ties(run: Table, starts: np.ndarray, sizes: np.ndarray, blocks: np.ndarray,
               rows: np.ndarray, rank: np.ndarray, tied: np.ndarray) -> None:
    """Set ``rank`` of ``rows`` (run rows of ``blocks``) in each block where one is
    ``tied``: its place after :func:`rank_rows` has ranked the block in full."""
    tied_blocks = np.unique(blocks[tied])
    counts = sizes[tied_blocks]
    first = np.cumsum(counts) - counts
    sub = np.repeat(starts[tied_blocks] - first, counts) + np.arange(int(counts.sum()))
    local = np.repeat(np.arange(len(tied_blocks)), counts)
    order = rank_rows(local, run.value[sub], run.docid[sub])
    place = np.empty(len(sub), dtype=np.int64)
    place[order] = np.arange(len(sub)) - first[local[order]]
    redo = np.flatnonzero(np.isin(blocks, tied_blocks))
    rank[redo] = place[np.searchsorted(sub, rows[redo])]
