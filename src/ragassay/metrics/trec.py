"""TREC files: read and write qrels and runs, and print results in trec_eval's layout.

- qrels: one judgment per line, ``qid iter docid grade`` (``iter`` is ignored, as in
  trec_eval); the grade is an integer.
- run: one retrieved document per line, ``qid Q0 docid rank score tag``. As in trec_eval,
  only the score orders the documents (the ``rank`` column is ignored; see
  :func:`ragassay.metrics.ir.rank_documents` for the tie-break).

Columns are separated by any whitespace; blank lines are skipped. A malformed line raises
:class:`~ragassay.errors.InputError` with the file, line and field. A document judged or
retrieved twice for one query is refused (trec_eval refuses it too).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from ..atomic import write_text
from ..errors import InputError
from .ir import Qrels, Run, rank_documents
from .measures import parse_measure

_QRELS_COLUMNS = "qid iter docid grade"
_RUN_COLUMNS = "qid Q0 docid rank score tag"


def _lines(path: Path, columns: str) -> Iterator[tuple[int, list[str]]]:
    """Yield (line number, fields) for each non-blank line with the expected column count."""
    if not path.is_file():
        raise InputError(path, "file not found")
    expected = len(columns.split())
    with path.open(encoding="utf-8") as fh:
        for line_no, raw in enumerate(fh, start=1):
            fields = raw.split()
            if not fields:
                continue
            if len(fields) != expected:
                raise InputError(
                    path,
                    f"expected {expected} columns '{columns}', got {len(fields)}",
                    line=line_no,
                )
            yield line_no, fields


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Read a TREC qrels file into {qid: {docid: grade}} (file order kept)."""
    p = Path(path)
    qrels: dict[str, dict[str, int]] = {}
    for line_no, (qid, _iter, docid, grade_text) in _lines(p, _QRELS_COLUMNS):
        try:
            grade = int(grade_text)
        except ValueError:
            raise InputError(
                p, f"grade {grade_text!r} is not an integer", line=line_no, field="grade"
            ) from None
        judged = qrels.setdefault(qid, {})
        if docid in judged:
            raise InputError(
                p, f"document {docid!r} judged twice for query {qid!r}", line=line_no,
                field="docid",
            )
        judged[docid] = grade
    return qrels


def read_run(path: str | Path) -> dict[str, dict[str, float]]:
    """Read a TREC run file into {qid: {docid: score}} (file order kept; tag ignored)."""
    p = Path(path)
    run: dict[str, dict[str, float]] = {}
    for line_no, (qid, _q0, docid, _rank, score_text, _tag) in _lines(p, _RUN_COLUMNS):
        try:
            score = float(score_text)
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise InputError(
                p, f"score {score_text!r} is not a finite number", line=line_no, field="score"
            )
        scores = run.setdefault(qid, {})
        if docid in scores:
            raise InputError(
                p, f"document {docid!r} retrieved twice for query {qid!r}", line=line_no,
                field="docid",
            )
        scores[docid] = score
    return run


def write_qrels(qrels: Qrels, path: str | Path) -> None:
    """Write qrels as ``qid 0 docid grade`` lines, queries and documents in sorted order."""
    write_text(path, "".join(f"{qid} 0 {docid} {int(qrels[qid][docid])}\n"
                             for qid in sorted(qrels, key=str)
                             for docid in sorted(qrels[qid], key=str)))


def write_run(run: Run, path: str | Path, *, tag: str = "ragassay") -> None:
    """Write a run as ``qid Q0 docid rank score tag`` lines, queries in sorted order.

    Documents are written in ranked order (score descending, ties by doc id descending, as
    trec_eval reads them). A query given as a ranked list of doc ids gets the scores
    n, n - 1, ..., 1, so reading the file back gives the same ranking.
    """
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
    None (no query evaluated) prints as 0, as trec_eval does.
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
