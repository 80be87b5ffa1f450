"""`ragassay run` and the contract command: load → predict → score → write the run folder.

A reused run id is refused before any work; the folder is assembled in a temporary sibling
and renamed into place (:func:`ragassay.atomic.write_folder`), so an interrupted run leaves
no half-written folder.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .aggregate import latency_summary, ms_summary, summarize
from .collector import collector_paused
from .config import EvalConfig, check_contract_questions, check_endpoints
from .errors import InputError
from .executor import open_executor
from .ingest import file_sha256
from .inputs import Predicted, load_inputs
from .jsonio import read_json
from .predict import cap_k, predict
from .report.views import VIEWS
from .runfolder import SYSTEM_JSON, RunResult, check_run_id
from .runrows import QuestionResult, referenced_chunk_texts
from .schema import take_renormalised_ids
from .scoring import check_claims, judge, placed_inputs, score
from .targets import claim


def stage_ms(results: list[QuestionResult], stage: str) -> dict[str, dict[str, float | int]]:
    """``{"<stage>_ms": {p50, p95, mean, n}}`` over the questions whose prediction timed the
    stage (per call: the built-in pipeline times each answer call), or nothing."""
    summary = latency_summary(results).get(stage)
    return {f"{stage}_ms": summary} if summary else {}


def source_system(cfg: EvalConfig, predicted: Predicted) -> dict[str, Any] | None:
    """The identity of the system whose replies are scored: the live system's, or, for a
    predictions file written by a live run, the ``system.json`` beside it (the run folder
    of that run), so that scoring it again records the same system."""
    if "system" in predicted.audit:
        return dict(predicted.audit["system"])
    if cfg.predictions_path is not None:
        beside = Path(cfg.predictions_path).parent / SYSTEM_JSON
        if beside.is_file():
            try:
                data = read_json(beside)
            except InputError:
                return None
            return data if isinstance(data, dict) else None
    return None


def served_model_notes(cfg: EvalConfig, predicted: Predicted) -> list[str]:
    """A note per model that answered in the LLM answerer's name although the config names
    another (the built-in pipeline records the reply's ``model`` in the prediction's
    ``metadata.served_model`` when it differs)."""
    counts: dict[str, int] = {}
    for pred in predicted.predictions.values():
        served = pred.metadata.get("served_model")
        if isinstance(served, str):
            counts[served] = counts.get(served, 0) + 1
    if not counts or cfg.answerer.kind != "llm":
        return []
    want = cfg.answerer.endpoint().model
    return [f"the answerer's server replied as model {name!r} ({n} answers), not the "
            f"configured {want!r}: the results are that model's" for name, n in
            sorted(counts.items())]


def nfc_note(ids: list[str]) -> list[str]:
    """The note of ids read in another Unicode form than NFC (none: no note)."""
    if not ids:
        return []
    shown = ", ".join(ascii(i) for i in ids[:3]) + (", ..." if len(ids) > 3 else "")
    return [f"{len(ids)} id(s) were not in Unicode NFC form and were read as NFC, so that "
            f"one id written two ways is one id: {shown}"]


def default_run_id(mode: str) -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + f"-{mode}"


def run_evaluation(cfg: EvalConfig, *, run_id: str | None = None, force: bool = False,
                   output_root: Path | None = None, progress: bool = False,
                   contract: bool = False) -> RunResult:
    """Evaluate the configured system and write `<output_root>/<run_id>/` (the result's
    ``folder``). ``contract``: check the contract's minimums first (the contract command;
    :func:`ragassay.config.check_contract_questions`)."""
    t_start = time.perf_counter()
    mode = "predictions" if cfg.predictions_path else "system" if cfg.system \
        else cfg.pipeline.name
    root = Path(output_root or cfg.output_root)
    if root.exists() and not root.is_dir():
        raise InputError(root, "output_root is not a folder: choose another --output-root")
    if run_id is None:  # a time stamp; two runs in one second get -2, -3, ...
        stamp = run_id = default_run_id(mode)
        n = 1
        while (root / run_id).exists():
            n += 1
            run_id = f"{stamp}-{n}"
    check_run_id(run_id)
    run_dir = root / run_id
    # held from the check to the rename: a second run of this id at once is refused now
    with claim(run_dir), collector_paused():
        if run_dir.exists() and not force:
            raise InputError(run_dir, "run id already used; choose another --run-id or pass "
                             "--force to replace it")
        return _evaluate(cfg, run_dir, mode, force=force, progress=progress,
                         contract=contract, t_start=t_start)


def _evaluate(cfg: EvalConfig, run_dir: Path, mode: str, *, force: bool, progress: bool,
              contract: bool, t_start: float) -> RunResult:
    run_id = run_dir.name
    take_renormalised_ids()  # forget earlier reads of this process
    check_endpoints(cfg)  # a missing key or a server that is not there: before any work
    inputs = load_inputs(cfg)
    if contract:
        check_contract_questions(cfg, inputs.questions)
    k, note = cap_k(cfg, inputs, cfg.pipeline.top_k)
    ex = cfg.executor
    t0 = time.perf_counter()
    with open_executor(ex.kind, ex.workers, ex.address) as executor:
        start_s = time.perf_counter() - t0  # starting the workers (a local Ray: seconds)
        t0 = time.perf_counter()
        predicted = predict(cfg, inputs, k=k, progress=progress, executor=executor)
        predict_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        score_times: list[float] = []
        scored, placed = placed_inputs(inputs, predicted)  # contexts given as text
        results = score(cfg, scored, placed, k=k, executor=executor, times=score_times)
        score_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        check_claims(cfg, scored, results)
        claims_s = time.perf_counter() - t0
        judge(cfg, scored, results, executor)
        judge_s = time.perf_counter() - t0 - claims_s
        ran_on = executor.describe()
    source = source_system(cfg, predicted)
    metrics = summarize(
        cfg, inputs, results, run_id=run_id, mode=mode, k=k,
        notes=([note] if note else []) + inputs.warnings  # the reads' warnings included
        + served_model_notes(cfg, predicted) + nfc_note(take_renormalised_ids()),
        provenance={"inputs_sha256": {str(p): file_sha256(p) for p in inputs.files},
                    **({"system": source} if source else {})},
        timings={"executor": {**ran_on, "start_s": start_s},
                 "load_s": inputs.load_s, "anchor_s": inputs.anchor_s,
                 "predict_s": predict_s, **predicted.timings,
                 **stage_ms(results, "answer"),
                 "score_s": score_s, "score_ms": ms_summary([t * 1000 for t in score_times]),
                 "claims_s": claims_s, **({"judge_s": judge_s} if cfg.judge else {}),
                 "total_s": time.perf_counter() - t_start,
                 "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds")})
    if "returned_texts" in placed.audit:  # the gold as placed in the returned texts
        metrics.gold["returned_texts"] = placed.audit["returned_texts"]
    result = RunResult(metrics, results,
                       chunk_texts=referenced_chunk_texts(results, scored.chunk_texts),
                       views=VIEWS)
    if cfg.system is not None:  # what the system returned, to score again without it
        result.predictions = [predicted.predictions[q.question_id] for q in inputs.questions
                              if q.question_id in predicted.predictions]
        result.system = predicted.audit.get("system")
    result.write(run_dir, force=force)
    return result
