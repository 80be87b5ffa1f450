"""Command line: `ragassay init|index|run|sweep|gate|compare|report|judge-check|metrics|
trec-eval|export-trec|gold audit|gold fix|import|generate|serve-local|serve-baseline`, and the
contract entry `eval.naive_rag.run_eval`.

Start-up imports typer and rich's console only; every command imports what it uses.
Tables go to stdout (rich on a terminal, Markdown otherwise: never a cut number), or one
JSON document with ``--format json``; notes, warnings and progress go to stderr.

The commands live in one module per group (:mod:`.evaluate`: index, run, sweep;
:mod:`.gating`: gate; :mod:`.reports`: compare, report, export-trec; :mod:`.measures`:
metrics, trec-eval, judge-check; :mod:`.gold`: the ``gold`` group; :mod:`.imports`: import
squad|beir|trec|bidmate; :mod:`.generate`: generate, generate apply; :mod:`.serve`:
serve-local), with :mod:`.common` (guard, options) and
:mod:`.output` (JSON, tables, the gate document); they are registered here, in the order
``--help`` lists them. The consoles ``err`` and ``out`` live in :mod:`.consoles`, which
the commands look up when they run.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer
from typer.core import TyperCommand

from .. import __version__
from .common import CliCommand, CliGroup
from .evaluate import index, run, sweep
from .gating import gate
from .generate import app as generate_app
from .gold import app as gold_app
from .imports import app as import_app
from .measures import TREC_EVAL_SETTINGS, judge_check_cmd, metrics_cmd, trec_eval
from .reports import compare, export_trec, report
from .serve import serve_baseline, serve_local
from .starter import init

HELP = ("Measure a RAG system question by question: found, grounded, right. Exit codes: 0 ok, "
        "1 gate failed, 2 bad input, 3 questions not measured, 4 internal error.")

app = typer.Typer(add_completion=True, no_args_is_help=True, help=HELP, cls=CliGroup)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"ragassay {__version__}")
        raise typer.Exit()


def _main_options(
        debug: Annotated[bool, typer.Option(
            "--debug", help="Print the traceback of an internal error.")] = False,
        version: Annotated[bool, typer.Option(
            "--version", help="Print the version and exit.", is_eager=True,
            callback=_print_version)] = False) -> None:
    _debug_option(debug)


def _debug_option(debug: bool) -> None:
    if debug:
        os.environ["RAGASSAY_DEBUG"] = "1"


app.callback()(_main_options)

app.command()(init)
app.command()(index)
app.command()(run)
app.command()(gate)
app.command()(sweep)
app.command()(compare)
app.command("metrics")(metrics_cmd)
app.command("trec-eval", **TREC_EVAL_SETTINGS)(trec_eval)
app.command("export-trec")(export_trec)
app.command("judge-check")(judge_check_cmd)
app.command()(report)
app.add_typer(gold_app, name="gold")
app.add_typer(import_app, name="import")
app.add_typer(generate_app, name="generate")
app.command("serve-local")(serve_local)
app.command("serve-baseline")(serve_baseline)


def run_eval_main(argv: list[str] | None = None) -> None:
    """The contract command: `python -m eval.naive_rag.run_eval --config ... [--run-id ID]`:
    `ragassay run --contract` (the contract's minimums checked)."""
    args = ["--contract", *(argv if argv is not None else sys.argv[1:])]
    if "--debug" in args:
        args.remove("--debug")
        _debug_option(True)
    single = typer.Typer(add_completion=False, help=HELP)
    single.command(cls=CliCommand)(run)
    single(args=args, prog_name="run_eval")


for _info in app.registered_commands:  # every command's help shows flags without <bool>
    if _info.cls in (None, TyperCommand):
        _info.cls = CliCommand
