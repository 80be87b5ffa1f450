"""General IR evaluation with trec_eval semantics: qrels + run -> per-query and mean scores.

What a measure *is* (:class:`Measure`, a parsed value with a canonical text form such as
``ndcg@5``) is kept apart from how it is computed (one vectorised kernel per measure over a
(num_queries, depth) matrix of relevance grades).

Semantics, the same as trec_eval (``tests/differential`` checks them against pytrec_eval):

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

import difflib
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Literal

import numpy as np

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float] | Sequence[str]]
MissingQueries = Literal["zero", "skip"]
CutoffRule = Literal["required", "optional", "none"]


# --- what a measure is --------------------------------------------------------------------


@dataclass(frozen=True)
class MeasureInfo:
    """A measure family: its canonical name, cutoff rule, formula and trec_eval name."""

    name: str
    cutoff: CutoffRule
    formula: str
    trec_eval: str


_INFO: dict[str, MeasureInfo] = {
    info.name: info
    for info in (
        MeasureInfo(
            "precision", "required", "P@k = |rel ∩ top-k| / k (divided by k even when fewer "
            "than k were retrieved)", "P_k"),
        MeasureInfo(
            "recall", "optional", "recall@k = |rel ∩ top-k| / |rel| (0 when |rel| = 0); "
            "uncut: over the whole ranking", "recall_k"),
        MeasureInfo(
            "hit", "required", "hit@k = 1 if any relevant document is in the top k, else 0",
            "success_k"),
        MeasureInfo(
            "mrr", "optional", "mrr@k = 1 / rank of the first relevant document if that rank "
            "<= k, else 0; uncut: trec_eval recip_rank", "recip_rank"),
        MeasureInfo(
            "ndcg", "optional", "ndcg@k = DCG@k / IDCG@k, DCG@k = sum_{i<=k} grade_i / "
            "log2(i + 1) over relevant documents, IDCG@k the DCG of all relevant grades "
            "sorted descending (0 when there is no relevant document)", "ndcg_cut_k"),
        MeasureInfo(
            "map", "optional", "AP = (1 / |rel|) * sum over relevant ranks i (<= k when cut) "
            "of P@i (0 when |rel| = 0)", "map / map_cut_k"),
        MeasureInfo(
            "r_precision", "none", "R-precision = |rel ∩ top-R| / R with R = |rel| "
            "(0 when R = 0)", "Rprec"),
    )
}

# Accepted spellings of each family name (lower case), mapped to the canonical name.
_ALIASES: dict[str, str] = {
    "precision": "precision", "p": "precision",
    "recall": "recall",
    "hit": "hit", "success": "hit",
    "mrr": "mrr", "recip_rank": "mrr", "reciprocal_rank": "mrr",
    "ndcg": "ndcg", "ndcg_cut": "ndcg",
    "map": "map", "ap": "map", "map_cut": "map",
    "r_precision": "r_precision", "rprec": "r_precision", "r-precision": "r_precision",
}

_CUT_SUFFIX = re.compile(r"^(?P<base>.+?)_(?P<cutoff>-?\d+)$")


@dataclass(frozen=True)
class Measure:
    """A measure with its cutoff, e.g. ``Measure("ndcg", 5)``; ``str()`` gives ``ndcg@5``.

    Usable as a dict key; :meth:`parse` accepts the spellings listed in
    :func:`parse_measure`.
    """

    name: str
    cutoff: int | None = None

    def __post_init__(self) -> None:
        info = _INFO.get(self.name)
        if info is None:
            raise ValueError(_unknown_message(self.name, self.cutoff))
        if self.cutoff is not None:
            if isinstance(self.cutoff, bool) or not isinstance(self.cutoff, int):
                raise ValueError(f"{self.name}: cutoff must be an integer, got {self.cutoff!r}")
            if self.cutoff <= 0:
                raise ValueError(f"{self.name}: cutoff must be >= 1, got {self.cutoff}")
            if info.cutoff == "none":
                raise ValueError(f"{self.name} takes no cutoff (got @{self.cutoff})")
        elif info.cutoff == "required":
            raise ValueError(f"{self.name} needs a cutoff, e.g. {self.name}@10")

    def __str__(self) -> str:
        return self.name if self.cutoff is None else f"{self.name}@{self.cutoff}"

    @property
    def trec_name(self) -> str:
        """The name trec_eval prints for this measure (``ndcg_cut_5``, ``P_5``, ``Rprec``).

        ``mrr@k`` has no trec_eval counterpart and prints as ``recip_rank_cut_k``.
        """
        k = self.cutoff
        names = {
            "precision": f"P_{k}",
            "recall": "recall" if k is None else f"recall_{k}",
            "hit": f"success_{k}",
            "mrr": "recip_rank" if k is None else f"recip_rank_cut_{k}",
            "ndcg": "ndcg" if k is None else f"ndcg_cut_{k}",
            "map": "map" if k is None else f"map_cut_{k}",
            "r_precision": "Rprec",
        }
        return names[self.name]

    @classmethod
    def parse(cls, text: str | Measure) -> Measure:
        return parse_measure(text)


def parse_measure(text: str | Measure) -> Measure:
    """Parse a measure name; case-insensitive.

    Accepted: ``name@k`` (``ndcg@5``, ``P@5``, ``precision@5``, ``recall@10``, ``mrr@10``,
    ``hit@5``, ``map@100``), trec_eval's ``name.k`` and ``name_k`` (``ndcg_cut.5``,
    ``ndcg_cut_5``, ``P.5``, ``P_5``, ``recall.10``, ``success_5``, ``map_cut_10``), and
    uncut names ``map``, ``mrr`` / ``recip_rank``, ``ndcg``, ``recall``, ``r_precision`` /
    ``Rprec``. Raises ValueError for an unknown name (suggesting the nearest valid ones), a
    cutoff <= 0, a missing cutoff where one is required, or a cutoff where none is allowed.
    """
    if isinstance(text, Measure):
        return text
    raw = str(text).strip()
    lowered = raw.lower()
    base, cutoff_text = lowered, None
    if "@" in lowered:
        base, cutoff_text = lowered.split("@", 1)
    elif "." in lowered:
        base, cutoff_text = lowered.split(".", 1)
    elif (match := _CUT_SUFFIX.match(lowered)) and match["base"] in _ALIASES:
        base, cutoff_text = match["base"], match["cutoff"]
    name = _ALIASES.get(base)
    if name is None:
        raise ValueError(_unknown_message(raw, cutoff_text))
    cutoff: int | None = None
    if cutoff_text is not None:
        try:
            cutoff = int(cutoff_text)
        except ValueError:
            raise ValueError(
                f"measure {raw!r}: cutoff {cutoff_text!r} is not an integer >= 1"
            ) from None
    try:
        return Measure(name, cutoff)
    except ValueError as exc:
        raise ValueError(f"measure {raw!r}: {exc}") from None


def _unknown_message(text: str, cutoff: object) -> str:
    base = text.lower().split("@")[0].split(".")[0]
    suffix = "" if cutoff is None else f"@{cutoff}"
    close = difflib.get_close_matches(base, list(_ALIASES), n=3, cutoff=0.5)
    suggestions = sorted({f"{_ALIASES[c]}{suffix if _INFO[_ALIASES[c]].cutoff != 'none' else ''}"
                          for c in close})
    valid = ", ".join(_INFO)
    hint = f"did you mean {' or '.join(suggestions)}? " if suggestions else ""
    return f"unknown measure {text!r}; {hint}valid measures: {valid} (see list_measures())"


def list_measures() -> list[MeasureInfo]:
    """Every measure family with its cutoff rule, formula and trec_eval name."""
    return list(_INFO.values())


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


# --- how measures are computed ------------------------------------------------------------


@dataclass
class _Batch:
    """Relevance of the ranked documents of every evaluated query, padded with 0."""

    grades: np.ndarray  # (q, depth) grade of the document at each rank (0 when unjudged/pad)
    ideal: np.ndarray  # (q, max_rel) relevant grades sorted descending, padded with 0
    num_rel: np.ndarray  # (q,) number of relevant judged documents

    @property
    def relevant(self) -> np.ndarray:
        return self.grades >= 1

    def cut(self, k: int | None) -> np.ndarray:
        rel = self.relevant
        return rel if k is None else rel[:, :k]

    def over_num_rel(self, counts: np.ndarray) -> np.ndarray:
        """counts / num_rel, with 0 where there is no relevant document."""
        return np.divide(counts, self.num_rel, out=np.zeros(len(counts)), where=self.num_rel > 0)


def _discount(n: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, n + 2, dtype=np.float64))


def _precision(b: _Batch, k: int | None) -> np.ndarray:
    assert k is not None  # guaranteed by Measure
    return b.cut(k).sum(axis=1) / k


def _recall(b: _Batch, k: int | None) -> np.ndarray:
    return b.over_num_rel(b.cut(k).sum(axis=1))


def _hit(b: _Batch, k: int | None) -> np.ndarray:
    return b.cut(k).any(axis=1).astype(np.float64)


def _mrr(b: _Batch, k: int | None) -> np.ndarray:
    rel = b.cut(k)
    first = rel.argmax(axis=1)  # index of the first True (0 when none: masked below)
    return np.where(rel.any(axis=1), 1.0 / (first + 1.0), 0.0)


def _ndcg(b: _Batch, k: int | None) -> np.ndarray:
    gains = np.where(b.relevant, b.grades, 0.0)
    gains = gains if k is None else gains[:, :k]
    ideal = b.ideal if k is None else b.ideal[:, :k]
    dcg = gains @ _discount(gains.shape[1])
    idcg = ideal @ _discount(ideal.shape[1])
    return np.divide(dcg, idcg, out=np.zeros(len(dcg)), where=idcg > 0)


def _average_precision(b: _Batch, k: int | None) -> np.ndarray:
    rel = b.cut(k)
    precision_at_i = np.cumsum(rel, axis=1) / np.arange(1, rel.shape[1] + 1)
    return b.over_num_rel((precision_at_i * rel).sum(axis=1))


def _r_precision(b: _Batch, k: int | None) -> np.ndarray:
    found_at = np.cumsum(b.relevant, axis=1)
    out = np.zeros(len(b.num_rel))
    cut = np.minimum(b.num_rel, found_at.shape[1]).astype(np.int64) - 1  # last rank in top R
    has = b.num_rel > 0
    rows = np.flatnonzero(has)
    out[has] = found_at[rows, cut[has]] / b.num_rel[has]
    return out


_KERNELS: dict[str, Callable[[_Batch, int | None], np.ndarray]] = {
    "precision": _precision,
    "recall": _recall,
    "hit": _hit,
    "mrr": _mrr,
    "ndcg": _ndcg,
    "map": _average_precision,
    "r_precision": _r_precision,
}


def _pad(flat: list[float], lengths: list[int]) -> np.ndarray:
    """Lay out concatenated rows of the given lengths as a zero-padded float matrix.

    At least one column, so kernels never reduce over an empty axis; a padded 0 is a
    non-relevant document and changes no measure.
    """
    counts = np.asarray(lengths, dtype=np.int64)
    width = max(1, int(counts.max()) if len(counts) else 0)
    out = np.zeros((len(counts), width), dtype=np.float64)
    if flat:
        row_idx = np.repeat(np.arange(len(counts)), counts)
        starts = np.repeat(np.cumsum(counts) - counts, counts)
        out[row_idx, np.arange(len(flat)) - starts] = flat
    return out


# --- public API ---------------------------------------------------------------------------


def parse_measures(metrics: Iterable[str | Measure]) -> list[Measure]:
    """Parse measure names, dropping repeats (first occurrence keeps its place)."""
    if isinstance(metrics, (str, Measure)):
        metrics = [metrics]
    out: list[Measure] = []
    for m in metrics:
        measure = parse_measure(m)
        if measure not in out:
            out.append(measure)
    return out


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
    measures keyed by their canonical text (``"ndcg@5"``), queries in sorted order, and the
    mean over the per-query rows (None when no query was evaluated).
    Raises ValueError for unknown measures, duplicate documents in a ranked list,
    non-numeric or non-finite scores, and an unknown ``missing_queries`` policy.
    """
    measures = parse_measures(metrics)
    if missing_queries not in ("zero", "skip"):
        raise ValueError(f"missing_queries must be 'zero' or 'skip', got {missing_queries!r}")
    judged = sorted((q for q, judgments in qrels.items() if judgments), key=str)
    evaluated = [q for q in judged if q in run]
    zero = [q for q in judged if q not in run] if missing_queries == "zero" else []

    columns = _score_columns(qrels, run, evaluated, measures, keep_order)
    names = [str(m) for m in measures]
    rows: dict[str, dict[str, float]] = {}
    for i, qid in enumerate(evaluated):
        rows[qid] = {name: columns[name][i] for name in names}
    for qid in zero:
        rows[qid] = dict.fromkeys(names, 0.0)
    per_query = {qid: rows[qid] for qid in sorted(rows, key=str)}
    n = len(per_query)
    mean: dict[str, float | None] = {
        name: (math.fsum(row[name] for row in per_query.values()) / n if n else None)
        for name in names
    }
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
) -> dict[str, list[float]]:
    """One list of per-query values per measure, for the queries in ``qids``."""
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
            if isinstance(run[qid], Mapping):
                _check_scores(qid, run[qid])
    batch = _Batch(
        grades=_pad(grades, depths),
        ideal=_pad(ideal, num_rel),
        num_rel=np.asarray(num_rel, dtype=np.float64),
    )
    return {str(m): _KERNELS[m.name](batch, m.cutoff).tolist() for m in measures}
