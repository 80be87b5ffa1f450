"""People's values of judged measures, per question: the labels PPI++ corrects a judge by.

The file is JSONL, one line per question and measure (``docs/claims.md``):
``{"question_id": "q1", "measure": "claim_precision", "value": 1.0}``; ``value`` in [0, 1]
(a 0/1 verdict or a share). A question id may appear once per measure.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from .errors import InputError
from .jsonio import line_of, read_jsonl
from .metrics.measures import canonical_name


class QuestionLabel(BaseModel):
    """One person's value of one measure on one question."""

    model_config = ConfigDict(extra="forbid")

    question_id: str = Field(min_length=1)
    measure: str = Field(min_length=1)
    value: float = Field(ge=0.0, le=1.0)
    note: str | None = None
    _line: int | None = PrivateAttr(default=None)


def read_labels(path: str | Path) -> dict[str, dict[str, float]]:
    """measure (canonical name) → question id → value. Raises :class:`InputError` for a
    bad line, an unknown measure or a question labelled twice for one measure."""
    out: dict[str, dict[str, float]] = {}
    for rec in read_jsonl(path, QuestionLabel):
        try:
            name = canonical_name(rec.measure)
        except ValueError as exc:
            raise InputError(path, str(exc), line=line_of(rec), field="measure") from None
        seen = out.setdefault(name, {})
        if rec.question_id in seen:
            raise InputError(path, f"question {rec.question_id!r} is labelled twice for "
                             f"{name}", line=line_of(rec), field="question_id")
        seen[rec.question_id] = rec.value
    return out
