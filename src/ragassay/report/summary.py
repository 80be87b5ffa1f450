"""Human-readable views of a run: `summary.md` and the terminal table."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from ..checks import verdict_text

if TYPE_CHECKING:
    from ..runfolder import RunMetrics, RunResult


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


def question_rows(result: RunResult) -> list[list[str]]:
    """One line per question: id, topic, rank, found@k, grounded, right, failure labels."""
    out = []
    for q in result.questions:
        c = q.checks
        grounded = verdict_text(c.grounded)
        if c.grounded is False:
            grounded += f" ({q.scores.get('groundedness_reason')})"
        labels = ", ".join(label.split(".", 1)[1] for label in q.failures) or "—"
        out.append([q.question_id, q.topic or "", _fmt(q.retrieval.get("rank")),
                    verdict_text(c.found), grounded, verdict_text(c.right), labels])
    return out


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


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    def esc(cell: str) -> str:
        return cell.replace("|", "\\|")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render_summary_md(result: RunResult) -> str:
    """The run's `summary.md`: counts, retrieval and answer metrics apart, failures, questions."""
    metrics = result.metrics
    counts = metrics.counts
    prov = metrics.provenance
    emb = prov.index["embedding"]
    build = prov.index["build"]
    chunking = build["chunking"]
    pipe = metrics.pipeline
    if metrics.mode == "predictions":
        system = f"- system: predictions from a file, judged with top_k={pipe['top_k']}"
    else:
        system = (f"- pipeline: `{pipe['name']}` (top_k={pipe['top_k']}, "
                  f"{pipe['retrieval_backend']}, answerer: {metrics.answerer['kind']})")
    if emb:
        store = (f"- index: {emb['backend']} `{emb['model']}` (dim {emb['dimension']}), chunks of "
                 f"{chunking.get('chunk_size')} chars with {chunking.get('overlap')} overlap, "
                 f"{build['num_chunks']} chunks from {build['num_documents']} documents")
    else:
        store = (f"- evidence: chunk file `{build['source_dir']}`, {build['num_chunks']} chunks "
                 f"from {build['num_documents']} documents")
    parts = [
        f"# Run `{metrics.run_id}`",
        "",
        system,
        store,
        f"- questions: {counts.questions} ({counts.answerable} answerable, "
        f"{counts.unanswerable} unanswerable); seed {prov.seed}; bootstrap 95% CIs",
    ]
    if counts.without_prediction:
        parts.append(f"- **{counts.without_prediction} questions not measured** (no prediction "
                     "or a failed answerer call); see `answers.jsonl` `not_measured`")
    if prov.index.get("stale"):
        parts.append(f"- **warning: the index is stale** ({prov.index['stale']})")
    parts += [
        "",
        "## Retrieval",
        "",
        _md_table(METRIC_HEADER, metric_rows(metrics, "retrieval")),
        "",
        "## Answer",
        "",
        _md_table(METRIC_HEADER, metric_rows(metrics, "answer")),
        "",
        "## Failures",
        "",
    ]
    fired = [[label, str(n)] for label, n in metrics.failures["counts"].items() if n]
    if fired:
        parts.append(_md_table(["failure type", "questions"], fired))
    else:
        parts.append("No failure detected.")
    parts += [
        "",
        f"{metrics.failures['questions_with_failures']} of {counts.questions} questions "
        "have at least one failure; all 24 labels are counted in `metrics.json`.",
        "",
    ]
    if metrics.not_applicable:
        parts += ["Not applicable to these questions (not failures, not averaged in):", "",
                  _md_table(["reason", "questions", "metrics"], not_applicable_rows(metrics)),
                  ""]
    parts += [
        "## Questions",
        "",
        f"Totals: {metrics.checks.line()}",
        "",
        _md_table(question_header(metrics.checks.k), question_rows(result)),
        "",
    ]
    moved = metrics.gold["reanchored"]
    if moved:
        parts += ["## Gold labels checked against the index", ""]
        parts += [f"- `{m['question_id']}` `{m['labelled_chunk_id']}` → {m['status']} "
                  f"{', '.join(f'`{c}`' for c in m['chunk_ids']) or '(nowhere)'}: {m['reason']}"
                  for m in moved]
        parts.append("")
    return "\n".join(parts)


def print_summary(result: RunResult, console: Console | None = None) -> None:
    """A short terminal view: metrics tables, questions, then the failure counts that fired."""
    console = console or Console()
    metrics = result.metrics
    for group in ("retrieval", "answer"):
        table = Table(title=f"{group} metrics", title_justify="left")
        for col in METRIC_HEADER:
            table.add_column(col, justify="left" if col == "metric" else "right")
        for row in metric_rows(metrics, group):
            table.add_row(*row)
        console.print(table)
    table = Table(title="questions: found, grounded, right", title_justify="left")
    for col in question_header(metrics.checks.k)[:-1]:  # failure types: see the table below
        table.add_column(col)
    for row in question_rows(result):
        table.add_row(*row[:-1])
    console.print(table)
    fired = [(label, n) for label, n in metrics.failures["counts"].items() if n]
    if fired:
        table = Table(title="failure types", title_justify="left")
        table.add_column("failure type")
        table.add_column("questions", justify="right")
        for label, n in fired:
            table.add_row(label, str(n))
        console.print(table)
