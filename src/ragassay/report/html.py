"""A self-contained HTML page for one run: metrics with CIs, failure taxonomy, questions.

The page renders a :class:`~ragassay.runfolder.RunResult` (the record a run writes to its
folder, or reads back with :func:`~ragassay.runfolder.read_run_folder`), carries its CSS inline and
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

The page is assembled here from its parts: :mod:`.sections` (the static HTML), :mod:`.rows`
(the embedded JSON rows), :mod:`.style` (the CSS) and :mod:`.scripts` (the inline script).
"""

from __future__ import annotations

from pathlib import Path

from ..atomic import write_text
from ..runfolder import RunResult, read_run_folder
from .charts import esc
from .claims import claims_section_html
from .rows import chunks_json, decode_row, failing_first, json_script, rows_json
from .scripts import SCRIPT
from .sections import (
    failure_section,
    header_section,
    metric_section,
    questions_section,
    reanchored_section,
    totals_section,
)
from .style import CSS as _CSS

__all__ = ["decode_row", "failing_first", "render_html", "write_html"]


# --- public --------------------------------------------------------------------------


def render_html(result: RunResult) -> str:
    """The report page of a run as one HTML string (UTF-8, no external resource)."""
    metrics = result.metrics.model_dump(mode="json")
    title = f"ragassay run {result.run_id}"
    body = [
        header_section(result.metrics),
        totals_section(result),
        metric_section(metrics, "retrieval", "Retrieval metrics"),
        metric_section(metrics, "answer", "Answer metrics"),
        failure_section(metrics, len(result.questions)),
        claims_section_html(result.metrics),
        questions_section(result),
        reanchored_section(metrics),
        json_script("rows", rows_json(result)),
        json_script("chunks", chunks_json(result)),
        f"<script>{SCRIPT}</script>",
    ]
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        *body,
        "</body>",
        "</html>",
        "",
    ])


def write_html(run_dir: Path, out: Path | None = None) -> Path:
    """(Re)write the report page of a run folder (default `run_dir/report.html`)
    atomically; return its path. Raises InputError naming the file (and line) when the
    run folder is missing or malformed."""
    page = render_html(read_run_folder(run_dir))
    return write_text(Path(out) if out is not None else Path(run_dir) / "report.html", page)
