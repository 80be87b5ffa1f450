"""Gate bars: a threshold on a metric mean (``recall_at_5 >= 0.8``) and its parsers."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import InputError, unknown_name
from ..metrics.measures import canonical_name

Op = Literal[">=", ">", "<=", "<", "=="]
OPERATORS: tuple[Op, ...] = (">=", ">", "<=", "<", "==")
# Values this close to a threshold count as equal to it, so float noise in a mean
# (0.7999999999999999 for 0.8) never decides a bar.
REL_TOL = 1e-9
ABS_TOL = 1e-9

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_EXPR = re.compile(rf"^\s*(>=|<=|==|>|<)\s*({_NUMBER})\s*$")
_BAR_TEXT = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_@.]*)\s*(.*)$", re.S)


# --- bars -----------------------------------------------------------------------------


def _num_text(x: float) -> str:
    """Shortest text of a threshold: ``1`` for 1.0, ``0.8`` for 0.8."""
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


@dataclass(frozen=True)
class Bar:
    """One threshold on a metric mean: ``metric op threshold``."""

    metric: str
    op: Op
    threshold: float

    def __post_init__(self) -> None:
        if self.op not in OPERATORS:
            raise ValueError(f"unknown operator {self.op!r}; use one of {', '.join(OPERATORS)}")
        if not math.isfinite(self.threshold):
            raise ValueError(f"threshold must be a finite number, got {self.threshold!r}")

    def __str__(self) -> str:
        return f"{self.metric} {self.op} {_num_text(self.threshold)}"

    def holds(self, value: float) -> bool:
        """Whether ``value op threshold``, with values within the tolerance equal to it."""
        equal = math.isclose(value, self.threshold, rel_tol=REL_TOL, abs_tol=ABS_TOL)
        if self.op == "==":
            return equal
        if self.op == ">=":
            return equal or value > self.threshold
        if self.op == "<=":
            return equal or value < self.threshold
        if self.op == ">":
            return not equal and value > self.threshold
        return not equal and value < self.threshold


def unknown_metric(metric: str, known: list[str]) -> str:
    return unknown_name("metric", metric, known, known_as="the run measures")


def parse_bar(metric: str, expr: Any, *, source: str | Path = "gate",
              known_metrics: Iterable[str] | None = None) -> Bar:
    """Parse ``expr`` (``">= 0.8"``, ``"<0.1"``, ``"== 1"``) into a :class:`Bar` on ``metric``.

    The operator is required: a bare number is refused rather than guessed to mean ``>=``.
    With ``known_metrics``, a metric outside it is refused with the nearest valid names.
    Errors raise :class:`InputError` at ``source`` with field ``gate.<metric>``.
    """
    where = f"gate.{metric}"
    if not isinstance(metric, str) or not metric.strip():
        raise InputError(source, "a bar needs a metric name", field="gate")
    try:  # any accepted spelling (recall@5, recall.5) names the run's recall_at_5
        metric = canonical_name(metric)
    except ValueError:
        pass  # not a measure name: refused below with the names the run holds
    if isinstance(expr, bool) or not isinstance(expr, str):
        if isinstance(expr, (int, float)) and not isinstance(expr, bool):
            raise InputError(source, f"a bare number ({expr}) is not a bar: write an operator and "
                             f"a number, e.g. '>= {expr}' (quote it in YAML: "
                             f"{metric}: \">= {expr}\")", field=where)
        raise InputError(source, f"expected a text like '>= 0.8', got {type(expr).__name__}",
                         field=where)
    m = _EXPR.match(expr)
    if m is None:
        hint = ""
        if re.fullmatch(rf"\s*{_NUMBER}\s*", expr):
            hint = f" (a bare number is not a bar: write '>= {expr.strip()}')"
        raise InputError(source, f"cannot parse {expr!r}: expected an operator (>=, >, <=, <, ==) "
                         f"and a number{hint}", field=where)
    if known_metrics is not None:
        known = list(known_metrics)
        if metric not in known:
            raise InputError(source, unknown_metric(metric, known), field=where)
    threshold = float(m.group(2))
    if not math.isfinite(threshold):  # "1e999" parses to inf
        raise InputError(source, f"threshold {m.group(2)!r} is not a finite number", field=where)
    op: Op = m.group(1)  # type: ignore[assignment]  # the regex admits only OPERATORS
    return Bar(metric, op, threshold)


def parse_bar_text(text: str, *, source: str | Path = "--bar",
                   known_metrics: Iterable[str] | None = None) -> Bar:
    """Parse a whole bar such as ``"recall_at_5>=0.8"`` (the form of a command-line option)."""
    m = _BAR_TEXT.match(text)
    if m is None:
        raise InputError(source, f"cannot parse {text!r}: expected '<metric> <operator> <number>', "
                         "e.g. 'recall_at_5 >= 0.8'", field="gate")
    return parse_bar(m.group(1), m.group(2), source=source, known_metrics=known_metrics)


def parse_gate(mapping: Mapping[str, Any], *, source: str | Path,
               known_metrics: Iterable[str]) -> list[Bar]:
    """Parse a ``gate:`` mapping ``{metric: expr}`` into bars, in the mapping's order."""
    if not isinstance(mapping, Mapping):
        raise InputError(source, "expected a mapping of metric: \"<op> <number>\", e.g. "
                         "recall_at_5: \">= 0.8\"", field="gate")
    known = list(known_metrics)
    return [parse_bar(str(metric), expr, source=source, known_metrics=known)
            for metric, expr in mapping.items()]

