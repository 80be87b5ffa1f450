"""Command line: `ragassay index|run|sweep|gate|compare|report|judge-check|metrics|trec-eval|
export-trec`, and the contract entry `eval.naive_rag.run_eval`."""

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


def _load(config: Path, predictions: Path | None = None, chunks: Path | None = None,
          k: int | None = None) -> Any:
    """The config, with command-line overrides applied and checked again."""
    from .config import check_contract, load_config

    cfg = load_config(config)
    if predictions is not None:
        cfg.predictions_path = predictions
    if chunks is not None:
        cfg.chunks_path, cfg.index_dir = chunks, None
    if k is not None:
        if k < 1:
            raise InputError("--k", f"k must be at least 1 (got {k})")
        cfg.pipeline.top_k = k
    check_contract(cfg, config)
    return cfg


ConfigOpt = Annotated[Path, typer.Option("--config", "-c", help="Evaluation config (YAML).")]
RunIdOpt = Annotated[str | None, typer.Option("--run-id", help="Run folder name (default: time).")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace an existing folder of that id.")]
RootOpt = Annotated[Path | None, typer.Option(help="Override the config's output_root.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No tables on stdout.")]
PredOpt = Annotated[Path | None, typer.Option(
    "--predictions", help="Score this predictions JSONL instead of the built-in pipeline.")]
ChunksOpt = Annotated[Path | None, typer.Option(
    "--chunks", help="Evidence as a plain chunks.jsonl instead of an index.")]
KOpt = Annotated[int | None, typer.Option("--k", help="Override pipeline.top_k.")]


@app.command()
def run(config: ConfigOpt, run_id: RunIdOpt = None, force: ForceOpt = False,
        output_root: RootOpt = None, quiet: QuietOpt = False, predictions: PredOpt = None,
        chunks: ChunksOpt = None, k: KOpt = None,
        apply_gate: Annotated[bool, typer.Option(
            "--gate", help="Then apply the config's gate: exit 1 when a bar is missed.")] = False,
        ) -> None:
    """Evaluate the configured pipeline (or a predictions file) and write the run folder."""
    from .report.summary import print_summary, totals_line
    from .run import run_evaluation

    result = _guard(lambda: run_evaluation(_load(config, predictions, chunks, k), run_id=run_id,
                                           force=force, output_root=output_root,
                                           progress=not quiet))
    if not quiet:
        print_summary(result.metrics, result.questions, out)
    out.print(totals_line(result.metrics["checks"]), highlight=False)
    stale = result.metrics["provenance"]["index"]["stale"]
    if stale:
        err.print(f"[yellow]warning:[/] the index is stale ({stale}); rebuild it with "
                  "`ragassay index --if-stale`")
    err.print(f"run {result.run_id} → {result.run_dir}")
    failed = result.metrics["counts"]["answerer_errors"]
    if failed:
        err.print(f"[red]error:[/] {failed} questions not measured: the answerer call failed "
                  "(see failure_cases.jsonl); rerun to resume from the cache")
        raise typer.Exit(3)
    if apply_gate and not _gate(result.run_dir, None, config, None, None):
        raise typer.Exit(1)


def _gate(run_dir: Path, bars_text: list[str] | None, config: Path | None,
          baseline: Path | None, junit: Path | None, fail_on_regression: bool = True) -> bool:
    """Check a run against its bars (and a baseline); print one line per outcome."""
    import json

    from .config import load_config
    from .gate import evaluate_gate, format_result, parse_bar_text, parse_gate, run_metric_names
    from .gate import write_junit as save_junit

    def go() -> Any:
        known = run_metric_names(run_dir)
        k = None
        if bars_text:
            bars = [parse_bar_text(t, known_metrics=known) for t in bars_text]
        else:
            metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
            cfg_path = config or metrics["provenance"].get("config_path")
            if not cfg_path:
                raise InputError(run_dir, "no bars: pass --bar or --config with a `gate:` mapping")
            bars = parse_gate(load_config(cfg_path).gate, source=cfg_path, known_metrics=known)
            k = metrics.get("checks", {}).get("k")
        result = evaluate_gate(run_dir, bars, baseline_dir=baseline,
                               fail_on_regression=fail_on_regression,
                               found_metric=f"hit_at_{k}" if not bars_text and k else None)
        if junit is not None:
            save_junit(result, run_dir, junit)
        return result

    result = _guard(go)
    for line in format_result(result):
        out.print(line, highlight=False, soft_wrap=True)
    return bool(result.passed)


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
             help="A regression against the baseline fails the gate.")] = True) -> None:
    """Exit 1 when the run misses a bar or regresses against a baseline; 0 otherwise."""
    if not _gate(run_dir, bar, config, baseline, junit, fail_on_regression):
        raise typer.Exit(1)


@app.command()
def sweep(config: ConfigOpt,
          k: Annotated[str, typer.Option("--k", help="k values: 1..10 or 1,3,5.")] = "1..10",
          threshold: Annotated[str | None, typer.Option(
              "--threshold", help="Score thresholds to try besides none, e.g. 0.2,0.3.")] = None,
          sweep_id: Annotated[str, typer.Option(help="Output folder name.")] = "sweep",
          force: ForceOpt = False, output_root: RootOpt = None, predictions: PredOpt = None,
          chunks: ChunksOpt = None) -> None:
    """Evaluate k = 1..N (and thresholds) in one call: table, sweep.json/md and a PNG plot."""
    from rich.table import Table

    from .run import check_run_id
    from .sweep import SWEEP_HEADER, parse_k_range, parse_thresholds, run_sweep, sweep_table
    from .sweep import write_sweep as save

    def go() -> tuple[list[dict[str, Any]], Path]:
        ks, thresholds = parse_k_range(k), parse_thresholds(threshold)
        cfg = _load(config, predictions, chunks)
        check_run_id(sweep_id)
        dest = Path(output_root or cfg.output_root) / sweep_id
        if dest.exists() and not force:
            raise InputError(dest, "already exists; choose another --sweep-id or pass --force")
        rows = run_sweep(cfg, ks, thresholds)
        save(rows, dest, cfg=cfg, force=force)
        return rows, dest

    rows, dest = _guard(go)
    table = Table(title="sweep", title_justify="left")
    for col in SWEEP_HEADER:
        table.add_column(col, justify="right")
    for row in sweep_table(rows):
        table.add_row(*row)
    out.print(table)
    err.print(f"sweep → {dest}/sweep.md, sweep.json, sweep.png")


@app.command()
def compare(runs: Annotated[list[Path], typer.Argument(help="Run folders, the baseline first.")],
            metric: Annotated[list[str] | None, typer.Option(
                "--metric", "-m", help="Metric to compare (default: all in metrics.json).")] = None,
            seed: Annotated[int, typer.Option(help="Seed of the resampling tests.")] = 0,
            json_out: Annotated[Path | None, typer.Option(
                "--json", help="Also write the full comparison as JSON.")] = None) -> None:
    """Per-metric deltas between runs with paired randomization and t-test p-values."""
    import json

    from rich.table import Table

    from .report.compare import COMPARE_HEADER, compare_rows, compare_runs, summary_rows

    result = _guard(lambda: compare_runs(runs, metrics=metric or None, seed=seed))
    header, rows = summary_rows(runs, metric or None)
    summary = Table(title="runs", title_justify="left")
    for col in header:
        summary.add_column(col, justify="left" if col in ("run", "pipeline") else "right")
    for row in rows:
        summary.add_row(*row)
    out.print(summary)
    table = Table(title=f"compared with {runs[0]}", title_justify="left")
    for col in COMPARE_HEADER:
        table.add_column(col, justify="left" if col in ("candidate", "metric") else "right")
    for row in compare_rows(result):
        table.add_row(*row)
    out.print(table)
    if json_out is not None:
        json_out.write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n",
                            encoding="utf-8")


@app.command("metrics")
def metrics_cmd(list_: Annotated[bool, typer.Option("--list", help="List the measures.")] = True
                ) -> None:
    """The IR measures `ragassay trec-eval` and `ragassay.metrics.evaluate` understand."""
    from rich.table import Table

    from .metrics import list_measures

    table = Table(title="measures (name@k)", title_justify="left")
    for col in ("name", "cutoff", "trec_eval", "formula"):
        table.add_column(col)
    for info in list_measures():
        table.add_row(info.name, info.cutoff, info.trec_eval, info.formula)
    out.print(table)


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
    from .metrics import evaluate
    from .metrics.trec import format_results, read_qrels, read_run

    def go() -> str:
        q, r = read_qrels(qrels), read_run(run_file)
        res = evaluate(q, r, measure, missing_queries="zero" if complete else "skip")
        return format_results(res, per_query=per_query)

    sys.stdout.write(_guard(go))


@app.command("export-trec")
def export_trec(run_dir: Annotated[Path, typer.Argument(help="A run folder.")],
                out_dir: Annotated[Path, typer.Option("--out", help="Folder for the files.")]
                ) -> None:
    """Write a run folder's rankings and gold as TREC `run.trec` and `qrels.trec`."""
    from .metrics.trec import write_qrels, write_run
    from .schema import iter_jsonl

    def go() -> None:
        run: dict[str, dict[str, float]] = {}
        qrels: dict[str, dict[str, int]] = {}
        for _, row in iter_jsonl(run_dir / "retrieved_chunks.jsonl"):
            hits = row["retrieved"]
            # scores as given; without them, rank order becomes descending scores
            run[row["question_id"]] = {
                h["chunk_id"]: (h["score"] if h["score"] is not None else float(-h["rank"]))
                for h in hits}
            if row["gold_chunk_ids"]:
                qrels[row["question_id"]] = dict.fromkeys(row["gold_chunk_ids"], 1)
        out_dir.mkdir(parents=True, exist_ok=True)
        write_run(run, out_dir / "run.trec", tag=run_dir.name)
        write_qrels(qrels, out_dir / "qrels.trec")

    _guard(go)
    err.print(f"wrote {out_dir / 'run.trec'} and {out_dir / 'qrels.trec'}")


@app.command("judge-check")
def judge_check_cmd(labelled: Annotated[Path, typer.Argument(
                        help="JSONL of {id, claim, sources: [text], label: yes|no}.")],
                    config: ConfigOpt) -> None:
    """Measure the config's LLM judge against human labels: accuracy and Cohen's kappa."""
    from .config import load_config
    from .endpoint import OpenAICompatClient
    from .judge import Judge, judge_check

    def go() -> dict[str, Any]:
        cfg = load_config(config)
        if cfg.judge is None:
            raise InputError(config, "no judge configured", field="judge")
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
