"""General IR evaluation with trec_eval semantics: qrels + run -> per-query and mean scores
(450 lines: the dict input's batch path and its query-by-query fallback stay together).

What a measure *is* and its formula live in :mod:`ragassay.metrics.measures` (the one
table: :class:`Measure`, canonical text such as ``ndcg_at_5``, aliases such as ``ndcg@5``
and ``ndcg_cut.5``, and one vectorised kernel per family). This module turns qrels and a run
into the :class:`~ragassay.metrics.kernels.Relevance` (the relevant documents' ranks) the
kernels read, with trec_eval's rules (``tests/differential`` checks them against pytrec_eval):

- Ranking: documents by score descending; equal scores are ordered by document id
  *descending* (trec_eval's sort order, byte-wise, which for ``str`` is code-point order).
  With ``keep_order=True``, or when a query's run is a list of document ids, the order
  given is the ranking.
- Relevance: grade >= 1 is relevant (trec_eval's default relevance level 1); grade <= 0 and
  unjudged documents are non-relevant. nDCG uses the grade as gain. Grades are integers.
- Queries: only queries with judgments in ``qrels`` are evaluated (a query with an empty
  judgment mapping counts as absent, since a qrels file cannot express it); queries in the
  run without qrels are ignored. A judged query absent from the run scores 0 on every
  measure with ``missing_queries="zero"`` (trec_eval ``-c``) or is left out with
  ``"skip"``. A judged query that has no relevant document is evaluated and scores 0.
- Duplicate document ids in one query's ranked list raise ValueError naming the query.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain, repeat
from typing import Literal

import numpy as np

from .columnar import (
    Table,
    by_query_and_rank,
    duplicate_rows,
    encode_ids,
    encode_repeated,
    ideal_grades,
    join_grouped,
    join_sorted,
    padded,
    rank_in_rows,
    relevance_rows,
)
from .kernels import Relevance
from .measures import (
    Measure,
    MeasureInfo,
    list_measures,
    parse_measure,
    parse_measures,
)
from .reference import MIN_GEO_MEAN

__all__ = [
    "Measure",
    "MeasureInfo",
    "Qrels",
    "Run",
    "evaluate",
    "list_measures",
    "parse_measure",
    "parse_measures",
    "rank_documents",
]

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float] | Sequence[str]]
MissingQueries = Literal["zero", "skip"]


# --- ranking ------------------------------------------------------------------------------


def rank_documents(scores: Mapping[str, float], *, keep_order: bool = False) -> list[str]:
    """Document ids in ranked order: score descending, ties by document id descending.

    This is trec_eval's order (it sorts by score, then by docno with ``strcmp`` reversed).
    With ``keep_order`` the mapping's own order is the ranking.
    """
    if keep_order:
        return list(scores)
    # Two stable sorts beat one sort on (score, id) tuples, and checking for ties first.
    docs = sorted(scores, reverse=True)
    docs.sort(key=scores.__getitem__, reverse=True)  # stable: tied docs stay id-descending
    return docs


def _ranking(qid: str, entry: Mapping[str, float] | Sequence[str], keep_order: bool) -> list[str]:
    if isinstance(entry, Mapping):
        # Scores are checked per query only when the batch check in _score_columns fails.
        return rank_documents(entry, keep_order=keep_order)
    if isinstance(entry, str) or not isinstance(entry, Sequence):
        raise ValueError(
            f"query {qid!r}: a run entry must map doc id -> score or list doc ids in rank order"
        )
    docs = list(entry)
    if len(set(docs)) != len(docs):
        seen: set[str] = set()
        for doc in docs:
            if doc in seen:
                raise ValueError(f"query {qid!r}: document {doc!r} appears more than once")
            seen.add(doc)
    return docs


# --- public API ---------------------------------------------------------------------------


def evaluate(
    qrels: Qrels,
    run: Run,
    metrics: Iterable[str | Measure],
    *,
    keep_order: bool = False,
    missing_queries: MissingQueries = "zero",
) -> dict[str, dict[str, dict[str, float]] | dict[str, float | None]]:
    """Evaluate a run against qrels with trec_eval semantics (see the module docstring).

    ``qrels``: {qid: {doc_id: grade}}. ``run``: {qid: {doc_id: score}} (ranked by score,
    ties by doc id descending, or in the mapping's order with ``keep_order``) or
    {qid: [doc_id, ...]} (ranked as given). ``metrics``: names or :class:`Measure` values.

    Returns ``{"per_query": {qid: {measure: value}}, "mean": {measure: value}}`` with
    measures keyed by their canonical text (``"ndcg_at_5"``, ``"map"``), queries in sorted
    order, and the mean over the per-query rows (None when no query was evaluated): their sum
    added left to right in query order, divided by their number, as trec_eval computes it.
    Raises ValueError for unknown or answer measures, duplicate documents in a ranked list,
    non-numeric or non-finite scores, and an unknown ``missing_queries`` policy.
    """
    measures = parse_measures(metrics)
    for m in measures:
        if m.info.kernel is None:
            raise ValueError(f"{m} is an {m.group} measure, computed per question by "
                             "ragassay.metrics.answer; evaluate computes retrieval measures")
    if missing_queries not in ("zero", "skip"):
        raise ValueError(f"missing_queries must be 'zero' or 'skip', got {missing_queries!r}")
    q_cols, r_cols = as_table(qrels, "grade"), as_table(run, "score")
    # a measure of the judged non-relevant documents (bpref) reads them from the join
    if q_cols is not None or r_cols is not None or any(m.info.judged for m in measures):
        return _evaluate_tables(qrels_table(qrels) if q_cols is None else q_cols,
                                run_table(run) if r_cols is None else r_cols,
                                measures, keep_order, missing_queries,
                                None if r_cols is not None else encode_ids(list(run)))
    judged = sorted((q for q, judgments in qrels.items() if judgments), key=str)
    evaluated = [q for q in judged if q in run]
    values = _score_columns(qrels, run, evaluated, measures, keep_order)
    shown = judged if missing_queries == "zero" else evaluated
    if len(shown) == len(evaluated):
        return _results(shown, values, np.arange(len(shown)))
    return _results(shown, values, np.flatnonzero([q in run for q in shown]))


def _results(shown: Sequence[str], values: dict[str, np.ndarray], at: np.ndarray
             ) -> dict[str, dict[str, dict[str, float]] | dict[str, float | None]]:
    """:func:`evaluate`'s result for the queries ``shown`` (in order), ``values[name][i]``
    being the value of query ``shown[at[i]]`` (0 for the others, judged but not in the
    run); ``values`` is in the measures' order."""
    names = list(values)
    columns = []
    mean: dict[str, float | None] = {}
    for name in names:
        column = np.zeros(len(shown))
        column[at] = values[name]
        columns.append(column.tolist())
        mean[name] = mean_of(parse_measure(name), column) if len(shown) else None
    per_query: dict[str, dict[str, float]] = (
        dict(zip(shown, map(dict, map(zip, repeat(names), zip(*columns, strict=True))),
                 strict=True)) if names else {qid: {} for qid in shown})
    return {"per_query": per_query, "mean": mean}


def _all_finite(values: list[float]) -> bool:
    try:
        return bool(np.isfinite(np.asarray(values, dtype=np.float64)).all())
    except (TypeError, ValueError):
        return False


def _check_scores(qid: str, entry: Mapping[str, float]) -> None:
    """Raise the error that names the query when its scores are not finite numbers."""
    try:
        checked = np.asarray(list(entry.values()), dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"query {qid!r}: run scores must be numbers") from None
    if not np.isfinite(checked).all():
        raise ValueError(f"query {qid!r}: run scores must be finite (found NaN or inf)")


def _score_columns(
    qrels: Qrels,
    run: Run,
    qids: Sequence[str],
    measures: Sequence[Measure],
    keep_order: bool,
) -> dict[str, np.ndarray]:
    """One array of per-query values per measure, for the queries in ``qids``.

    The usual input, {qid: {doc: score}} with finite numbers, takes no sort: every measure
    reads only the ranks of the relevant documents (grade >= 1; a lower grade counts as 0),
    and a relevant document's rank is 1 + the number of its query's documents scored above
    it. A query where a relevant document's score is tied is ranked by
    :func:`rank_documents` (ties by doc id). Anything else (lists, bad scores,
    ``keep_order``) takes the query-by-query path, which names the bad query."""
    entries = [run[q] for q in qids]
    if keep_order or not all(type(e) is dict for e in entries):  # dict.get reads them below
        return _score_columns_by_query(qrels, run, qids, measures, keep_order)
    judged = [qrels[q] for q in qids]
    depths = np.fromiter(map(len, entries), dtype=np.int64, count=len(entries))
    sizes = np.fromiter(map(len, judged), dtype=np.int64, count=len(judged))
    total, n = int(depths.sum()), len(entries)
    grades = list(chain.from_iterable(j.values() for j in judged))
    if {str, bytes} & set(map(type, grades)):  # numpy would read "1" as 1.0
        return _score_columns_by_query(qrels, run, qids, measures, keep_order)
    try:
        scores = np.fromiter(chain.from_iterable(e.values() for e in entries),  # type: ignore[union-attr]
                             dtype=np.float64, count=total)
        grade = np.fromiter(grades, dtype=np.float64, count=len(grades))
        # each judged document's score in its query's run (NaN: not retrieved)
        found = np.fromiter(map(dict.get, chain.from_iterable(map(repeat, entries,  # type: ignore[arg-type]
                                                                      sizes.tolist())),
                                chain.from_iterable(judged), repeat(np.nan)),
                            dtype=np.float64, count=len(grades))
    except (TypeError, ValueError):
        return _score_columns_by_query(qrels, run, qids, measures, keep_order)
    if not np.isfinite(scores).all():
        return _score_columns_by_query(qrels, run, qids, measures, keep_order)
    query = np.repeat(np.arange(n), sizes)
    relevant = grade >= 1
    hit = np.flatnonzero(relevant & ~np.isnan(found))
    width = max(1, int(depths.max()) if n else 0)
    starts = np.cumsum(depths) - depths
    score_m = padded(scores, starts, depths, width, -np.inf)
    rows, hit_grade = query[hit], grade[hit]
    rank, tied = rank_in_rows(score_m, rows, found[hit])
    if tied.any():  # ties: the doc-id order decides
        redo = np.unique(rows[tied])
        keep = ~np.isin(rows, redo)
        again = _ranked_hits([judged[i] for i in redo.tolist()],
                             [entries[i] for i in redo.tolist()])
        rows = np.concatenate([rows[keep], redo[again[0]]])
        rank = np.concatenate([rank[keep], again[1]])
        hit_grade = np.concatenate([hit_grade[keep], again[2]])
    in_order = by_query_and_rank(rows, rank)
    if in_order is not None:
        rows, rank, hit_grade = rows[in_order], rank[in_order], hit_grade[in_order]
    num_rel = np.bincount(query[relevant], minlength=n)
    relevance = Relevance(rows, rank, hit_grade, width,
                          ideal_grades(query[relevant], grade[relevant], num_rel),
                          num_rel.astype(np.float64), depths)
    return kernel_values(relevance, measures)


def _ranked_hits(judged: Sequence[Mapping[str, int]], entries: Sequence[Mapping[str, float]]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The relevant documents of each query ranked by :func:`rank_documents`: their query
    (index into the arguments), rank from 0 and grade."""
    query: list[int] = []
    rank: list[int] = []
    grade: list[float] = []
    for i, (judgments, entry) in enumerate(zip(judged, entries, strict=True)):
        for r, d in enumerate(rank_documents(entry)):
            g = judgments.get(d, 0)
            if g >= 1:
                query.append(i)
                rank.append(r)
                grade.append(g)
    return (np.array(query, dtype=np.int64), np.array(rank, dtype=np.int64),
            np.array(grade, dtype=np.float64))


def _score_columns_by_query(
    qrels: Qrels,
    run: Run,
    qids: Sequence[str],
    measures: Sequence[Measure],
    keep_order: bool,
) -> dict[str, np.ndarray]:
    """:func:`_score_columns` query by query (lists of doc ids, ``keep_order``, and the
    input whose errors name the query)."""
    grades: list[int] = []
    depths: list[int] = []
    ideal: list[int] = []
    num_rel: list[int] = []
    scores: list[float] = []
    for qid in qids:
        judgments = qrels[qid]
        entry = run[qid]
        if isinstance(entry, Mapping):
            scores.extend(entry.values())
        try:
            ranking = _ranking(qid, entry, keep_order)
        except TypeError:  # a score that does not compare with numbers
            if isinstance(entry, Mapping):
                _check_scores(qid, entry)
            raise
        try:
            relevant = sorted((g for g in judgments.values() if g >= 1), reverse=True)
        except TypeError:
            raise ValueError(f"query {qid!r}: qrels grades must be integers") from None
        ideal.extend(relevant)
        num_rel.append(len(relevant))
        grades.extend(map(judgments.get, ranking, repeat(0)))
        depths.append(len(ranking))
    if scores and not _all_finite(scores):
        for qid in qids:  # the rare path: find the query to name
            if isinstance(entry := run[qid], Mapping):
                _check_scores(qid, entry)
    return kernel_values(Relevance.from_flat(grades, depths, ideal, num_rel), measures)


def kernel_values(judged: Relevance, measures: Sequence[Measure]) -> dict[str, np.ndarray]:
    """One array of per-query values per measure (keyed by canonical text, in the order of
    ``measures``): one kernel call per family, for all the cutoffs asked of it."""
    by_family: dict[MeasureInfo, list[Measure]] = {}
    for m in measures:
        by_family.setdefault(m.info, []).append(m)
    columns: dict[str, np.ndarray] = {}
    for info, family in by_family.items():
        if info.kernel is None:
            raise ValueError(f"{family[0]} is an {family[0].group} measure, computed per "
                             "question by ragassay.metrics.answer; evaluate computes "
                             "retrieval measures")
        values = info.kernel(judged, [m.cutoff for m in family])
        for j, m in enumerate(family):
            columns[str(m)] = values[:, j]
    return {name: columns[name] for name in dict.fromkeys(str(m) for m in measures)}


def mean_of(measure: Measure, values: np.ndarray) -> float:
    """The mean of a measure's per-query values as trec_eval computes it: their sum added
    left to right over their number, or for a ``summary="geometric"`` measure (gm_map) exp
    of that mean of log(max(value, 0.00001)). 0 for no value."""
    if not len(values):
        return 0.0
    if measure.info.summary == "geometric":
        # math.log as trec_eval's C library computes it (numpy's may differ in the last bit)
        logs = np.array([math.log(max(v, MIN_GEO_MEAN)) for v in values.tolist()])
        return math.exp(sum_in_order(logs) / len(values))
    return sum_in_order(values) / len(values)


def sum_in_order(values: np.ndarray) -> float:
    """The sum added left to right (``np.cumsum`` is sequential; ``np.sum`` is pairwise), as
    trec_eval adds its per-query values, so means print trec_eval's digits."""
    return float(np.cumsum(values)[-1]) if len(values) else 0.0


# --- columnar input: (qid, docid, score) arrays or a data frame ----------------------------


def as_table(data: object, value: str) -> Table | None:
    """``data`` as a :class:`~ragassay.metrics.columnar.Table` when it is columnar: a tuple of
    three equal-length columns (qid, docid, ``value``) or a data frame (anything with
    ``columns``: pandas, polars) with columns ``qid``, ``docid`` and ``value``; None for a
    mapping (the dict input)."""
    if isinstance(data, Mapping):
        return None
    if isinstance(data, tuple) and len(data) == 3:
        qid, docid, number = data
    elif hasattr(data, "columns"):
        missing = [c for c in ("qid", "docid", value) if c not in list(data.columns)]
        if missing:
            raise ValueError(f"a {value} frame needs the columns qid, docid, {value}; "
                             f"missing {', '.join(missing)}")
        qid, docid, number = data["qid"], data["docid"], data[value]  # type: ignore[index]
    else:
        return None
    qids, docids = encode_repeated(qid), encode_ids(docid)
    try:
        numbers = np.asarray(number, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"the {value} column must hold numbers") from None
    if not len(qids) == len(docids) == len(numbers):
        raise ValueError(f"qid, docid and {value} columns differ in length "
                         f"({len(qids)}, {len(docids)}, {len(numbers)})")
    return Table(qids, docids, numbers, np.arange(1, len(numbers) + 1, dtype=np.int32))


def qrels_table(qrels: Qrels) -> Table:
    """{qid: {docid: grade}} as a :class:`~ragassay.metrics.columnar.Table`."""
    qids = [q for q, judged in qrels.items() for _ in range(len(judged))]
    docs = [d for judged in qrels.values() for d in judged]
    try:
        grades = np.fromiter((g for judged in qrels.values() for g in judged.values()),
                             dtype=np.float64, count=len(docs))
    except (TypeError, ValueError):
        raise ValueError("qrels grades must be integers") from None
    return Table(encode_repeated(qids), encode_ids(docs), grades,
                 np.arange(1, len(docs) + 1, dtype=np.int32))


def run_table(run: Run) -> Table:
    """{qid: {docid: score}} or {qid: [docid, ...]} (scored n, n - 1, ..., 1) as a
    :class:`~ragassay.metrics.columnar.Table`."""
    qids: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    for qid, entry in run.items():
        qids += [qid] * len(entry)
        docs += list(entry)
        if isinstance(entry, Mapping):
            scores += entry.values()
        else:
            scores += range(len(entry), 0, -1)
    try:
        values = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("run scores must be numbers") from None
    return Table(encode_repeated(qids), encode_ids(docs), values,
                 np.arange(1, len(docs) + 1, dtype=np.int32))


def _check_values(t: Table, kind: str) -> None:
    """Raise the error naming the first query with a grade that is not an integer (qrels)
    or a score that is not finite (run)."""
    bad = ~np.isfinite(t.value)
    if kind == "qrels":
        bad |= t.value != np.floor(np.where(bad, 0, t.value))
    if bad.any():
        i = int(np.argmax(bad))
        what = ("qrels grades must be integers" if kind == "qrels"
                else "run scores must be finite (found NaN or inf)")
        raise ValueError(f"query {t.qid[i].decode()!r}: {what}")


def _check_repeats(t: Table, kind: str) -> None:
    """Raise the error naming the first row that repeats a (query, document) pair."""
    repeat = duplicate_rows(t)
    if len(repeat):
        i = int(repeat.min())
        raise ValueError(f"query {t.qid[i].decode()!r}: document {t.docid[i].decode()!r} "
                         f"appears more than once in the {kind}")


def _evaluate_tables(qrels: Table, run: Table, measures: Sequence[Measure], keep_order: bool,
                     missing_queries: MissingQueries, run_queries: np.ndarray | None
                     ) -> dict[str, dict[str, dict[str, float]] | dict[str, float | None]]:
    """:func:`evaluate` from columns; ``run_queries``: the ids of a dict run, whose queries
    with no document are in the run (columns cannot list such a query)."""
    _check_values(qrels, "qrels")
    _check_values(run, "run")
    _check_repeats(qrels, "qrels")
    # The grouped join finds a repeated run row itself (and then declines)
    j = None if keep_order else join_grouped(qrels, run, run_queries)
    if j is None:
        _check_repeats(run, "run")
        j = join_sorted(qrels, run, keep_order=keep_order, run_queries=run_queries)
    judged = np.flatnonzero(j.judged_query)
    evaluated = judged[j.in_run[judged]]
    shown = judged if missing_queries == "zero" else evaluated
    values = kernel_values(relevance_rows(j, evaluated)[0], measures)
    qids = [q.decode() for q in j.qids[shown].tolist()]
    return _results(qids, values, np.searchsorted(shown, evaluated))
