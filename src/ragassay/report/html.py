"""A self-contained HTML page for one run: metrics with CIs, failure taxonomy, questions.

The page renders a :class:`~ragassay.runfolder.RunResult` (the record a run writes to its
folder, or reads back with :func:`~ragassay.runfolder.read_run`), carries its CSS inline and
draws its charts as inline SVG with our own few lines of code (:mod:`.charts`): no CDN, no
network, so it opens from disk offline. Every piece of text from the run is escaped.

It scales to any number of questions: the summary (header, totals, cost, notes, metric and
failure charts) and the first :data:`STATIC_ROWS` questions (failing first) are static HTML,
readable with JavaScript off. Every question is also embedded once as a compact JSON row
(``<script type="application/json" id="rows">``, with ``<`` written ``\u003c`` so no text can
close the element) and the chunk texts the questions refer to likewise (``id="chunks"``); one
small inline script (:data:`SCRIPT`) then draws the question list from the rows — filter by
failure label, category, topic, answer status and each check, search, sort by rank or score,
a page at a time — and a question's details (retrieved list with the k cut-off, gold, chunk
texts, answer, citations) only when it is opened. The same run gives a byte-identical page:
the only time shown is the one `metrics.json` holds.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..atomic import write_text
from ..checks import verdict_text
from ..runfolder import QuestionResult, RunResult, read_run
from .charts import (
    CATEGORY_COLORS,
    _category,
    _ci_text,
    _color,
    _e,
    _is_number,
    _num,
    _short,
    failure_chart,
    metric_chart,
)
from .scripts import SCRIPT

MAX_CHUNKS_SHOWN = 10
STATIC_ROWS = 50  # questions written as static HTML (failing first), for a page without JS
RETRIEVED_SHOWN = 20  # retrieved chunks per question embedded in the page (k cut-off drawn)
_GOLD = '<span class="gold">gold</span>'


# --- public --------------------------------------------------------------------------


def render_html(result: RunResult) -> str:
    """The report page of a run as one HTML string (UTF-8, no external resource)."""
    metrics = result.metrics.model_dump(mode="json")
    title = f"ragassay run {result.run_id}"
    body = [
        _header_section(metrics, result.run_id),
        _totals_section(result),
        _metric_section(metrics, "retrieval", "Retrieval metrics"),
        _metric_section(metrics, "answer", "Answer metrics"),
        _failure_section(metrics, len(result.questions)),
        _questions_section(result),
        _reanchored_section(metrics),
        json_script("rows", _rows_json(result)),
        json_script("chunks", _chunks_json(result)),
        f"<script>{SCRIPT}</script>",
    ]
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        *body,
        "</body>",
        "</html>",
        "",
    ])


def json_script(element_id: str, data: Any) -> str:
    """``data`` as a ``<script type="application/json">`` element. Every ``<`` is written
    ``\u003c`` (JSON allows it only inside strings), so no text closes the element or opens
    a comment (``</script>``, ``<!--``)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    return f'<script type="application/json" id="{_e(element_id)}">{text}</script>'


def write_html(run_dir: Path, out: Path | None = None) -> Path:
    """(Re)write the report page of a run folder (default `run_dir/report.html`)
    atomically; return its path. Raises InputError naming the file (and line) when the
    run folder is missing or malformed."""
    page = render_html(read_run(run_dir))
    return write_text(Path(out) if out is not None else Path(run_dir) / "report.html", page)


# --- small formatting helpers --------------------------------------------------------


def _table(header: list[str], rows: Iterable[str], cls: str = "") -> str:
    """A table wrapped for horizontal scrolling; `rows` are ready-made `<tr>` strings."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    klass = f' class="{cls}"' if cls else ""
    return (f'<div class="scroll"><table{klass}><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>")


# --- 1. header -----------------------------------------------------------------------


def _header_section(m: dict[str, Any], folder: str) -> str:
    prov = m.get("provenance") or {}
    index = prov.get("index") or {}
    emb = index.get("embedding") or {}
    build = index.get("build") or {}
    chunking = build.get("chunking") or {}
    pipe = m.get("pipeline") or {}
    counts = m.get("counts") or {}
    answerer = (m.get("answerer") or {}).get("kind")
    facts = [
        ("pipeline", f"{pipe.get('name', '—')} (top_k {pipe.get('top_k', '—')}, "
                     f"{pipe.get('retrieval_backend', '—')} retrieval"
                     + (f", {answerer} answerer)" if answerer else ")")),
        ("index model", f"{emb.get('backend', '—')} {emb.get('model', '—')} "
                        f"(dimension {emb.get('dimension', '—')})"),
        ("chunking", f"{chunking.get('strategy', '—')}, {chunking.get('chunk_size', '—')} chars, "
                     f"overlap {chunking.get('overlap', '—')}; {build.get('num_chunks', '—')} "
                     f"chunks from {build.get('num_documents', '—')} documents"),
        ("questions", f"{counts.get('questions', '—')} ({counts.get('answerable', '—')} "
                      f"answerable, {counts.get('unanswerable', '—')} unanswerable)"),
        ("seed", f"{prov.get('seed', '—')} (bootstrap 95% confidence intervals)"),
        ("config", f"{prov.get('config_path') or '—'} "
                   f"(sha256 {str(prov.get('config_sha256') or '—')[:12]})"),
        ("package", f"ragassay {(prov.get('package') or {}).get('version', '—')}"),
    ]
    created = (m.get("timings") or {}).get("created_at")
    if created:
        facts.append(("created", str(created)))
    dl = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in facts)
    parts = [f"<header><h1>Run <code>{_e(m.get('run_id', folder))}</code></h1>",
             f'<dl class="facts">{dl}</dl>']
    if index.get("stale"):
        parts.append(f'<p class="warn"><strong>Warning: the index is stale</strong> — '
                     f"{_e(index['stale'])}. Rebuild it before trusting these numbers.</p>")
    parts.append("</header>")
    return "\n".join(parts)


# --- 1b. totals, cost, notes ------------------------------------------------------------


def _ms(value: Any) -> str:
    return f"{value:,.1f} ms" if _is_number(value) else "—"


def _tokens(value: Any) -> str:
    return f"{int(value):,}" if _is_number(value) else "—"


def _totals_section(result: RunResult) -> str:
    m = result.metrics
    cost = m.cost or {}
    lat = (m.timings.get("latency_ms") or {}) if isinstance(m.timings, dict) else {}
    lat_parts = [f"{_e(stage)} p50 {_ms(v.get('p50'))} · p95 {_ms(v.get('p95'))}"
                 for stage, v in lat.items() if isinstance(v, dict)]
    extra = [f"tokenizer {_e(cost['tokenizer'])}" if cost.get("tokenizer") else "",
             f"{_e(cost['answerer_calls'])} answerer calls"
             if cost.get("answerer_calls") is not None else ""]
    extra_text = ", ".join(x for x in extra if x)
    cost_line = (f"prompt tokens {_tokens(cost.get('prompt_tokens'))} · completion tokens "
                 f"{_tokens(cost.get('completion_tokens'))}"
                 + (f" ({extra_text})" if extra_text else ""))
    if _is_number(cost.get("total")):  # money only when prices are configured
        cost_line += f" · money {cost['total']:.4f} (at the configured prices)"
    parts = ['<section class="totals">',
             f'<p class="line"><strong>{_e(result.totals.line())}</strong></p>',
             f"<p>Cost: {cost_line}</p>"]
    if lat_parts:
        parts.append(f'<p class="latency">Latency: {"; ".join(lat_parts)}</p>')
    if m.notes:
        items = "".join(f"<li>{_e(n)}</li>" for n in m.notes)
        parts.append(f'<div class="notes"><strong>Notes</strong><ul>{items}</ul></div>')
    parts.append("</section>")
    return "\n".join(parts)


# --- 2. metrics ----------------------------------------------------------------------


def _metric_row(name: str, agg: dict[str, Any]) -> str:
    mean = agg.get("mean")
    mean_cell = (f'<td class="num">{_num(mean)}</td>' if _is_number(mean)
                 else '<td class="num nm">not measured</td>')
    return (f"<tr><td>{_e(name)}</td>{mean_cell}<td class=\"num\">{_e(_ci_text(agg))}</td>"
            f'<td class="num">{_e(agg.get("n", "—"))}</td>'
            f'<td class="num">{_e(agg.get("missing", "—"))}</td></tr>')


def _metric_section(m: dict[str, Any], group: str, title: str) -> str:
    aggs = {str(k): v if isinstance(v, dict) else {} for k, v in m[group].items()}
    head = f"<section><h2>{_e(title)}</h2>"
    if not aggs:
        return head + f"<p>No {_e(group)} metrics configured.</p></section>"
    table = _table(["metric", "mean", "95% CI", "n", "missing"],
                   (_metric_row(name, agg) for name, agg in aggs.items()), "metrics")
    unmeasured = [f"{_e(n)} ({_e(a.get('missing', '?'))} missing)" for n, a in aggs.items()
                  if not _is_number(a.get("mean"))]
    note = (f'<p class="nm">Not measured: {", ".join(unmeasured)}.</p>' if unmeasured else "")
    chart = metric_chart(aggs, f"{title}: means with bootstrap 95% CI")
    return f'{head}<div class="pair"><div>{table}{note}</div><div>{chart}</div></div></section>'


# --- 3. failure taxonomy -------------------------------------------------------------


def _fired_labels(counts: dict[str, Any]) -> list[tuple[str, int]]:
    """Labels with a count > 0, grouped by category (known order first), file order within."""
    known = list(CATEGORY_COLORS)
    fired = [(label, int(n)) for label, n in counts.items() if _is_number(n) and int(n) > 0]

    def key(item: tuple[int, tuple[str, int]]) -> tuple[int, str, int]:
        pos, (label, _) = item
        cat = _category(label)
        return (known.index(cat) if cat in known else len(known), cat, pos)

    return [item for _, item in sorted(enumerate(fired), key=key)]


def _legend(counts: dict[str, Any], by_category: dict[str, Any]) -> str:
    # The five known categories always, then any other prefix in the order it appears.
    cats = list(dict.fromkeys([*CATEGORY_COLORS, *(_category(lbl) for lbl in counts)]))
    items = [f'<span class="legend-item"><span class="swatch" style="background:{_color(c)}">'
             f"</span>{_e(c.removesuffix('_failure'))} ({_e(by_category.get(c, 0))})</span>"
             for c in cats]
    return f'<p class="legend">{"".join(items)}</p>'


def _failure_section(m: dict[str, Any], n_questions: int) -> str:
    failures = m.get("failures") or {}
    counts = failures.get("counts") or {}
    fired = _fired_labels(counts)
    with_failures = failures.get("questions_with_failures", "—")
    total_q = (m.get("counts") or {}).get("questions", n_questions)
    parts = ["<section><h2>Failure taxonomy</h2>",
             f"<p><strong>{len(fired)} of {len(counts)} labels fired</strong>; {_e(with_failures)}"
             f" of {_e(total_q)} questions have at least one failure. Bars count questions per "
             "label.</p>"]
    if fired:
        parts.append(_legend(counts, failures.get("by_category") or {}))
        parts.append(failure_chart(fired, "Failure labels that fired, by category"))
    else:
        parts.append("<p>No failure detected.</p>")
    unobservable = failures.get("unobservable") or {}
    if unobservable:
        items = "".join(f"<li><code>{_e(k)}</code>: {_e(v)}</li>" for k, v in unobservable.items())
        parts.append(f'<p class="nm">Labels that cannot fire in this run:</p><ul class="nm">'
                     f"{items}</ul>")
    parts.append("</section>")
    return "\n".join(parts)


# --- 4. questions --------------------------------------------------------------------


def _rank_text(rank: Any) -> str:
    """Rank of the first gold chunk among the retrieved; 0 means none was retrieved."""
    if rank is None:
        return "—"
    return "absent" if rank == 0 else str(rank)


def _grounded_text(q: QuestionResult) -> str:
    text = verdict_text(q.checks.grounded)
    reason = q.scores.get("groundedness_reason")
    return f"{text} ({reason})" if reason else text


def _label_tags(labels: list[Any]) -> str:
    if not labels:
        return "—"
    return "".join(f'<span class="tag" style="border-color:{_color(_category(str(lbl)))}" '
                   f'title="{_e(lbl)}">{_e(_short(str(lbl)))}</span>' for lbl in labels)


def _question_block(q: QuestionResult) -> str:
    labels = list(q.failures)
    cls = "q fail" if labels else "q"
    main = (f'<tr class="main"><td class="ids">{_e(q.question_id)}</td>'
            f'<td class="question">{_e(q.question)}</td>'
            f'<td class="num">{_e(_rank_text(q.retrieval.get("rank")))}</td>'
            f"<td>{_e(verdict_text(q.checks.found))}</td><td>{_e(_grounded_text(q))}</td>"
            f"<td>{_e(verdict_text(q.checks.right))}</td><td>{_label_tags(labels)}</td></tr>")
    more = (f'<tr class="more"><td></td><td colspan="6"><details><summary>answer, citations, '
            f"retrieved chunks, failure evidence</summary>{_question_details(q)}</details>"
            "</td></tr>")
    return f'<tbody class="{cls}">{main}{more}</tbody>'


def _question_details(q: QuestionResult) -> str:
    if q.answer is None:
        parts = [f'<h4>Not measured</h4><p class="nm">{_e(q.not_measured or "—")}</p>']
    else:
        parts = [f'<h4>Answer <span class="nm">({_e(q.answer.status)})</span></h4>',
                 f'<p class="answer">{_e(q.answer.text or "—")}</p>',
                 "<h4>Citations</h4>",
                 _citations([c.model_dump() for c in q.answer.citations], q.gold_chunk_ids)]
    parts += [_retrieved_table(q), _gold_line(q)]
    if q.failures:
        pretty = json.dumps(q.failures, ensure_ascii=False, indent=2)
        parts.append(f"<h4>Failure evidence</h4><pre>{_e(pretty)}</pre>")
    return f'<div class="detail">{"".join(parts)}</div>'


def _citations(citations: list[Any], gold_ids: list[str]) -> str:
    if not citations:
        return '<p class="nm">none</p>'
    items = []
    for c in citations:
        c = c if isinstance(c, dict) else {"chunk_id": c}
        cid = str(c.get("chunk_id", "—"))
        page = f", page {_e(c['page'])}" if c.get("page") is not None else ""
        gold = f" {_GOLD}" if cid in gold_ids else ""
        items.append(f'<li><span class="ids">{_e(cid)}</span>{page}{gold}</li>')
    return f"<ul>{''.join(items)}</ul>"


def _retrieved_table(q: QuestionResult) -> str:
    if not q.retrieved:
        return '<h4>Retrieved</h4><p class="nm">no retrieved chunks recorded</p>'
    shown = q.retrieved[:MAX_CHUNKS_SHOWN]
    rows = (f'<tr><td class="num">{_e(h.rank)}</td><td class="ids">{_e(h.chunk_id)}</td>'
            f'<td class="num">{_e(_num(h.score, 4))}</td>'
            f"<td>{_GOLD if h.gold else ''}</td></tr>" for h in shown)
    title = f"<h4>Retrieved (top {len(shown)} of {len(q.retrieved)})</h4>"
    return title + _table(["rank", "chunk", "score", ""], rows, "chunks")


def _gold_line(q: QuestionResult) -> str:
    if not q.gold_chunk_ids:
        return '<p class="nm">No gold chunk for this question.</p>'
    ranks = q.gold_rank_in_index
    items = [f'<span class="ids">{_e(cid)}</span>'
             + (f" (rank {_e(ranks[cid])} in the whole index)" if cid in ranks else "")
             for cid in q.gold_chunk_ids]
    return f"<p>Gold: {'; '.join(items)}</p>"


def failing_first(questions: list[QuestionResult]) -> list[QuestionResult]:
    """Questions with a failure label first, each group in record order."""
    return [q for q in questions if q.failures] + [q for q in questions if not q.failures]


def _questions_section(result: RunResult) -> str:
    totals = result.totals
    header = ["id", "question", "rank", f"found@{totals.k}", "grounded", "right",
              "failure labels"]
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    ordered = failing_first(result.questions)
    static = ordered[:STATIC_ROWS]
    blocks = "".join(_question_block(q) for q in static)
    n_fail = sum(1 for q in result.questions if q.failures)
    rest = len(ordered) - len(static)
    more = (f'<p class="nm" id="static-note">The first {len(static)} questions (failing first) '
            f"are shown; {rest} more are listed with JavaScript on (or read answers.jsonl).</p>"
            if rest else "")
    return ('<section id="questions"><h2>Questions</h2>'
            f"<p><strong>{_e(totals.line())}</strong></p>"
            f"<p>{len(result.questions)} questions; {n_fail} with failures (highlighted, listed "
            "first). Rank is the position of the first gold chunk among the retrieved (absent: "
            "none retrieved; —: no gold). Open a row for its answer, citations, chunks and "
            "evidence.</p>"
            '<div id="controls"></div>'
            f'<div class="scroll"><table class="questions" id="qtable"><thead><tr>{head}</tr>'
            f"</thead>{blocks}</table></div>{more}"
            '<p id="pager"></p></section>')


# --- 4b. the embedded rows -------------------------------------------------------------


def _score(value: Any) -> float | None:
    return round(float(value), 4) if _is_number(value) else None


class Strings:
    """A table of repeated strings (chunk ids, labels, topics, statuses): rows refer to them by
    position, which keeps 10,000 questions within a few megabytes."""

    def __init__(self) -> None:
        self.table: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, text: str | None) -> int | None:
        if text is None:
            return None
        if text not in self._index:
            self._index[text] = len(self.table)
            self.table.append(text)
        return self._index[text]


# A row is a list in this field order (trailing empty fields left off); see decode_row.
ROW_FIELDS = ("id", "q", "topic", "ans", "st", "c", "gr", "rank", "top", "lab", "ret", "nret",
              "gold", "gri", "text", "cit", "cited", "nm", "ev")
_CHECK_CHAR = {True: "y", False: "n", None: "-"}


def _tilde(value: Any, s: Strings) -> Any:
    """Failure evidence with its longer strings (and keys) as ``"~<position>"`` in ``s``
    (every string starting with ``~`` is written so, so the reading is unambiguous)."""
    def short(text: str) -> str:
        return f"~{s(text)}" if len(text) > 6 or text.startswith("~") else text
    if isinstance(value, str):
        return short(value)
    if isinstance(value, dict):
        return {short(str(key)): _tilde(v, s) for key, v in value.items()}
    if isinstance(value, list):
        return [_tilde(v, s) for v in value]
    return value


def question_row(q: QuestionResult, k: int, s: Strings) -> list[Any]:
    """A question as one compact JSON row of the page (the script decodes it with the string
    table ``s`` and renders it on demand; :func:`decode_row` reads it back). Chunk ids,
    labels, topic, status and reasons are positions in ``s``; ``c`` is the three checks as
    ``y`` / ``n`` / ``-``; ``ret`` holds ``[chunk, score]`` per retrieved chunk, with
    ``gold, rank`` appended when they are not "in the gold list" and the position; ``ev`` the
    evidence per label in ``lab`` order."""
    gold_ids = set(q.gold_chunk_ids)
    cited = q.scores.get("cited_ids")
    ret = []
    for i, h in enumerate(q.retrieved[:max(k, RETRIEVED_SHOWN)]):
        entry: list[Any] = [s(h.chunk_id), _score(h.score)]
        plain = h.rank == i + 1 and h.gold == (h.chunk_id in gold_ids)
        ret.append(entry if plain else [*entry, 1 if h.gold else 0, h.rank])
    c = q.checks
    values: dict[str, Any] = {
        "id": q.question_id, "q": q.question, "topic": s(q.topic), "ans": int(q.answerable),
        "st": s(q.answer.status) if q.answer is not None else None,
        "c": "".join(_CHECK_CHAR[v] for v in (c.found, c.grounded, c.right)),
        "gr": s(q.scores.get("groundedness_reason") or None),
        "rank": q.retrieval.get("rank"),
        "top": _score(q.retrieved[0].score) if q.retrieved else None,
        "lab": [s(label) for label in q.failures], "ret": ret,
        "nret": len(q.retrieved) if len(q.retrieved) != len(ret) else None,
        "gold": [s(cid) for cid in q.gold_chunk_ids],
        "gri": q.gold_rank_in_index or None,
    }
    if q.answer is not None:
        values["text"] = q.answer.text
        values["cit"] = [[s(x.chunk_id), x.page] for x in q.answer.citations]
        values["cited"] = [s(str(x)) for x in cited] if isinstance(cited, list) else []
    values["nm"] = s(q.not_measured)
    values["ev"] = _tilde(list(q.failures.values()), s) if q.failures else None
    row = [values.get(name) for name in ROW_FIELDS]
    while row and row[-1] is None:
        row.pop()
    return row


def decode_row(row: list[Any], strings: list[str]) -> dict[str, Any]:
    """A row as the page's script reads it: ``{field: value}`` with strings resolved, checks
    as True / False / None, ``ret`` as ``[rank, chunk_id, score, gold]``, ``ev`` as
    ``{label: evidence}``."""
    r = dict(zip(ROW_FIELDS, row + [None] * (len(ROW_FIELDS) - len(row)), strict=True))

    def at(i: int | None) -> str | None:
        return None if i is None else strings[i]

    def untilde(v: Any) -> Any:
        if isinstance(v, str):
            return strings[int(v[1:])] if v.startswith("~") else v
        if isinstance(v, dict):
            return {untilde(key): untilde(x) for key, x in v.items()}
        return [untilde(x) for x in v] if isinstance(v, list) else v

    gold = [at(i) for i in r["gold"] or []]
    r.update(topic=at(r["topic"]), st=at(r["st"]), gr=at(r["gr"]) or "", nm=at(r["nm"]),
             ans=bool(r["ans"]), gold=gold, lab=[at(i) for i in r["lab"] or []],
             c=[{"y": True, "n": False, "-": None}[x] for x in r["c"]])
    r["ret"] = [[e[3] if len(e) > 2 else i + 1, at(e[0]), e[1],
                 bool(e[2]) if len(e) > 2 else at(e[0]) in gold]
                for i, e in enumerate(r["ret"] or [])]
    r["nret"] = len(r["ret"]) if r["nret"] is None else r["nret"]
    if r["cit"] is not None:
        r["cit"] = [[at(x[0]), x[1]] for x in r["cit"]]
        r["cited"] = [at(x) for x in r["cited"] or []]
    r["ev"] = dict(zip(r["lab"], untilde(r["ev"]), strict=True)) if r["ev"] else None
    return r


def _rows_json(result: RunResult) -> dict[str, Any]:
    k = result.totals.k
    strings = Strings()
    rows = [question_row(q, k, strings) for q in failing_first(result.questions)]
    return {"k": k, "static": min(STATIC_ROWS, len(result.questions)), "colors": CATEGORY_COLORS,
            "strings": strings.table, "rows": rows}


def _chunks_json(result: RunResult) -> dict[str, str]:
    return result.chunk_texts


# --- 5. re-anchored gold -------------------------------------------------------------


def _reanchored_section(m: dict[str, Any]) -> str:
    moved = [x for x in (m.get("gold") or {}).get("reanchored") or [] if isinstance(x, dict)]
    head = "<section><h2>Gold labels checked against the index</h2>"
    if not moved:
        return head + "<p>Every gold label matched its chunk; none was re-anchored.</p></section>"
    rows = (f'<tr><td class="ids">{_e(x.get("question_id", "—"))}</td>'
            f'<td class="ids">{_e(x.get("labelled_chunk_id", "—"))}</td>'
            f"<td>{_e(x.get('status', '—'))}</td>"
            f'<td class="ids">{_e(", ".join(map(str, x.get("chunk_ids") or [])) or "(nowhere)")}'
            f"</td><td>{_e(x.get('reason', ''))}</td></tr>" for x in moved)
    return (head + f"<p>{len(moved)} gold label(s) re-anchored or unplaceable.</p>"
            + _table(["question", "labelled chunk", "status", "now", "reason"], rows)
            + "</section>")


_CSS = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d8dee4;--fail:#fff1ef;--soft:#f6f8fa}
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans KR",
"Apple SD Gothic Neo","Malgun Gothic",sans-serif;color:var(--fg);line-height:1.45;
margin:0 auto;padding:1rem 1.25rem 3rem;max-width:78rem}
h1{font-size:1.5rem;margin:.5rem 0}
h2{font-size:1.2rem;border-bottom:1px solid var(--line);padding-bottom:.2rem;margin-top:2rem}
h4{font-size:.9rem;margin:.8rem 0 .3rem}
code,.ids{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85em;
overflow-wrap:anywhere}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;margin:0}
.facts dt{color:var(--muted)}.facts dd{margin:0;overflow-wrap:anywhere}
.warn{background:#fff8c5;border:1px solid #d4a72c;padding:.5rem .75rem;border-radius:4px}
.pair{display:flex;flex-wrap:wrap;gap:1rem 2rem;align-items:flex-start}
.pair>div{min-width:0;max-width:100%}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:.9rem}
th,td{text-align:left;padding:.25rem .5rem;border-bottom:1px solid var(--line);
vertical-align:top}
th{background:var(--soft)}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.nm{color:var(--muted);font-style:italic}
svg.chart{max-width:100%;height:auto;display:block}
.legend-item{display:inline-block;margin-right:1rem;white-space:nowrap}
.swatch{display:inline-block;width:.8em;height:.8em;margin-right:.3em;vertical-align:-.05em}
table.questions{width:100%}
table.questions td.question{min-width:14rem}
table.questions tr.main td:first-child{white-space:nowrap}
tbody.q tr.main td{border-bottom:none}
tbody.q tr.more td{padding-top:0}
tbody.fail td{background:var(--fail)}
tbody.fail tr.main td:first-child{box-shadow:inset 3px 0 0 #cf222e}
.tag{display:inline-block;border-left:4px solid;background:var(--soft);padding:0 .3rem;
margin:0 .25rem .2rem 0;font-size:.8rem;white-space:nowrap}
summary{cursor:pointer;color:var(--muted);font-size:.85rem}
.detail{padding:.25rem 0 .5rem}
.answer{white-space:pre-wrap;overflow-wrap:anywhere;margin:0}
.gold{background:#dafbe1;color:#116329;padding:0 .3rem;border-radius:3px;font-size:.8rem}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--soft);padding:.5rem;
font-size:.8rem;margin:0}
.totals{background:var(--soft);border:1px solid var(--line);border-radius:6px;
padding:.5rem .9rem;margin-top:1rem}.totals p{margin:.25rem 0}.totals .line{font-size:1.1rem}
.notes ul{margin:.2rem 0 .2rem 1.2rem;padding:0}
.filters{display:flex;flex-wrap:wrap;gap:.4rem 1rem;font-size:.85rem;margin:.5rem 0}
.filters select,.filters input{font:inherit;max-width:16rem}
.count{color:var(--muted);font-size:.85rem;margin:.2rem 0}
tr.cut td{border-bottom:2px dashed #cf222e;color:#cf222e;font-size:.75rem;padding:0 .5rem}
tr.beyond td{color:var(--muted)}
details.chunk summary{font-size:.75rem}
.ctext{max-width:40rem;max-height:16rem;overflow:auto}
.src{color:var(--muted);font-size:.75rem}
.gold-list,.cites{margin:.2rem 0;padding-left:1.2rem}
#pager button{font:inherit;padding:.3rem .8rem;cursor:pointer}
@media (max-width:40rem){body{padding:.5rem}.facts{grid-template-columns:1fr}
.facts dt{font-weight:600}}
"""
