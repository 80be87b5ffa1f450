"""Predictions of any RAG system (docs/formats.md), checked against questions and chunks."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from .answer.citations import id_stem, unknown_inline_ids
from .errors import InputError
from .jsonio import line_of, read_jsonl
from .schema import Prediction, Question
from .store import Index


def read_predictions(path: str | Path, *, lenient: bool = False,
                     warnings: list[str] | None = None) -> list[Prediction]:
    """The prediction records of a JSONL file (file:line:field errors; with ``lenient``,
    unknown keys are ``warnings``); ids are checked by :func:`check_predictions`."""
    return read_jsonl(path, Prediction, key="question_id", lenient=lenient, warnings=warnings)


def load_predictions(path: str | Path, questions: Sequence[Question], store: Index, *,
                     lenient: bool = False, warnings: list[str] | None = None
                     ) -> dict[str, Prediction]:
    """Read a predictions JSONL; every id it names must exist (file:line:field errors).

    A question without a prediction is not an error here: the run reports it as not measured.
    """
    return check_predictions(read_predictions(path, lenient=lenient, warnings=warnings),
                             questions, store, path)


def check_predictions(preds: Iterable[Prediction], questions: Sequence[Question], store: Index,
                      source: str | Path = "predictions") -> dict[str, Prediction]:
    """Predictions by question id; one for an unknown question, a duplicate, or an unknown
    chunk among its hits or citations is an :class:`InputError` at ``source`` (and line).

    A hit that carries its ``text`` may name any id, or none (a context as the system
    returned it, :mod:`ragassay.contexts`); in a prediction with such hits, a citation may
    name a hit's id, and one naming nothing known is kept (a source not in the context).
    An inline ``[chunk-id]`` marker of the answer text that names no chunk is refused like
    an unknown id in ``citations`` (field ``answer.text``; which markers count as ids:
    :func:`ragassay.answer.citations.unknown_inline_ids`)."""
    known = {q.question_id for q in questions}
    stems = {stem for c in store.chunks if (stem := id_stem(c.chunk_id))}
    out: dict[str, Prediction] = {}
    for pred in preds:
        line = line_of(pred)
        if pred.question_id not in known:
            raise InputError(source, f"prediction for unknown question {pred.question_id!r}",
                             line=line, field="question_id")
        if pred.question_id in out:
            raise InputError(source, f"duplicate question_id {pred.question_id!r}", line=line,
                             field="question_id")
        for i, hit in enumerate(pred.retrieved):
            if hit.text is None and not store.has(hit.chunk_id):
                raise InputError(source, f"unknown chunk {hit.chunk_id!r}: give a chunk id "
                                 "of the evidence, or the hit's text", line=line,
                                 field=f"retrieved.{i}.chunk_id")
        if pred.has_texts:
            out[pred.question_id] = pred
            continue
        for i, cit in enumerate(pred.answer.citations):
            if not store.has(cit.chunk_id):
                raise InputError(source, f"citation of unknown chunk {cit.chunk_id!r}",
                                 line=line, field=f"answer.citations.{i}.chunk_id")
        for raw in unknown_inline_ids(pred.answer.text, store.has, stems):
            raise InputError(source, f"citation of unknown chunk {raw!r} (the inline marker "
                             f"[{raw}])", line=line, field="answer.text")
        out[pred.question_id] = pred
    return out


def context_of(pred: Prediction, k: int, threshold: float | None = None) -> list[str]:
    """The chunk ids the answerer saw: the first k distinct retrieved ids, at or above the
    threshold when one is given (a hit without a score is kept only without a threshold)."""
    if threshold is None and k > 0:  # the usual case: ids listed once (a Prediction checks)
        ids = [hit.chunk_id for hit in pred.retrieved]
        if len(set(ids)) == len(ids):
            return ids[:k]
    return context_of_reference(pred, k, threshold)


def context_of_reference(pred: Prediction, k: int, threshold: float | None = None,
                         ) -> list[str]:
    """The plain version of :func:`context_of` (hit by hit), kept as the reference its
    tests compare with and used where the fast path does not apply."""
    out: list[str] = []
    seen: set[str] = set()
    for hit in pred.retrieved:
        if hit.chunk_id in seen:
            continue
        if threshold is not None and (hit.score is None or hit.score < threshold):
            continue
        out.append(hit.chunk_id)
        seen.add(hit.chunk_id)
        if len(out) == k:
            break
    return out
