"""Claims in the report: the run's claim figures and each question's claim list (verdict,
what decided it, evidence), for ``summary.md`` and ``report.html``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .charts import esc
from .safe import md, md_table

if TYPE_CHECKING:
    from ..runfolder import RunMetrics
    from ..runrows import QuestionResult

CLAIM_HEADER = ["question", "claim", "cited", "context", "gold", "decided by", "evidence"]
MAX_EVIDENCE = 160


def _v(verdict: dict[str, Any] | None) -> str:
    if verdict is None:
        return "—"
    return verdict["verdict"] or "undecided"


def _evidence(verdict: dict[str, Any]) -> str:
    text = verdict.get("evidence") or verdict.get("reason") or ""
    return text if len(text) <= MAX_EVIDENCE else text[:MAX_EVIDENCE - 1] + "…"


def claim_rows(q: QuestionResult) -> list[list[str]]:
    """One row per answer claim of ``q`` (none when it has no claim record), cells in
    :data:`CLAIM_HEADER` order: the one source of the claim list in ``summary.md``, the
    static rows of ``report.html`` and the rows its script draws (:mod:`.rows`)."""
    if not q.claims or "claims" not in q.claims:
        return []
    return [[q.question_id, c["claim"], _v(c["cited"]), _v(c["context"]), _v(c["gold"]),
             c["cited"]["decided_by"], _evidence(c["cited"])] for c in q.claims["claims"]]


def claims_line(metrics: RunMetrics) -> str:
    """``12 claims: 9 decided by the checks, 2 by the judge, 1 undecided; judge replies
    unparsable 0 of 2`` (``""`` when the run checked no claim)."""
    c = metrics.claims
    if not c or not c.get("claims"):
        return ""
    line = (f"{c['claims']} claims: {c['decided_without_judge']} decided by the "
            f"deterministic checks, {c['decided_by_judge']} by the judge, {c['undecided']} "
            "undecided")
    asked = c["decided_by_judge"] + c["judge_unparsable"]
    if asked:
        line += f"; judge replies unparsable {c['judge_unparsable']} of {asked}"
    if c.get("right_by_claim_recall") is not None:
        line += (f"; right uses claim_recall >= {c['right_by_claim_recall']:g} where a "
                 "question has no must_contain")
    return line


def corrected_rows(metrics: RunMetrics) -> list[list[str]]:
    """measure, judge mean, corrected mean [CI], labelled-only mean [CI], n labelled, λ."""
    rows = []
    for name, est in metrics.corrected.items():
        if est.get("mean") is None:
            rows.append([name, "—", "— (fewer than 2 labels)", "—", str(est["n_labelled"]),
                         "—"])
            continue
        rows.append([name, f"{est['judge_mean']:.3f}",
                     f"{est['mean']:.3f} [{est['ci_low']:.3f}, {est['ci_high']:.3f}]",
                     f"{est['labelled_mean']:.3f} [{est['labelled_ci_low']:.3f}, "
                     f"{est['labelled_ci_high']:.3f}]", str(est["n_labelled"]),
                     f"{est['lambda']:.2f}"])
    return rows


CORRECTED_HEADER = ["measure", "judge mean", "corrected (PPI++) [95% CI]",
                    "labelled only [95% CI]", "labelled", "λ"]


def claims_md(metrics: RunMetrics, questions: list[QuestionResult]) -> list[str]:
    """The ``## Claims`` section of summary.md (nothing when the run checked no claim)."""
    line = claims_line(metrics)
    rows = [r for q in questions for r in claim_rows(q)]
    if not line and not metrics.corrected:
        return []
    parts = ["## Claims", ""]
    if line:
        parts += [md(line), ""]
    if metrics.corrected:
        parts += ["Judged measures corrected by people's labels (PPI++):", "",
                  md_table(CORRECTED_HEADER, corrected_rows(metrics)), ""]
    if rows:
        parts += [md_table(CLAIM_HEADER, rows), ""]
    return parts


def claims_html(q: QuestionResult) -> str:
    """A question's claim list for its details in report.html ("" without claims)."""
    rows = claim_rows(q)
    if not rows:
        return ""
    body = "".join("<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in r[1:]) + "</tr>"
                   for r in rows)
    head = "".join(f"<th>{esc(h)}</th>" for h in CLAIM_HEADER[1:])
    return (f'<h4>Claims</h4><div class="scroll"><table class="claims"><thead><tr>{head}'
            f"</tr></thead><tbody>{body}</tbody></table></div>")


def claims_section_html(metrics: RunMetrics) -> str:
    """The run's claim figures and corrected means for report.html ("" when none)."""
    line = claims_line(metrics)
    if not line and not metrics.corrected:
        return ""
    parts = ['<section class="claims"><h2>Claims</h2>']
    if line:
        parts.append(f"<p>{esc(line)}</p>")
    if metrics.corrected:
        head = "".join(f"<th>{esc(h)}</th>" for h in CORRECTED_HEADER)
        body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>"
                       for r in corrected_rows(metrics))
        parts.append(f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
                     f"<tbody>{body}</tbody></table></div>")
    parts.append("</section>")
    return "\n".join(parts)
