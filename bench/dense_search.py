"""Reproducible exact dense search (``ragassay.vector.ExactSearch``) against the plain exact
product (float32 ``queries @ rows.T``, then ``argpartition`` + ``argsort`` per query): wall
time, and whether each one's top k stays the same with 1 and with 2 BLAS threads and when
the queries are searched one at a time instead of in one batch.

    python bench/dense_search.py [--rows 50000] [--dim 384] [--queries 1000] [--k 10]
                                 [--repeats 5] [--write-docs]

Each BLAS thread count runs in a fresh process (``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS``
are read when the BLAS loads). The vectors are seeded random unit vectors with a shared
component (like the hashing embedder's), and a tenth of the queries are rows of the
corpus itself (near-ties at the top). Times are medians of ``--repeats`` runs in the process;
"construct" is :class:`ExactSearch`'s one-time snapping of the rows (the plain product has
none).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
import numpy as np
from ragassay.vector import ExactSearch

rows_n, dim, nq, k, repeats, out = (int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
                                    int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
rng = np.random.default_rng(7)

def unit(n):
    x = rng.standard_normal((n, dim)).astype(np.float32)
    x[:, 0] += 2.0  # a shared component: scores crowd together, as real embeddings' do
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)

rows = unit(rows_n)
queries = np.concatenate([unit(nq - nq // 10), rows[: nq // 10]])

def plain(q):
    scores = q @ rows.T
    top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    picked = np.take_along_axis(scores, top, axis=1)
    order = np.argsort(-picked, axis=1, kind="stable")
    return np.take_along_axis(top, order, axis=1), np.take_along_axis(picked, order, axis=1)

def exact(q):
    found = search.search(q, k)
    return found.positions, found.scores

def timed(name, fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    times[name].append(time.perf_counter() - t0)
    return out

times = {"construct": [], "exact": [], "plain": []}
for _ in range(repeats):
    search = timed("construct", ExactSearch, rows)
    got = timed("exact", exact, queries)
    base = timed("plain", plain, queries)
result = {"exact": got, "plain": base}
for name, fn in (("exact", exact), ("plain", plain)):
    alone = [fn(queries[i : i + 1]) for i in range(nq)]
    result["alone_" + name] = tuple(np.concatenate(part) for part in zip(*alone))
np.savez(out, **{f"{name}_{i}": a for name, pair in result.items() for i, a in enumerate(pair)})
print(json.dumps({name: sorted(v) for name, v in times.items()}))
"""

THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def differing(a: tuple, b: tuple) -> str:
    """How many queries' top-k positions differ between two results, and how many queries'
    top-k scores differ in any bit: ``"positions / scores"``."""
    return (f"{int((a[0] != b[0]).any(axis=1).sum())} / "
            f"{int((a[1].view('u4') != b[1].view('u4')).any(axis=1).sum())}")


def main() -> None:
    import numpy as np

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--write-docs", action="store_true",
                    help="replace this benchmark's table in docs/benchmarks.md")
    args = ap.parse_args()
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start")
    runs, found = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for threads in (1, 2):
            env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
            env.update({k: str(threads) for k in THREAD_VARS})
            out = Path(tmp) / f"t{threads}.npz"
            text = subprocess.run(
                [sys.executable, "-c", CHILD, str(args.rows), str(args.dim),
                 str(args.queries), str(args.k), str(args.repeats), str(out)],
                capture_output=True, text=True, check=True, env=env).stdout
            runs[threads] = json.loads(text)
            with np.load(out) as z:
                found[threads] = {name: (z[name + "_0"], z[name + "_1"])
                                  for name in ("exact", "plain", "alone_exact", "alone_plain")}
    one, two = found[1], found[2]
    print(f"load average {os.getloadavg()[0]:.2f} at the end; {args.rows:,} rows × "
          f"{args.dim} dims, {args.queries:,} queries, top {args.k}, median of {args.repeats}")
    lines = [f"| search | construct (s) | {args.queries:,} queries, 1 thread (s) | "
             "2 threads (s) | queries whose top k differ (positions / score bits): 1 vs 2 "
             "threads | batch vs one at a time (1 thread) |", "|---|---:|---:|---:|---:|---:|"]
    for name, label in (("exact", "ExactSearch (reproducible)"),
                        ("plain", "float32 matmul + argpartition")):
        construct = (f"{statistics.median(runs[1]['construct']):.2f}" if name == "exact"
                     else "—")
        batch = differing(one[name], one[f"alone_{name}"])
        lines.append(f"| {label} | {construct} | {statistics.median(runs[1][name]):.2f} | "
                     f"{statistics.median(runs[2][name]):.2f} | "
                     f"{differing(one[name], two[name])} | {batch} |")
    ratios = [statistics.median(runs[t]["exact"]) / statistics.median(runs[t]["plain"])
              for t in (1, 2)]
    lines.append(f"\nExactSearch takes {ratios[0]:.2f}x the plain product's time with 1 BLAS "
                 f"thread, {ratios[1]:.2f}x with 2 (search only, the rows already snapped).")
    agree = int((one["exact"][0] == one["plain"][0]).all(axis=1).sum())
    lines.append(f"\nThe two searches return the same top {args.k} for {agree:,} of "
                 f"{args.queries:,} queries (snapping moves scores by under 1e-6).")
    table = "\n".join(lines)
    print()
    print(table)
    if args.write_docs:
        import docs_table  # bench/docs_table.py, beside this script

        docs_table.write("bench/dense_search.py", table)


if __name__ == "__main__":
    main()
