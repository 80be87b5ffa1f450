"""Metrics: the measure table, retrieval (RAG, per question), answer grounding, general IR
(trec_eval), statistics.

Measure names: :func:`canonical_name` / :func:`parse_measure` read every accepted spelling;
:data:`ANSWER_MEASURES` and :data:`RETRIEVAL_FAMILIES` list the measures of each group, and
:func:`list_measures` gives their table entries (formula, direction, cutoff rule).
"""

from .ir import evaluate
from .measures import (
    ANSWER_MEASURES,
    RETRIEVAL_FAMILIES,
    Measure,
    MeasureInfo,
    canonical_name,
    list_measures,
    measure_info,
    parse_measure,
    parse_measures,
)
from .retrieval import RAG_CUT_FAMILIES, rag_measure, rag_metric_names, retrieval_scores
from .stats import (
    aggregate,
    compare_paired,
    holm_bonferroni,
    paired_randomization_test,
    paired_t_test,
)

__all__ = [
    "ANSWER_MEASURES",
    "RAG_CUT_FAMILIES",
    "RETRIEVAL_FAMILIES",
    "Measure",
    "MeasureInfo",
    "aggregate",
    "canonical_name",
    "compare_paired",
    "evaluate",
    "holm_bonferroni",
    "list_measures",
    "measure_info",
    "paired_randomization_test",
    "paired_t_test",
    "parse_measure",
    "parse_measures",
    "rag_measure",
    "rag_metric_names",
    "retrieval_scores",
]
