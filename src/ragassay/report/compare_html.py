"""A self-contained HTML page comparing runs: a baseline and one or more candidates.

Per candidate and metric: both means, the delta with its paired bootstrap 95% CI and the
paired randomization and t-test p-values (:func:`~ragassay.report.compare.compare_runs`,
Holm-adjusted with more than one candidate); then the questions whose recorded checks
(found / grounded / right) flipped between pass and fail. The flip list is static HTML
(readable with JavaScript off); each flipped question opens side by side — both answers with
their citations, both retrieved lists with the k cut-off, chunk texts — drawn on demand by one
small inline script from rows embedded as JSON (the same rows as ``report.html``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..atomic import write_text
from ..checks import CHECKS, verdict_text
from ..runfolder import RunResult
from ..runrows import QuestionResult, referenced_chunk_ids
from .charts import esc, fmt_num, higher_is_better
from .compare import NEUTRAL, compare_runs, metric_label, read_runs
from .header import system_fact
from .rows import Strings, json_script, question_row
from .scripts import COMPARE_SCRIPT
from .sections import scroll_table, totals_section
from .style import CSS as _CSS


def default_compare_path(run_dirs: list[Path]) -> Path:
    """``NEW/compare-BASE.html``: in the first candidate's folder, named after the baseline."""
    return Path(run_dirs[1]) / f"compare-{Path(run_dirs[0]).name}.html"


def write_compare_html(run_dirs: list[Path], out: Path | None = None, *, seed: int = 0) -> Path:
    """Write the comparison page of ``run_dirs`` (baseline first) atomically; return its path
    (default :func:`default_compare_path`)."""
    page = render_compare_html([Path(d) for d in run_dirs], seed=seed)
    return write_text(Path(out) if out is not None else default_compare_path(run_dirs), page)


def _check_label(name: str, k_base: int, k_cand: int) -> str:
    """A check as both runs define it: ``found@3``, or ``found@10 → found@3`` when the runs
    cut at different depths."""
    if name != "found":
        return name
    return f"found@{k_base}" if k_base == k_cand else f"found@{k_base} → found@{k_cand}"


def flips(base: RunResult, cand: RunResult) -> list[dict[str, Any]]:
    """Questions (in the baseline's order) where a recorded check went pass↔fail: per
    question its changes ``(check, before, after)`` and ``direction`` (``pass→fail`` when any
    check was lost, else ``fail→pass``)."""
    by_id = {q.question_id: q for q in cand.questions}
    out = []
    for q in base.questions:
        other = by_id.get(q.question_id)
        if other is None:
            continue
        changes = [(name, getattr(q.checks, name), getattr(other.checks, name))
                   for name in CHECKS]
        changes = [c for c in changes if c[1] is not None and c[2] is not None and c[1] != c[2]]
        if changes:
            lost = any(before and not after for _, before, after in changes)
            out.append({"question": q, "other": other, "changes": changes,
                        "direction": "pass→fail" if lost else "fail→pass"})
    return out


def render_compare_html(run_dirs: list[Path], *, seed: int = 0) -> str:
    """The comparison page of run folders (baseline first) as one HTML string."""
    runs = read_runs(run_dirs)
    result = compare_runs(run_dirs, seed=seed, results=runs)
    names = [Path(d).name for d in run_dirs]
    title = f"ragassay comparison: {names[0]} vs {', '.join(names[1:])}"
    pairs: list[dict[str, Any]] = []
    texts: dict[str, str] = {}
    strings = Strings()
    body = [f"<header><h1>{esc(title)}</h1>",
            "<p>Baseline first. Deltas are candidate − baseline with a paired bootstrap 95% "
            f"CI over the questions both runs measured (seed {esc(seed)}); ↓ marks a metric "
            "where lower is better.</p></header>", _runs_section(runs, names)]
    for c_idx, cand in enumerate(runs[1:], start=1):
        rows = [c for c in result["comparisons"] if Path(c["candidate"]) == Path(run_dirs[c_idx])]
        body.append(f'<section class="cand"><h2>{esc(names[c_idx])} vs {esc(names[0])}</h2>')
        changes: dict[str, Any] = next((ch for ch in result["questions"]
                                        if Path(ch["candidate"]) == Path(run_dirs[c_idx])), {})
        body.append(_changes_section(changes, (names[0], names[c_idx])))
        body.append(_delta_table(rows))
        body.append(_flip_section(runs[0], cand, c_idx, names, pairs, texts, strings))
        body.append("</section>")
    data = {"names": names, "ks": [r.totals.k for r in runs], "strings": strings.table,
            "pairs": pairs}
    body += [json_script("pairs", data), json_script("chunks", texts),
             f"<script>{COMPARE_SCRIPT}</script>"]
    return "\n".join(["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
                      '<meta name="viewport" content="width=device-width, initial-scale=1">',
                      f"<title>{esc(title)}</title>", f"<style>{_CSS}{_COMPARE_CSS}</style>",
                      "</head>", "<body>", *body, "</body>", "</html>", ""])


def _runs_section(runs: list[RunResult], names: list[str]) -> str:
    parts = ["<section><h2>Runs</h2>"]
    for name, run in zip(names, runs, strict=True):
        label, system = system_fact(run.metrics)
        parts.append(f'<div class="run" data-run="{esc(name)}"><h3><code>{esc(name)}</code> '
                     f'<span class="nm">{esc(label)}: {esc(system)}; {len(run.questions)} '
                     f"questions</span></h3>{totals_section(run)}</div>")
    parts.append("</section>")
    return "\n".join(parts)


def _p(value: Any) -> str:
    return "—" if value is None else f"{value:.4f}"


def _delta_table(rows: list[dict[str, Any]]) -> str:
    """The deltas of one candidate; a row is coloured better / worse only when its
    difference is significant (:func:`~.compare.reading`), else neutral."""
    out = []
    for c in rows:
        up = higher_is_better(c["metric"])
        delta, lo, hi = c.get("delta"), c.get("ci_low"), c.get("ci_high")
        verdict = c.get("reading") or ""
        p_rand = _p(c.get("p_randomization"))
        if "p_holm" in c:
            p_rand += f" (Holm {_p(c['p_holm'])})"
        cls = f"delta {verdict}" if verdict else "delta"
        out.append(f'<tr class="{cls}"><td>{esc(metric_label(c))}{"" if up else " ↓"}</td>'
                   f'<td class="num">{fmt_num(c.get("mean_a"))}</td>'
                   f'<td class="num">{fmt_num(c.get("mean_b"))}</td>'
                   f'<td class="num d">{"—" if delta is None else f"{delta:+.3f}"}</td>'
                   f'<td class="num">[{fmt_num(lo)}, {fmt_num(hi)}]</td>'
                   f'<td class="num">{esc(p_rand)}</td><td class="num">{_p(c.get("p_ttest"))}</td>'
                   f'<td class="num">{esc(c.get("wins"))}/{esc(c.get("ties"))}/'
                   f'{esc(c.get("losses"))}'
                   f"</td><td>{esc(verdict or NEUTRAL)}</td></tr>")
    return scroll_table(["metric", "baseline", "candidate", "Δ", "95% CI of Δ", "p (randomization)",
                   "p (t-test)", "W/T/L", "reading"], out, "deltas")


def _changes_section(changes: dict[str, Any], names: tuple[str, str]) -> str:
    """The questions only one run holds and those whose text changed (by id)."""
    base, cand = names
    parts = []
    for key, what in (("only_in_baseline", f"only in {base}"),
                      ("only_in_candidate", f"only in {cand}"),
                      ("text_changed", "with a changed text (same id)")):
        ids = changes.get(key) or []
        if ids:
            items = "".join(f'<li class="ids">{esc(i)}</li>' for i in ids)
            parts.append(f'<details class="qdiff" data-kind="{esc(key)}"><summary>'
                         f"{len(ids)} questions {esc(what)}</summary><ul>{items}</ul></details>")
    if not parts:
        return ""
    return ('<div class="warn qchanges"><strong>The runs do not hold the same questions.</strong> '
            "Questions only one run holds are not paired; a question whose text changed is "
            f"paired by its id across different texts.{''.join(parts)}</div>")


def _flip_section(base: RunResult, cand: RunResult, c_idx: int, names: list[str],
                  pairs: list[dict[str, Any]], texts: dict[str, str], strings: Strings) -> str:
    flipped = flips(base, cand)
    lost = sum(1 for f in flipped if f["direction"] == "pass→fail")
    head = (f"<h3>Questions that flipped</h3><p>{len(flipped)} questions changed a recorded "
            f"check between pass and fail: {lost} lost one (pass→fail), {len(flipped) - lost} "
            "only gained (fail→pass). Open a row for both answers and both retrieved lists "
            "side by side.</p>")
    if not flipped:
        return head
    k_base, k_cand = base.totals.k, cand.totals.k
    checks = [n for n in CHECKS if any(n == m for f in flipped for m, _, _ in f["changes"])]
    opts = "".join(f'<option value="{esc(c)}">{esc(_check_label(c, k_base, k_cand))}</option>'
                   for c in checks)
    controls = (f'<p class="filters" data-cand="{c_idx}"><label>direction <select '
                'class="f-dir"><option value="">any</option><option>pass→fail</option>'
                '<option>fail→pass</option></select></label> <label>check <select '
                f'class="f-check"><option value="">any</option>{opts}</select></label> '
                '<span class="count"></span></p>')
    blocks = []
    for f in flipped:
        q: QuestionResult = f["question"]
        other: QuestionResult = f["other"]
        i = len(pairs)
        pairs.append({"idx": [0, c_idx],
                      "runs": [question_row(q, k_base, strings),
                               question_row(other, k_cand, strings)]})
        for run, x in ((base, q), (cand, other)):
            for cid in referenced_chunk_ids(x):
                if cid in run.chunk_texts and cid not in texts:
                    texts[cid] = run.chunk_texts[cid]
        change = "; ".join(f"{_check_label(n, k_base, k_cand)}: {verdict_text(a)} → "
                           f"{verdict_text(b)}" for n, a, b in f["changes"])
        names_attr = " ".join(n for n, _, _ in f["changes"])
        cls = "lost" if f["direction"] == "pass→fail" else "gained"
        blocks.append(
            f'<tbody class="flip {cls}" data-dir="{esc(f["direction"])}" '
            f'data-checks="{esc(names_attr)}"><tr class="main"><td class="ids">'
            f'{esc(q.question_id)}</td><td class="question">{esc(q.question)}</td>'
            f"<td>{esc(f['direction'])}</td><td>{esc(change)}</td></tr>"
            f'<tr class="more"><td></td><td colspan="3"><details data-pair="{i}"><summary>'
            f"{esc(names[0])} | {esc(names[c_idx])}: answers, citations, retrieved chunks"
            '</summary><div class="side"></div></details></td></tr></tbody>')
    header = "".join(f"<th>{h}</th>" for h in ("id", "question", "direction", "change"))
    return (head + controls + f'<div class="scroll"><table class="flips"><thead><tr>{header}'
            f"</tr></thead>{''.join(blocks)}</table></div>")


_COMPARE_CSS = """
tr.delta.better td.d{color:#116329;font-weight:600}tr.delta.worse td.d{color:#cf222e;
font-weight:600}
table.flips{width:100%}.qchanges details{margin:.3rem 0}.qchanges ul{margin:.2rem 0;
padding-left:1.2rem;columns:12rem}table.flips td.ids{white-space:nowrap}
tbody.flip.lost td{background:var(--fail)}
tbody.flip tr.main td{border-bottom:none}
.side{display:grid;grid-template-columns:1fr 1fr;gap:1rem}.half{min-width:0}
.half h3{font-size:1rem;margin:.4rem 0;border-bottom:1px solid var(--line)}
.run h3{font-size:1rem;margin:.8rem 0 0}
@media (max-width:50rem){.side{grid-template-columns:1fr}}
"""
