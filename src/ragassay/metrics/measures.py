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
per-question RAG rows of :func:`~.retrieval.retrieval_scores` call these kernels
(:mod:`.kernels`); neither holds a formula of its own. "rel" below is the set of relevant
judged documents of the query, "top-k" its first k ranked documents.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from . import kernels
from .kernels import Kernel

Group = Literal["retrieval", "answer"]
CutoffRule = Literal["required", "optional", "none"]


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
        cutoff="required", trec=("P_{k}",), aliases=("p",), kernel=kernels.precision),
    MeasureInfo(
        "recall", "retrieval", "recall_at_k = |rel ∩ top-k| / |rel| (0 when |rel| = 0); "
        "uncut: over the whole ranking",
        cutoff="optional", trec=("recall", "recall_{k}"), kernel=kernels.recall),
    MeasureInfo(
        "hit", "retrieval", "hit_at_k = 1 if any relevant document is in the top k, else 0",
        cutoff="required", trec=("success_{k}",), aliases=("success",), kernel=kernels.hit),
    MeasureInfo(
        "mrr", "retrieval", "mrr_at_k = 1 / rank of the first relevant document if that rank "
        "<= k, else 0; uncut: trec_eval recip_rank",
        cutoff="optional", trec=("recip_rank",),
        aliases=("recip_rank", "reciprocal_rank", "recip_rank_cut"), kernel=kernels.mrr),
    MeasureInfo(
        "ndcg", "retrieval", "ndcg_at_k = DCG_k / IDCG_k, DCG_k = sum_{i<=k} grade_i / "
        "log2(i + 1) over relevant documents, IDCG_k the DCG of all relevant grades sorted "
        "descending and cut at k (0 when there is no relevant document)",
        cutoff="optional", trec=("ndcg", "ndcg_cut_{k}"), aliases=("ndcg_cut",),
        kernel=kernels.ndcg),
    MeasureInfo(
        "map", "retrieval", "AP = (1 / |rel|) * sum over relevant ranks i (<= k when cut) of "
        "P@i (0 when |rel| = 0); relevant documents never retrieved add 0",
        cutoff="optional", trec=("map", "map_cut_{k}"), aliases=("ap", "map_cut"),
        kernel=kernels.average_precision),
    MeasureInfo(
        "r_precision", "retrieval", "R-precision = |rel ∩ top-R| / R with R = |rel| "
        "(0 when R = 0)",
        trec=("Rprec",), aliases=("rprec", "r-precision"), kernel=kernels.r_precision),
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
        "item, any one alternative of a list item, markers removed (None without "
        "must_contain); unanswerable: 1 when declined"),
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
