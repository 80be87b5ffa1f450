"""Throughput of the executors on two CPU-bound stages, with 1 and 2 workers.

    python bench/executor_throughput.py [--questions 3000] [--texts 20000] [--chunks 20000]
                                        [--repeats 1] [--kinds process,ray]

- ``retrieve``: the naive baseline's exact dense search (hashing embedder, top 10 and the
  rank of each question's gold rows) of every question of that set over an index of
  ``--chunks`` chunks built from the set's chunk texts (:func:`ragassay.predict.retrieve_all`);
- ``score``: scoring and diagnosing every question of a generated set (``tests/synthetic.py``,
  English, German and Korean, predictions mode) through :func:`ragassay.scoring.score`;
- ``embed``: embedding texts with the hashing embedder in batches of 256
  (:func:`ragassay.index.build.embed_on`, what ``ragassay index --executor`` runs).

For each executor the 1-worker and the 2-worker executors are started together (for Ray:
on one local Ray with 3 CPUs, started apart, which takes seconds) and each stage run once on
both first (a warm-up: the shared object sent, the modules imported), so the figures are the
stage's own throughput, not the start-up. The repeats then alternate 1 and 2 workers, so
that both see the same load from other work; each time is the best of ``--repeats``. The
speed-up is items/s with 2 workers over items/s with 1; it is bounded by the cores that are
free while it runs (the load average before and after is printed).

On a machine busy with other work the wall-clock speed-up says little, so the CPU time each
repeat took is measured too (Linux: from /proc): this process's (the driver: sending units,
receiving results) and its child processes' (the workers, and Ray's own processes). From
them, ``cpu bound``: the speed-up two free cores would allow, 2 x max(driver, children) of
the 1-worker run over driver + children of the 2-worker run (each run's best repeat). It is
an upper bound (perfect packing of the work on the cores), not a measurement.
This file is a benchmark, not a test: nothing here runs in CI.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from synthetic import make_eval_set  # noqa: E402

from ragassay.config import load_config  # noqa: E402
from ragassay.executor import Executor, open_executor  # noqa: E402
from ragassay.index import build_index  # noqa: E402
from ragassay.index.build import EmbedderSpec, embed_on  # noqa: E402
from ragassay.inputs import load_inputs  # noqa: E402
from ragassay.localray import start_local_ray  # noqa: E402
from ragassay.predict import predict, retrieve_all  # noqa: E402
from ragassay.scoring import score  # noqa: E402
from ragassay.units import work_of  # noqa: E402


def _children_cpu_s(root: int) -> float:
    """CPU seconds (user + system) of the live descendants of process ``root`` (Linux)."""
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        cpu[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        children = [c for c, parent in parents.items() if parent == pid]
        total += sum(cpu[c] for c in children)
        todo += children
    return total


def timed(fn: Callable[[], Any]) -> tuple[float, float | None, float | None]:
    """The wall time of ``fn()``, with the CPU seconds it took this process and its child
    processes (None where /proc is not there)."""
    has_proc = Path("/proc/self/stat").exists()
    c0 = time.process_time()
    k0 = _children_cpu_s(os.getpid()) if has_proc else 0.0
    t0 = time.perf_counter()
    fn()
    wall = time.perf_counter() - t0
    driver = time.process_time() - c0
    if not has_proc:
        return wall, None, None
    return wall, driver, _children_cpu_s(os.getpid()) - k0


def ray_shutdown() -> None:
    import ray

    ray.shutdown()


def stages(folder: Path, n_questions: int, n_texts: int, n_chunks: int) -> dict[str, Any]:
    """The inputs of the stages, loaded once: ``{name: (n_items, run(executor))}``."""
    config = make_eval_set(folder, n_questions=n_questions, seed=7)
    cfg = load_config(config)
    inputs = load_inputs(cfg)
    predicted = predict(cfg, inputs, k=cfg.pipeline.top_k)
    chunks = [c.text for c in inputs.store.chunks]
    texts = [chunks[i % len(chunks)] + f" {i}" for i in range(n_texts)]
    spec = EmbedderSpec("hashing", {})
    # an index of about n_chunks chunks: documents of 10 paragraphs, each one chunk long
    docs = folder / "docs"
    docs.mkdir()
    for d in range(max(1, n_chunks // 10)):
        paragraphs = [f"{chunks[(d * 10 + i) % len(chunks)]} ({d}.{i})" for i in range(10)]
        (docs / f"doc{d:06d}.txt").write_text("\n\n".join(paragraphs), encoding="utf-8")
    build_index(docs, folder / "index", chunk_size=200, overlap=0, progress=False)
    dense = load_config(config, {"index_dir": str(folder / "index"), "predictions_path": None,
                                 "chunks_path": None})
    dense_inputs = load_inputs(dense)
    print(f"index: {len(dense_inputs.store.chunks)} chunks, "
          f"{len(dense_inputs.questions)} questions", flush=True)

    def run_retrieve(ex: Executor) -> None:
        retrieve_all(work_of(ex, dense, dense_inputs), dense.pipeline.top_k, ex)

    def run_score(ex: Executor) -> None:
        score(cfg, inputs, predicted, k=cfg.pipeline.top_k, executor=ex)

    def run_embed(ex: Executor) -> None:
        embed_on(ex, spec, texts)

    return {"retrieve": (len(dense_inputs.questions), run_retrieve),
            "score": (len(inputs.questions), run_score), "embed": (len(texts), run_embed)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=3000)
    ap.add_argument("--texts", type=int, default=20000)
    ap.add_argument("--chunks", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--kinds", default="process,ray")
    ap.add_argument("--write-docs", action="store_true",
                    help="replace this benchmark's table in docs/benchmarks.md")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory() as tmp:
        work = stages(Path(tmp) / "set", args.questions, args.texts, args.chunks)
        rows = []
        cpu: dict[tuple[str, str, int], tuple[float | None, float | None]] = {}
        for kind in ["local", *args.kinds.split(",")]:
            counts = [1] if kind == "local" else [1, 2]
            with contextlib.ExitStack() as stack:
                if kind == "ray":  # one local Ray for both executors (each its actors)
                    t0 = time.perf_counter()
                    start_local_ray(sum(counts))
                    stack.callback(ray_shutdown)
                    print(f"ray: local Ray started in {time.perf_counter() - t0:.1f} s")
                executors: dict[int, tuple[Executor, float]] = {}
                for workers in counts:
                    t0 = time.perf_counter()
                    ex = stack.enter_context(open_executor(kind, workers))
                    executors[workers] = (ex, time.perf_counter() - t0)
                for name, (n, run) in work.items():
                    best: dict[int, tuple[float, float | None, float | None]] = {}
                    for ex, _ in executors.values():
                        run(ex)  # warm-up: shared object sent, modules imported
                    for _ in range(args.repeats):  # 1 and 2 workers in turn: the same load
                        for workers, (ex, _) in executors.items():
                            got = timed(partial(run, ex))
                            if workers not in best or got[0] < best[workers][0]:
                                best[workers] = got
                    for workers, (s, driver, children) in best.items():
                        start_s = executors[workers][1]
                        rows.append((name, kind, workers, n, s, start_s))
                        cpu[(name, kind, workers)] = (driver, children)
                        used = ("" if driver is None or children is None else
                                f"  cpu: driver {driver:5.2f} s, children {children:5.2f} s")
                        print(f"{name:8} {kind:7} {workers}  {n:6} items  {s:7.2f} s  "
                              f"{n / s:9.0f} items/s  (start {start_s:.1f} s){used}",
                              flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    lines = ["| stage | executor | 1 worker (items/s) | 2 workers (items/s) | speed-up | "
             "cpu bound |", "|---|---|---|---|---|---|"]
    for name in work:
        for kind in args.kinds.split(","):
            one = [n / s for st, k, w, n, s, _ in rows if (st, k, w) == (name, kind, 1)]
            two = [n / s for st, k, w, n, s, _ in rows if (st, k, w) == (name, kind, 2)]
            if one and two:
                lines.append(f"| {name} | {kind} | {one[0]:,.0f} | {two[0]:,.0f} | "
                             f"{two[0] / one[0]:.2f}x | {_cpu_bound(cpu, name, kind)} |")
    print()
    print("\n".join(lines))
    if args.write_docs:
        import docs_table  # bench/docs_table.py, beside this script

        docs_table.write("bench/executor_throughput.py", "\n".join(lines))


def _cpu_bound(cpu: dict[tuple[str, str, int], tuple[float | None, float | None]],
               name: str, kind: str) -> str:
    """2 x max(driver, children) of one worker over driver + children of two (see above)."""
    (d1, c1), (d2, c2) = cpu[(name, kind, 1)], cpu[(name, kind, 2)]
    if d1 is None or c1 is None or d2 is None or c2 is None or d2 + c2 <= 0:
        return "-"
    return f"{2 * max(d1, c1) / (d2 + c2):.2f}x"


if __name__ == "__main__":
    main()
