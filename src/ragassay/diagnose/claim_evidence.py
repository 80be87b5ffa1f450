"""The claims behind a failure label: the one place a label's evidence gains the verdicts of
the claims that caused it.

A detector that a claim verdict can cause says so when it registers
(``@detects("answer_failure", claims=ClaimCause("context", NOT_ENTAILED))``): which verdict
of the claim record (:mod:`ragassay.claims.verify`) shows the cause, and which verdicts
count. After the claims are checked, :func:`add_claim_evidence` adds to each fired label's
evidence ``claims``: one entry per claim with such a verdict, ``{claim, against, verdict,
decided_by, evidence, reason, chunk}`` (``against`` is ``cited`` / ``context`` / ``gold``, or
``answer`` for a gold claim checked against the answer text). Undecided claims (verdict
``None``) are never listed; a label whose claims show no such verdict, or a question without
a claim record, keeps its evidence unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Against = Literal["cited", "context", "gold", "answer"]
NOT_ENTAILED = ("contradicted", "unsupported")
CLAIM_FIELDS = ("verdict", "decided_by", "evidence", "reason", "chunk")

__all__ = ["CLAIM_FIELDS", "NOT_ENTAILED", "Against", "ClaimCause", "add_claim_evidence",
           "claims_behind"]


@dataclass(frozen=True)
class ClaimCause:
    """Which claim verdicts cause a label: the verdict ``against`` (``cited``, ``context``,
    ``gold`` of each answer claim; ``answer`` of each gold claim) being one of ``verdicts``."""

    against: Against
    verdicts: tuple[str, ...] = NOT_ENTAILED


def claims_behind(cause: ClaimCause, claims: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The claims of a question's claim record whose verdict shows ``cause``, in order
    (``[]`` without a record, or when its judge failed)."""
    if not claims or "claims" not in claims:
        return []
    rows = (claims.get("gold_claims") or []) if cause.against == "answer" \
        else claims["claims"]
    out = []
    for row in rows:
        v = row.get(cause.against)
        if v is not None and v.get("verdict") in cause.verdicts:
            out.append({"claim": row["claim"], "against": cause.against,
                        **{name: v.get(name) for name in CLAIM_FIELDS}})
    return out


def add_claim_evidence(failures: dict[str, dict[str, Any]], claims: dict[str, Any] | None,
                       causes: dict[str, ClaimCause]) -> None:
    """Add ``claims`` (see the module docstring) to the evidence of each label in
    ``failures`` that has a cause in ``causes`` (label → :class:`ClaimCause`), in place."""
    for label, evidence in failures.items():
        cause = causes.get(label)
        if cause is None:
            continue
        behind = claims_behind(cause, claims)
        if behind:
            evidence["claims"] = behind
