"""What the commands share: typer classes, the error guard, progress, options, config loading."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

from ..errors import BAD_INPUT, INTERNAL_ERROR, InputError, environment_error
from ..termsafe import plain
from . import consoles

T = TypeVar("T")


def _flags_without_metavar(params: list[Any]) -> list[Any]:
    """Flags take no value: no ``<bool>`` next to them in the rich help. A flag given no
    default (``--help``, the completion flags) defaults to False, not None: typer checks a
    non-bool value with pydantic, whose import would double the time of ``--help``."""
    for param in params:
        if getattr(param, "is_flag", False):
            if param.metavar is None:
                param.metavar = ""
            if param.default is None and getattr(param, "is_bool_flag", False):
                param.default = False
    return params


class CliCommand(TyperCommand):
    def get_params(self, ctx: Any) -> list[Any]:
        return _flags_without_metavar(super().get_params(ctx))


class CliGroup(TyperGroup):
    def get_params(self, ctx: Any) -> list[Any]:
        return _flags_without_metavar(super().get_params(ctx))


def quiet_pypdf() -> None:
    """pypdf logs its own complaints ("EOF marker not found") before ragassay's one-line
    error names the file; the CLI prints only the latter."""
    import logging

    logging.getLogger("pypdf").setLevel(logging.ERROR)


def literal(text: object) -> str:
    """User text (an id, a path, a message holding either) as literal rich text: no markup,
    no escape sequence, no bidi control (:func:`ragassay.termsafe.plain`). Every message the
    commands print puts what came from the user through this."""
    return escape(plain(text))


class TerminalLog(logging.Handler):
    """Warnings of the ``ragassay`` loggers on stderr, made inert like every message."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            consoles.err.print(f"[yellow]warning:[/] {literal(record.getMessage())}")
        except Exception:  # a log line must never end a command
            self.handleError(record)


def _log_to_terminal() -> None:
    log = logging.getLogger("ragassay")
    if not any(isinstance(h, TerminalLog) for h in log.handlers):
        log.addHandler(TerminalLog(logging.WARNING))


def run_guarded(fn: Callable[[], T]) -> T:
    """Bad input, and the user's environment (an :class:`OSError`: disk full, read-only,
    permission, name too long, a folder where a file is expected) → one line on stderr and
    exit 2; any other exception is a bug of ours: exit 4, with the traceback under
    ``--debug``."""
    _log_to_terminal()
    try:
        return fn()
    except InputError as exc:
        consoles.err.print(f"[bold red]error:[/] {literal(exc)}")
        raise typer.Exit(BAD_INPUT) from None
    except OSError as exc:
        consoles.err.print(f"[bold red]error:[/] {literal(environment_error(exc))}")
        raise typer.Exit(BAD_INPUT) from None
    except (typer.Exit, KeyboardInterrupt):
        raise
    except Exception as exc:
        if os.environ.get("RAGASSAY_DEBUG") == "1":
            import traceback

            lines = traceback.format_exc().splitlines()
            consoles.err.print("\n".join(literal(line) for line in lines))
        consoles.err.print(f"[bold red]internal error:[/] "
                           f"{literal(f'{type(exc).__name__}: {exc}')} "
                           "(a bug in ragassay; rerun with --debug for the traceback)")
        raise typer.Exit(INTERNAL_ERROR) from None


class Format(str, Enum):
    """What a command prints on stdout."""

    text = "text"
    json = "json"


FormatOpt = Annotated[Format, typer.Option(
    "--format", help="text: tables and lines; json: one JSON document on stdout, messages "
                     "on stderr.")]
ProgressOpt = Annotated[bool | None, typer.Option(
    "--progress/--no-progress", show_default=False,
    help="Progress bars on stderr (default: on when stderr is a terminal).")]


def progress_on(progress: bool | None) -> bool:
    from ..progress import stderr_is_terminal

    return stderr_is_terminal() if progress is None else progress


def with_progress(progress: bool | None, fn: Callable[[], T]) -> T:
    """``fn()`` under ``run_guarded``, drawing progress as ``--progress/--no-progress`` says."""
    from ..progress import enabled_for

    with enabled_for(progress_on(progress)):
        return run_guarded(fn)


def load_cli_config(config: Path, predictions: Path | None = None, chunks: Path | None = None,
          k: int | None = None, lenient: bool = False, executor: ExecutorName | None = None,
          workers: int | None = None, system: str | None = None) -> Any:
    """The config with the command-line values applied, then checked. ``--system`` names
    the system's url or callable (the config's other ``system:`` keys stay); a predictions
    file replaces any system (it is what a system returned)."""
    from ..config import load_config

    overrides: dict[str, Any] = {}
    if executor is not None:
        overrides["executor.kind"] = executor.value
        if executor is not ExecutorName.ray:  # a configured cluster address is Ray's only
            overrides["executor.address"] = None
    if workers is not None:
        overrides["executor.workers"] = workers
    if system is not None:
        if predictions is not None:
            raise InputError("--system", "give --system or --predictions, not both")
        kind, other = (("url", "callable") if system.startswith(("http://", "https://"))
                       else ("callable", "url"))
        overrides.update({f"system.{kind}": system, f"system.{other}": None})
    if predictions is not None:
        overrides["predictions_path"] = predictions
        overrides["system"] = None
    if chunks is not None:
        overrides.update({"chunks_path": chunks, "index_dir": None, "source_dir": None})
    if k is not None:
        if k < 1:
            raise InputError("--k", f"k must be at least 1 (got {k})")
        overrides["pipeline.top_k"] = k
    if lenient:
        overrides["lenient"] = True
    return load_config(config, overrides)


class ExecutorName(str, Enum):
    """Where the units of a run run (:mod:`ragassay.executor`)."""

    local = "local"
    process = "process"
    ray = "ray"


ExecutorOpt = Annotated[ExecutorName | None, typer.Option(
    "--executor", show_default=False,
    help="Where the units run: local (this process), process (worker processes), ray (a Ray "
         "cluster, or a local Ray on 127.0.0.1). Default: the config's executor.kind, "
         "else local.")]
WorkersOpt = Annotated[int | None, typer.Option(
    "--workers", min=1, show_default=False,
    help="Workers for process/ray (default: executor.workers, else the cores here).")]
ConfigOpt = Annotated[Path, typer.Option("--config", "-c", help="Evaluation config (YAML).")]
RunIdOpt = Annotated[str | None, typer.Option("--run-id", help="Run folder name (default: time).")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace an existing folder of that id.")]
RootOpt = Annotated[Path | None, typer.Option(help="Override the config's output_root.")]
QuietOpt = Annotated[bool, typer.Option(
    "--quiet", "-q", help="No tables on stdout (progress: see --progress).")]
PredOpt = Annotated[Path | None, typer.Option(
    "--predictions", help="Score this predictions JSONL instead of the built-in pipeline.")]
SystemOpt = Annotated[str | None, typer.Option(
    "--system", show_default=False,
    help="Call this system under test: http://…/ask (POST per question) or "
         "package.module:function (docs/system.md).")]
ChunksOpt = Annotated[Path | None, typer.Option(
    "--chunks", help="Evidence as a plain chunks.jsonl instead of an index.")]
KOpt = Annotated[int | None, typer.Option("--k", help="Override pipeline.top_k.")]
LenientOpt = Annotated[bool, typer.Option(
    "--lenient", help="Unknown keys in question, gold and prediction rows are warnings.")]
