"""Metrics: retrieval (RAG, per question), answer grounding, general IR (trec_eval), statistics."""

from .ir import Measure, MeasureInfo, evaluate, list_measures, parse_measure, parse_measures
from .retrieval import retrieval_scores
from .stats import (
    aggregate,
    compare_paired,
    holm_bonferroni,
    paired_randomization_test,
    paired_t_test,
)

__all__ = [
    "Measure",
    "MeasureInfo",
    "aggregate",
    "compare_paired",
    "evaluate",
    "holm_bonferroni",
    "list_measures",
    "paired_randomization_test",
    "paired_t_test",
    "parse_measure",
    "parse_measures",
    "retrieval_scores",
]
