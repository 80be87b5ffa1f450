"""The measure vocabulary: every measure ragassay reports, its one name, formula and kernel.

A measure is a value, :class:`Measure`: a family from the table below and, where the family
takes one, a cutoff. Its one canonical text is ``<family>_at_<k>`` or ``<family>``
(``recall_at_5``, ``ndcg_at_10``, ``map``, ``map_at_100``, ``groundedness``): the spelling of
the run folder's metric keys, the config, the gate bars and the results of
:func:`ragassay.metrics.ir.evaluate`. :func:`parse_measure` also reads the other spellings
(``recall@5``, trec_eval's ``recall.5`` and ``recall_5``, ``P.5``, ``ndcg_cut.10``,
``recip_rank``, ``Rprec``), and names the nearest valid measures for an unknown name.

The table (:data:`_TABLE`) registers each measure once: its group (``retrieval``: computed
from a ranking and relevance judgments; ``answer``: computed per question by
:func:`ragassay.metrics.answer.score_answer`), the formula, whether higher is better, its
cutoff rule, its trec_eval names and accepted aliases, and for a retrieval measure the
vectorised kernel that computes it. Both the trec_eval-style :func:`~.ir.evaluate` and the
per-question RAG rows of :func:`~.retrieval.retrieval_scores` call these kernels; neither
holds a formula of its own.

Every retrieval kernel reads a :class:`Relevance` matrix: per query (row) the grade of the
document at each rank. Grade >= 1 is relevant (trec_eval's default relevance level 1), grade
<= 0 or unjudged is not; only nDCG uses the grade itself, as gain. "rel" below is the set of
relevant judged documents of the query, "top-k" its first k ranked documents.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Generic, Literal, TypeVar

import numpy as np

Group = Literal["retrieval", "answer"]
CutoffRule = Literal["required", "optional", "none"]
Cutoffs = Sequence[int | None]
Kernel = Callable[["Relevance", Cutoffs], np.ndarray]


# --- what every kernel reads --------------------------------------------------------------

_T = TypeVar("_T")


class _cached(Generic[_T]):  # noqa: N801 - used as a decorator, like functools.cached_property
    """A computed-once attribute, without the lock functools.cached_property takes before
    Python 3.12 (which doubles the cost of a one-query :class:`Relevance`)."""

    def __init__(self, fn: Callable[[Any], _T]) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __get__(self, obj: object, owner: type | None = None) -> _T:
        if obj is None:  # looked up on the class (help(), doc tools)
            return self  # type: ignore[return-value]
        value = self.fn(obj)
        obj.__dict__[self.name] = value  # shadows this descriptor from now on
        return value


class Relevance:
    """Relevance of the ranked documents of q queries, zero-padded to a common depth.

    ``grades`` (q, depth): grade of the document at each rank (0 when unjudged or padding);
    ``ideal`` (q, width): each query's relevant grades sorted descending, zero-padded;
    ``num_rel`` (q,): number of relevant judged documents. Both matrices have at least one
    column; a padded 0 is a non-relevant document and changes no measure.

    The prefix statistics below are computed once, on first use, and shared by the kernels;
    column i of a prefix holds the statistic over the top i + 1 documents. A statistic that
    is a count or sum over relevant documents is 0 for a query without any, so dividing it
    by :attr:`num_rel_or_one` (or nDCG's :attr:`idcg_or_one`) gives the 0 trec_eval reports.
    """

    def __init__(self, grades: np.ndarray, ideal: np.ndarray, num_rel: np.ndarray) -> None:
        self.grades = grades
        self.ideal = ideal
        self.num_rel = num_rel
        self._found_at: dict[tuple[int | None, ...], np.ndarray] = {}

    @classmethod
    def from_flat(cls, grades: Sequence[float], depths: Sequence[int],
                  ideal: Sequence[float], num_rel: Sequence[int]) -> Relevance:
        """From concatenated rows: ``grades`` holds ``depths[i]`` values for query i,
        ``ideal`` holds ``num_rel[i]`` relevant grades (descending) for query i."""
        return cls(_pad(grades, depths), _pad(ideal, num_rel),
                   np.asarray(num_rel, dtype=np.float64))

    @classmethod
    def one(cls, grades: Sequence[float], ideal: Sequence[float]) -> Relevance:
        """One query: the grades of its ranked documents and its relevant grades, descending."""
        one = cls(np.array([grades if len(grades) else (0,)], dtype=np.float64),
                  np.array([ideal if len(ideal) else (0,)], dtype=np.float64),
                  np.array([len(ideal)], dtype=np.float64))
        one.num_rel_or_one = np.array([[len(ideal) or 1]], dtype=np.float64)
        return one

    @_cached
    def relevant(self) -> np.ndarray:
        """(q, depth) bool: the document at this rank is relevant (grade >= 1)."""
        return self.grades >= 1

    @_cached
    def found(self) -> np.ndarray:
        """(q, depth) |rel ∩ top-i|: relevant documents among the top i."""
        return self.relevant.cumsum(axis=1)

    @_cached
    def first_or_one(self) -> np.ndarray:
        """(q, 1) rank of the first relevant document, 1 when none is ranked."""
        return self.relevant.argmax(axis=1, keepdims=True) + 1

    @property
    def first(self) -> np.ndarray:
        """(q,) rank of the first relevant document, 0 when none is ranked."""
        return np.where(self.found[:, -1] > 0, self.first_or_one[:, 0], 0)

    @_cached
    def num_rel_or_one(self) -> np.ndarray:
        """(q, 1) |rel|, 1 for a query without relevant documents."""
        return np.where(self.num_rel > 0, self.num_rel, 1.0)[:, None]

    @_cached
    def dcg(self) -> np.ndarray:
        """(q, depth) DCG of the top i: sum_{j<=i} gain_j / log2(j + 1), gain = grade if
        relevant else 0."""
        gains = self.grades * self.relevant
        return (gains / _log2_ranks(gains.shape[1])).cumsum(axis=1)

    @_cached
    def idcg_or_one(self) -> np.ndarray:
        """(q, width) ideal DCG of the top i (the DCG of the relevant grades, descending);
        1 for a query without relevant documents (its DCG is 0, and so its nDCG)."""
        idcg = (self.ideal / _log2_ranks(self.ideal.shape[1])).cumsum(axis=1)
        idcg[idcg == 0] = 1.0  # 0 only without relevant documents: a grade is >= 1
        return idcg

    @_cached
    def precision_sum(self) -> np.ndarray:
        """(q, depth) sum over the relevant ranks j <= i of P@j = |rel ∩ top-j| / j."""
        return (self.relevant * self.found / _ranks(self.grades.shape[1])).cumsum(axis=1)

    def at(self, prefix: np.ndarray, cutoffs: Cutoffs) -> np.ndarray:
        """(q, len(cutoffs)) the prefix statistic over the top k (k None: the whole row)."""
        return prefix[:, _columns(prefix.shape[1], tuple(cutoffs))]

    def found_at(self, cutoffs: Cutoffs) -> np.ndarray:
        """(q, len(cutoffs)) |rel ∩ top-k| (kept: most kernels start from it)."""
        key = tuple(cutoffs)
        found = self._found_at.get(key)
        if found is None:
            found = self._found_at[key] = self.at(self.found, key)
        return found


_TABLE_SIZE = 64
_LOG2_RANKS = np.log2(np.arange(2, _TABLE_SIZE + 2, dtype=np.float64))
_RANKS = np.arange(1, _TABLE_SIZE + 1, dtype=np.float64)


def _log2_ranks(n: int) -> np.ndarray:
    """log2(i + 1) for the ranks i = 1..n (a cached table, grown on demand)."""
    global _LOG2_RANKS
    if n > len(_LOG2_RANKS):
        _LOG2_RANKS = np.log2(np.arange(2, 2 * n + 2, dtype=np.float64))
    return _LOG2_RANKS[:n]


def _ranks(n: int) -> np.ndarray:
    """The ranks 1..n as floats (a cached table, grown on demand)."""
    global _RANKS
    if n > len(_RANKS):
        _RANKS = np.arange(1, 2 * n + 1, dtype=np.float64)
    return _RANKS[:n]


@lru_cache(maxsize=1024)
def _columns(width: int, cutoffs: tuple[int | None, ...]) -> np.ndarray:
    """Column of a prefix of ``width`` columns holding the top k (k None: the last)."""
    return np.array([width - 1 if k is None else min(k, width) - 1 for k in cutoffs],
                    dtype=np.intp)


@lru_cache(maxsize=1024)
def _cutoff_values(cutoffs: tuple[int, ...]) -> np.ndarray:
    return np.array(cutoffs, dtype=np.float64)


def _pad(flat: Sequence[float], lengths: Sequence[int]) -> np.ndarray:
    """Lay out concatenated rows of the given lengths as a zero-padded float matrix with at
    least one column, so kernels never reduce over an empty axis."""
    counts = np.asarray(lengths, dtype=np.int64)
    width = max(1, int(counts.max()) if len(counts) else 0)
    out = np.zeros((len(counts), width), dtype=np.float64)
    if len(flat):
        row_idx = np.repeat(np.arange(len(counts)), counts)
        starts = np.repeat(np.cumsum(counts) - counts, counts)
        out[row_idx, np.arange(len(flat)) - starts] = flat
    return out


# --- the kernels: (q, len(cutoffs)) values, one column per cutoff --------------------------
# Each is registered with its formula in the table below; a new retrieval measure is a
# kernel here and one MeasureInfo there, nothing else.


def _precision(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    return r.found_at(cutoffs) / _cutoff_values(tuple(cutoffs))  # cutoff required


def _recall(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    return r.found_at(cutoffs) / r.num_rel_or_one


def _hit(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    return (r.found_at(cutoffs) > 0).astype(np.float64)


def _mrr(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    # a hit at k means the first relevant rank is <= k
    return (r.found_at(cutoffs) > 0) / r.first_or_one


def _ndcg(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    return r.at(r.dcg, cutoffs) / r.at(r.idcg_or_one, cutoffs)


def _average_precision(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    return r.at(r.precision_sum, cutoffs) / r.num_rel_or_one


def _r_precision(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    depth = r.grades.shape[1]
    last = np.clip(r.num_rel.astype(np.int64), 1, depth) - 1  # last rank of the top R
    found = r.found[np.arange(len(last)), last][:, None] / r.num_rel_or_one
    return np.repeat(found, len(cutoffs), axis=1)


# --- the table ----------------------------------------------------------------------------


@dataclass(frozen=True)
class MeasureInfo:
    """A measure family: canonical name, group, formula, direction, cutoff rule, names.

    ``trec`` holds trec_eval's names for the family, ``{k}`` standing for the cutoff;
    ``aliases`` the other accepted spellings (lower case); ``kernel`` computes a retrieval
    measure (None for an answer measure, which :mod:`ragassay.metrics.answer` computes).
    """

    name: str
    group: Group
    formula: str
    higher_is_better: bool = True
    cutoff: CutoffRule = "none"
    trec: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    kernel: Kernel | None = field(default=None, compare=False, repr=False)

    @property
    def needs_cutoff(self) -> bool:
        """Whether a measure of this family must name a cutoff (``precision_at_5``)."""
        return self.cutoff == "required"

    @property
    def takes_cutoff(self) -> bool:
        return self.cutoff != "none"

    @property
    def trec_eval(self) -> str:
        """trec_eval's names for the family, e.g. ``map / map_cut_k`` ("" when none)."""
        return " / ".join(t.replace("{k}", "k") for t in self.trec)

    def trec_name(self, cutoff: int | None) -> str:
        """The name trec_eval prints for this family at ``cutoff``.

        A cut measure trec_eval lacks prints as ``<uncut name>_cut_<k>``
        (``recip_rank_cut_10`` for ``mrr_at_10``).
        """
        cut = [t for t in self.trec if "{k}" in t]
        uncut = [t for t in self.trec if "{k}" not in t] or [self.name]
        if cutoff is None:
            return uncut[0]
        return cut[0].format(k=cutoff) if cut else f"{uncut[0]}_cut_{cutoff}"


_TABLE: tuple[MeasureInfo, ...] = (
    # retrieval: computed by a kernel from a ranking and relevance judgments
    MeasureInfo(
        "precision", "retrieval", "precision_at_k = |rel ∩ top-k| / k (divided by k even when "
        "fewer than k were retrieved)",
        cutoff="required", trec=("P_{k}",), aliases=("p",), kernel=_precision),
    MeasureInfo(
        "recall", "retrieval", "recall_at_k = |rel ∩ top-k| / |rel| (0 when |rel| = 0); "
        "uncut: over the whole ranking",
        cutoff="optional", trec=("recall", "recall_{k}"), kernel=_recall),
    MeasureInfo(
        "hit", "retrieval", "hit_at_k = 1 if any relevant document is in the top k, else 0",
        cutoff="required", trec=("success_{k}",), aliases=("success",), kernel=_hit),
    MeasureInfo(
        "mrr", "retrieval", "mrr_at_k = 1 / rank of the first relevant document if that rank "
        "<= k, else 0; uncut: trec_eval recip_rank",
        cutoff="optional", trec=("recip_rank",),
        aliases=("recip_rank", "reciprocal_rank", "recip_rank_cut"), kernel=_mrr),
    MeasureInfo(
        "ndcg", "retrieval", "ndcg_at_k = DCG_k / IDCG_k, DCG_k = sum_{i<=k} grade_i / "
        "log2(i + 1) over relevant documents, IDCG_k the DCG of all relevant grades sorted "
        "descending and cut at k (0 when there is no relevant document)",
        cutoff="optional", trec=("ndcg", "ndcg_cut_{k}"), aliases=("ndcg_cut",),
        kernel=_ndcg),
    MeasureInfo(
        "map", "retrieval", "AP = (1 / |rel|) * sum over relevant ranks i (<= k when cut) of "
        "P@i (0 when |rel| = 0); relevant documents never retrieved add 0",
        cutoff="optional", trec=("map", "map_cut_{k}"), aliases=("ap", "map_cut"),
        kernel=_average_precision),
    MeasureInfo(
        "r_precision", "retrieval", "R-precision = |rel ∩ top-R| / R with R = |rel| "
        "(0 when R = 0)",
        trec=("Rprec",), aliases=("rprec", "r-precision"), kernel=_r_precision),
    # answer: computed per question by ragassay.metrics.answer.score_answer / the LLM judge
    MeasureInfo(
        "judge_faithfulness", "answer", "supported / judged claims of the answer against its "
        "cited chunks, by an LLM judge (None when the judge call failed)"),
    MeasureInfo(
        "faithfulness", "answer", "1 when every cited chunk is in the context; citing "
        "nothing: 1 for a declined answer, 0 otherwise"),
    MeasureInfo(
        "groundedness", "answer", "1 when the answer is declined, or cites only context "
        "chunks and states no number they do not hold; else 0 (see groundedness_reason)"),
    MeasureInfo(
        "answer_relevancy", "answer", "|expected_terms in the answer| / |expected_terms| "
        "(None without expected terms)"),
    MeasureInfo(
        "correct", "answer", "answerable: 1 when not declined and holding every must_contain "
        "item (None without must_contain); unanswerable: 1 when declined"),
    MeasureInfo(
        "citation_accuracy", "answer", "|cited ∩ gold| / |cited| (None when nothing is cited "
        "or there is no gold)"),
    MeasureInfo(
        "hallucination_flag", "answer", "1 when an unanswerable question gets a non-declined "
        "answer, or a non-declined answer to a question with gold cites chunks but no gold "
        "chunk; else 0", higher_is_better=False),
    MeasureInfo(
        "unanswerable_detection_flag", "answer", "unanswerable question: 1 when declined, "
        "else 0; answerable: None"),
)

_INFO: dict[str, MeasureInfo] = {info.name: info for info in _TABLE}
# Every accepted spelling of a family name (lower case) -> canonical name.
_ALIASES: dict[str, str] = {
    spelling: info.name for info in _TABLE for spelling in (info.name, *info.aliases)
}

RETRIEVAL_FAMILIES: tuple[str, ...] = tuple(i.name for i in _TABLE if i.group == "retrieval")
"""The retrieval measure families, in table order: precision, recall, hit, mrr, ndcg, map,
r_precision."""
ANSWER_MEASURES: tuple[str, ...] = tuple(i.name for i in _TABLE if i.group == "answer")
"""The answer measures, in the order of the default config and metrics.json."""


def list_measures(group: Group | None = "retrieval") -> list[MeasureInfo]:
    """The measure families of ``group`` (``None``: all), in table order."""
    return [info for info in _TABLE if group is None or info.group == group]


def measure_info(name: str) -> MeasureInfo:
    """The table entry of a family by any accepted spelling; ValueError when unknown."""
    canonical = _ALIASES.get(name.strip().lower())
    if canonical is None:
        raise ValueError(_unknown_message(name, None))
    return _INFO[canonical]


# --- the measure value and its names ------------------------------------------------------


@dataclass(frozen=True)
class Measure:
    """A measure with its cutoff, e.g. ``Measure("ndcg", 5)``; ``str()`` gives ``ndcg_at_5``.

    Usable as a dict key; equal values are the same measure whatever spelling they were
    parsed from. :meth:`parse` accepts the spellings listed in :func:`parse_measure`.
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
            if not info.takes_cutoff:
                raise ValueError(f"{self.name} takes no cutoff (got {self.cutoff})")
        elif info.needs_cutoff:
            raise ValueError(f"{self.name} needs a cutoff, e.g. {self.name}_at_10")

    def __str__(self) -> str:
        return self.name if self.cutoff is None else f"{self.name}_at_{self.cutoff}"

    @property
    def info(self) -> MeasureInfo:
        return _INFO[self.name]

    @property
    def group(self) -> Group:
        return self.info.group

    @property
    def higher_is_better(self) -> bool:
        return self.info.higher_is_better

    @property
    def trec_name(self) -> str:
        """The name trec_eval prints for this measure (``ndcg_cut_5``, ``P_5``, ``Rprec``).

        ``mrr_at_k`` has no trec_eval counterpart and prints as ``recip_rank_cut_k``.
        """
        return self.info.trec_name(self.cutoff)

    @classmethod
    def parse(cls, text: str | Measure) -> Measure:
        return parse_measure(text)


# "recall_at_5" (canonical) and trec_eval's "recall_5" / "ndcg_cut_5"
_AT_SUFFIX = re.compile(r"^(?P<base>.+?)_at_(?P<cutoff>-?\d+)$")
_CUT_SUFFIX = re.compile(r"^(?P<base>.+?)_(?P<cutoff>-?\d+)$")


def _split(lowered: str) -> tuple[str, str | None]:
    """(family spelling, cutoff text or None) of a lower-cased measure name."""
    if "@" in lowered:
        base, cutoff = lowered.split("@", 1)
        return base, cutoff
    if "." in lowered:
        base, cutoff = lowered.split(".", 1)
        return base, cutoff
    if lowered in _ALIASES:
        return lowered, None
    for pattern in (_AT_SUFFIX, _CUT_SUFFIX):
        if match := pattern.match(lowered):
            return match["base"], match["cutoff"]
    return lowered, None


def parse_measure(text: str | Measure) -> Measure:
    """Parse a measure name; case-insensitive, surrounding blanks ignored.

    Accepted: the canonical ``name_at_k`` and ``name`` (``recall_at_5``, ``precision_at_5``,
    ``ndcg_at_10``, ``map``, ``map_at_100``, ``groundedness``); ``name@k`` (``ndcg@5``,
    ``P@5``); trec_eval's ``name.k`` and ``name_k`` (``ndcg_cut.5``, ``ndcg_cut_5``,
    ``P.5``, ``P_5``, ``recall.10``, ``success_5``, ``map_cut_10``); the aliases of the
    table (``recip_rank``, ``Rprec``, ``success``, ``ap``). Raises ValueError for an unknown
    name (suggesting the nearest valid ones), a cutoff <= 0, a missing cutoff where one is
    required, or a cutoff where none is allowed.
    """
    if isinstance(text, Measure):
        return text
    raw = str(text).strip()
    base, cutoff_text = _split(raw.lower())
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


def parse_measures(metrics: str | Measure | Iterable[str | Measure]) -> list[Measure]:
    """Parse measure names, dropping repeats (first occurrence keeps its place)."""
    if isinstance(metrics, (str, Measure)):
        metrics = [metrics]
    out: list[Measure] = []
    for m in metrics:
        measure = parse_measure(m)
        if measure not in out:
            out.append(measure)
    return out


def canonical_name(text: str | Measure) -> str:
    """The canonical text of a measure name: ``recall@5``, ``recall.5``, ``recall_5`` and
    ``recall_at_5`` all give ``recall_at_5``. ValueError (with a did-you-mean) when unknown."""
    return str(parse_measure(text))


def _unknown_message(text: str, cutoff: object) -> str:
    base, _ = _split(str(text).strip().lower())
    close = difflib.get_close_matches(base, list(_ALIASES), n=3, cutoff=0.6)  # best first
    suggestions = list(dict.fromkeys(
        f"{_ALIASES[c]}_at_{cutoff}" if cutoff is not None and _INFO[_ALIASES[c]].takes_cutoff
        else _ALIASES[c]
        for c in close
    ))
    hint = f"did you mean {' or '.join(suggestions)}? " if suggestions else ""
    return (f"unknown measure {text!r}; {hint}valid measures: {', '.join(RETRIEVAL_FAMILIES)}"
            f" (retrieval), {', '.join(ANSWER_MEASURES)} (answer)")
