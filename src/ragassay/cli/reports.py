"""Commands that read run folders: `ragassay compare`, `ragassay report`, `ragassay export-trec`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import consoles
from .common import Format, FormatOpt, literal, run_guarded
from .output import print_json, show_table


def compare(runs: Annotated[list[Path], typer.Argument(help="Run folders, the baseline first.")],
            metric: Annotated[list[str] | None, typer.Option(
                "--metric", "-m", help="Metric to compare (default: all in metrics.json).")] = None,
            seed: Annotated[int, typer.Option(help="Seed of the resampling tests.")] = 0,
            json_out: Annotated[Path | None, typer.Option(
                "--json", help="Also write the full comparison as JSON.")] = None,
            output_format: FormatOpt = Format.text) -> None:
    """Per-metric deltas between runs with paired randomization and t-test p-values.

    With --format json, stdout is the comparison (the document --json writes)."""
    from ..atomic import write_text
    from ..jsonio import json_text
    from ..report.compare import (
        COMPARE_HEADER,
        change_notes,
        compare_rows,
        compare_runs,
        read_runs,
        summary_rows,
    )
    from ..targets import check_file_target

    if json_out is not None:
        run_guarded(lambda: check_file_target(json_out, "--json"))
    results = run_guarded(lambda: read_runs(runs))  # each folder read once
    result = run_guarded(lambda: compare_runs(runs, metrics=metric or None, seed=seed,
                                         results=results))
    if output_format is Format.json:
        print_json(result)
    else:
        header, rows = summary_rows(runs, results, metric or None)
        show_table("runs", header, rows, left=["run", "system"])
        show_table(f"compared with {runs[0]}", COMPARE_HEADER, compare_rows(result),
               left=["candidate", "metric", "reading"])
    for note in change_notes(result):
        consoles.err.print(f"[yellow]note:[/] {literal(note)}")
    if json_out is not None:
        run_guarded(lambda: write_text(json_out, json_text(result)))


def export_trec(run_dir: Annotated[Path, typer.Argument(help="A run folder.")],
                out_dir: Annotated[Path | None, typer.Option(
                    "--out", help="Folder for the files (default: RUN_DIR/trec).")] = None
                ) -> None:
    """Write a run folder's rankings and gold as TREC `run.trec` and `qrels.trec` (ids with
    whitespace percent-encoded; `ragassay trec-eval` on them gives the run's values)."""
    from ..report.trec import export_trec
    from ..runfolder import read_run_folder
    from ..targets import check_folder_target

    dest = out_dir if out_dir is not None else run_dir / "trec"
    run_guarded(lambda: check_folder_target(dest, "--out"))
    notes = run_guarded(lambda: export_trec(read_run_folder(run_dir), dest))
    for note in notes:
        consoles.err.print(f"note: {literal(note)}")
    consoles.err.print(f"wrote {literal(str(dest / 'run.trec'))} and "
                       f"{literal(str(dest / 'qrels.trec'))}")


def report(run_dirs: Annotated[list[Path], typer.Argument(
               help="A run folder; or BASE NEW [NEW2 ...] for a comparison page.")],
           out_file: Annotated[Path | None, typer.Option(
               "--out", help="HTML file (default: RUN_DIR/report.html; comparing: "
               "NEW/compare-BASE.html).")] = None) -> None:
    """(Re)write the HTML report of a run folder, or write the page comparing runs."""
    from ..report.compare_html import write_compare_html
    from ..report.html import write_html
    from ..targets import check_file_target

    if out_file is not None:
        run_guarded(lambda: check_file_target(out_file, "--out"))
    path = run_guarded(lambda: write_html(run_dirs[0], out_file) if len(run_dirs) == 1
                  else write_compare_html(run_dirs, out_file))
    consoles.err.print(f"report → {path}")
