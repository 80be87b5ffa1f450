"""A run as TREC files (``run.trec``, ``qrels.trec``) that trec_eval — and ``ragassay
trec-eval`` — score exactly as the run was scored.

Two things TREC files cannot hold are made explicit:

- ids with whitespace: a TREC line is split on whitespace, so ``%``, whitespace and control
  characters in question and chunk ids are percent-encoded (UTF-8 bytes, ``%20`` for a
  space); the encoding is one-to-one, so every value is the same;
- a ranking the scores do not give: the run ranks a question's retrieved list in the order
  given; trec_eval ranks by score, ties by id descending. A question whose scores would rank
  it differently (or that has no scores) is written with rank-derived scores n, n-1, …, 1;
- several gold chunks that stand for one label (``gold_alternatives``): the qrels judge the
  label once, under the chunk the others stand for; in the run its first retrieved chunk is
  written under that id and a later one under its own id (not judged, so not relevant), or,
  for the standing-for chunk itself, as ``ID%23repeat`` (``%23`` never comes out of the
  encoding, which leaves ``#`` as it is, so no real id is written so).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..metrics.ir import rank_documents
from ..metrics.trec import write_qrels, write_run
from ..runfolder import RunResult

_UNSAFE = re.compile(r"[%\s\x00-\x1f\x7f]")


def trec_id(text: str) -> str:
    """``text`` with ``%``, whitespace and control characters percent-encoded."""
    return _UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), text)


def _as_judged(ranked: list[str], alternatives: dict[str, str]) -> list[str]:
    """The TREC ids of a ranking as the qrels judge them (see the module docstring)."""
    stands_for = set(alternatives.values())
    out, seen = [], set()
    for c in ranked:
        key = alternatives.get(c, c)
        if key in stands_for and key not in seen:
            out.append(trec_id(key))
        elif c == key and c in stands_for:
            out.append(trec_id(c) + "%23repeat")
        else:
            out.append(trec_id(c))
        seen.add(key)
    return out


def export_trec(result: RunResult, dest: Path) -> list[str]:
    """Write ``dest/run.trec`` and ``dest/qrels.trec``; return notes for the user."""
    run: dict[str, dict[str, float] | list[str]] = {}
    qrels: dict[str, dict[str, int]] = {}
    reranked = []
    for q in result.questions:
        qid = trec_id(q.question_id)
        ids = _as_judged([h.chunk_id for h in q.retrieved], q.gold_alternatives)
        scores = [h.score for h in q.retrieved]
        given = {i: s for i, s in zip(ids, scores, strict=True) if s is not None}
        if len(given) == len(ids) and rank_documents(given) == ids:
            run[qid] = given
        else:  # the list order is the ranking: scores that make trec_eval rank it so
            run[qid] = ids
            if ids and given:
                reranked.append(q.question_id)
        if q.gold_grades:
            items: dict[str, int] = {}
            for c, g in q.gold_grades.items():
                key = q.gold_alternatives.get(c, c)
                items[key] = max(items.get(key, g), g)
            qrels[qid] = {trec_id(c): g for c, g in items.items()}
    dest.mkdir(parents=True, exist_ok=True)
    write_run(run, dest / "run.trec", tag=trec_id(result.run_id) or "ragassay")
    write_qrels(qrels, dest / "qrels.trec")
    notes = []
    if reranked:
        notes.append(f"{len(reranked)} questions have scores that do not follow their ranked "
                     "list (or ties): written with rank-derived scores so trec_eval ranks them "
                     "as the run did: " + ", ".join(reranked[:10])
                     + (" …" if len(reranked) > 10 else ""))
    return notes
