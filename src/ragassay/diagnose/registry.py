"""The detector registry: a failure label is one decorated function.

    @detects("retrieval_failure")
    def gold_evidence_not_in_top_k(case: Case, cfg: DiagnoseConfig) -> dict | None: ...

registers the detector of ``retrieval_failure.gold_evidence_not_in_top_k``: the label is the
category and the function's name, written once. A label no detector can fire is registered
with :func:`unobservable` and its reason (it is counted, always 0, so the schema stays
whole). Everything else is derived: :func:`labels` (the taxonomy in order: the categories in
:data:`CATEGORIES` order, then any new category in the order it was first registered; within
a category, the order of registration, i.e. of definition in its module), the counts in
``metrics.json``, the summary's "all N labels".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..config import DiagnoseConfig
from .case import Case
from .claim_evidence import ClaimCause

Detector = Callable[[Case, DiagnoseConfig], "dict[str, Any] | None"]

CATEGORIES = ("retrieval_failure", "parsing_failure", "citation_failure", "answer_failure",
              "evaluation_failure")

DETECTORS: dict[str, Detector] = {}  # label → detector, in registration order
UNOBSERVABLE: dict[str, str] = {}  # label → why no detector can fire it
CLAIM_CAUSES: dict[str, ClaimCause] = {}  # label → the claim verdicts that cause it
_ORDER: list[str] = []  # every label, in registration order


# The taxonomy order and the detectors in it, worked out again only when a label is added
# or removed (every question's diagnosis reads them: sorting per question cost 0.2 s of a
# 6,000-question run).
_SORTED: list[tuple[tuple[str, ...], tuple[tuple[str, Detector], ...]]] = []


def _add(label: str) -> None:
    category, dot, name = label.partition(".")
    if not (dot and category and name) or "." in name:
        raise ValueError(f"failure label {label!r}: expected 'category.name'")
    if label in _ORDER:
        raise ValueError(f"failure label {label!r} is registered twice")
    _ORDER.append(label)
    _SORTED.clear()


def detects(category: str, *, name: str | None = None, claims: ClaimCause | None = None,
            ) -> Callable[[Detector], Detector]:
    """Register the decorated function as the detector of ``category.<its name>`` (or
    ``category.name``). A detector returns the evidence that triggered it (a JSON-able
    dict), or None. ``claims`` says which claim verdicts cause the label: its evidence then
    lists those claims (:mod:`.claim_evidence`). A label registered twice raises
    :class:`ValueError`."""
    def register(fn: Detector) -> Detector:
        label = f"{category}.{name or getattr(fn, '__name__', '')}"
        _add(label)
        DETECTORS[label] = fn
        _SORTED.clear()
        if claims is not None:
            CLAIM_CAUSES[label] = claims
        return fn
    return register


def unobservable(label: str, reason: str) -> None:
    """Register a label no detector can fire, with the reason (shown in reports)."""
    _add(label)
    UNOBSERVABLE[label] = reason


def unregister(label: str) -> None:
    """Remove a label (a detector or an unobservable one) registered at run time."""
    _ORDER.remove(label)
    DETECTORS.pop(label, None)
    UNOBSERVABLE.pop(label, None)
    CLAIM_CAUSES.pop(label, None)
    _SORTED.clear()


def labels() -> tuple[str, ...]:
    """Every registered label, in taxonomy order (see the module docstring)."""
    return _taxonomy()[0]


def detectors() -> tuple[tuple[str, Detector], ...]:
    """``(label, detector)`` of every label that has one, in taxonomy order."""
    return _taxonomy()[1]


def _taxonomy() -> tuple[tuple[str, ...], tuple[tuple[str, Detector], ...]]:
    if not _SORTED:
        cats = list(CATEGORIES) + [c for c in dict.fromkeys(lb.split(".", 1)[0]
                                                            for lb in _ORDER)
                                   if c not in CATEGORIES]
        rank = {c: i for i, c in enumerate(cats)}
        order = tuple(sorted(_ORDER, key=lambda lb: rank[lb.split(".", 1)[0]]))  # stable
        _SORTED.append((order, tuple((lb, DETECTORS[lb]) for lb in order
                                     if lb in DETECTORS)))
    return _SORTED[0]


def labels_of(category: str) -> tuple[str, ...]:
    """The labels of one category, in taxonomy order."""
    return tuple(lb for lb in labels() if lb.split(".", 1)[0] == category)
