"""The measure vocabulary: every measure ragassay reports, its one name, formula and kernel
(about 500 lines: the table lists every measure once, trec_eval's all_trec set included).

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
cutoff rule, its trec_eval names, print order and default cutoffs, whether a RAG question
row carries it, its accepted aliases, and for a retrieval measure the vectorised kernel
that computes it. A new retrieval measure is one kernel and one :class:`MeasureInfo`
given to :func:`register_measure` (at import or at run time); ``ragassay trec-eval``, the
RAG rows and ``ragassay measures`` read it from the table. Both the trec_eval-style
:func:`~.ir.evaluate` and the per-question RAG rows of :func:`~.retrieval.retrieval_scores`
call these kernels (:mod:`.kernels`); neither holds a formula of its own. "rel" below is
the set of relevant judged documents of the query, "top-k" its first k ranked documents.
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
RagRow = Literal["cut", "uncut"]
Param = Literal["rank", "fraction"]
Summary = Literal["mean", "geometric"]

TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
"""trec_eval's default cutoffs of ``P``, ``recall``, ``ndcg_cut`` and ``map_cut``."""


# --- the table ----------------------------------------------------------------------------


@dataclass(frozen=True)
class MeasureInfo:
    """A measure family: canonical name, group, formula, direction, cutoff rule, names.

    ``trec`` holds trec_eval's names for the family, ``{k}`` standing for the cutoff;
    ``trec_order`` its place in trec_eval's measure table, which is the order trec_eval
    prints (None: after trec_eval's own measures), ``trec_cut_order`` the place of its cut
    measure when trec_eval lists that apart (``ndcg_cut`` after ``ndcg``; None: beside the
    uncut one); ``trec_cutoffs`` the cutoffs ``-m <family>`` takes without parameters.
    ``rag``: a RAG question row carries the family at each of the run's cutoffs
    (``"cut"``: ``recall_at_5``) or once uncut (``"uncut"``: ``map``); None: not in the row.
    ``param``: what the cutoff is, a rank (an integer >= 1: ``P_5``) or a fraction (a
    number >= 0: ``iprec_at_recall_0.10``, printed with two decimals). ``summary``: how the
    per-query values make the mean, their ``"mean"`` or their ``"geometric"`` mean (exp of
    the mean of log(max(value, 0.00001)), trec_eval's ``gm_map``); ``per_query``: whether
    trec_eval prints a line per query (``gm_map`` prints only ``all``). ``judged``: the
    kernel reads the judged non-relevant documents too (``bpref``), which only the
    trec_eval join (:func:`ragassay.metrics.columnar.relevance_rows`) provides.
    ``graded``: the kernel reads every positive grade as gain whatever the relevance level
    (trec_eval's ``-l`` does not change nDCG); else a grade below the level counts 0.
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
    trec_order: float | None = None
    trec_cut_order: float | None = None
    trec_cutoffs: tuple[float, ...] = ()
    rag: RagRow | None = None
    param: Param = "rank"
    summary: Summary = "mean"
    per_query: bool = True
    judged: bool = False
    graded: bool = False

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

    def cutoff_text(self, cutoff: float) -> str:
        """A cutoff as trec_eval prints it: ``5``, or ``0.10`` for a fraction."""
        return f"{cutoff:.2f}" if self.param == "fraction" else str(cutoff)

    def trec_name(self, cutoff: float | None) -> str:
        """The name trec_eval prints for this family at ``cutoff``.

        A cut measure trec_eval lacks prints as ``<uncut name>_cut_<k>``
        (``recip_rank_cut_10`` for ``mrr_at_10``).
        """
        cut = [t for t in self.trec if "{k}" in t]
        uncut = [t for t in self.trec if "{k}" not in t] or [self.name]
        if cutoff is None:
            return uncut[0]
        k = self.cutoff_text(cutoff)
        return cut[0].format(k=k) if cut else f"{uncut[0]}_cut_{k}"


_BUILT_IN: tuple[MeasureInfo, ...] = (
    # retrieval: computed by a kernel from a ranking and relevance judgments
    MeasureInfo(
        "precision", "retrieval", "precision_at_k = |rel ∩ top-k| / k (divided by k even when "
        "fewer than k were retrieved)",
        cutoff="required", trec=("P_{k}",), aliases=("p",), kernel=kernels.precision,
        trec_order=11, trec_cutoffs=TREC_CUTOFFS, rag="cut"),
    MeasureInfo(
        "recall", "retrieval", "recall_at_k = |rel ∩ top-k| / |rel| (0 when |rel| = 0); "
        "uncut: over the whole ranking",
        cutoff="optional", trec=("recall", "recall_{k}"), kernel=kernels.recall,
        trec_order=13, trec_cutoffs=TREC_CUTOFFS, rag="cut"),
    MeasureInfo(
        "hit", "retrieval", "hit_at_k = 1 if any relevant document is in the top k, else 0",
        cutoff="required", trec=("success_{k}",), aliases=("success",), kernel=kernels.hit,
        trec_order=27, trec_cutoffs=(1, 5, 10), rag="cut"),
    MeasureInfo(
        "mrr", "retrieval", "mrr_at_k = 1 / rank of the first relevant document if that rank "
        "<= k, else 0; uncut: trec_eval recip_rank",
        cutoff="optional", trec=("recip_rank",),
        aliases=("recip_rank", "reciprocal_rank", "recip_rank_cut"), kernel=kernels.mrr,
        trec_order=9, trec_cut_order=9.5, rag="cut"),
    MeasureInfo(
        "ndcg", "retrieval", "ndcg_at_k = DCG_k / IDCG_k, DCG_k = sum_{i<=k} grade_i / "
        "log2(i + 1) over relevant documents, IDCG_k the DCG of all relevant grades sorted "
        "descending and cut at k (0 when there is no relevant document)",
        cutoff="optional", trec=("ndcg", "ndcg_cut_{k}"), aliases=("ndcg_cut",),
        kernel=kernels.ndcg, trec_order=21, trec_cut_order=24, trec_cutoffs=TREC_CUTOFFS,
        rag="cut", graded=True),
    MeasureInfo(
        "map", "retrieval", "AP = (1 / |rel|) * sum over relevant ranks i (<= k when cut) of "
        "P@i (0 when |rel| = 0); relevant documents never retrieved add 0",
        cutoff="optional", trec=("map", "map_cut_{k}"), aliases=("ap", "map_cut"),
        kernel=kernels.average_precision, trec_order=5, trec_cut_order=25,
        trec_cutoffs=TREC_CUTOFFS, rag="uncut"),
    MeasureInfo(
        "r_precision", "retrieval", "R-precision = |rel ∩ top-R| / R with R = |rel| "
        "(0 when R = 0)",
        trec=("Rprec",), aliases=("rprec", "r-precision"), kernel=kernels.r_precision,
        trec_order=7),
    MeasureInfo(
        "gm_map", "retrieval", "AP per query (as map); the mean is geometric: exp of the mean "
        "of log(max(AP, 0.00001)) (trec_eval prints only the mean)",
        trec=("gm_map",), aliases=("gm_ap",), kernel=kernels.average_precision, trec_order=6,
        summary="geometric", per_query=False),
    MeasureInfo(
        "bpref", "retrieval", "(1 / R) * sum over relevant retrieved documents of "
        "1 - min(n, R) / min(N, R), n the judged non-relevant documents ranked above it "
        "(the term is 1 when n = 0), N the judged non-relevant documents, R = |rel|; "
        "unjudged documents are skipped", trec=("bpref",), kernel=kernels.bpref,
        trec_order=8, judged=True),
    MeasureInfo(
        "infap", "retrieval", "inferred AP (Yilmaz and Aslam): each relevant retrieved "
        "document at rank j + 1 adds 1 / (j + 1) + (j / (j + 1)) * ((r + n + u) / j) * "
        "((r + e) / (r + n + 2e)), r, n, u the relevant, judged non-relevant and "
        "negatively judged documents above it, e = 0.00001 (1 at rank 1); over |rel|",
        trec=("infAP",), kernel=kernels.inferred_ap, trec_order=14, judged=True),
    MeasureInfo(
        "gm_bpref", "retrieval", "bpref per query; the mean is geometric (as gm_map)",
        trec=("gm_bpref",), kernel=kernels.bpref, trec_order=15, summary="geometric",
        per_query=False, judged=True),
    MeasureInfo(
        "rprec_mult", "retrieval", "precision at int(x * |rel| + 0.9) documents, x a "
        "multiple of R (0 when that is 0)", cutoff="required", trec=("Rprec_mult_{k}",),
        kernel=kernels.rprec_mult, trec_order=16, param="fraction",
        trec_cutoffs=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    MeasureInfo(
        "utility", "retrieval", "relevant retrieved - non-relevant retrieved (trec_eval's "
        "default coefficients 1, -1, 0, 0)", trec=("utility",), kernel=kernels.utility,
        trec_order=17),
    MeasureInfo(
        "11pt_avg", "retrieval", "the mean of iprec_at_recall at 0, 0.1, ..., 1",
        trec=("11pt_avg",), kernel=kernels.eleven_point_average, trec_order=18),
    MeasureInfo(
        "bing", "retrieval", "(1 / |rel|) * sum over relevant retrieved documents of "
        "1 / log2(2 + the documents above it that are not relevant)", trec=("binG",),
        kernel=kernels.binary_g, trec_order=19),
    MeasureInfo(
        "g", "retrieval", "normalized gain: each relevant retrieved document adds grade / "
        "log2(2 + C_i - S_i), C_i the ideal gains up to rank i (1 for a rank past them), "
        "S_i the gains retrieved up to rank i; over the sum of the ideal gains",
        trec=("G",), kernel=kernels.g_measure, trec_order=20, graded=True),
    MeasureInfo(
        "ndcg_rel", "retrieval", "nDCG averaged over the relevant documents: at each "
        "relevant retrieved rank i DCG_i / IDCG_i, each relevant document not retrieved "
        "DCG / IDCG of the whole ranking; over |rel|",
        trec=("ndcg_rel",), kernel=kernels.ndcg_rel, trec_order=22, graded=True),
    MeasureInfo(
        "rndcg", "retrieval", "nDCG averaged at the R levels: the ranks where the ideal "
        "gain changes, and the end of the ranking", trec=("Rndcg",), kernel=kernels.r_ndcg,
        trec_order=23, graded=True),
    MeasureInfo(
        "relative_p", "retrieval", "|rel ∩ top-k| / min(k, |rel|) (0 when |rel| = 0)",
        cutoff="required", trec=("relative_P_{k}",), kernel=kernels.relative_precision,
        trec_order=26, trec_cutoffs=TREC_CUTOFFS),
    MeasureInfo(
        "set_p", "retrieval", "relevant retrieved / retrieved (0 when none is)",
        trec=("set_P",), kernel=kernels.set_precision, trec_order=28),
    MeasureInfo(
        "set_relative_p", "retrieval", "relevant retrieved / min(retrieved, |rel|)",
        trec=("set_relative_P",), kernel=kernels.set_relative_precision, trec_order=29),
    MeasureInfo(
        "set_recall", "retrieval", "relevant retrieved / |rel|", trec=("set_recall",),
        kernel=kernels.set_recall, trec_order=30),
    MeasureInfo(
        "set_map", "retrieval", "relevant retrieved^2 / (retrieved * |rel|)",
        trec=("set_map",), kernel=kernels.set_map, trec_order=31),
    MeasureInfo(
        "set_f", "retrieval", "2 * P * R / (P + R) of the retrieved set (0 when P + R = 0)",
        trec=("set_F",), kernel=kernels.set_f, trec_order=32),
    MeasureInfo(
        "iprec_at_recall", "retrieval", "interpolated precision at recall level x: the "
        "largest P@j over the ranks j at or after the rank where int(x * |rel| + 0.9) "
        "relevant documents are found (trec_eval 9; 10 rounds x * |rel|); 0 when fewer are "
        "found", cutoff="required", trec=("iprec_at_recall_{k}",),
        kernel=kernels.iprec_at_recall, trec_order=10, param="fraction",
        trec_cutoffs=(0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)),
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
    # answer, from claims: computed per question by ragassay.claims.verify.check_answer
    MeasureInfo(
        "claim_precision", "answer", "answer claims entailed by the cited chunks / decided "
        "answer claims (deterministic checks, then the judge; None when none is decided)"),
    MeasureInfo(
        "claim_recall", "answer", "gold claims (sentences of expected_answer and "
        "support_claim) entailed by the answer / decided gold claims (None without them)"),
    MeasureInfo(
        "context_utilisation", "answer", "retrieved chunks holding the evidence of an "
        "entailed answer claim / retrieved chunks", aliases=("context_utilization",)),
    MeasureInfo(
        "noise_sensitivity", "answer", "answer claims entailed through a non-gold retrieved "
        "chunk and contradicted by the gold / claims decided against the gold (None without "
        "gold text)", higher_is_better=False),
)

_TABLE: list[MeasureInfo] = []  # in registration order: the built-in ones first
_INFO: dict[str, MeasureInfo] = {}
# Every accepted spelling of a family name (lower case) -> canonical name.
_ALIASES: dict[str, str] = {}
_generation = 0


def register_measure(info: MeasureInfo) -> MeasureInfo:
    """Add a measure family to the table (the one extension point of the measures).

    A retrieval family needs a ``kernel`` (see :mod:`.kernels`); it is then computed by
    :func:`ragassay.metrics.ir.evaluate`, printed by ``ragassay trec-eval -m <trec name>``
    at its ``trec_order``, and carried by the RAG question rows when ``rag`` is set.
    Raises ValueError when its name or an alias is taken, or a retrieval family has no
    kernel."""
    global _generation
    spellings = (info.name, *info.aliases)
    taken = [s for s in spellings if s in _ALIASES]
    if taken:
        raise ValueError(f"measure {info.name!r}: the name {taken[0]!r} is taken")
    if info.group == "retrieval" and info.kernel is None:
        raise ValueError(f"retrieval measure {info.name!r} needs a kernel")
    if any(s != s.lower() for s in spellings):
        raise ValueError(f"measure {info.name!r}: names and aliases are lower case")
    _TABLE.append(info)
    _INFO[info.name] = info
    _ALIASES.update(dict.fromkeys(spellings, info.name))
    _generation += 1
    return info


def unregister_measure(name: str) -> None:
    """Take a family registered by :func:`register_measure` out of the table again (a
    plugin's or test's clean-up); KeyError when it is not registered."""
    global _generation
    info = _INFO.pop(name)
    _TABLE.remove(info)
    for spelling in (info.name, *info.aliases):
        _ALIASES.pop(spelling, None)
    _generation += 1


def generation() -> int:
    """A number that changes whenever the table changes (for caches built from it)."""
    return _generation


for _info in _BUILT_IN:
    register_measure(_info)

RETRIEVAL_FAMILIES: tuple[str, ...] = tuple(i.name for i in _BUILT_IN if i.group == "retrieval")
"""The built-in retrieval measure families, in table order: precision, recall, hit, mrr,
ndcg, map, r_precision (:func:`list_measures` lists the registered ones too)."""
ANSWER_MEASURES: tuple[str, ...] = tuple(i.name for i in _BUILT_IN if i.group == "answer")
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
    cutoff: int | float | None = None

    def __post_init__(self) -> None:
        info = _INFO.get(self.name)
        if info is None:
            raise ValueError(_unknown_message(self.name, self.cutoff))
        if self.cutoff is not None:
            if info.param == "fraction":
                if isinstance(self.cutoff, bool) or not isinstance(self.cutoff, (int, float)) \
                        or not self.cutoff >= 0 or self.cutoff == float("inf"):
                    raise ValueError(f"{self.name}: the level must be a number >= 0, got "
                                     f"{self.cutoff!r}")
                object.__setattr__(self, "cutoff", float(self.cutoff))
            elif isinstance(self.cutoff, bool) or not isinstance(self.cutoff, int):
                raise ValueError(f"{self.name}: cutoff must be an integer, got {self.cutoff!r}")
            elif self.cutoff <= 0:
                raise ValueError(f"{self.name}: cutoff must be >= 1, got {self.cutoff}")
            if not info.takes_cutoff:
                raise ValueError(f"{self.name} takes no cutoff (got {self.cutoff})")
        elif info.needs_cutoff:
            raise ValueError(f"{self.name} needs a cutoff, e.g. {self.name}_at_10")

    def __str__(self) -> str:
        if self.cutoff is None:
            return self.name
        if isinstance(self.cutoff, float):  # a fraction: 0.1, 0.25, 1 (no trailing zeros)
            return f"{self.name}_at_{self.cutoff:g}"
        return f"{self.name}_at_{self.cutoff}"

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
# a fraction: "iprec_at_recall_at_0.1", trec_eval's "iprec_at_recall_0.10"
_DECIMAL_SUFFIX = (re.compile(r"^(?P<base>.+?)_at_(?P<cutoff>\d*\.\d+)$"),
                   re.compile(r"^(?P<base>.+?)_(?P<cutoff>\d*\.\d+)$"))


def _split(lowered: str) -> tuple[str, str | None]:
    """(family spelling, cutoff text or None) of a lower-cased measure name."""
    if "@" in lowered:
        base, cutoff = lowered.split("@", 1)
        return base, cutoff
    for pattern in _DECIMAL_SUFFIX:
        if (match := pattern.match(lowered)) and match["base"] in _ALIASES:
            return match["base"], match["cutoff"]
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
    cutoff: int | float | None = None
    if cutoff_text is not None:
        try:
            cutoff = (float(cutoff_text) if _INFO[name].param == "fraction"
                      else int(cutoff_text))
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
    retrieval = ", ".join(i.name for i in list_measures("retrieval"))
    answer = ", ".join(i.name for i in list_measures("answer"))
    return f"unknown measure {text!r}; {hint}valid measures: {retrieval} (retrieval), " \
           f"{answer} (answer)"
