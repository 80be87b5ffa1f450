"""Command line: `ragassay index|run|report` (and the contract entry `eval.naive_rag.run_eval`)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from .schema import InputError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Measure a RAG system question by question: found, grounded, right.")
err = Console(stderr=True, soft_wrap=True, highlight=False)
out = Console()

T = TypeVar("T")


def _guard(fn: Callable[[], T]) -> T:
    """Turn bad input into one line on stderr and exit code 2."""
    try:
        return fn()
    except InputError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except ValueError as exc:  # invalid parameter values (chunk size, embedder name, ...)
        err.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


@app.command()
def index(
    source: Annotated[Path, typer.Option(help="Folder of documents to index.")] = Path("data/raw"),
    out_dir: Annotated[Path, typer.Option("--out", help="Index folder to write.")] = Path(
        "data/index"),
    chunk_size: Annotated[int, typer.Option(help="Chunk length in characters.")] = 400,
    overlap: Annotated[int, typer.Option(help="Characters shared by neighbouring chunks.")] = 80,
    embedder: Annotated[str, typer.Option(help="Embedder name (see `ragassay.embed`).")] = (
        "hashing"),
    if_stale: Annotated[bool, typer.Option(
        "--if-stale", help="Only build when the index is missing or out of date.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Build `index.json` + `embeddings.npy` from a folder of documents."""
    from .index import build_index, index_status

    def go() -> None:
        if if_stale:
            reason = index_status(out_dir, source, chunk_size=chunk_size, overlap=overlap,
                                  embedder=embedder)
            if reason is None:
                err.print(f"index {out_dir} is up to date")
                return
            err.print(f"rebuilding index {out_dir}: {reason}")
        idx = build_index(source, out_dir, chunk_size=chunk_size, overlap=overlap,
                          embedder=embedder, progress=not quiet)
        b = idx.meta["build"]
        err.print(f"indexed {b['num_documents']} documents into {b['num_chunks']} chunks "
                  f"→ {out_dir}")

    _guard(go)


def _run(config: Path, run_id: str | None, force: bool, output_root: Path | None,
         quiet: bool) -> None:
    from .config import load_config
    from .report.summary import print_summary
    from .run import run_evaluation

    def go() -> Any:
        cfg = load_config(config)
        return run_evaluation(cfg, run_id=run_id, force=force, output_root=output_root,
                              progress=not quiet)

    result = _guard(go)
    if not quiet:
        print_summary(result.metrics, result.questions, out)
    stale = result.metrics["provenance"]["index"]["stale"]
    if stale:
        err.print(f"[yellow]warning:[/] the index is stale ({stale}); rebuild it with "
                  "`ragassay index --if-stale`")
    err.print(f"run {result.run_id} → {result.run_dir}")


ConfigOpt = Annotated[Path, typer.Option("--config", "-c", help="Evaluation config (YAML).")]
RunIdOpt = Annotated[str | None, typer.Option("--run-id", help="Run folder name (default: time).")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace an existing run with this id.")]
RootOpt = Annotated[Path | None, typer.Option(help="Override the config's output_root.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No tables on stdout.")]


@app.command()
def run(config: ConfigOpt, run_id: RunIdOpt = None, force: ForceOpt = False,
        output_root: RootOpt = None, quiet: QuietOpt = False) -> None:
    """Evaluate the configured pipeline and write the run folder."""
    _run(config, run_id, force, output_root, quiet)


@app.command()
def report(run_dir: Annotated[Path, typer.Argument(help="A run folder.")],
           out_file: Annotated[Path | None, typer.Option(
               "--out", help="HTML file (default: RUN_DIR/report.html).")] = None) -> None:
    """(Re)write the HTML report of a run folder."""
    from .report.html import write_html

    path = _guard(lambda: write_html(run_dir, out_file))
    err.print(f"report → {path}")


def run_eval_main(argv: list[str] | None = None) -> None:
    """The contract command: `python -m eval.naive_rag.run_eval --config ... [--run-id ID]`."""
    single = typer.Typer(add_completion=False)
    single.command()(run)
    single(args=argv if argv is not None else sys.argv[1:], prog_name="run_eval")
