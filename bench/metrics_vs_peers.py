"""Time ragassay's IR evaluation against ranx and pytrec_eval, from dicts and from columns.

    python bench/metrics_vs_peers.py [--sizes 2,10000,100000] [--depth 100] [--repeats 5]

Workloads: N queries x 100 ranked documents (~5 relevant documents per query, graded 1-3,
one of them not retrieved), with ndcg@10, mrr@10 and recall@100, at 2, 10,000 and 100,000
queries.

Each tool runs in its own fresh process, so every row shows what a user pays:

- ``import``: importing the library,
- ``first``: the first evaluation in the process (for ranx this includes numba's JIT
  compilation; numba's on-disk cache is pointed at an empty folder so it really compiles),
- ``warm``: the median of ``--repeats`` further evaluations,
- memory: peak resident memory of the process (ru_maxrss), and its growth from just before
  the import.

ranx runs twice: with an empty numba cache (a user's very first call) and again with the
cache that first process filled (later processes).

``ragassay`` starts from plain dicts ({qid: {doc: grade}}, {qid: {doc: score}}), as do
pytrec_eval and ranx, so building ranx's ``Qrels``/``Run`` or pytrec_eval's evaluator is
part of the measured time. ``ragassay columns`` starts from columns (numpy arrays of str
qids and doc ids, float scores: ``evaluate((qid, docid, grade), (qid, docid, score), ...)``),
which the worker builds before timing. pytrec_eval has no cut-off reciprocal rank, so it
computes ``recip_rank`` (same work) for mrr@10. ranx is optional: ``pip install ranx`` (it
pulls numba); it is not a ragassay dependency. The last lines are a Markdown table with
each peer's warm time divided by ragassay's (above 1: ragassay is faster). This file is a
benchmark, not a test: nothing here runs in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

MEASURES = ["ndcg@10", "mrr@10", "recall@100"]
TOOLS = ("ragassay", "ragassay columns", "ranx", "pytrec_eval")


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


def columns(qrels: dict, run: dict) -> tuple[tuple, tuple]:
    """The dicts as columns (qid, docid, grade) and (qid, docid, score) of numpy arrays."""
    import numpy as np

    def table(d: dict) -> tuple:
        qid = np.array([q for q, docs in d.items() for _ in docs])
        doc = np.array([x for docs in d.values() for x in docs])
        value = np.array([v for docs in d.values() for v in docs.values()], dtype=float)
        return qid, doc, value

    return table(qrels), table(run)


def _ragassay_columns() -> tuple[Callable[[dict, dict], object], str]:
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


LOADERS = {"ragassay": _ragassay, "ragassay columns": _ragassay_columns, "ranx": _ranx,
           "pytrec_eval": _pytrec_eval}


def _rss_mb() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(tool: str, num_queries: int, depth: int, repeats: int) -> dict[str, float]:
    """Run one tool in this process and return its timings (seconds) and memory (MB)."""
    qrels_in, run_in = make_data(num_queries, depth)
    qrels, run = columns(qrels_in, run_in) if tool == "ragassay columns" else (qrels_in, run_in)
    del qrels_in, run_in  # the columns worker holds the columns only
    rss_before = _rss_mb()
    start = time.perf_counter()
    fn, _ = LOADERS[tool]()
    import_s = time.perf_counter() - start
    start = time.perf_counter()
    fn(qrels, run)
    first_s = time.perf_counter() - start
    warm = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(qrels, run)
        warm.append(time.perf_counter() - start)
    return {
        "import_s": import_s,
        "first_s": first_s,
        "warm_s": statistics.median(warm),
        "rss_peak_mb": _rss_mb(),
        "rss_added_mb": _rss_mb() - rss_before,
    }


def _spawn(
    tool: str, num_queries: int, depth: int, repeats: int, cache: str
) -> dict[str, float] | None:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", tool, "--queries", str(num_queries),
         "--depth", str(depth), "--repeats", str(repeats)],
        capture_output=True, text=True, env=env, timeout=3600,
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        print(f"  {tool}: not run ({last})")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2,10000,100000", help="query counts")
    parser.add_argument("--queries", type=int, help=argparse.SUPPRESS)  # the worker's size
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--worker", choices=TOOLS, help=argparse.SUPPRESS)
    parser.add_argument("--write-docs", action="store_true",
                        help="replace this benchmark's table in docs/benchmarks.md")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.queries, args.depth, args.repeats)))
        return

    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus; measures: {MEASURES}; "
          f"warm: median of {args.repeats}")
    table = []
    for nq in (int(n) for n in args.sizes.split(",")):
        print(f"\n{nq} queries x {args.depth} docs")
        with tempfile.TemporaryDirectory() as cache:
            rows = {tool: _spawn(tool, nq, args.depth, args.repeats, cache) for tool in TOOLS}
            if rows["ranx"] is not None:
                rows["ranx cached"] = _spawn("ranx", nq, args.depth, args.repeats, cache)
        print(f"  {'tool':<17}{'import s':>10}{'first s':>10}{'warm s':>10}"
              f"{'rss MB':>9}{'+rss MB':>9}")
        for tool, r in rows.items():
            if r is None:
                continue
            print(f"  {tool:<17}{r['import_s']:>10.3f}{r['first_s']:>10.3f}{r['warm_s']:>10.4f}"
                  f"{r['rss_peak_mb']:>9.0f}{r['rss_added_mb']:>9.0f}")
            table.append((nq, tool, r))
    print()
    print(markdown(table))
    if args.write_docs:
        import docs_table  # bench/docs_table.py, beside this script

        docs_table.write("bench/metrics_vs_peers.py", markdown(table))


def markdown(rows: list[tuple[int, str, dict[str, float]]]) -> str:
    """One line per size and tool: first call, warm median, peak RSS, and each time
    divided by ragassay's (from dicts) and by ragassay's from columns."""
    ours = {(n, tool): r for n, tool, r in rows if tool.startswith("ragassay")}
    out = ["| queries × 100 docs | tool | first call | warm (median) | peak RSS | "
           "warm / ragassay's (dicts) | warm / ragassay's (columns) |",
           "|---|---|---|---|---|---|---|"]
    for n, tool, r in rows:
        ratios = []
        for base in ("ragassay", "ragassay columns"):
            b = ours.get((n, base))
            ratios.append("—" if b is None or tool.startswith("ragassay")
                          else f"{r['warm_s'] / b['warm_s']:.2f}x")
        out.append(f"| {n:,} | {tool} | {_s(r['first_s'])} | {_s(r['warm_s'])} | "
                   f"{r['rss_peak_mb']:,.0f} MB | {ratios[0]} | {ratios[1]} |")
    return "\n".join(out)


def _s(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms" if seconds < 0.1 else f"{seconds:.3f} s"


if __name__ == "__main__":
    main()
