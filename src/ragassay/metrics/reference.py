"""The reference implementation of the IR measures: trec_eval's definitions as plain dicts
and loops, one query at a time, for checking (the oracle of ``tests/differential``).

Nothing here is fast, and nothing on the main path calls it: :func:`ragassay.metrics.ir.
evaluate` and ``ragassay trec-eval`` compute the same values with the measure kernels
(:mod:`.kernels`) over numpy columns (:mod:`.columnar`). This module states what those
values are, in the shape of trec_eval's C code, so a reader can check a formula line by
line and a test can compare the two on any input.

A query's judged ranking (:func:`judged_ranking`) is trec_eval's ``res_rels``: the run's
documents sorted by score descending, ties by document id descending (byte-wise), cut to
``max_docs``; each document's value its grade when judged with a grade >= 0,
:data:`UNJUDGED` when judged with a negative grade (trec_eval: in the pool, not judged),
:data:`NONPOOL` when not judged; with ``judged_only`` the :data:`UNJUDGED` and
:data:`NONPOOL` documents are dropped. ``level``: grade >= level is relevant.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

NONPOOL = -1
"""A retrieved document that is not judged."""
UNJUDGED = -2
"""A retrieved document judged with a negative grade (trec_eval: in the pool, unjudged)."""
MIN_GEO_MEAN = 0.00001
"""trec_eval's floor of a value before its logarithm (gm_map, gm_bpref)."""
IPREC_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True)
class JudgedRanking:
    """One query's ranking as trec_eval's measures read it (see the module docstring).

    ``rels``: the value of each ranked document, in rank order; ``num_rel``: judged
    documents with grade >= level; ``rel_levels``: grade -> number of judged documents
    with that grade (grades >= 0)."""

    rels: tuple[int, ...]
    num_rel: int
    rel_levels: Mapping[int, int]
    level: int

    @property
    def num_ret(self) -> int:
        return len(self.rels)

    @property
    def num_rel_ret(self) -> int:
        return sum(1 for r in self.rels if r >= self.level)

    @property
    def num_nonrel(self) -> int:
        """Judged documents with 0 <= grade < level."""
        return sum(n for g, n in self.rel_levels.items() if g < self.level)


def rank(scores: Mapping[str, float]) -> list[str]:
    """trec_eval's order: score descending, ties by document id descending (byte-wise)."""
    return sorted(scores, key=lambda d: (-scores[d], _descending(d)))


def _descending(docid: str) -> tuple[int, ...]:
    return tuple(-b for b in docid.encode()) + (1,)  # a prefix sorts after its extensions


def judged_ranking(judgments: Mapping[str, int], scores: Mapping[str, float], *,
                   level: int = 1, max_docs: int | None = None,
                   judged_only: bool = False) -> JudgedRanking:
    """The :class:`JudgedRanking` of one query (see the module docstring)."""
    ranked = rank(scores)
    if max_docs is not None:
        ranked = ranked[:max_docs]
    rels = []
    for doc in ranked:
        if doc not in judgments:
            rels.append(NONPOOL)
        elif judgments[doc] < 0:
            rels.append(UNJUDGED)
        else:
            rels.append(int(judgments[doc]))
    if judged_only:
        rels = [r for r in rels if r >= 0]
    levels: dict[int, int] = {}
    for grade in judgments.values():
        if grade >= 0:
            levels[int(grade)] = levels.get(int(grade), 0) + 1
    num_rel = sum(1 for g in judgments.values() if g >= level)
    return JudgedRanking(tuple(rels), num_rel, levels, level)


# --- the measures of one query, as trec_eval computes them ---------------------------------


def average_precision(rr: JudgedRanking, cutoff: int | None = None) -> float:
    """map (map_cut_k: only ranks <= k count)."""
    found, total = 0, 0.0
    for i, rel in enumerate(rr.rels[:cutoff]):
        if rel >= rr.level:
            found += 1
            total += found / (i + 1)
    return total / rr.num_rel if rr.num_rel else 0.0


def gm_map_log(rr: JudgedRanking) -> float:
    """The per-query term of gm_map: log(max(AP, MIN_GEO_MEAN)); gm_map is exp of their
    mean."""
    return math.log(max(average_precision(rr), MIN_GEO_MEAN))


def r_precision(rr: JudgedRanking) -> float:
    if not rr.num_rel:
        return 0.0
    return sum(1 for r in rr.rels[:rr.num_rel] if r >= rr.level) / rr.num_rel


def bpref(rr: JudgedRanking) -> float:
    """Each relevant retrieved document adds 1 - min(n, R) / min(N, R), n the judged
    non-relevant documents ranked above it (1 when n = 0), N all judged non-relevant ones,
    R = num_rel; the sum over R."""
    nonrel_so_far, total = 0, 0.0
    for rel in rr.rels:
        if rel < 0:
            continue
        if rel < rr.level:
            nonrel_so_far += 1
        elif nonrel_so_far > 0:
            total += 1.0 - min(nonrel_so_far, rr.num_rel) / min(rr.num_nonrel, rr.num_rel)
        else:
            total += 1.0
    return total / rr.num_rel if rr.num_rel else total


def reciprocal_rank(rr: JudgedRanking, cutoff: int | None = None) -> float:
    for i, rel in enumerate(rr.rels[:cutoff]):
        if rel >= rr.level:
            return 1.0 / (i + 1)
    return 0.0


def iprec_at_recall(rr: JudgedRanking, levels: Sequence[float] = IPREC_LEVELS,
                    version: int = 9) -> list[float]:
    """Interpolated precision at each recall level: the largest P@j over the ranks j at or
    after the rank where the relevant documents found reach ``level * num_rel``. trec_eval
    9 takes that number as ``int(level * num_rel + 0.9)``, 10 rounds it."""
    cutoffs = [int(p * rr.num_rel + 0.9) if version < 10 else _round_half_away(p * rr.num_rel)
               for p in levels]
    out = [0.0] * len(levels)
    num_rel_ret, num_ret = rr.num_rel_ret, rr.num_ret
    cut = len(levels) - 1
    while cut >= 0 and cutoffs[cut] > num_rel_ret:
        cut -= 1
    precis = num_rel_ret / num_ret if num_ret else math.nan
    int_precis = precis
    rel_so_far = num_rel_ret
    i = num_ret
    while i > 0 and rel_so_far > 0:
        precis = rel_so_far / i
        int_precis = max(int_precis, precis)
        if rr.rels[i - 1] >= rr.level:
            while cut >= 0 and rel_so_far == cutoffs[cut]:
                out[cut] = int_precis
                cut -= 1
            rel_so_far -= 1
        i -= 1
    while cut >= 0:
        out[cut] = int_precis
        cut -= 1
    return out


def _round_half_away(x: float) -> int:
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def utility(rr: JudgedRanking, coefficients: tuple[float, float, float, float] =
            (1.0, -1.0, 0.0, 0.0)) -> float:
    """trec_eval's m_utility.c: ``a * rel_ret + b * nonrel_ret + c * rel_nonret +
    d * nonrel_nonret`` with its default coefficients 1, -1, 0, 0. ``nonrel_ret`` is every
    retrieved document that is not relevant (unjudged ones included: ``num_ret -
    num_rel_ret``); ``d`` needs the collection's size, which no qrels file holds, so only
    ``d = 0`` is accepted. An empty ranking: 0."""
    a, b, c, d = coefficients
    if d:
        raise ValueError("utility's d needs the collection size; the reference takes d = 0")
    rel_ret = rr.num_rel_ret
    return a * rel_ret + b * (rr.num_ret - rel_ret) + c * (rr.num_rel - rel_ret)


def precision(rr: JudgedRanking, cutoff: int) -> float:
    return sum(1 for r in rr.rels[:cutoff] if r >= rr.level) / cutoff


def recall(rr: JudgedRanking, cutoff: int | None = None) -> float:
    found = sum(1 for r in rr.rels[:cutoff] if r >= rr.level)
    return found / rr.num_rel if rr.num_rel else 0.0


def success(rr: JudgedRanking, cutoff: int) -> float:
    return 1.0 if any(r >= rr.level for r in rr.rels[:cutoff]) else 0.0


def ndcg(rr: JudgedRanking, cutoff: int | None = None) -> float:
    """nDCG with the grade as gain (every judged grade > 0, whatever ``level``), the ideal
    ranking all judged grades descending; cut at ``cutoff`` on both sides."""
    dcg = sum(rel / math.log2(i + 2) for i, rel in enumerate(rr.rels[:cutoff]) if rel > 0)
    ideal_grades = sorted((g for g, n in rr.rel_levels.items() for _ in range(n) if g > 0),
                          reverse=True)[:cutoff]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal_grades))
    return dcg / idcg if idcg > 0 else 0.0


# --- what trec_eval prints ----------------------------------------------------------------

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
            "bpref", "recip_rank", "iprec_at_recall", "P")
"""trec_eval's default measures, in its print order."""


def per_query_values(rr: JudgedRanking, measure: str, version: int = 9
                     ) -> list[tuple[str, float]]:
    """(printed name, value) of one trec_eval measure (no parameters) for one query."""
    if measure in ("num_ret", "num_rel", "num_rel_ret"):
        return [(measure, float(getattr(rr, measure)))]
    simple = {"map": average_precision, "gm_map": gm_map_log, "Rprec": r_precision,
              "bpref": bpref, "recip_rank": reciprocal_rank, "ndcg": ndcg,
              "utility": utility}
    if measure in simple:
        return [(measure, simple[measure](rr))]
    if measure == "iprec_at_recall":
        return [(f"iprec_at_recall_{p:.2f}", v)
                for p, v in zip(IPREC_LEVELS, iprec_at_recall(rr, version=version),
                                strict=True)]
    cut = {"P": precision, "recall": recall, "ndcg_cut": ndcg, "map_cut": average_precision,
           "success": success}
    if measure in cut:
        cutoffs = (1, 5, 10) if measure == "success" else CUTOFFS
        return [(f"{measure}_{k}", cut[measure](rr, k)) for k in cutoffs]
    raise ValueError(f"the reference has no measure {measure!r}")


def trec_eval_text(qrels: Mapping[str, Mapping[str, int]],
                   run: Mapping[str, Mapping[str, float]], measures: Sequence[str] = OFFICIAL,
                   *, runid: str = "", per_query: bool = False, complete: bool = False,
                   level: int = 1, max_docs: int | None = None, judged_only: bool = False,
                   version: int = 9) -> str:
    """What trec_eval prints for these measures (names without parameters, in trec_eval's
    print order) and options: per query (``-q``) in byte-wise query order, then the
    ``all`` lines; ``complete`` (``-c``) averages over every judged query, a query missing
    from the run counting 0 (for gm_map: log(MIN_GEO_MEAN)). ``runid``: the tag of the
    run's last line. ValueError when no query has both judgments and results."""
    queries = sorted((q for q in qrels if qrels[q] and q in run), key=str.encode)
    judged = sorted((q for q in qrels if qrels[q]), key=str.encode)
    if version >= 10 and not complete and len(queries) < len(judged):
        raise ValueError("a judged query is not in the run")
    if not queries and not (version >= 10 and complete and judged):
        raise ValueError("no query has both judgments and results")
    shown = judged if complete else queries
    present = set(queries)
    if version >= 10:  # -c -q: a missing query prints its lines, the 0s of the means
        queries = shown
    lines: list[str] = []
    sums: dict[str, float] = {}
    names: list[str] = []
    for qid in queries:
        rr = judged_ranking(qrels[qid], run.get(qid, {}), level=level, max_docs=max_docs,
                            judged_only=judged_only)
        for measure in measures:
            if measure in ("runid", "num_q"):
                continue
            for name, value in per_query_values(rr, measure, version):
                if qid not in present and not name.startswith("num_"):
                    value = math.log(MIN_GEO_MEAN) if measure == "gm_map" else 0.0
                if name not in sums:
                    names.append(name)
                    sums[name] = 0.0
                sums[name] += value
                if per_query and measure != "gm_map":
                    lines.append(_line(name, qid, value))
    missing = len(shown) - len(queries)  # 9: not evaluated, counted 0 in the means
    for measure in measures:
        if measure == "runid":
            lines.append(f"{'runid':<22}\tall\t{runid}")
        elif measure == "num_q":
            lines.append(_line("num_q", "all", len(shown)))
        else:
            for name in [n for n in names if _family_of(n) == measure]:
                if measure == "gm_map":
                    total = sums[name] + missing * math.log(MIN_GEO_MEAN)
                    lines.append(_line(name, "all", math.exp(total / len(shown))))
                elif measure == "num_rel" and complete:
                    total = sums[name] + sum(
                        sum(1 for g in qrels[q].values() if g >= level)
                        for q in shown if q not in queries)
                    lines.append(_line(name, "all", total))
                elif name.startswith("num_"):
                    lines.append(_line(name, "all", sums[name]))
                else:
                    lines.append(_line(name, "all", sums[name] / len(shown)))
    return "".join(line + "\n" for line in lines)


def _family_of(name: str) -> str:
    for family in ("iprec_at_recall", "ndcg_cut", "map_cut", "success", "recall", "P"):
        if name.startswith(family + "_"):
            return family
    return name


def _line(name: str, qid: str, value: float) -> str:
    if name.startswith("num_"):
        return f"{name:<22}\t{qid}\t{int(value)}"
    return f"{name:<22}\t{qid}\t{c_float(value)}"


def c_float(value: float) -> str:
    """``printf("%6.4f")`` as trec_eval prints a value: a NaN (0 / 0, as when ``-J``
    leaves a query no document) prints ``  -nan``, the sign x86 gives it."""
    return "  -nan" if math.isnan(value) else f"{value:6.4f}"
