"""The CI gate: bars on a run's metric means, flips against a baseline run, JUnit XML.

A *bar* is a value with a canonical text form (``recall_at_5 >= 0.8``), parsed from the
config's ``gate:`` mapping or from a command-line option. The gate passes when every bar
holds on the run's mean, at most ``allow_missing`` questions (default 0) have no result,
and, with a baseline run and ``fail_on_regression``, no question flips from pass to fail.

A question passes when none of the checks it recorded fails (found / grounded / right,
defined once in :mod:`ragassay.checks`); a check that is None does not fail; a bar whose
mean is None does.
"""

from .bars import ABS_TOL, OPERATORS, REL_TOL, Bar, Op, parse_bar, parse_bar_text, parse_gate
from .junit import render_junit, write_junit
from .verdict import (
    OPTIONS,
    BarResult,
    Flip,
    GateConfig,
    GateResult,
    JunitQuestions,
    check_bar,
    evaluate_gate,
    format_result,
    parse_gate_config,
)

__all__ = [
    "ABS_TOL", "OPERATORS", "OPTIONS", "REL_TOL", "Bar", "BarResult", "Flip", "GateConfig",
    "GateResult", "JunitQuestions", "Op", "check_bar", "evaluate_gate", "format_result",
    "parse_bar", "parse_bar_text", "parse_gate", "parse_gate_config", "render_junit",
    "write_junit",
]
