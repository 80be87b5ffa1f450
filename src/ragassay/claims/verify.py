"""Claim verdicts of one answer against the cited chunks, all retrieved context and the gold,
and the claim measures computed from them.

Each answer claim (:func:`.split.split_claims`) gets up to three verdicts:

- ``cited``: against the texts of the chunks the answer cites;
- ``context``: against every retrieved chunk given to the answerer (when the cited chunks
  already entail the claim, so does the context: no second check);
- ``gold``: against the gold — the gold chunks' texts, their ``support_claim`` and the
  question's ``expected_answer`` / ``must_contain`` (absent without any gold text).

A verdict is ``{verdict, decided_by, evidence, reason}``: ``verdict`` one of ``entailed`` /
``contradicted`` / ``unsupported``, or ``None`` when nothing decided it (no judge configured,
or the judge's reply was unparsable: ``decided_by`` is then ``none`` / ``judge``);
``decided_by`` names the deterministic check (``numbers``, ``negation``, ``terms``,
``overlap``) or ``judge``; ``evidence`` is the span that decided (a source sentence, the
judge's quote); ``chunk`` is the id of the chunk holding the evidence, when known.

The measures (``None`` when undefined; declined answers claim nothing):

- ``claim_precision`` = answer claims entailed by the cited chunks / decided claims;
- ``claim_recall`` = gold claims (sentences of ``expected_answer`` and of the gold's
  ``support_claim``) entailed by the answer text / decided gold claims;
- ``context_utilisation`` = retrieved chunks holding the evidence of an entailed claim /
  retrieved chunks;
- ``noise_sensitivity`` = answer claims entailed by the context through a non-gold chunk
  and contradicted by the gold / decided claims (lower is better; ``None`` without gold).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .deterministic import decide
from .split import split_claims

# (claim, sources, question) -> judge verdict dict (label, evidence, reason?)
JudgeFn = Callable[[str, Sequence[str], str | None], dict[str, Any]]

CLAIM_MEASURES = ("claim_precision", "claim_recall", "context_utilisation",
                  "noise_sensitivity")


@dataclass(frozen=True)
class Source:
    """A text a claim is checked against: a chunk (with its id) or a gold text."""

    text: str
    chunk_id: str | None = None
    gold: bool = False


# Cached per text: a chunk is searched for the evidence of every claim checked against it.
@lru_cache(maxsize=1 << 15)
def _searchable(text: str) -> str:
    return " ".join(text.split()).casefold()


def _locate(evidence: str, sources: Sequence[Source]) -> str | None:
    if not evidence:
        return None
    probe = _searchable(evidence)
    for s in sources:
        if probe and probe in _searchable(s.text):
            return s.chunk_id
    return None


def verdict_of(claim: str, sources: Sequence[Source], question: str | None,
               judge: JudgeFn | None) -> dict[str, Any]:
    """One claim against ``sources``: the deterministic checks first, then the judge."""
    texts = [s.text for s in sources]
    decision = decide(claim, texts)
    if decision is not None:
        return {"verdict": decision.verdict, "decided_by": decision.check,
                "evidence": decision.evidence, "reason": decision.reason,
                "chunk": _locate(decision.evidence, sources)}
    if judge is None:
        return {"verdict": None, "decided_by": "none", "evidence": "",
                "reason": "the deterministic checks cannot decide; no judge configured",
                "chunk": None}
    res = judge(claim, texts, question)
    return {"verdict": res["label"], "decided_by": "judge", "evidence": res.get("evidence", ""),
            "reason": res.get("reason", ""), "chunk": _locate(res.get("evidence", ""), sources),
            "usage": res.get("usage")}


@dataclass
class ClaimReport:
    """The claims of one answer with their verdicts, the gold claims and the measures."""

    claims: list[dict[str, Any]] = field(default_factory=list)
    gold_claims: list[dict[str, Any]] = field(default_factory=list)
    measures: dict[str, float | None] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    # how the claims were found, when the LLM was asked ({decomposed_by, reason, attempts,
    # usage}); None: the splitter
    decomposition: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The record's ``claims`` field; ``decomposed_by`` is ``sentences`` (the splitter)
        or ``llm``, with ``decompose_reason`` when the LLM's replies were invalid."""
        decided = [c for c in self.claims if c["cited"]["verdict"] is not None]
        by_checks = sum(c["cited"]["decided_by"] not in ("judge", "none") for c in decided)
        parts = self.decomposition or {}
        out = {"claims": self.claims, "gold_claims": self.gold_claims,
               "decided_without_judge": by_checks, "decided": len(decided),
               "total": len(self.claims),
               "decomposed_by": parts.get("decomposed_by", "sentences")}
        if parts.get("reason"):
            out["decompose_reason"] = parts["reason"]
        return out


def _share(num: int, den: int) -> float | None:
    return num / den if den else None


def check_answer(answer_text: str, *, declined: bool, question: str | None,
                 cited: Sequence[Source], context: Sequence[Source], gold: Sequence[Source],
                 judge: JudgeFn | None = None, claims: Sequence[str] | None = None,
                 ) -> ClaimReport:
    """Verdicts and measures of one answer (see the module docstring). ``claims`` are the
    answer's claims when they were found otherwise (:mod:`.decompose`); by default the
    splitter's. Each is checked the same way, whether or not the answer holds its words."""
    report = ClaimReport()
    gold_texts = [g.text for g in gold if g.text.strip()]
    gold_claim_texts = [c for g in gold if not g.chunk_id for c in split_claims(g.text)]
    if declined:
        for name in CLAIM_MEASURES:
            report.measures[name] = None
            report.missing[name] = "the answer is declined: it claims nothing"
        return report
    for claim in split_claims(answer_text) if claims is None else claims:
        row: dict[str, Any] = {"claim": claim,
                               "cited": verdict_of(claim, cited, question, judge)}
        if row["cited"]["verdict"] == "entailed" or not context:
            row["context"] = row["cited"]
        else:
            row["context"] = verdict_of(claim, context, question, judge)
        row["gold"] = verdict_of(claim, gold, question, judge) if gold_texts else None
        report.claims.append(row)
    answer_source = [Source(answer_text)]
    for gc in gold_claim_texts:
        report.gold_claims.append({"claim": gc,
                                   "answer": verdict_of(gc, answer_source, question, judge)})
    cited_decided = [c for c in report.claims if c["cited"]["verdict"] is not None]
    report.measures["claim_precision"] = _share(
        sum(c["cited"]["verdict"] == "entailed" for c in cited_decided), len(cited_decided))
    recall_decided = [g for g in report.gold_claims if g["answer"]["verdict"] is not None]
    report.measures["claim_recall"] = _share(
        sum(g["answer"]["verdict"] == "entailed" for g in recall_decided), len(recall_decided))
    used = {c["context"]["chunk"] for c in report.claims
            if c["context"]["verdict"] == "entailed" and c["context"]["chunk"]}
    report.measures["context_utilisation"] = _share(
        len(used & {s.chunk_id for s in context}), len(context))
    gold_ids = {g.chunk_id for g in gold if g.chunk_id}
    noisy = [c for c in report.claims if c["gold"] is not None
             and c["context"]["verdict"] == "entailed"
             and c["context"]["chunk"] not in gold_ids
             and c["gold"]["verdict"] == "contradicted"]
    with_gold = [c for c in report.claims if c["gold"] is not None
                 and c["gold"]["verdict"] is not None]
    report.measures["noise_sensitivity"] = (_share(len(noisy), len(with_gold))
                                            if gold_texts else None)
    reasons = {
        "claim_precision": "no answer claim could be decided" if report.claims
        else "the answer states no claim",
        "claim_recall": "no gold claim (expected_answer / support_claim)"
        if not gold_claim_texts else "no gold claim could be decided",
        "context_utilisation": "no retrieved context",
        "noise_sensitivity": "no gold text" if not gold_texts
        else "no claim could be decided against the gold",
    }
    for name in CLAIM_MEASURES:
        if report.measures[name] is None:
            report.missing[name] = reasons[name]
    return report
