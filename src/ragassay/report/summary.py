"""Human-readable views of a run: `summary.md` and the terminal tables.

Every piece of user text goes through :mod:`.safe` (literal Markdown, literal terminal cells).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..checks import verdict_text
from ..termsafe import plain
from .cells import evidence_text, rank_text
from .claims import claims_md
from .header import run_facts
from .safe import md, md_code, md_table, print_table

if TYPE_CHECKING:
    from rich.console import Console

    from ..runfolder import RunMetrics, RunResult
    from ..runrows import QuestionResult


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def metric_rows(metrics: RunMetrics, group: str) -> list[list[str]]:
    """[metric, mean, 95% CI, n, missing] for each metric of a group ('retrieval' / 'answer')."""
    out = []
    for name, agg in getattr(metrics, group).items():
        ci = "—" if agg.ci_low is None else f"[{agg.ci_low:.3f}, {agg.ci_high:.3f}]"
        out.append([name, _fmt(agg.mean), ci, str(agg.n), str(agg.missing)])
    return out


def question_rows(result: RunResult, questions: list[QuestionResult] | None = None
                  ) -> list[list[str]]:
    """One line per question (all of the run's, or ``questions``): id, topic, rank, found@k,
    grounded, right, failure labels (the rank as :func:`~.cells.rank_text` writes it)."""
    k = result.totals.k
    out = []
    for q in result.questions if questions is None else questions:
        c = q.checks
        grounded = verdict_text(c.grounded)
        if c.grounded is False:
            grounded += f" ({q.scores.get('groundedness_reason')})"
        labels = ", ".join(label.split(".", 1)[1] for label in q.failures) or "—"
        out.append([q.question_id, q.topic or "", rank_text(q.retrieval.get("rank"), k),
                    verdict_text(c.found), grounded, verdict_text(c.right), labels])
    return out


EVIDENCE_HEADER = ["question", "failure type", "evidence"]


def evidence_rows(questions: list[QuestionResult]) -> list[list[str]]:
    """[question, failure type, evidence] per failure label of each question, the evidence
    as text (:func:`~.cells.evidence_text`)."""
    return [[q.question_id, label.split(".", 1)[-1], evidence_text(ev) or "—"]
            for q in questions for label, ev in q.failures.items()]


def not_applicable_rows(metrics: RunMetrics) -> list[list[str]]:
    """[reason, questions, metrics] of the metrics a data set's fields leave unmeasured."""
    groups: dict[tuple[str, int], list[str]] = {}
    for name, reasons in metrics.not_applicable.items():
        for why, n in reasons.items():
            groups.setdefault((why, n), []).append(name)
    return [[why, str(n), ", ".join(names)] for (why, n), names in groups.items()]


def question_header(k: int) -> list[str]:
    return ["question", "topic", "rank", f"found@{k}", "grounded", "right", "failure types"]


METRIC_HEADER = ["metric", "mean", "95% CI", "n", "missing"]
GOLD_HEADER = ["question", "label", "labelled chunk", "state", "gold now", "evidence"]
GOLD_TITLE = "Gold labels checked against the index"


def gold_line(gold: dict[str, Any]) -> str:
    """The counts of a gold audit (``metrics.json`` → ``gold``, or ``ragassay gold audit``):
    ``16 labels: 14 ok, 1 split, 1 lost_in_parsing; every answerable question has usable
    gold`` (or ``2 answerable questions without usable gold: q07, q09``)."""
    states = gold.get("states") or {}
    if not states:  # a run folder written before the states were recorded
        return f"{len(gold.get('reanchored') or [])} labels not ok"
    counts = ", ".join(f"{n} {state}" for state, n in states.items() if n) or "none"
    unusable = [str(u.get("question_id")) for u in gold.get("unusable") or []]
    tail = (f"{len(unusable)} answerable question(s) without usable gold: "
            + ", ".join(unusable) if unusable
            else "every answerable question has usable gold")
    return f"{gold.get('labels', sum(states.values()))} labels: {counts}; {tail}"


def gold_rows(labels: list[dict[str, Any]]) -> list[list[str]]:
    """[question, label, labelled chunk, state, gold now, evidence] per audited label: the
    reason, then the candidates (with their similarity when they only resemble the label)."""
    out = []
    for m in labels:
        cands, sims = list(m.get("candidates") or []), list(m.get("similarity") or [])
        shown = [f"{c} ({s:.2f})" for c, s in zip(cands, sims, strict=False)] if sims else cands
        evidence = str(m.get("reason") or "")
        if shown and m.get("status") != "split":
            evidence += ("; " if evidence else "") + "candidates: " + ", ".join(shown)
        out.append([str(m.get("question_id")), str(m.get("label", "")),
                    str(m.get("labelled_chunk_id")), str(m.get("status")),
                    ", ".join(map(str, m.get("chunk_ids") or [])) or "(nowhere)",
                    evidence or "—"])
    return out


def token_source(cost: dict[str, Any]) -> str:
    """Who counted the tokens: the tokenizer, the server (``reported by the server``), or
    both; a run folder of an older version names its tokenizer only."""
    source = cost.get("token_source", "counted" if cost.get("tokenizer") else None)
    if source == "reported":
        return "reported by the server"
    if source == "mixed":
        return f"reported by the server, else counted with {cost['tokenizer']}"
    return f"counted with {cost['tokenizer']}" if cost.get("tokenizer") else "no calls"


def judge_tokens(cost: dict[str, Any]) -> str:
    """``; judge 1,234 prompt, 56 completion in 7 calls`` (``""`` when the judge made none)."""
    if not cost.get("judge_calls"):
        return ""
    return (f"; judge {cost['judge_prompt_tokens']:,} prompt, "
            f"{cost['judge_completion_tokens']:,} completion in {cost['judge_calls']:,} calls")


def render_summary_md(result: RunResult) -> str:
    """The run's `summary.md`: counts, retrieval and answer metrics apart, failures, questions."""
    metrics = result.metrics
    counts = metrics.counts
    parts = [
        f"# Run {md_code(metrics.run_id)}",
        "",
        *(f"- {label}: {md(text)}" for label, text in run_facts(metrics)[:3]),
        f"- seed {metrics.provenance.seed}; bootstrap 95% CIs",
        f"- tokens: {metrics.cost['prompt_tokens']:,} prompt, "
        f"{metrics.cost['completion_tokens']:,} completion ({md(token_source(metrics.cost))})"
        + judge_tokens(metrics.cost)
        + (f"; money {metrics.cost['total']:.4f} at the configured prices"
           if metrics.cost.get("total") is not None else ""),
    ]
    if counts.without_prediction:
        parts.append(f"- **{counts.without_prediction} questions not measured** (no prediction "
                     "or a failed answerer call); see `answers.jsonl` `not_measured`")
    stale = metrics.provenance.index.get("stale")
    if stale:
        parts.append(f"- **warning: the index is stale** ({md(stale)})")
    parts += [f"- note: {md(note)}" for note in metrics.notes]
    parts += [
        "",
        "## Retrieval",
        "",
        md_table(METRIC_HEADER, metric_rows(metrics, "retrieval")),
        "",
        "## Answer",
        "",
        md_table(METRIC_HEADER, metric_rows(metrics, "answer")),
        "",
        "## Failures",
        "",
    ]
    fired = [[label, str(n)] for label, n in metrics.failures["counts"].items() if n]
    if fired:
        parts.append(md_table(["failure type", "questions"], fired))
    else:
        parts.append("No failure detected.")
    parts += [
        "",
        f"{metrics.failures['questions_with_failures']} of {counts.questions} questions "
        f"have at least one failure; all {len(metrics.failures['counts'])} labels are counted "
        "in `metrics.json`.",
        "",
    ]
    if metrics.not_applicable:
        parts += ["Not applicable to these questions (not failures, not averaged in):", "",
                  md_table(["reason", "questions", "metrics"], not_applicable_rows(metrics)),
                  ""]
    listed = listed_questions(result, SUMMARY_QUESTIONS)
    parts += ["## Questions", "", f"Totals: {metrics.checks.line()}", ""]
    if len(listed) < len(result.questions):
        parts += [f"The {len(listed)} of {len(result.questions)} questions listed here come "
                  "failing first (questions with a failure label, in record order); every "
                  "question is in `answers.jsonl` and `report.html`.", ""]
    parts += [md_table(question_header(metrics.checks.k), question_rows(result, listed)), ""]
    evidence = evidence_rows(listed)
    if evidence:
        parts += ["## Failure evidence", "", md_table(EVIDENCE_HEADER, evidence), ""]
    parts += claims_md(metrics, listed)
    parts += [f"## {GOLD_TITLE}", "", md(gold_line(metrics.gold)), ""]
    moved = metrics.gold.get("reanchored") or []
    if moved:
        parts += [md_table(GOLD_HEADER, gold_rows(moved)), ""]
    return "\n".join(parts)


TERMINAL_QUESTIONS = 50  # a terminal shows this many question rows at most
SUMMARY_QUESTIONS = 200  # and summary.md this many (it also goes to CI job summaries)


def listed_questions(result: RunResult, limit: int) -> list[QuestionResult]:
    """The questions a summary lists: all of a run of at most ``limit``; of a larger one
    the first ``limit`` with a failure label first, each group in record order."""
    from .rows import failing_first

    if len(result.questions) <= limit:
        return result.questions
    return failing_first(result.questions)[:limit]


def terminal_questions(result: RunResult) -> list[QuestionResult]:
    """The questions the terminal lists (:func:`listed_questions`, at most
    :data:`TERMINAL_QUESTIONS`)."""
    return listed_questions(result, TERMINAL_QUESTIONS)


def print_summary(result: RunResult, console: Console | None = None) -> None:
    """A short terminal view: metrics tables, questions, then the failure counts that fired.

    On a terminal these are rich tables; otherwise (a CI log, a pipe) Markdown tables with
    the cells of ``summary.md`` (:func:`~.safe.print_table`): no number is ever cut."""
    if console is None:
        from rich.console import Console

        console = Console()
    metrics = result.metrics
    from rich.text import Text

    for label, text in run_facts(metrics)[:3]:  # what was measured: system, evidence, questions
        console.print(Text(plain(f"{label}: {text}")), soft_wrap=True, highlight=False)
    for group in ("retrieval", "answer"):
        print_table(console, f"{group} metrics", METRIC_HEADER, metric_rows(metrics, group),
                    left=["metric"])
    header = question_header(metrics.checks.k)[:-1]  # failure types: see the table below
    shown = terminal_questions(result)
    title = "questions: found, grounded, right"
    if len(shown) < len(result.questions):
        title += (f" ({len(shown)} of {len(result.questions)}, failing first; all of them in "
                  "answers.jsonl and report.html)")
    print_table(console, title, header, (row[:-1] for row in question_rows(result, shown)),
                left=header)
    fired = [(label, str(n)) for label, n in metrics.failures["counts"].items() if n]
    if fired:
        print_table(console, "failure types", ["failure type", "questions"], fired,
                    left=["failure type"])
