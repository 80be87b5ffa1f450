"""The evaluating commands: `ragassay index`, `ragassay run` and `ragassay sweep`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..defaults import DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP
from ..errors import GATE_FAILED, NOT_MEASURED, InputError
from . import consoles
from .common import (
    ChunksOpt,
    ConfigOpt,
    ExecutorName,
    ExecutorOpt,
    ForceOpt,
    Format,
    FormatOpt,
    KOpt,
    LenientOpt,
    PredOpt,
    ProgressOpt,
    QuietOpt,
    RootOpt,
    RunIdOpt,
    SystemOpt,
    WorkersOpt,
    literal,
    load_cli_config,
    progress_on,
    quiet_pypdf,
    with_progress,
)
from .gating import gate_run
from .output import gate_doc, print_json, show_table


def judge_failures(questions: list[Any]) -> list[tuple[str, str]]:
    """``(question id, reason)`` of every question whose judge call failed (claim checks or
    judge_faithfulness): judged measures not measured, as an answerer failure is."""
    out = []
    for q in questions:
        reasons = [why for why in q.missing.values() if why.startswith("judge call failed")]
        if reasons:
            out.append((q.question_id, reasons[0]))
    return out


def index(
    source: Annotated[Path, typer.Option(help="Folder of documents to index.")] = Path("data/raw"),
    out_dir: Annotated[Path, typer.Option("--out", help="Index folder to write.")] = Path(
        "data/index"),
    chunk_size: Annotated[int, typer.Option(
        help="Chunk length in characters.")] = DEFAULT_CHUNK_SIZE,
    overlap: Annotated[int, typer.Option(
        help="Characters shared by neighbouring chunks.")] = DEFAULT_OVERLAP,
    embedder: Annotated[str, typer.Option(help="Embedder name (see `ragassay.embed`).")] = (
        "hashing"),
    if_stale: Annotated[bool, typer.Option(
        "--if-stale", help="Only build when the index is missing or out of date.")] = False,
    progress: ProgressOpt = None,
    quiet: Annotated[bool, typer.Option(
        "--quiet", "-q", help="No progress bar (index prints no tables): --no-progress.")
    ] = False,
    executor: ExecutorOpt = None,
    workers: WorkersOpt = None,
    ray_address: Annotated[str | None, typer.Option(
        "--ray-address", help="With --executor ray: the Ray cluster to join (default: a "
                              "local Ray on 127.0.0.1).")] = None,
) -> None:
    """Build `index.json` + `embeddings.npy` from a folder of documents."""
    from ..embed import known_embedders
    from ..errors import unknown_name
    from ..index import build_index, index_status, skipped_note
    from ..ingest.chunking import check_chunking

    quiet_pypdf()
    show = progress_on(False if quiet and progress is None else progress)

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
                consoles.err.print(f"index {out_dir} is up to date")
                return
            consoles.err.print(f"rebuilding index {out_dir}: {reason}")
        if ray_address is not None and executor is not ExecutorName.ray:
            raise InputError("--ray-address", "is for --executor ray")
        from ..executor import open_executor

        kind = executor.value if executor is not None else "local"
        with open_executor(kind, workers, ray_address) as ex:
            idx = build_index(source, out_dir, chunk_size=chunk_size, overlap=overlap,
                              embedder=embedder, progress=show, executor=ex)
        note = skipped_note(idx.skipped)
        if note:
            consoles.err.print(f"[yellow]warning:[/] {literal(note)}")
        b = idx.meta["build"]
        consoles.err.print(f"indexed {b['num_documents']} documents into {b['num_chunks']} chunks "
                  f"→ {out_dir}")

    with_progress(show, go)


def run(config: ConfigOpt, run_id: RunIdOpt = None, force: ForceOpt = False,
        output_root: RootOpt = None, quiet: QuietOpt = False, predictions: PredOpt = None,
        chunks: ChunksOpt = None, k: KOpt = None, lenient: LenientOpt = False,
        apply_gate: Annotated[bool, typer.Option(
            "--gate", help="Then apply the config's gate: exit 1 when it fails.")] = False,
        output_format: FormatOpt = Format.text, progress: ProgressOpt = None,
        contract: Annotated[bool, typer.Option(
            "--contract", help="Check the contract's minimums for naive_baseline (top_k 10, "
                               "10 answerable and 3 unanswerable questions), as the contract "
                               "command does.")] = False,
        executor: ExecutorOpt = None, workers: WorkersOpt = None,
        system: SystemOpt = None) -> None:
    """Evaluate the configured pipeline (or a system under test, or a predictions file) and
    write the run folder.

    With --format json, stdout is metrics.json plus `run_dir` (and `gate` with --gate)."""
    from ..config import check_contract_top_k
    from ..report.summary import print_summary
    from ..run import run_evaluation

    as_json = output_format is Format.json
    quiet_pypdf()

    loaded: list[Any] = []

    def go() -> Any:
        cfg = load_cli_config(config, predictions, chunks, k, lenient, executor, workers,
                              system)
        loaded.append(cfg)
        if contract:
            check_contract_top_k(cfg, k_option=k is not None)
        return run_evaluation(cfg, run_id=run_id, force=force, output_root=output_root,
                              contract=contract)

    result = with_progress(progress, go)
    if not quiet and not as_json:
        print_summary(result, consoles.out)
    (consoles.err if as_json else consoles.out).print(literal(result.totals.line()), soft_wrap=True)
    for note in result.metrics.notes:
        consoles.err.print(f"[yellow]note:[/] {literal(note)}")
    stale = result.metrics.provenance.index.get("stale")
    if stale:
        consoles.err.print(f"[yellow]warning:[/] the index is stale ({literal(stale)}); "
                           "rebuild it with `ragassay index --if-stale`")
    run_dir = result.folder
    assert run_dir is not None  # written by run_evaluation
    consoles.err.print(f"run {literal(result.run_id)} → {literal(str(run_dir))}")
    # One rule (exit 3): a question without a result, whether its prediction is missing from
    # the predictions file or the answerer call failed; the run folder is written either way.
    from ..reasons import NO_PREDICTION

    counts = result.metrics.counts
    no_prediction = [q.question_id for q in result.questions if q.not_measured == NO_PREDICTION]
    failed = counts.answerer_errors + len(no_prediction)
    gate_result = None
    if apply_gate and not counts.answerer_errors:  # the gate judges missing predictions
        gate_result = gate_run(run_dir, None, config, None, None,
                            lines_to=consoles.err if as_json else consoles.out)
    if as_json:
        doc = {**result.metrics.model_dump(mode="json"), "run_dir": str(run_dir)}
        if gate_result is not None:
            doc["gate"] = gate_doc(gate_result)
        print_json(doc)
    if no_prediction:
        consoles.err.print(f"[red]error:[/] {len(no_prediction)} questions not measured: no "
                           f"prediction for them (e.g. {literal(repr(no_prediction[0]))}; "
                           "answers.jsonl, not_measured); add them to the predictions file")
    if counts.answerer_errors:
        first = next((q.not_measured for q in result.questions
                      if q.not_measured not in (None, NO_PREDICTION)), "the answerer call failed")
        resume = ("rerun to resume from the cache" if _has_cache(loaded[0])
                  else "set a cache_dir to resume a rerun from the replies already made")
        consoles.err.print(f"[red]error:[/] {counts.answerer_errors} questions not measured "
                           f"(answers.jsonl, not_measured), e.g. {literal(first)}; their "
                           f"retrieval is measured where it was made; {resume}")
    judge_failed = judge_failures(result.questions)
    if judge_failed:
        qid, why = judge_failed[0]
        consoles.err.print(f"[red]error:[/] the judge failed on {len(judge_failed)} questions "
                           f"(their judged measures are not measured), e.g. {literal(qid)}: "
                           f"{literal(why)}; rerun to resume from the cache")
    if gate_result is not None and not counts.answerer_errors:
        # --gate: its verdict, which counts questions not measured (allow_missing)
        raise typer.Exit(GATE_FAILED if not gate_result.passed else 0)
    if failed or judge_failed:
        raise typer.Exit(NOT_MEASURED)


def _has_cache(cfg: Any) -> bool:
    """Whether the run's calls were cached (the system's, or the LLM answerer's)."""
    if cfg.system is not None:
        return cfg.system.cache_dir is not None
    return cfg.answerer.kind == "llm" and cfg.answerer.endpoint().cache_dir is not None


def sweep(config: ConfigOpt,
          k: Annotated[str, typer.Option("--k", help="k values: 1..10 or 1,3,5.")] = "1..10",
          threshold: Annotated[str | None, typer.Option(
              "--threshold", help="Score thresholds to try besides none, e.g. 0.2,0.3.")] = None,
          sweep_id: Annotated[str, typer.Option(help="Output folder name.")] = "sweep",
          force: ForceOpt = False, output_root: RootOpt = None, predictions: PredOpt = None,
          chunks: ChunksOpt = None, lenient: LenientOpt = False, quiet: QuietOpt = False,
          output_format: FormatOpt = Format.text, progress: ProgressOpt = None,
          executor: ExecutorOpt = None, workers: WorkersOpt = None) -> None:
    """Evaluate k = 1..N (and thresholds) in one call: table, sweep.json/md and a PNG plot.

    With --format json, stdout is sweep.json plus `sweep_dir`; with -q, no table."""
    from ..jsonio import read_json
    from ..runfolder import check_run_id
    from ..sweep import SWEEP_HEADER, parse_k_range, parse_thresholds, run_sweep, sweep_table
    from ..sweep import write_sweep as save
    from ..targets import claim

    def go() -> tuple[list[dict[str, Any]], Path, list[str]]:
        ks, thresholds = parse_k_range(k), parse_thresholds(threshold)
        cfg = load_cli_config(config, predictions, chunks, lenient=lenient, executor=executor,
                    workers=workers)
        check_run_id(sweep_id, "--sweep-id")
        dest = Path(output_root or cfg.output_root) / sweep_id
        with claim(dest):  # a second sweep of this id at once is refused, not merged
            if dest.exists() and not force:
                raise InputError(dest, "already exists; choose another --sweep-id or pass "
                                 "--force")
            rows, notes = run_sweep(cfg, ks, thresholds)
            save(rows, dest, cfg=cfg, force=force)
        return rows, dest, notes

    quiet_pypdf()
    rows, dest, notes = with_progress(progress, go)
    for note in notes:
        consoles.err.print(f"[yellow]note:[/] {literal(note)}")
    if output_format is Format.json:
        print_json({**read_json(dest / "sweep.json"), "sweep_dir": str(dest)})
    elif not quiet:
        show_table("sweep", SWEEP_HEADER, sweep_table(rows))
    consoles.err.print(f"sweep → {literal(str(dest))}/sweep.md, sweep.json, sweep.png")
