"""Command line: `ragassay index|run|sweep|gate|compare|report|judge-check|metrics|trec-eval|
export-trec`, and the contract entry `eval.naive_rag.run_eval`.

Start-up imports typer and rich's console only; every command imports what it uses.
Tables go to stdout (rich on a terminal, Markdown otherwise: never a cut number), or one
JSON document with ``--format json``; notes, warnings and progress go to stderr.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

from . import __version__
from .errors import BAD_INPUT, GATE_FAILED, INTERNAL_ERROR, NOT_MEASURED, InputError

HELP = ("Measure a RAG system question by question: found, grounded, right. Exit codes: 0 ok, "
        "1 gate failed, 2 bad input, 3 questions not measured, 4 internal error.")


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


class _Command(TyperCommand):
    def get_params(self, ctx: Any) -> list[Any]:
        return _flags_without_metavar(super().get_params(ctx))


class _Group(TyperGroup):
    def get_params(self, ctx: Any) -> list[Any]:
        return _flags_without_metavar(super().get_params(ctx))


app = typer.Typer(add_completion=True, no_args_is_help=True, help=HELP, cls=_Group)
err = Console(stderr=True, soft_wrap=True, highlight=False)
out = Console()

T = TypeVar("T")


def _quiet_pypdf() -> None:
    """pypdf logs its own complaints ("EOF marker not found") before ragassay's one-line
    error names the file; the CLI prints only the latter."""
    import logging

    logging.getLogger("pypdf").setLevel(logging.ERROR)


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


def _guard(fn: Callable[[], T]) -> T:
    """Bad input → one line on stderr and exit 2; any other exception is a bug of ours:
    exit 4, with the traceback under ``--debug``."""
    try:
        return fn()
    except InputError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}")
        raise typer.Exit(BAD_INPUT) from None
    except (typer.Exit, KeyboardInterrupt):
        raise
    except Exception as exc:
        if os.environ.get("RAGASSAY_DEBUG") == "1":
            import traceback

            err.print(escape(traceback.format_exc()))
        err.print(f"[bold red]internal error:[/] {escape(f'{type(exc).__name__}: {exc}')} "
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


def _progress_on(progress: bool | None) -> bool:
    from .progress import stderr_is_terminal

    return stderr_is_terminal() if progress is None else progress


def _with_progress(progress: bool | None, fn: Callable[[], T]) -> T:
    """``fn()`` under ``_guard``, drawing progress as ``--progress/--no-progress`` says."""
    from .progress import enabled_for

    with enabled_for(_progress_on(progress)):
        return _guard(fn)


def _print_json(value: Any) -> None:
    """One JSON document on stdout (the form of the JSON files ragassay writes)."""
    from .jsonio import json_text

    sys.stdout.write(json_text(value))
    sys.stdout.flush()


def _table(title: str, header: Sequence[str], rows: Iterable[Sequence[object]], *,
           left: Iterable[str] = ()) -> None:
    from .report.safe import print_table

    print_table(out, title, header, rows, left=left)


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
    progress: ProgressOpt = None,
    quiet: Annotated[bool, typer.Option(
        "--quiet", "-q", help="No progress bar (index prints no tables): --no-progress.")
    ] = False,
) -> None:
    """Build `index.json` + `embeddings.npy` from a folder of documents."""
    from .embed import known_embedders
    from .errors import unknown_name
    from .index import build_index, index_status, skipped_note
    from .ingest.chunking import check_chunking

    _quiet_pypdf()
    show = _progress_on(False if quiet and progress is None else progress)

    def go() -> None:
        try:
            check_chunking(chunk_size, overlap)
        except ValueError as exc:
            raise InputError("--chunk-size/--overlap", str(exc)) from None
        if embedder not in known_embedders():
            raise InputError("--embedder", unknown_name("embedder", embedder, known_embedders()))
        if if_stale:
            reason = index_status(out_dir, source, chunk_size=chunk_size, overlap=overlap,
                                  embedder=embedder)
            if reason is None:
                err.print(f"index {out_dir} is up to date")
                return
            err.print(f"rebuilding index {out_dir}: {reason}")
        idx = build_index(source, out_dir, chunk_size=chunk_size, overlap=overlap,
                          embedder=embedder, progress=show)
        note = skipped_note(idx.skipped)
        if note:
            err.print(f"[yellow]warning:[/] {escape(note)}")
        b = idx.meta["build"]
        err.print(f"indexed {b['num_documents']} documents into {b['num_chunks']} chunks "
                  f"→ {out_dir}")

    _with_progress(show, go)


def _load(config: Path, predictions: Path | None = None, chunks: Path | None = None,
          k: int | None = None, lenient: bool = False) -> Any:
    """The config with the command-line values applied, then checked."""
    from .config import load_config

    overrides: dict[str, Any] = {}
    if predictions is not None:
        overrides["predictions_path"] = predictions
    if chunks is not None:
        overrides.update({"chunks_path": chunks, "index_dir": None, "source_dir": None})
    if k is not None:
        if k < 1:
            raise InputError("--k", f"k must be at least 1 (got {k})")
        overrides["pipeline.top_k"] = k
    if lenient:
        overrides["lenient"] = True
    return load_config(config, overrides)


ConfigOpt = Annotated[Path, typer.Option("--config", "-c", help="Evaluation config (YAML).")]
RunIdOpt = Annotated[str | None, typer.Option("--run-id", help="Run folder name (default: time).")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace an existing folder of that id.")]
RootOpt = Annotated[Path | None, typer.Option(help="Override the config's output_root.")]
QuietOpt = Annotated[bool, typer.Option(
    "--quiet", "-q", help="No tables on stdout (progress: see --progress).")]
PredOpt = Annotated[Path | None, typer.Option(
    "--predictions", help="Score this predictions JSONL instead of the built-in pipeline.")]
ChunksOpt = Annotated[Path | None, typer.Option(
    "--chunks", help="Evidence as a plain chunks.jsonl instead of an index.")]
KOpt = Annotated[int | None, typer.Option("--k", help="Override pipeline.top_k.")]
LenientOpt = Annotated[bool, typer.Option(
    "--lenient", help="Unknown keys in question, gold and prediction rows are warnings.")]


@app.command()
def run(config: ConfigOpt, run_id: RunIdOpt = None, force: ForceOpt = False,
        output_root: RootOpt = None, quiet: QuietOpt = False, predictions: PredOpt = None,
        chunks: ChunksOpt = None, k: KOpt = None, lenient: LenientOpt = False,
        apply_gate: Annotated[bool, typer.Option(
            "--gate", help="Then apply the config's gate: exit 1 when it fails.")] = False,
        output_format: FormatOpt = Format.text, progress: ProgressOpt = None,
        ) -> None:
    """Evaluate the configured pipeline (or a predictions file) and write the run folder.

    With --format json, stdout is metrics.json plus `run_dir` (and `gate` with --gate)."""
    from .report.summary import print_summary
    from .run import run_evaluation

    as_json = output_format is Format.json
    _quiet_pypdf()
    result = _with_progress(progress, lambda: run_evaluation(
        _load(config, predictions, chunks, k, lenient), run_id=run_id, force=force,
        output_root=output_root))
    if not quiet and not as_json:
        print_summary(result, out)
    (err if as_json else out).print(escape(result.totals.line()), soft_wrap=True)
    for note in result.metrics.notes:
        err.print(f"[yellow]note:[/] {escape(note)}")
    stale = result.metrics.provenance.index.get("stale")
    if stale:
        err.print(f"[yellow]warning:[/] the index is stale ({escape(stale)}); rebuild it with "
                  "`ragassay index --if-stale`")
    run_dir = result.folder
    assert run_dir is not None  # written by run_evaluation
    err.print(f"run {escape(result.run_id)} → {escape(str(run_dir))}")
    failed = result.metrics.counts.answerer_errors
    gate_result = None
    if apply_gate and not failed:
        gate_result = _gate(run_dir, None, config, None, None,
                            lines_to=err if as_json else out)
    if as_json:
        doc = {**result.metrics.model_dump(mode="json"), "run_dir": str(run_dir)}
        if gate_result is not None:
            doc["gate"] = _gate_doc(gate_result)
        _print_json(doc)
    if failed:
        first = next((q.not_measured for q in result.questions if q.not_measured),
                     "the answerer call failed")
        err.print(f"[red]error:[/] {failed} questions not measured (answers.jsonl, "
                  f"not_measured), e.g. {escape(first)}; their retrieval is measured; rerun to "
                  "resume from the cache")
        raise typer.Exit(NOT_MEASURED)
    if gate_result is not None and not gate_result.passed:
        raise typer.Exit(GATE_FAILED)


def _gate(run_dir: Path, bars_text: list[str] | None, config: Path | None,
          baseline: Path | None, junit: Path | None, fail_on_regression: bool = True, *,
          lines_to: Console | None = None) -> Any:
    """Check a run against its bars (and a baseline); print one line per outcome (on
    ``lines_to``, stdout by default) and return the :class:`~ragassay.gate.GateResult`."""
    from .config import load_config, locate
    from .gate import (
        GateConfig,
        evaluate_gate,
        format_result,
        parse_bar_text,
        parse_gate_config,
        write_junit,
    )
    from .runfolder import read_run

    def go() -> Any:
        run = read_run(run_dir)
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
        base = read_run(baseline) if baseline is not None else None
        result = evaluate_gate(run, options, baseline=base, fail_on_regression=fail_on_regression,
                               run_dir=run_dir, baseline_dir=baseline)
        if junit is not None:
            write_junit(result, junit)
        return result

    result = _guard(go)
    console = out if lines_to is None else lines_to
    for line in format_result(result):
        console.print(escape(line), soft_wrap=True)
    return result


def _gate_doc(result: Any) -> dict[str, Any]:
    """The gate's verdict as JSON: bars, regressions, fixes, not measured, passed."""
    from .gate import format_result

    def flips(items: Iterable[Any]) -> list[dict[str, Any]]:
        return [{"question_id": f.question_id, "checks": list(f.checks),
                 "question": f.question} for f in items]

    return {
        "run_id": result.run_id,
        "passed": bool(result.passed),
        "bars": [{"bar": str(r.bar), "metric": r.bar.metric, "op": r.bar.op,
                  "threshold": r.bar.threshold, "value": r.value, "passed": r.passed,
                  "reason": r.reason, "baseline_value": r.baseline_value, "delta": r.delta}
                 for r in result.bars],
        "regressions": flips(result.regressions),
        "fixes": flips(result.fixes),
        "not_measured": list(result.not_measured),
        "allow_missing": result.options.allow_missing,
        "baseline_id": result.baseline_id,
        "fail_on_regression": result.fail_on_regression,
        "only_in_run": list(result.only_in_run),
        "only_in_baseline": list(result.only_in_baseline),
        "junit_questions": result.options.junit_questions,
        "failing_questions": result.failing_questions,
        "summary": format_result(result)[-1],
    }


@app.command()
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
    result = _gate(run_dir, bar, config, baseline, junit, fail_on_regression,
                   lines_to=err if as_json else out)
    if as_json:
        _print_json(_gate_doc(result))
    if not result.passed:
        raise typer.Exit(GATE_FAILED)


@app.command()
def sweep(config: ConfigOpt,
          k: Annotated[str, typer.Option("--k", help="k values: 1..10 or 1,3,5.")] = "1..10",
          threshold: Annotated[str | None, typer.Option(
              "--threshold", help="Score thresholds to try besides none, e.g. 0.2,0.3.")] = None,
          sweep_id: Annotated[str, typer.Option(help="Output folder name.")] = "sweep",
          force: ForceOpt = False, output_root: RootOpt = None, predictions: PredOpt = None,
          chunks: ChunksOpt = None, lenient: LenientOpt = False,
          output_format: FormatOpt = Format.text, progress: ProgressOpt = None) -> None:
    """Evaluate k = 1..N (and thresholds) in one call: table, sweep.json/md and a PNG plot.

    With --format json, stdout is sweep.json plus `sweep_dir`."""
    from .jsonio import read_json
    from .runfolder import check_run_id
    from .sweep import SWEEP_HEADER, parse_k_range, parse_thresholds, run_sweep, sweep_table
    from .sweep import write_sweep as save

    def go() -> tuple[list[dict[str, Any]], Path, list[str]]:
        ks, thresholds = parse_k_range(k), parse_thresholds(threshold)
        cfg = _load(config, predictions, chunks, lenient=lenient)
        check_run_id(sweep_id, "--sweep-id")
        dest = Path(output_root or cfg.output_root) / sweep_id
        if dest.exists() and not force:
            raise InputError(dest, "already exists; choose another --sweep-id or pass --force")
        rows, notes = run_sweep(cfg, ks, thresholds)
        save(rows, dest, cfg=cfg, force=force)
        return rows, dest, notes

    _quiet_pypdf()
    rows, dest, notes = _with_progress(progress, go)
    for note in notes:
        err.print(f"[yellow]note:[/] {escape(note)}")
    if output_format is Format.json:
        _print_json({**read_json(dest / "sweep.json"), "sweep_dir": str(dest)})
    else:
        _table("sweep", SWEEP_HEADER, sweep_table(rows))
    err.print(f"sweep → {escape(str(dest))}/sweep.md, sweep.json, sweep.png")


@app.command()
def compare(runs: Annotated[list[Path], typer.Argument(help="Run folders, the baseline first.")],
            metric: Annotated[list[str] | None, typer.Option(
                "--metric", "-m", help="Metric to compare (default: all in metrics.json).")] = None,
            seed: Annotated[int, typer.Option(help="Seed of the resampling tests.")] = 0,
            json_out: Annotated[Path | None, typer.Option(
                "--json", help="Also write the full comparison as JSON.")] = None,
            output_format: FormatOpt = Format.text) -> None:
    """Per-metric deltas between runs with paired randomization and t-test p-values.

    With --format json, stdout is the comparison (the document --json writes)."""
    from .atomic import write_text
    from .jsonio import json_text
    from .report.compare import COMPARE_HEADER, compare_rows, compare_runs, summary_rows

    result = _guard(lambda: compare_runs(runs, metrics=metric or None, seed=seed))
    if output_format is Format.json:
        _print_json(result)
    else:
        header, rows = _guard(lambda: summary_rows(runs, metric or None))
        _table("runs", header, rows, left=["run", "pipeline"])
        _table(f"compared with {runs[0]}", COMPARE_HEADER, compare_rows(result),
               left=["candidate", "metric"])
    if json_out is not None:
        write_text(json_out, json_text(result))


@app.command("metrics")
def metrics_cmd(list_: Annotated[bool, typer.Option("--list", help="List the measures.")] = True
                ) -> None:
    """Every measure: its canonical name (`name_at_k` with a cutoff), group, direction,
    trec_eval name and formula. Retrieval measures also work in `ragassay trec-eval`."""
    from .metrics import list_measures

    header = ["name", "group", "better", "cutoff", "trec_eval", "formula"]
    _table("measures (name_at_k; also name@k, name.k)", header, (
        [info.name, info.group, "higher" if info.higher_is_better else "lower", info.cutoff,
         info.trec_eval or "—", info.formula] for info in list_measures(None)), left=header)


@app.command("trec-eval")
def trec_eval(qrels: Annotated[Path, typer.Argument(help="TREC qrels: qid 0 docid grade.")],
              run_file: Annotated[Path, typer.Argument(help="TREC run: qid Q0 docid rank score "
                                                            "tag.")],
              measure: Annotated[list[str], typer.Option(
                  "--measure", "-m", help="e.g. ndcg_cut.5, P.5, recip_rank, map, mrr@10.")],
              per_query: Annotated[bool, typer.Option("-q", help="Per-query lines too.")] = False,
              complete: Annotated[bool, typer.Option(
                  "-c", help="Score queries missing from the run as 0 (trec_eval -c).")] = False,
              ) -> None:
    """trec_eval-compatible evaluation of TREC files, printed in trec_eval's layout."""
    from .metrics import evaluate, parse_measures
    from .metrics.trec import format_results, read_qrels, read_run

    def go() -> str:
        try:
            measures = parse_measures(measure)
        except ValueError as exc:
            raise InputError("-m", str(exc)) from None
        q, r = read_qrels(qrels), read_run(run_file)
        res = evaluate(q, r, measures, missing_queries="zero" if complete else "skip")
        return format_results(res, per_query=per_query)

    sys.stdout.write(_guard(go))


@app.command("export-trec")
def export_trec(run_dir: Annotated[Path, typer.Argument(help="A run folder.")],
                out_dir: Annotated[Path | None, typer.Option(
                    "--out", help="Folder for the files (default: RUN_DIR/trec).")] = None
                ) -> None:
    """Write a run folder's rankings and gold as TREC `run.trec` and `qrels.trec` (ids with
    whitespace percent-encoded; `ragassay trec-eval` on them gives the run's values)."""
    from .report.trec import export_trec
    from .runfolder import read_run

    dest = out_dir if out_dir is not None else run_dir / "trec"
    notes = _guard(lambda: export_trec(read_run(run_dir), dest))
    for note in notes:
        err.print(f"note: {escape(note)}")
    err.print(f"wrote {escape(str(dest / 'run.trec'))} and {escape(str(dest / 'qrels.trec'))}")


@app.command("judge-check")
def judge_check_cmd(labelled: Annotated[Path, typer.Argument(
                        help="JSONL of {id, claim, sources: [text], label: yes|no}.")],
                    config: ConfigOpt) -> None:
    """Measure the config's LLM judge against human labels: accuracy and Cohen's kappa."""
    from .config import check_endpoints, load_config
    from .endpoint import OpenAICompatClient
    from .judge import Judge, judge_check

    def go() -> dict[str, Any]:
        cfg = load_config(config)
        if cfg.judge is None:
            raise InputError(config, "no judge configured", field="judge")
        check_endpoints(cfg, sections=("judge",))
        with OpenAICompatClient(cfg.judge) as client:
            return judge_check(labelled, Judge(client))

    res = _guard(go)
    acc = "—" if res["accuracy"] is None else f"{res['accuracy']:.3f}"
    kappa = "—" if res["cohen_kappa"] is None else f"{res['cohen_kappa']:.3f}"
    out.print(f"judge vs labels: n={res['n']} measured={res['measured']} accuracy={acc} "
              f"kappa={kappa} confusion={res['confusion']} not measured={res['not_measured']}",
              highlight=False, soft_wrap=True)
    if res["disagreements"]:
        out.print("disagreements: " + ", ".join(res["disagreements"]), soft_wrap=True)


@app.command()
def report(run_dirs: Annotated[list[Path], typer.Argument(
               help="A run folder; or BASE NEW [NEW2 ...] for a comparison page.")],
           out_file: Annotated[Path | None, typer.Option(
               "--out", help="HTML file (default: RUN_DIR/report.html; comparing: "
               "NEW/compare-BASE.html).")] = None) -> None:
    """(Re)write the HTML report of a run folder, or write the page comparing runs."""
    from .report.compare_html import write_compare_html
    from .report.html import write_html

    path = _guard(lambda: write_html(run_dirs[0], out_file) if len(run_dirs) == 1
                  else write_compare_html(run_dirs, out_file))
    err.print(f"report → {path}")


def run_eval_main(argv: list[str] | None = None) -> None:
    """The contract command: `python -m eval.naive_rag.run_eval --config ... [--run-id ID]`."""
    args = list(argv if argv is not None else sys.argv[1:])
    if "--debug" in args:
        args.remove("--debug")
        _debug_option(True)
    single = typer.Typer(add_completion=False, help=HELP)
    single.command(cls=_Command)(run)
    single(args=args, prog_name="run_eval")


for _info in app.registered_commands:  # every command's help shows flags without <bool>
    if _info.cls in (None, TyperCommand):
        _info.cls = _Command


if __name__ == "__main__":
    app()
