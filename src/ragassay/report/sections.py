"""The sections of the report page: header, totals, metrics, failures, static question rows."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..checks import verdict_text
from ..runfolder import RunMetrics, RunResult
from ..runrows import QuestionResult
from .cells import NO_GOLD, NOT_RETRIEVED, evidence_text, rank_text
from .charts import (
    CATEGORY_COLORS,
    category_color,
    category_of,
    ci_text,
    esc,
    failure_chart,
    fmt_num,
    is_number,
    metric_chart,
    short_label,
)
from .claims import claims_html
from .header import run_facts
from .rows import STATIC_ROWS, failing_first

MAX_CHUNKS_SHOWN = 10
_GOLD = '<span class="gold">gold</span>'


# --- small formatting helpers --------------------------------------------------------


def scroll_table(header: list[str], rows: Iterable[str], cls: str = "") -> str:
    """A table wrapped for horizontal scrolling; `rows` are ready-made `<tr>` strings."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    klass = f' class="{cls}"' if cls else ""
    return (f'<div class="scroll"><table{klass}><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>")


# --- 1. header -----------------------------------------------------------------------


def header_section(m: RunMetrics) -> str:
    """The run's id and its facts (:func:`~.header.run_facts`), and a stale index warning."""
    dl = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in run_facts(m))
    parts = [f"<header><h1>Run <code>{esc(m.run_id)}</code></h1>",
             f'<dl class="facts">{dl}</dl>']
    stale = (m.provenance.index or {}).get("stale")
    if stale:
        parts.append(f'<p class="warn"><strong>Warning: the index is stale</strong> — '
                     f"{esc(stale)}. Rebuild it before trusting these numbers.</p>")
    parts.append("</header>")
    return "\n".join(parts)


# --- 1b. totals, cost, notes ------------------------------------------------------------


def _ms(value: Any) -> str:
    return f"{value:,.1f} ms" if is_number(value) else "—"


def _tokens(value: Any) -> str:
    return f"{int(value):,}" if is_number(value) else "—"


def totals_section(result: RunResult) -> str:
    m = result.metrics
    cost = m.cost or {}
    lat = (m.timings.get("latency_ms") or {}) if isinstance(m.timings, dict) else {}
    lat_parts = [f"{esc(stage)} p50 {_ms(v.get('p50'))} · p95 {_ms(v.get('p95'))}"
                 for stage, v in lat.items() if isinstance(v, dict)]
    judge = (f"judge {_tokens(cost.get('judge_prompt_tokens'))} prompt / "
             f"{_tokens(cost.get('judge_completion_tokens'))} completion tokens in "
             f"{esc(cost['judge_calls'])} calls" if cost.get("judge_calls") else "")
    extra = [f"tokenizer {esc(cost['tokenizer'])}" if cost.get("tokenizer")
             else "tokens reported by the server" if cost.get("token_source") else "", judge,
             f"{esc(cost['answerer_calls'])} answerer calls"
             if cost.get("answerer_calls") is not None else ""]
    extra_text = ", ".join(x for x in extra if x)
    cost_line = (f"prompt tokens {_tokens(cost.get('prompt_tokens'))} · completion tokens "
                 f"{_tokens(cost.get('completion_tokens'))}"
                 + (f" ({extra_text})" if extra_text else ""))
    if is_number(cost.get("total")):  # money only when prices are configured
        cost_line += f" · money {cost['total']:.4f} (at the configured prices)"
    parts = ['<section class="totals">',
             f'<p class="line"><strong>{esc(result.totals.line())}</strong></p>',
             f"<p>Cost: {cost_line}</p>"]
    if lat_parts:
        parts.append(f'<p class="latency">Latency: {"; ".join(lat_parts)}</p>')
    if m.notes:
        items = "".join(f"<li>{esc(n)}</li>" for n in m.notes)
        parts.append(f'<div class="notes"><strong>Notes</strong><ul>{items}</ul></div>')
    parts.append("</section>")
    return "\n".join(parts)


# --- 2. metrics ----------------------------------------------------------------------


def _metric_row(name: str, agg: dict[str, Any]) -> str:
    mean = agg.get("mean")
    mean_cell = (f'<td class="num">{fmt_num(mean)}</td>' if is_number(mean)
                 else '<td class="num nm">not measured</td>')
    return (f"<tr><td>{esc(name)}</td>{mean_cell}<td class=\"num\">{esc(ci_text(agg))}</td>"
            f'<td class="num">{esc(agg.get("n", "—"))}</td>'
            f'<td class="num">{esc(agg.get("missing", "—"))}</td></tr>')


def metric_section(m: dict[str, Any], group: str, title: str) -> str:
    aggs = {str(k): v if isinstance(v, dict) else {} for k, v in m[group].items()}
    head = f"<section><h2>{esc(title)}</h2>"
    if not aggs:
        return head + f"<p>No {esc(group)} metrics configured.</p></section>"
    table = scroll_table(["metric", "mean", "95% CI", "n", "missing"],
                   (_metric_row(name, agg) for name, agg in aggs.items()), "metrics")
    unmeasured = [f"{esc(n)} ({esc(a.get('missing', '?'))} missing)" for n, a in aggs.items()
                  if not is_number(a.get("mean"))]
    note = (f'<p class="nm">Not measured: {", ".join(unmeasured)}.</p>' if unmeasured else "")
    chart = metric_chart(aggs, f"{title}: means with bootstrap 95% CI")
    return f'{head}<div class="pair"><div>{table}{note}</div><div>{chart}</div></div></section>'


# --- 3. failure taxonomy -------------------------------------------------------------


def _fired_labels(counts: dict[str, Any]) -> list[tuple[str, int]]:
    """Labels with a count > 0, grouped by category (known order first), file order within."""
    known = list(CATEGORY_COLORS)
    fired = [(label, int(n)) for label, n in counts.items() if is_number(n) and int(n) > 0]

    def key(item: tuple[int, tuple[str, int]]) -> tuple[int, str, int]:
        pos, (label, _) = item
        cat = category_of(label)
        return (known.index(cat) if cat in known else len(known), cat, pos)

    return [item for _, item in sorted(enumerate(fired), key=key)]


def _legend(counts: dict[str, Any], by_category: dict[str, Any]) -> str:
    # The five known categories always, then any other prefix in the order it appears.
    cats = list(dict.fromkeys([*CATEGORY_COLORS, *(category_of(lbl) for lbl in counts)]))
    items = [f'<span class="legend-item"><span class="swatch" '
             f'style="background:{category_color(c)}">'
             f"</span>{esc(c.removesuffix('_failure'))} ({esc(by_category.get(c, 0))})</span>"
             for c in cats]
    return f'<p class="legend">{"".join(items)}</p>'


def failure_section(m: dict[str, Any], n_questions: int) -> str:
    failures = m.get("failures") or {}
    counts = failures.get("counts") or {}
    fired = _fired_labels(counts)
    with_failures = failures.get("questions_with_failures", "—")
    total_q = (m.get("counts") or {}).get("questions", n_questions)
    parts = ["<section><h2>Failure taxonomy</h2>",
             f"<p><strong>{len(fired)} of {len(counts)} labels fired</strong>; {esc(with_failures)}"
             f" of {esc(total_q)} questions have at least one failure. Bars count questions per "
             "label.</p>"]
    if fired:
        parts.append(_legend(counts, failures.get("by_category") or {}))
        parts.append(failure_chart(fired, "Failure labels that fired, by category"))
    else:
        parts.append("<p>No failure detected.</p>")
    unobservable = failures.get("unobservable") or {}
    if unobservable:
        items = "".join(f"<li><code>{esc(k)}</code>: {esc(v)}</li>"
                        for k, v in unobservable.items())
        parts.append(f'<p class="nm">Labels that cannot fire in this run:</p><ul class="nm">'
                     f"{items}</ul>")
    parts.append("</section>")
    return "\n".join(parts)


# --- 4. questions --------------------------------------------------------------------


def _grounded_text(q: QuestionResult) -> str:
    text = verdict_text(q.checks.grounded)
    reason = q.scores.get("groundedness_reason")
    return f"{text} ({reason})" if reason else text


def _label_tags(labels: list[Any]) -> str:
    if not labels:
        return "—"
    return "".join(f'<span class="tag" '
                   f'style="border-color:{category_color(category_of(str(lbl)))}" '
                   f'title="{esc(lbl)}">{esc(short_label(str(lbl)))}</span>' for lbl in labels)


def _question_block(q: QuestionResult, k: int) -> str:
    labels = list(q.failures)
    cls = "q fail" if labels else "q"
    main = (f'<tr class="main"><td class="ids">{esc(q.question_id)}</td>'
            f'<td class="question">{esc(q.question)}</td>'
            f'<td class="num">{esc(rank_text(q.retrieval.get("rank"), k))}</td>'
            f"<td>{esc(verdict_text(q.checks.found))}</td><td>{esc(_grounded_text(q))}</td>"
            f"<td>{esc(verdict_text(q.checks.right))}</td><td>{_label_tags(labels)}</td></tr>")
    more = (f'<tr class="more"><td></td><td colspan="6"><details><summary>answer, citations, '
            f"retrieved chunks, failure evidence</summary>{_question_details(q)}</details>"
            "</td></tr>")
    return f'<tbody class="{cls}">{main}{more}</tbody>'


def _question_details(q: QuestionResult) -> str:
    if q.answer is None:
        parts = [f'<h4>Not measured</h4><p class="nm">{esc(q.not_measured or "—")}</p>']
    else:
        parts = [f'<h4>Answer <span class="nm">({esc(q.answer.status)})</span></h4>',
                 f'<p class="answer">{esc(q.answer.text or "—")}</p>',
                 "<h4>Citations</h4>",
                 _citations([c.model_dump() for c in q.answer.citations], q.gold_chunk_ids)]
    parts += [claims_html(q), _retrieved_table(q), _gold_line(q)]
    if q.failures:
        items = "".join(f'<li><span class="tag" title="{esc(label)}">{esc(short_label(label))}'
                        f"</span> {esc(evidence_text(ev))}</li>"
                        for label, ev in q.failures.items())
        parts.append(f'<h4>Failure evidence</h4><ul class="evidence">{items}</ul>')
    return f'<div class="detail">{"".join(parts)}</div>'


def _citations(citations: list[Any], gold_ids: list[str]) -> str:
    if not citations:
        return '<p class="nm">none</p>'
    items = []
    for c in citations:
        c = c if isinstance(c, dict) else {"chunk_id": c}
        cid = str(c.get("chunk_id", "—"))
        page = f", page {esc(c['page'])}" if c.get("page") is not None else ""
        gold = f" {_GOLD}" if cid in gold_ids else ""
        items.append(f'<li><span class="ids">{esc(cid)}</span>{page}{gold}</li>')
    return f"<ul>{''.join(items)}</ul>"


def _retrieved_table(q: QuestionResult) -> str:
    if not q.retrieved:
        return '<h4>Retrieved</h4><p class="nm">no retrieved chunks recorded</p>'
    shown = q.retrieved[:MAX_CHUNKS_SHOWN]
    rows = (f'<tr><td class="num">{esc(h.rank)}</td><td class="ids">{esc(h.chunk_id)}</td>'
            f'<td class="num">{esc(fmt_num(h.score, 4))}</td>'
            f"<td>{_GOLD if h.gold else ''}</td></tr>" for h in shown)
    title = f"<h4>Retrieved (top {len(shown)} of {len(q.retrieved)})</h4>"
    return title + scroll_table(["rank", "chunk", "score", ""], rows, "chunks")


def _gold_line(q: QuestionResult) -> str:
    if not q.gold_chunk_ids:
        return '<p class="nm">No gold chunk for this question.</p>'
    ranks = q.gold_rank_in_index
    items = [f'<span class="ids">{esc(cid)}</span>'
             + (f" (rank {esc(ranks[cid])} in the whole index)" if cid in ranks else "")
             for cid in q.gold_chunk_ids]
    return f"<p>Gold: {'; '.join(items)}</p>"


def questions_section(result: RunResult) -> str:
    totals = result.totals
    header = ["id", "question", "rank", f"found@{totals.k}", "grounded", "right",
              "failure labels"]
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    ordered = failing_first(result.questions)
    static = ordered[:STATIC_ROWS]
    blocks = "".join(_question_block(q, totals.k) for q in static)
    n_fail = sum(1 for q in result.questions if q.failures)
    rest = len(ordered) - len(static)
    more = (f'<p class="nm" id="static-note">The first {len(static)} questions (failing first) '
            f"are shown; {rest} more are listed with JavaScript on (or read answers.jsonl).</p>"
            if rest else "")
    return ('<section id="questions"><h2>Questions</h2>'
            f"<p><strong>{esc(totals.line())}</strong></p>"
            f"<p>{len(result.questions)} questions; {n_fail} with failures (highlighted, listed "
            "first). Rank is the position of the first gold chunk among the retrieved "
            f"({NOT_RETRIEVED}: none retrieved; “beyond k={totals.k}”: retrieved below the "
            f"cut-off; {NO_GOLD}: no gold). Open a row for its answer, citations, chunks and "
            "evidence.</p>"
            '<div id="controls"></div>'
            f'<div class="scroll"><table class="questions" id="qtable"><thead><tr>{head}</tr>'
            f"</thead>{blocks}</table></div>{more}"
            '<p id="pager"></p></section>')


# --- 5. re-anchored gold -------------------------------------------------------------


def reanchored_section(m: dict[str, Any]) -> str:
    """The gold audit of the run (``metrics.json`` → ``gold``), as ``summary.md`` has it."""
    from .summary import GOLD_HEADER, GOLD_TITLE, gold_line, gold_rows

    gold = m.get("gold") or {}
    moved = [x for x in gold.get("reanchored") or [] if isinstance(x, dict)]
    ids = {"question", "label", "labelled chunk", "gold now"}
    rows = ("<tr>" + "".join(f'<td class="ids">{esc(cell)}</td>' if name in ids
                             else f"<td>{esc(cell)}</td>"
                             for name, cell in zip(GOLD_HEADER, row, strict=True)) + "</tr>"
            for row in gold_rows(moved))
    return (f'<section id="gold"><h2>{esc(GOLD_TITLE)}</h2><p>{esc(gold_line(gold))}</p>'
            + (scroll_table(GOLD_HEADER, rows) if moved else "") + "</section>")
