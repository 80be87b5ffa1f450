"""``generation.html``: the review page of a generated set, self-contained like ``report.html``.

Inline CSS (the report's, :mod:`ragassay.report.style`, plus :data:`REVIEW_CSS`), the items
embedded as JSON (:func:`ragassay.report.rows.json_script`: no text can close the element),
one inline script (:data:`REVIEW_SCRIPT`); no network. Each kept item shows its kind, question,
answer, the checks it passed and its chunk(s) with the support sentence marked; a person
marks accept / reject / edit and downloads the decisions, which
``ragassay generate apply`` turns into the reviewed set. The dropped candidates are listed
below with their reasons (read only).

:func:`set_id` ties a decisions file to the set it was made for.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..report.charts import esc
from ..report.rows import json_script
from ..report.style import CSS
from ..schema import GoldRecord, Question
from ..termsafe import visible
from .review_script import REVIEW_CSS, REVIEW_SCRIPT

if TYPE_CHECKING:
    from .engine import Generation, Record

REVIEW_SCHEMA = "ragassay.review/1"


def set_id(questions: Sequence[Question]) -> str:
    """The first 16 hex digits of the sha256 of the questions' ids, texts and answers: the
    set a decisions file belongs to (``apply`` refuses decisions made for another)."""
    rows = [[q.question_id, q.question, q.must_contain] for q in questions]
    text = json.dumps(rows, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def mark_span(text: str, sentence: str) -> list[int] | None:
    """Where ``sentence`` stands in ``text`` (``[start, end]``): as written, else ignoring
    case and the width of whitespace; ``None`` when neither finds it."""
    at = text.find(sentence)
    if at >= 0:
        return [at, at + len(sentence)]
    words = sentence.split()
    if not words:
        return None
    m = re.search(r"\s+".join(re.escape(w) for w in words), text, re.I)
    return [m.start(), m.end()] if m else None


def _checks(rec: Record, q: Question) -> list[str]:
    c = rec.candidate
    lang = q.metadata.get("language", "?")
    if c.kind == "unanswerable":
        return ["no chunk holds " + ", ".join(c.missing), f"question in {lang}",
                "not a near-duplicate"]
    out = ["support sentence in its chunk", "label ok", "answer in the sentence",
           "numbers read", f"question in {lang}", "answer not in the question"]
    if c.distractor:
        out.append(f"{c.distractor} holds another value")
    out += [f"second call answered {rec.second_answer!r}", "not a near-duplicate"]
    return out


def review_items(gen: Generation, items: Sequence[tuple[Record, Question, GoldRecord]]
                 ) -> list[dict[str, Any]]:
    """The kept items as the page's script reads them."""
    index = gen.corpus.index
    out = []
    for rec, q, _ in items:
        c = rec.candidate
        chunks = []
        for i, cid in enumerate(c.chunk_ids):
            text = visible(index.chunk(cid).text)  # as the page shows it: the mark's offsets
            sentence = visible(c.supports[i].sentence) if i < len(c.supports) else ""
            chunks.append({"chunk_id": cid, "role": "gold" if q.answerable else "source",
                           "text": text, "mark": mark_span(text, sentence) if sentence else None})
        if c.distractor:
            chunks.append({"chunk_id": c.distractor, "role": "distractor",
                           "text": visible(index.chunk(c.distractor).text), "mark": None})
        out.append({"question_id": q.question_id, "kind": c.kind, "question": q.question,
                    "answer": "; ".join(c.answers), "answerable": q.answerable,
                    "missing": c.missing, "checks": _checks(rec, q), "chunks": chunks})
    return out


def _dropped_section(report: dict[str, Any]) -> str:
    reasons = {k: v for k, v in report["drop_reasons"].items() if v}
    rows = "".join(f"<tr><td>{esc(k)}</td><td class=\"num\">{v}</td><td>"
                   f"{esc(report['reasons'][k])}</td></tr>" for k, v in reasons.items())
    lines = "".join(
        f"<tr><td class=\"ids\">{esc(d['candidate'])}</td><td>{esc(d['kind'])}</td>"
        f"<td>{esc(d.get('reason', 'surplus'))}</td><td>{esc(d['question'] or '—')}</td>"
        f"<td>{esc(d.get('detail', ''))}</td></tr>" for d in report["dropped"])
    return ("<h2>Dropped candidates</h2><table><thead><tr><th>reason</th><th>n</th><th>what it "
            f"means</th></tr></thead><tbody>{rows}</tbody></table><details><summary>every "
            "dropped candidate</summary><table><thead><tr><th>candidate</th><th>kind</th><th>"
            "reason</th><th>question</th><th>evidence</th></tr></thead><tbody>"
            f"{lines}</tbody></table></details>")


def render_review(gen: Generation, items: Sequence[tuple[Record, Question, GoldRecord]],
                  report: dict[str, Any]) -> str:
    """The review page as one HTML string (UTF-8, no external resource)."""
    counts = report["counts"]
    kinds = ", ".join(f"{k} {v['kept']}/{v['asked']}" for k, v in report["kinds"].items())
    head = (f"<h1>Review the generated set</h1><p>{counts['kept']} of {counts['asked']} items "
            f"kept from {counts['candidates']} candidates ({esc(kinds)}); model "
            f"{esc(report['model']['model'])}. Mark each item, then download the decisions "
            "and run <code>ragassay generate apply decisions.jsonl --set SET --out NEW</code>."
            "</p>")
    bar = ('<div id="bar"><button type="button" id="download">Download decisions</button> '
           '<span id="tally" class="count"></span></div>')
    data = {"schema": REVIEW_SCHEMA, "set_id": set_id([q for _, q, _ in items]),
            "items": review_items(gen, items)}
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>ragassay generated set: review</title>",
        f"<style>{CSS}{REVIEW_CSS}</style>", "</head>", "<body>", head, bar,
        '<noscript><p class="warn">The review needs JavaScript.</p></noscript>',
        '<div id="list"></div>', _dropped_section(report), json_script("items", data),
        f"<script>{REVIEW_SCRIPT}</script>", "</body>", "</html>", ""])
