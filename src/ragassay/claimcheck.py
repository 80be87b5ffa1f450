"""The evaluation step that checks every answer's claims (after scoring, before the report).

For each measured question, the answer's claims get verdicts against the cited chunks, the
retrieved context and the gold (:func:`ragassay.claims.verify.check_answer`); the claim
measures go into the question's ``scores`` (with the reason in ``missing`` when None) and
the verdicts into its ``claims``. The deterministic checks always run; claims they cannot
decide go to the configured judge (``judge:``), else stay undecided.

A judge call that fails leaves the question's claim measures not measured, with the reason
(``judge call failed: …``), never a score. ``metrics.right_by_claim_recall`` (a threshold)
lets ``right`` use claim recall where a question has no ``must_contain``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .checks import question_checks
from .claims.decompose import decompose
from .claims.verify import CLAIM_MEASURES, ClaimReport, Source, check_answer
from .metrics.answer import DECLINED_STATUSES, item_alternatives

if TYPE_CHECKING:
    from .config import EvalConfig
    from .inputs import Inputs
    from .runrows import QuestionResult
    from .store import Index

JUDGE_FAILED = "judge call failed"


def _chunk_sources(store: Index, chunk_ids: Iterable[str], gold: bool = False,
                   ) -> list[Source]:
    """The chunks of ``store`` (those it has) as claim sources; each made once per store:
    every answer is checked against a dozen chunks, and a chunk is retrieved for many."""
    made: dict[str, Source] = store.cache.setdefault(
        "claimcheck.gold_sources" if gold else "claimcheck.sources", {})
    out = []
    for c in chunk_ids:
        source = made.get(c)
        if source is None:
            if not store.has(c):
                continue
            source = made[c] = Source(store.chunk(c).text, c, gold)
        out.append(source)
    return out


def gold_sources(inputs: Inputs, r: QuestionResult) -> list[Source]:
    """The gold of a question as texts: its gold chunks, the labels' ``support_claim``,
    the question's ``expected_answer`` and ``must_contain`` items."""
    store = inputs.store
    out = _chunk_sources(store, r.gold_grades, gold=True)
    qgold = inputs.gold.get(r.question_id)
    for ev in (qgold.evidence if qgold is not None else []):
        if ev.label.support_claim:
            out.append(Source(ev.label.support_claim, gold=True))
    q = inputs.question_by_id.get(r.question_id)
    if q is not None:
        if q.expected_answer:
            out.append(Source(q.expected_answer, gold=True))
        # an item listing alternatives is one gold claim: its first wording stands for it
        out += [Source(item_alternatives(m)[0], gold=True) for m in q.must_contain]
    return out


def _one(inputs: Inputs, r: QuestionResult, judge: Any, decompose_with: Any = None,
         ) -> ClaimReport:
    """One answer's claim report; with ``decompose_with`` (the judge's client) its claims
    come from the LLM decomposition, recorded in ``report.decomposition``."""
    assert r.answer is not None
    store = inputs.store
    cited = _chunk_sources(store, r.scores.get("cited_ids") or [])
    context = _chunk_sources(store, r.context_chunk_ids)
    fn = None if judge is None else (lambda c, s, q: judge.claim_verdict(c, s, q))
    declined = r.answer.status in DECLINED_STATUSES or bool(r.scores.get("declined"))
    parts = None
    if decompose_with is not None and not declined:
        parts = decompose(decompose_with, r.answer.text, r.question)
    report = check_answer(r.answer.text, declined=declined, question=r.question, cited=cited,
                          context=context, gold=gold_sources(inputs, r), judge=fn,
                          claims=None if parts is None else parts.claims)
    if parts is not None:
        report.decomposition = {"decomposed_by": parts.decomposed_by, "reason": parts.reason,
                                "attempts": parts.attempts, "usage": parts.usage}
    return report


def _usage(report: ClaimReport) -> dict[str, int]:
    """Tokens and calls of the judge's endpoint for one answer: its verdicts and, when the
    LLM decomposed the answer, the decomposition's replies."""
    total = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0}
    parts = report.decomposition
    if parts is not None:
        total["calls"] += parts["attempts"]
        for name in ("prompt_tokens", "completion_tokens"):
            total[name] += int(parts["usage"].get(name, 0))
    rows = [v for c in report.claims for v in (c["cited"], c["context"], c["gold"]) if v]
    rows += [g["answer"] for g in report.gold_claims]
    seen: set[int] = set()
    for v in rows:
        if v["decided_by"] == "judge" and id(v) not in seen and v.get("usage"):
            seen.add(id(v))
            total["calls"] += 1
            for name in ("prompt_tokens", "completion_tokens"):
                total[name] += int(v["usage"].get(name, 0))
    return total


def check_claims(cfg: EvalConfig, inputs: Inputs, results: Sequence[QuestionResult]) -> None:
    """Claim verdicts and measures of every measured question (see the module docstring),
    then the checks again (``right`` may read claim recall)."""
    todo = [r for r in results if r.answer is not None and r.not_measured is None]
    if not todo:
        return
    judge = client = None
    if cfg.judge is not None:
        from .endpoint import OpenAICompatClient
        from .judge import Judge

        client = OpenAICompatClient(cfg.judge)
        judge = Judge(client)
    from .endpoint import EndpointError, deadline_after, map_bounded

    try:
        parts = client if cfg.claims.decompose == "llm" else None
        reports = (map_bounded(lambda r: _one(inputs, r, judge, parts), todo,
                               client.concurrency,
                               deadline_after(client.cfg.run_timeout_s))
                   if client is not None else [_one(inputs, r, None) for r in todo])
    finally:
        if client is not None:
            client.close()
    for r, rep in zip(todo, reports, strict=True):
        if isinstance(rep, EndpointError):
            r.claims = {"error": str(rep)}
            for name in CLAIM_MEASURES:
                r.scores[name] = None
                r.missing[name] = f"{JUDGE_FAILED}: {rep}"
            continue
        r.claims = {**rep.to_dict(), "judge_usage": _usage(rep)}
        for name in CLAIM_MEASURES:
            r.scores[name] = rep.measures[name]
            if rep.measures[name] is None:
                r.missing[name] = rep.missing[name]
            else:
                r.missing.pop(name, None)
    threshold = cfg.metrics.right_by_claim_recall
    if threshold is not None:
        for r in todo:
            r.checks = question_checks(answerable=r.answerable, retrieval=r.retrieval,
                                       scores=r.scores, k=cfg.pipeline.top_k,
                                       right_by_claim_recall=threshold)


def claims_summary(cfg: EvalConfig, results: Sequence[QuestionResult]) -> dict[str, Any]:
    """The run's claim figures: claims, decided (by the checks alone / by the judge),
    undecided, unparsable judge replies and their share of the judge's verdicts, judge
    calls and tokens, questions whose judge failed, the rule for ``right``, and how answers
    were split (``decompose``; answers the LLM decomposed, answers that fell back to the
    splitter because its replies were invalid)."""
    claims = decided = by_checks = by_judge = unparsable = failed = 0
    by_llm = fallbacks = 0
    usage = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0}
    for r in results:
        if not r.claims:
            continue
        if "error" in r.claims:
            failed += 1
            continue
        by_llm += r.claims.get("decomposed_by") == "llm"
        fallbacks += "decompose_reason" in r.claims
        for c in r.claims["claims"]:
            v = c["cited"]
            claims += 1
            if v["decided_by"] == "judge":
                by_judge += v["verdict"] is not None
                unparsable += v["verdict"] is None
            elif v["decided_by"] != "none":
                by_checks += 1
        decided = by_checks + by_judge
        for name in usage:
            usage[name] += r.claims["judge_usage"].get(name, 0)
    asked = by_judge + unparsable
    return {"claims": claims, "decided": decided, "decided_without_judge": by_checks,
            "decided_by_judge": by_judge, "undecided": claims - decided,
            "judge_unparsable": unparsable,
            "judge_unparsable_share": unparsable / asked if asked else None,
            "judge_failed_questions": failed, "judge_usage": usage,
            "right_by_claim_recall": cfg.metrics.right_by_claim_recall,
            "decompose": cfg.claims.decompose, "decomposed_by_llm": by_llm,
            "decompose_fallbacks": fallbacks}
