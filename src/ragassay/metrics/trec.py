"""TREC files: read and write qrels and runs, and print results in trec_eval's layout.

- qrels: one judgment per line, ``qid iter docid grade`` (``iter`` is ignored, as in
  trec_eval); the grade is an integer (``1.0`` reads as 1).
- run: one retrieved document per line, ``qid Q0 docid rank score tag``, further columns
  ignored. As in trec_eval, only the score orders the documents (the ``rank`` column is
  ignored; see :func:`ragassay.metrics.ir.rank_documents` for the tie-break).

Columns are separated by any whitespace; blank lines and ``#`` comment lines are skipped;
the path ``-`` reads standard input; files are UTF-8. A malformed line raises
:class:`~ragassay.errors.InputError` with the file, line and field. A document judged or
retrieved twice for one query is refused (trec_eval refuses it too).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from .columnar import Table, join, read_table, relevance_rows
from .ir import Qrels, Run, kernel_values, mean_of, qrels_table, rank_documents, run_table
from .kernels import Relevance
from .measures import Measure, generation, list_measures, measure_info, parse_measure
from .reference import c_float


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Read a TREC qrels file into {qid: {docid: grade}} (file order kept)."""
    t = read_table(path, "qrels")
    qrels: dict[str, dict[str, int]] = {}
    for qid, docid, grade in zip(t.qid.tolist(), t.docid.tolist(), t.value.tolist(),
                                 strict=True):
        qrels.setdefault(qid.decode(), {})[docid.decode()] = int(grade)
    return qrels


def read_run(path: str | Path) -> dict[str, dict[str, float]]:
    """Read a TREC run file into {qid: {docid: score}} (file order kept; tag ignored)."""
    t = read_table(path, "run")
    run: dict[str, dict[str, float]] = {}
    for qid, docid, score in zip(t.qid.tolist(), t.docid.tolist(), t.value.tolist(),
                                 strict=True):
        run.setdefault(qid.decode(), {})[docid.decode()] = score
    return run


def write_qrels(qrels: Qrels, path: str | Path) -> None:
    """Write qrels as ``qid 0 docid grade`` lines, queries and documents in sorted order."""
    from ..atomic import write_text  # not at import: `ragassay trec-eval` starts without it

    write_text(path, "".join(f"{qid} 0 {docid} {int(qrels[qid][docid])}\n"
                             for qid in sorted(qrels, key=str)
                             for docid in sorted(qrels[qid], key=str)))


def write_run(run: Run, path: str | Path, *, tag: str = "ragassay") -> None:
    """Write a run as ``qid Q0 docid rank score tag`` lines, queries in sorted order.

    Documents are written in ranked order (score descending, ties by doc id descending, as
    trec_eval reads them). A query given as a ranked list of doc ids gets the scores
    n, n - 1, ..., 1, so reading the file back gives the same ranking.
    """
    from ..atomic import write_text

    if not tag or any(c.isspace() for c in tag):
        raise ValueError(f"run tag must be one non-empty word, got {tag!r}")
    lines = []
    for qid in sorted(run, key=str):
        entry = run[qid]
        if isinstance(entry, Mapping):
            ranked = [(doc, float(entry[doc])) for doc in rank_documents(entry)]
        else:
            ranked = [(doc, float(len(entry) - i)) for i, doc in enumerate(entry)]
        lines += [f"{qid} Q0 {doc} {rank} {score!r} {tag}\n"
                  for rank, (doc, score) in enumerate(ranked, start=1)]
    write_text(path, "".join(lines))


def format_results(
    results: Mapping[str, Mapping[str, object]],
    *,
    per_query: bool = False,
    digits: int = 4,
) -> str:
    """Format :func:`ragassay.metrics.ir.evaluate` output as trec_eval prints it.

    One line per measure, ``<trec_eval name padded to 22>\\t<qid or all>\\t<value>``, e.g.
    ``ndcg_cut_5             \\tall\\t0.6131``. With ``per_query`` (trec_eval ``-q``) each
    query's lines come first, queries in sorted order, then the ``all`` lines. A mean of
    None (no query evaluated) prints as 0. Measures print in the order given;
    :func:`trec_eval_text` is the whole of ``ragassay trec-eval`` (trec_eval's measure
    order, counts, ``-c`` without lines for missing queries, the other options).
    """
    mean = results["mean"]
    names = {key: parse_measure(key).trec_name for key in mean}
    lines: list[str] = []
    if per_query:
        rows: Mapping[str, Mapping[str, object]] = results["per_query"]  # type: ignore[assignment]
        for qid in sorted(rows, key=str):
            lines.extend(_lines_for(names, rows[qid], str(qid), digits))
    lines.extend(_lines_for(names, mean, "all", digits))
    return "".join(line + "\n" for line in lines)


def _lines_for(
    names: Mapping[str, str], values: Mapping[str, object], qid: str, digits: int
) -> Sequence[str]:
    out = []
    for key, trec_name in names.items():
        value = values[key]
        number = 0.0 if value is None else float(value)  # type: ignore[arg-type]
        out.append(f"{trec_name:<22}\t{qid}\t{number:.{digits}f}")
    return out


# --- the `ragassay trec-eval` command: trec_eval's measure names, options and output --------

SUCCESS_CUTOFFS = (1, 5, 10)
"""trec_eval's default cutoffs of ``success``."""
COUNTS = ("num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret")
"""trec_eval's counts: num_q in the ``all`` lines only; the others per query, summed."""
# their places in trec_eval's measure table (relstring: per query only, between P and recall)
_COUNT_ORDER = {"runid": 0, "num_q": 1, "num_ret": 2, "num_rel": 3, "num_rel_ret": 4,
                "relstring": 12, "num_nonrel_judged_ret": 33}
RELSTRING_LENGTH = 10


def trec_families() -> dict[str, tuple[str, tuple[float, ...] | None]]:
    """trec_eval family name -> (ragassay family, default cutoffs or None for an uncut
    measure), read from the measure table: a trec name with ``{k}`` (``P_{k}``) gives the
    cut family ``P`` with the table's ``trec_cutoffs``; one without (``map``) an uncut
    family."""
    key = generation()
    cached = _FAMILIES.get(key)
    if cached is None:
        families: dict[str, tuple[str, tuple[float, ...] | None]] = {}
        infos = list_measures("retrieval")
        for info in infos:
            for name in info.trec:
                if "{k}" in name:
                    families[name.replace("_{k}", "").replace("{k}", "")] = (
                        info.name, info.trec_cutoffs or None)
        for info in infos:
            for name in info.trec:
                if "{k}" not in name:
                    families.setdefault(name, (info.name, None))
        _FAMILIES.clear()
        cached = _FAMILIES[key] = families
    return cached


_FAMILIES: dict[int, dict[str, tuple[str, tuple[float, ...] | None]]] = {}

OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
            "bpref", "recip_rank", "iprec_at_recall", "P")
"""trec_eval's ``official`` set, its default without ``-m``."""
ALL_TREC = (*OFFICIAL, "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility",
            "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut",
            "relative_P", "success", "set_P", "set_relative_P", "set_recall", "set_map",
            "set_F", "num_nonrel_judged_ret")
"""trec_eval's ``all_trec`` set: every measure of its table that reads qrels and a run."""
SET = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
       "set_relative_P", "set_recall", "set_map", "set_F")
"""trec_eval's ``set`` set: the measures of the retrieved set, not of its order."""
NICKNAMES = {"official": OFFICIAL, "all_trec": ALL_TREC, "set": SET}
PREFS = ("prefs", "all_prefs", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
         "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg",
         "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
         "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp")
"""trec_eval's preference measures: they read a preferences file (``-R prefs``), not
qrels."""
JUDGMENT_GROUPS = ("qrels_jg", "P_avgjg", "map_avgjg", "Rprec_mult_avgjg")
"""trec_eval's measures over judgment groups: they read qrels with a judgment-group column
(``-R qrels_jg``: ``qid jg docid rel``)."""
TREC_ONLY = ("runid", "relstring", *COUNTS)
"""What ``ragassay trec-eval`` prints beside the measures of the table: the run's tag, each
query's string of its first ten documents' grades, and the counts."""

TrecMeasure = Measure | str  # a Measure, or one of TREC_ONLY


def trec_eval_measures(specs: Sequence[str]) -> list[TrecMeasure]:
    """The measures of ``-m`` options, expanded and ordered as trec_eval prints them.

    A trec_eval family without parameters takes trec_eval's default cutoffs (``P`` ->
    ``P_5`` .. ``P_1000``, ``success`` -> ``success_1,5,10``), ``name.k1,k2`` lists cutoffs,
    ``official`` (the default when ``specs`` is empty), ``all_trec`` and ``set`` are
    trec_eval's sets (:data:`NICKNAMES`); other spellings are read by :func:`parse_measure`
    (``mrr@10``, ``ndcg_cut_5``). As in trec_eval, a family asked for more than once
    takes the cutoffs of its first ``-m`` with parameters (``-m P -m P.5 -m P.10`` prints
    ``P_5`` only), and a cutoff listed twice is an error. Raises ValueError naming an
    unknown or unsupported measure.
    """
    families_known = trec_families()
    families: list[str] = []  # trec_eval families asked for, each once
    params: dict[str, str] = {}  # family -> the parameters of its first -m with any
    chosen: list[TrecMeasure] = []
    for spec in specs or ["official"]:
        name, _, given = spec.strip().partition(".")
        members = NICKNAMES[name] if name in NICKNAMES and not given else (name,)
        for member in members:
            if member in families_known:
                families += [member] if member not in families else []
                if given and member not in params:
                    params[member] = given
            else:
                chosen += [m for m in _expand(spec.strip() if member == name else member)
                           if m not in chosen]
    for name in families:
        chosen += [m for m in _family(name, params.get(name)) if m not in chosen]
    return sorted(chosen, key=_order_key)


def _family(name: str, params: str | None) -> list[TrecMeasure]:
    family, defaults = trec_families()[name]
    if params is None:
        return [Measure(family, k) for k in defaults] if defaults else [Measure(family)]
    spec = f"{name}.{params}"
    info = measure_info(family)
    # an uncut trec_eval name takes cutoffs only when trec_eval has no cut name for the
    # family (recip_rank.10 is ragassay's mrr_at_10, printed recip_rank_cut_10)
    if defaults is None and (not info.takes_cutoff or any("{k}" in t for t in info.trec)):
        raise ValueError(f"measure {spec!r}: {name} takes no cutoff")
    cutoffs: list[TrecMeasure] = []
    for text in params.split(","):
        try:
            cutoff = Measure(family, float(text) if info.param == "fraction" else int(text))
        except ValueError:
            what = "a number >= 0" if info.param == "fraction" else "an integer >= 1"
            raise ValueError(f"measure {spec!r}: cutoff {text!r} is not {what}") from None
        if cutoff in cutoffs:
            raise ValueError(f"measure {spec!r}: cutoff {text} is listed twice")
        cutoffs.append(cutoff)
    return cutoffs


def _expand(spec: str) -> list[TrecMeasure]:
    """A measure that is not a trec_eval family: a count, or a ragassay spelling."""
    name = spec.partition(".")[0]
    if name in TREC_ONLY and spec == name:
        return [name]
    if name in JUDGMENT_GROUPS:
        raise ValueError(f"trec_eval measure {name!r} reads qrels with judgment groups "
                         "(trec_eval -R qrels_jg: 'qid jg docid rel' lines, several "
                         "judges per document); ragassay trec-eval reads plain qrels")
    if name in PREFS:
        raise ValueError(f"trec_eval measure {name!r} reads preference judgments (trec_eval "
                         "-R prefs: a file of 'qid jg docid rel_level' lines), not qrels; "
                         "ragassay trec-eval reads qrels only")
    return [parse_measure(spec)]


_LAST = 1e9  # a measure trec_eval lacks prints after trec_eval's own


def _order_key(m: TrecMeasure) -> tuple[float, float]:
    """trec_eval's print order: its measure table's (the table's ``trec_order``), then
    the cutoff."""
    if isinstance(m, str):
        return (_COUNT_ORDER[m], 0)
    info = m.info
    order = info.trec_order if info.trec_order is not None else _LAST
    if m.cutoff is None:
        return (order, 0)
    return (info.trec_cut_order if info.trec_cut_order is not None else order, m.cutoff)


def trec_eval_text(
    qrels: Mapping[str, Mapping[str, int]] | Table,
    run: Mapping[str, Mapping[str, float]] | Table,
    measures: Sequence[TrecMeasure],
    *,
    per_query: bool = False,
    complete: bool = False,
    summary: bool = True,
    level: int = 1,
    max_docs: int | None = None,
    judged_only: bool = False,
    version: int = 9,
    runid: str | None = None,
) -> str:
    """What trec_eval prints for these files and options (``-q``, ``-c``, ``-n``, ``-l``,
    ``-M``, ``-J``), measures in the order given (see :func:`trec_eval_measures`), by the
    rules of trec_eval ``version`` (9 or 10). ``runid``: what ``runid`` prints (default:
    the tag of the run file's last line, "" for a dict). ``-M``
    cuts each ranking to its top ``max_docs`` first; ``-J`` then drops the documents not
    judged or judged with a negative grade, as trec_eval does. ``qrels`` and ``run`` are
    dicts or the columns :func:`~ragassay.metrics.columnar.read_table` reads.

    Each query's lines come first with ``-q`` (queries in trec_eval's order, byte-wise
    sorted ids; with ``-c`` a query missing from the run counts 0 in the means and has no
    lines of its own in version 9, lines of zeros in 10), then the ``all`` lines unless
    ``summary`` is False. Version 10 also refuses a judged query missing from the run
    without ``-c``, prints ``-c`` output when no judged query is in the run, and rounds
    ``iprec_at_recall``'s and ``11pt_avg``'s numbers of relevant documents. Values print
    ``%.4f``, counts as integers. Raises ValueError when no query is evaluated.
    """
    if level < 1:
        raise ValueError(f"relevance level must be >= 1, got {level}")
    if max_docs is not None and max_docs < 1:
        raise ValueError(f"max docs per query must be >= 1, got {max_docs}")
    q_cols = qrels if isinstance(qrels, Table) else qrels_table(qrels)
    if isinstance(run, Table):
        j = join(q_cols, run)
    else:  # a query of the run with no document is still in the run
        r_cols = run_table(run)
        j = join(q_cols, r_cols, run_queries=r_cols.qid[:0] if not run else
                 np.array([str(q).encode() for q in run]))
    if version not in (9, 10):
        raise ValueError(f"trec_eval version must be 9 or 10, got {version}")
    judged = np.flatnonzero(j.judged_query)
    evaluated = judged[j.in_run[judged]]
    shown = judged if complete else evaluated  # the queries of the means
    if version >= 10 and not complete and len(evaluated) < len(judged):
        missing = j.qids[judged[~j.in_run[judged]][0]].decode()
        raise ValueError(f"judged query {missing!r} is not in the run (trec_eval 10: "
                         "'result qid not found'); -c counts it 0")
    if not len(evaluated) and not (version >= 10 and complete and len(judged)):
        raise ValueError("no query has both judgments and results")
    whole, depths, num_rel, rel_ret = relevance_rows(
        j, shown, level=level, graded=False, max_docs=max_docs, judged_only=judged_only)
    counts = {"num_q": np.ones(len(shown), dtype=np.int64), "num_ret": depths,
              "num_rel": num_rel, "num_rel_ret": rel_ret,
              "num_nonrel_judged_ret": np.bincount(whole.nonrel_query, minlength=len(shown))}
    strings = _relstrings(whole, depths) if "relstring" in measures else []
    if runid is None:
        runid = run.tag if isinstance(run, Table) else ""
    values: dict[str, np.ndarray] = {}
    scored = [m for m in measures if not isinstance(m, str)]
    at = np.searchsorted(shown, evaluated)
    for graded in (True, False):
        chosen = [m for m in scored if m.info.graded == graded]
        if chosen:
            relevance = relevance_rows(j, evaluated, level=level, graded=graded,
                                       max_docs=max_docs, judged_only=judged_only,
                                       version=version)[0]
            for name, column in kernel_values(relevance, chosen).items():
                values[name] = np.zeros(len(shown))
                values[name][at] = column
    columns = [(m, counts.get(m, counts["num_q"]) if isinstance(m, str) else values[str(m)])
               for m in measures]
    lines: list[str] = []
    if per_query:
        qids = [q.decode() for q in j.qids[shown].tolist()]
        shown_in_run = j.in_run[shown].tolist()
        listed = [(m, column.tolist()) for m, column in columns
                  if m not in ("num_q", "runid") and (isinstance(m, str) or m.info.per_query)]
        for i, qid in enumerate(qids):
            if shown_in_run[i] or version >= 10:  # 10 prints -c's missing queries too
                lines.extend(f"{'relstring':<22}\t{qid}\t'{strings[i]}'" if m == "relstring"
                             else _line(m, qid, column[i]) for m, column in listed)
    if summary:
        for m, column in columns:
            if m == "relstring":
                continue
            if m == "runid":
                lines.append(f"{'runid':<22}\tall\t{runid}")
            else:
                lines.append(_line(m, "all", int(column.sum()) if isinstance(m, str)
                                   else mean_of(m, column)))
    return "".join(line + "\n" for line in lines)


_REL_CHARS = np.array([*"0123456789", ">", "-", "."])  # grade 0..9, > 9, not judged, < 0


def _relstrings(r: Relevance, depths: np.ndarray) -> list[str]:
    """trec_eval's relstring of each query: one character per document of its top ten,
    its grade (``>`` above 9), ``-`` not judged, ``.`` judged with a negative grade."""
    n = RELSTRING_LENGTH
    code = np.full((r.queries, n), 11, dtype=np.int64)
    for query, rank, value in ((r.hit_query, r.hit_rank, np.minimum(r.hit_grade, 10)),
                               (r.nonrel_query, r.nonrel_rank, r.nonrel_grade),
                               (r.unjudged_query, r.unjudged_rank, np.full(len(
                                   r.unjudged_rank), 12))):
        top = rank < n
        code[query[top], rank[top]] = value[top].astype(np.int64)
    chars = _REL_CHARS[code]
    return ["".join(row[:d]) for row, d in zip(chars.tolist(),
                                               np.minimum(depths, n).tolist(), strict=True)]


def _line(m: TrecMeasure, qid: str, value: float) -> str:
    if isinstance(m, str):
        return f"{m:<22}\t{qid}\t{int(value)}"
    return f"{m.trec_name:<22}\t{qid}\t{c_float(value)}"
