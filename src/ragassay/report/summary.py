"""Human-readable views of a run: `summary.md` and the terminal table."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def metric_rows(metrics: dict[str, Any], group: str) -> list[list[str]]:
    """[metric, mean, 95% CI, n, missing] for each metric of a group ('retrieval' / 'answer')."""
    out = []
    for name, agg in metrics[group].items():
        ci = "—" if agg["ci_low"] is None else f"[{agg['ci_low']:.3f}, {agg['ci_high']:.3f}]"
        out.append([name, _fmt(agg["mean"]), ci, str(agg["n"]), str(agg["missing"])])
    return out


def question_rows(rows: list[dict[str, Any]], cutoff: int) -> list[list[str]]:
    """One line per question: id, topic, rank, found@cutoff, grounded, right, failure labels."""
    out = []
    for r in rows:
        q = r["question"]
        ret, ans = r["retrieval"], r["answer_scores"]
        found = ret.get(f"hit_at_{cutoff}")
        labels = ", ".join(label.split(".", 1)[1] for label in r["failures"]) or "—"
        out.append([
            q.question_id,
            q.topic or "",
            _fmt(ret.get("rank")),
            "—" if found is None else ("yes" if found else "no"),
            "yes" if ans.get("groundedness") else f"no ({ans.get('groundedness_reason')})",
            {1: "yes", 0: "no"}.get(ans.get("correct"), "—"),
            labels,
        ])
    return out


def question_header(k: int) -> list[str]:
    return ["question", "topic", "rank", f"found@{k}", "grounded", "right", "failure types"]
METRIC_HEADER = ["metric", "mean", "95% CI", "n", "missing"]


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    def esc(cell: str) -> str:
        return cell.replace("|", "\\|")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render_summary_md(metrics: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """The run's `summary.md`: counts, retrieval and answer metrics apart, failures, questions."""
    counts = metrics["counts"]
    prov = metrics["provenance"]
    emb = prov["index"]["embedding"]
    build = prov["index"]["build"]
    chunking = build["chunking"]
    pipe = metrics["pipeline"]
    if metrics.get("mode") == "predictions":
        system = f"- system: predictions from a file, judged with top_k={pipe['top_k']}"
    else:
        system = (f"- pipeline: `{pipe['name']}` (top_k={pipe['top_k']}, "
                  f"{pipe['retrieval_backend']}, answerer: {metrics['answerer']['kind']})")
    if emb:
        store = (f"- index: {emb['backend']} `{emb['model']}` (dim {emb['dimension']}), chunks of "
                 f"{chunking.get('chunk_size')} chars with {chunking.get('overlap')} overlap, "
                 f"{build['num_chunks']} chunks from {build['num_documents']} documents")
    else:
        store = (f"- evidence: chunk file `{build['source_dir']}`, {build['num_chunks']} chunks "
                 f"from {build['num_documents']} documents")
    parts = [
        f"# Run `{metrics['run_id']}`",
        "",
        system,
        store,
        f"- questions: {counts['questions']} ({counts['answerable']} answerable, "
        f"{counts['unanswerable']} unanswerable); seed {prov['seed']}; bootstrap 95% CIs",
    ]
    if prov["index"].get("stale"):
        parts.append(f"- **warning: the index is stale** ({prov['index']['stale']})")
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
    fired = [[label, str(n)] for label, n in metrics["failures"]["counts"].items() if n]
    if fired:
        parts.append(_md_table(["failure type", "questions"], fired))
    else:
        parts.append("No failure detected.")
    parts += [
        "",
        f"{metrics['failures']['questions_with_failures']} of {counts['questions']} questions "
        "have at least one failure; all 24 labels are counted in `metrics.json`.",
        "",
        "## Questions",
        "",
        f"Totals: {totals_line(metrics['checks'])}",
        "",
        _md_table(question_header(metrics["checks"]["k"]),
                  question_rows(rows, metrics["checks"]["k"])),
        "",
    ]
    moved = metrics["gold"]["reanchored"]
    if moved:
        parts += ["## Gold labels checked against the index", ""]
        parts += [f"- `{m['question_id']}` `{m['labelled_chunk_id']}` → {m['status']} "
                  f"{', '.join(f'`{c}`' for c in m['chunk_ids']) or '(nowhere)'}: {m['reason']}"
                  for m in moved]
        parts.append("")
    return "\n".join(parts)


def totals_line(checks: dict[str, Any]) -> str:
    """`found@3 6/7 · grounded 7/8 · right 7/8` (not-measured questions left out, and said)."""
    parts = []
    for name in ("found", "grounded", "right"):
        c = checks[name]
        label = f"found@{checks['k']}" if name == "found" else name
        extra = f" ({c['not_measured']} not measured)" if c["not_measured"] and name != "found" \
            else ""
        parts.append(f"{label} {c['passed']}/{c['total']}{extra}")
    return " · ".join(parts)


def print_summary(metrics: dict[str, Any], rows: list[dict[str, Any]],
                  console: Console | None = None) -> None:
    """A short terminal view: metrics tables, then the failure counts that fired."""
    console = console or Console()
    for group in ("retrieval", "answer"):
        table = Table(title=f"{group} metrics", title_justify="left")
        for col in METRIC_HEADER:
            table.add_column(col, justify="left" if col == "metric" else "right")
        for row in metric_rows(metrics, group):
            table.add_row(*row)
        console.print(table)
    k = metrics["checks"]["k"]
    table = Table(title="questions: found, grounded, right", title_justify="left")
    for col in question_header(k)[:-1]:  # failure types: see the table below and the files
        table.add_column(col)
    for row in question_rows(rows, k):
        table.add_row(*row[:-1])
    console.print(table)
    fired = [(label, n) for label, n in metrics["failures"]["counts"].items() if n]
    if fired:
        table = Table(title="failure types", title_justify="left")
        table.add_column("failure type")
        table.add_column("questions", justify="right")
        for label, n in fired:
            table.add_row(label, str(n))
        console.print(table)
