"""The views written beside every run record: ``summary.md`` and ``report.html``.

The record (:mod:`ragassay.runfolder`) writes what it is handed; whoever makes a result for a
run folder (:func:`ragassay.evaluate_rag`, ``ragassay run``) hands it these.
"""

from __future__ import annotations

from ..runfolder import View
from .html import render_html
from .summary import render_summary_md

VIEWS: dict[str, View] = {"summary.md": render_summary_md, "report.html": render_html}
