"""Time ragassay's IR evaluation against ranx and pytrec_eval.

    python bench/metrics_vs_peers.py [--queries 10000] [--depth 100] [--repeats 3]

Two workloads: ``large`` (10,000 queries x 100 ranked documents, ~5 relevant documents per
query, graded 1-3) and ``small`` (2 queries), with ndcg@10, mrr@10 and recall@100.

Each tool runs in its own fresh process, so every row shows what a user pays:

- ``import``: importing the library,
- ``first``: the first evaluation in the process (for ranx this includes numba's JIT
  compilation; numba's on-disk cache is pointed at an empty folder so it really compiles),
- ``warm``: the best of ``--repeats`` further evaluations,
- memory: peak resident memory of the process (ru_maxrss), its growth from just before
  the import, and the peak of Python-visible allocations during one warm evaluation
  (tracemalloc, run apart from the timings; it misses C/C++ allocations).

ranx runs twice: with an empty numba cache (a user's very first call) and again with the
cache that first process filled (later processes).

Evaluations start from plain dicts ({qid: {doc: grade}}, {qid: {doc: score}}), so building
ranx's ``Qrels``/``Run`` or pytrec_eval's evaluator is part of the measured time.
pytrec_eval has no cut-off reciprocal rank, so it computes ``recip_rank`` (same work) for
mrr@10. ranx is optional: ``pip install ranx`` (it pulls numba); it is not a ragassay
dependency. This file is a benchmark, not a test: nothing here runs in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable

MEASURES = ["ndcg@10", "mrr@10", "recall@100"]
TOOLS = ("ragassay", "ranx", "pytrec_eval")


def make_data(
    num_queries: int, depth: int, seed: int = 0
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Random run with `depth` scored docs per query; ~5 relevant docs, mostly retrieved."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(num_queries):
        qid = f"q{q}"
        docs = [f"d{q}_{i}" for i in range(depth)]
        relevant = rng.sample(docs, min(4, depth)) + [f"d{q}_unretrieved"]
        qrels[qid] = {doc: rng.randint(1, 3) for doc in relevant}
        run[qid] = {doc: rng.random() for doc in docs}
    return qrels, run


def _ragassay() -> tuple[Callable[[dict, dict], object], str]:
    from ragassay.metrics.ir import evaluate

    return (lambda qrels, run: evaluate(qrels, run, MEASURES)["mean"]), "ragassay.metrics.ir"


def _ranx() -> tuple[Callable[[dict, dict], object], str]:
    import warnings

    from ranx import Qrels, Run, evaluate

    warnings.filterwarnings("ignore")  # numba type-safety warnings on every compile

    def run_ranx(qrels: dict, run: dict) -> object:
        return evaluate(Qrels(qrels), Run(run), MEASURES)

    return run_ranx, "ranx"


def _pytrec_eval() -> tuple[Callable[[dict, dict], object], str]:
    import pytrec_eval

    def run_pytrec(qrels: dict, run: dict) -> object:
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "recip_rank",
                                                           "recall_100"})
        return evaluator.evaluate(run)

    return run_pytrec, "pytrec_eval"


LOADERS = {"ragassay": _ragassay, "ranx": _ranx, "pytrec_eval": _pytrec_eval}


def _rss_mb() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(tool: str, num_queries: int, depth: int, repeats: int) -> dict[str, float]:
    """Run one tool in this process and return its timings (seconds) and memory (MB)."""
    qrels, run = make_data(num_queries, depth)
    rss_before = _rss_mb()
    start = time.perf_counter()
    fn, _ = LOADERS[tool]()
    import_s = time.perf_counter() - start
    start = time.perf_counter()
    fn(qrels, run)
    first_s = time.perf_counter() - start
    # Traced separately: tracemalloc slows every Python allocation, so it must not run
    # while timing.
    tracemalloc.start()
    fn(qrels, run)
    traced_peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    warm = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(qrels, run)
        warm.append(time.perf_counter() - start)
    return {
        "import_s": import_s,
        "first_s": first_s,
        "warm_s": min(warm),
        "rss_peak_mb": _rss_mb(),
        "rss_added_mb": _rss_mb() - rss_before,
        "traced_peak_mb": traced_peak,
    }


def _spawn(
    tool: str, num_queries: int, depth: int, repeats: int, cache: str
) -> dict[str, float] | None:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", tool, "--queries", str(num_queries),
         "--depth", str(depth), "--repeats", str(repeats)],
        capture_output=True, text=True, env=env, timeout=1800,
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        print(f"  {tool}: not run ({last})")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--worker", choices=TOOLS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.queries, args.depth, args.repeats)))
        return

    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus; measures: {MEASURES}")
    for label, nq, depth in (("large", args.queries, args.depth), ("small", 2, args.depth)):
        print(f"\n{label}: {nq} queries x {depth} docs")
        with tempfile.TemporaryDirectory() as cache:
            rows = {tool: _spawn(tool, nq, depth, args.repeats, cache) for tool in TOOLS}
            if rows["ranx"] is not None:
                rows["ranx cached"] = _spawn("ranx", nq, depth, args.repeats, cache)
        header = (f"  {'tool':<13}{'import s':>10}{'first s':>10}{'warm s':>10}"
                  f"{'rss MB':>9}{'+rss MB':>9}{'traced MB':>11}")
        print(header)
        for tool, r in rows.items():
            if r is None:
                continue
            print(f"  {tool:<13}{r['import_s']:>10.3f}{r['first_s']:>10.3f}{r['warm_s']:>10.4f}"
                  f"{r['rss_peak_mb']:>9.0f}{r['rss_added_mb']:>9.0f}{r['traced_peak_mb']:>11.1f}")
        ours = rows["ragassay"]
        print("  ratios ragassay / peer (below 1 = ragassay faster):")
        for peer in ("ranx", "ranx cached", "pytrec_eval"):
            theirs = rows.get(peer)
            if ours is None or theirs is None:
                continue
            cold_ours = ours["import_s"] + ours["first_s"]
            cold_theirs = theirs["import_s"] + theirs["first_s"]
            print(f"    vs {peer:<12} import+first {cold_ours / cold_theirs:.3g}x  "
                  f"first {ours['first_s'] / theirs['first_s']:.3g}x  "
                  f"warm {ours['warm_s'] / theirs['warm_s']:.2f}x")


if __name__ == "__main__":
    main()
