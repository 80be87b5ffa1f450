"""The gate: `ragassay gate`, and the check `ragassay run --gate` shares with it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from ..errors import GATE_FAILED, InputError
from . import consoles
from .common import Format, FormatOpt, literal, run_guarded
from .output import gate_doc, print_json


def gate_run(run_dir: Path, bars_text: list[str] | None, config: Path | None,
          baseline: Path | None, junit: Path | None, fail_on_regression: bool = True, *,
          lines_to: Console | None = None) -> Any:
    """Check a run against its bars (and a baseline); print one line per outcome (on
    ``lines_to``, stdout by default) and return the :class:`~ragassay.gate.GateResult`."""
    from ..config import load_config, locate
    from ..gate import (
        GateConfig,
        evaluate_gate,
        format_result,
        parse_bar_text,
        parse_gate_config,
        write_junit,
    )
    from ..runfolder import read_run_folder
    from ..targets import check_file_target

    def go() -> Any:
        if junit is not None:
            check_file_target(junit, "--junit")
        run = read_run_folder(run_dir)
        known = list(run.metrics.means())
        if bars_text:
            options = GateConfig([parse_bar_text(t, known_metrics=known) for t in bars_text])
        else:
            cfg_path = config or run.metrics.provenance.config_path
            if not cfg_path:
                raise InputError(run_dir, "no bars: pass --bar or --config with a `gate:` mapping")
            try:
                options = parse_gate_config(load_config(cfg_path).gate, source=cfg_path,
                                            known_metrics=known)
            except InputError as exc:
                raise locate(exc) from None
        base = read_run_folder(baseline) if baseline is not None else None
        result = evaluate_gate(run, options, baseline=base, fail_on_regression=fail_on_regression,
                               run_dir=run_dir, baseline_dir=baseline)
        if junit is not None:
            write_junit(result, junit)
        return result

    result = run_guarded(go)
    console = consoles.out if lines_to is None else lines_to
    for line in format_result(result):
        console.print(literal(line), soft_wrap=True)
    return result


def gate(run_dir: Annotated[Path, typer.Argument(help="The run folder to check.")],
         baseline: Annotated[Path | None, typer.Option(
             help="A baseline run: questions that flip from pass to fail are regressions.")] = None,
         bar: Annotated[list[str] | None, typer.Option(
             "--bar", help='A bar such as "recall_at_5>=0.8" (default: the config\'s gate:).')
         ] = None,
         config: Annotated[Path | None, typer.Option(
             "--config", "-c", help="Config whose gate: to use (default: the run's).")] = None,
         junit: Annotated[Path | None, typer.Option(help="Write JUnit XML here.")] = None,
         fail_on_regression: Annotated[bool, typer.Option(
             help="A regression against the baseline fails the gate.")] = True,
         output_format: FormatOpt = Format.text) -> None:
    """Exit 1 when the run misses a bar or regresses against a baseline; 0 otherwise."""
    as_json = output_format is Format.json
    result = gate_run(run_dir, bar, config, baseline, junit, fail_on_regression,
                   lines_to=consoles.err if as_json else consoles.out)
    if as_json:
        print_json(gate_doc(result))
    if not result.passed:
        raise typer.Exit(GATE_FAILED)
