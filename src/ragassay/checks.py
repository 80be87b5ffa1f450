"""found / grounded / right: the three checks of a question and their totals.

This is the only definition. The evaluation core computes each question's checks once, at
the run's k and hit policy, and stores them in the run record; the terminal, ``summary.md``,
``report.html``, the gate, JUnit, the sweep and the detectors all read them from there.

- ``found``: an answerable question with placed gold: ``hit_at_k`` of the run (policy
  ``any``: some gold chunk among the first k retrieved; ``all``: every gold chunk).
  Not applicable (None) to an unanswerable question; not measured (None) when the gold
  could not be placed or there is no prediction.
- ``grounded``: ``groundedness == 1`` (an honest decline passes); None without a prediction.
- ``right``: ``correct == 1`` (every ``must_contain`` item, any one alternative of an item
  that lists several, in the answer without its markers; an unanswerable question is
  right when declined); None without ``must_contain`` or without a prediction.

A question *passes* when none of its checks fails. A check that is None neither passes nor
fails; a question with no prediction at all is counted apart (see ``measured``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

CHECKS = ("found", "grounded", "right")


class Checks(BaseModel):
    """The verdicts of one question: True pass, False fail, None not measured / applicable."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    found: bool | None = None
    grounded: bool | None = None
    right: bool | None = None

    @property
    def failed(self) -> tuple[str, ...]:
        return tuple(c for c in CHECKS if getattr(self, c) is False)

    @property
    def passed(self) -> bool:
        return not self.failed


def _flag(value: Any) -> bool | None:
    return None if value is None else bool(value == 1)


def question_checks(*, answerable: bool, retrieval: Mapping[str, Any],
                    scores: Mapping[str, Any], k: int) -> Checks:
    """The checks of one question from its retrieval metrics (which hold ``hit_at_<k>`` at
    the run's hit policy) and its answer scores."""
    return Checks(
        found=_flag(retrieval.get(f"hit_at_{k}")) if answerable else None,
        grounded=_flag(scores.get("groundedness")),
        right=_flag(scores.get("correct")),
    )


class Tally(BaseModel):
    """``passed`` of ``total`` measured questions; ``not_measured`` where the check applies
    but could not be judged (no prediction, gold not placed, no ``must_contain``)."""

    model_config = ConfigDict(extra="forbid")

    passed: int
    total: int
    not_measured: int


class Totals(BaseModel):
    """The three checks over a run, at its k and hit policy."""

    model_config = ConfigDict(extra="forbid")

    k: int
    hit_policy: str
    found: Tally
    grounded: Tally
    right: Tally

    def line(self) -> str:
        """``found@3 6/7 · grounded 7/8 · right 7/8`` (with "(n not measured)" when any)."""
        parts = []
        for name in CHECKS:
            t: Tally = getattr(self, name)
            label = f"found@{self.k}" if name == "found" else name
            extra = f" ({t.not_measured} not measured)" if t.not_measured else ""
            parts.append(f"{label} {t.passed}/{t.total}{extra}")
        return " · ".join(parts)


def totals(rows: Iterable[tuple[bool, Checks]], *, k: int, hit_policy: str) -> Totals:
    """Tally ``(answerable, checks)`` pairs; ``found`` counts answerable questions only."""
    counts = {c: [0, 0, 0] for c in CHECKS}  # passed, total, not measured
    for answerable, checks in rows:
        for name in CHECKS:
            if name == "found" and not answerable:
                continue  # not applicable
            value = getattr(checks, name)
            c = counts[name]
            if value is None:
                c[2] += 1
            else:
                c[0] += value
                c[1] += 1
    return Totals(k=k, hit_policy=hit_policy, **{
        name: Tally(passed=p, total=t, not_measured=n) for name, (p, t, n) in counts.items()})


def verdict_text(value: bool | None) -> str:
    """``yes`` / ``no`` / ``—``: how every output prints a check."""
    return "—" if value is None else ("yes" if value else "no")
