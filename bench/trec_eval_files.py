"""Time `ragassay trec-eval` on TREC files against the trec_eval C binary and pytrec_eval.

    python bench/trec_eval_files.py [--sizes 10000,100000] [--million] [--repeats 3]
                                    [--trec-eval PATH | --trec-eval-source DIR]
                                    [--tools ragassay,trec_eval,pytrec_eval] [--timeout S]

Workload: N queries x 100 ranked documents (random scores, so few ties), ~5 judged documents
per query graded 0-3 (one of them not retrieved), measures map, P.10, recall.100,
ndcg_cut.10 and recip_rank. Files are generated once into ``bench/.cache/data`` (git-ignored);
``--million`` adds 1,000,000 queries (a 3.6 GB run file; minutes to write; delete it after).
``--tools`` runs only some of the tools (pytrec_eval needs ~19 GB at 1,000,000 queries);
``--timeout S`` stops a tool still running after S seconds (the binary's query look-up is
linear, so at 1,000,000 queries it runs for about an hour): the table then gives its time
as more than S and its memory at that moment.

Every tool runs as its own process, as a user runs it, ``--repeats`` times in turn; the table
shows the median wall time and the peak resident memory of the process (``wait4``'s
``ru_maxrss``), and each peer's time and memory divided by ragassay's (above 1: ragassay is
faster or smaller). The outputs are compared: a tool whose output differs from ragassay's is
flagged.

- ``ragassay``: ``python -m ragassay trec-eval`` (the console command's entry).
- ``trec_eval``: the C binary: ``--trec-eval PATH``, else ``trec_eval`` on PATH, else one
  built into ``bench/.cache/trec_eval`` from ``--trec-eval-source DIR`` (trec_eval's source
  folder) or from the pytrec-eval-terrier source distribution on the package index when it
  holds trec_eval's C source (its recent releases download it from GitHub at build time
  instead, which fails without that network: the script says so and goes on without it).
- ``pytrec_eval``: its file parsers (``parse_qrel``, ``parse_run``) and ``RelevanceEvaluator``
  over the same files, printing the means: trec_eval's C code behind Python parsing.

A benchmark, not a test: nothing here runs in CI.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
MEASURES = ["map", "P.10", "recall.100", "ndcg_cut.10", "recip_rank"]
DEPTH = 100

PYTREC_SCRIPT = """
import sys, pytrec_eval
with open(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
names = {"map", "P_10", "recall_100", "ndcg_cut_10", "recip_rank"}
res = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(run)
for name in ("map", "P_10", "recall_100", "ndcg_cut_10", "recip_rank"):
    total = 0.0
    for qid in sorted(res):
        total += res[qid][name]
    print(f"{name:<22}\\tall\\t{total / len(res):.4f}")
"""


def make_files(num_queries: int) -> tuple[Path, Path]:
    """qrels and run files for ``num_queries`` queries (made once, then reused)."""
    folder = CACHE / "data"
    folder.mkdir(parents=True, exist_ok=True)
    qrels, run = folder / f"qrels_{num_queries}.txt", folder / f"run_{num_queries}.txt"
    if qrels.exists() and run.exists():
        return qrels, run
    rng = random.Random(num_queries)
    with open(str(qrels) + ".tmp", "w") as q_out, open(str(run) + ".tmp", "w") as r_out:
        for q in range(num_queries):
            qid = f"q{q}"
            judged = rng.sample(range(DEPTH), 4)
            q_out.write("".join(f"{qid} 0 d{q}_{i} {rng.randint(0, 3)}\n" for i in judged))
            q_out.write(f"{qid} 0 d{q}_x 1\n")
            scores = sorted((rng.random() for _ in range(DEPTH)), reverse=True)
            r_out.write("".join(f"{qid} Q0 d{q}_{i} {i + 1} {s:.6f} bench\n"
                                for i, s in enumerate(scores)))
    os.replace(str(qrels) + ".tmp", qrels)
    os.replace(str(run) + ".tmp", run)
    return qrels, run


# --- the trec_eval binary -----------------------------------------------------------------


def find_trec_eval(path: str | None, source: str | None) -> tuple[Path | None, str]:
    """The binary and how it was found, or None and why not."""
    if path:
        return Path(path), f"given ({path})"
    on_path = shutil.which("trec_eval")
    if on_path:
        return Path(on_path), f"on PATH ({on_path})"
    built = CACHE / "trec_eval" / "trec_eval"
    if built.exists():
        return built, f"built before ({built})"
    if shutil.which("make") is None or shutil.which("cc") is None:
        return None, "no C compiler or make to build it"
    src = Path(source) if source else _source_from_sdist()
    if src is None:
        return None, ("the pytrec-eval-terrier source distribution holds no trec_eval "
                      "source (its build downloads it from GitHub); pass --trec-eval PATH or "
                      "--trec-eval-source DIR")
    dest = CACHE / "trec_eval"
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(src, dest)
    proc = subprocess.run(["make", "-C", str(dest)], capture_output=True, text=True)
    if proc.returncode != 0 or not built.exists():
        return None, f"make failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}"
    return built, f"built from {src}"


def _source_from_sdist() -> Path | None:
    """trec_eval's source folder inside the pytrec-eval-terrier sdist, if it has one. The
    download fails when the sdist's build step needs the network: then None."""
    target = CACHE / "sdist"
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:",
                    "--no-deps", "pytrec-eval-terrier", "-d", str(target)],
                   capture_output=True, text=True)
    for archive in target.glob("*.tar.gz"):
        with tarfile.open(archive) as tar:
            tar.extractall(target, filter="data")
    for found in target.rglob("trec_eval.c"):
        return found.parent
    return None


# --- timing -------------------------------------------------------------------------------


def timed(cmd: list[str], timeout: float | None = None
          ) -> tuple[float, float, float, str | None]:
    """Wall seconds, CPU seconds (user + system), peak RSS (MB) and stdout of one process;
    stdout None when it was stopped after ``timeout`` seconds."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE)
        timer = threading.Timer(timeout, proc.kill) if timeout else None
        if timer:
            timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        if timer:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode() if proc.stderr else ""
        if timeout and proc.returncode == -9 and seconds >= timeout:
            return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, None
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd[0]} exited {proc.returncode}: {err.strip()[-300:]}")
        out.seek(0)
        return (seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
                out.read().decode())


def commands(qrels: Path, run: Path, binary: Path | None, chosen: set[str]
             ) -> dict[str, list[str]]:
    measures = [a for m in MEASURES for a in ("-m", m)]
    tools = {"ragassay": [sys.executable, "-m", "ragassay", "trec-eval", *measures,
                          str(qrels), str(run)]}
    if binary is not None:
        tools["trec_eval"] = [str(binary), *measures, str(qrels), str(run)]
    try:
        import pytrec_eval  # noqa: F401
        tools["pytrec_eval"] = [sys.executable, "-c", PYTREC_SCRIPT, str(qrels), str(run)]
    except ImportError:
        pass
    return {t: cmd for t, cmd in tools.items() if t in chosen or t == "ragassay"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000",
                        help="query counts, comma-separated (default 10000,100000)")
    parser.add_argument("--million", action="store_true", help="add 1,000,000 queries")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--trec-eval", help="the trec_eval binary")
    parser.add_argument("--trec-eval-source", help="trec_eval's source folder, to build")
    parser.add_argument("--tools", default="ragassay,trec_eval,pytrec_eval",
                        help="the tools to run (ragassay always runs)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="stop a tool after this many seconds (its time: more than it)")
    parser.add_argument("--write-docs", action="store_true",
                        help="replace this benchmark's table in docs/benchmarks.md")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")] + ([1_000_000] if args.million else [])
    binary, how = find_trec_eval(args.trec_eval, args.trec_eval_source)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus; measures {MEASURES}; "
          f"median of {args.repeats}")
    print(f"trec_eval binary: {how}" if binary else f"trec_eval binary: NOT RUN — {how}")
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rows = []
    for n in sizes:
        qrels, run = make_files(n)
        tools = commands(qrels, run, binary, set(args.tools.split(",")))
        times: dict[str, list[float]] = {t: [] for t in tools}
        cpu: dict[str, list[float]] = {t: [] for t in tools}
        rss: dict[str, float] = dict.fromkeys(tools, 0.0)
        outputs: dict[str, str | None] = {}
        for _ in range(args.repeats):
            for tool, cmd in tools.items():  # in turn, so load changes hit every tool
                if tool in outputs and outputs[tool] is None:
                    continue  # stopped once: not run again
                seconds, cpu_s, peak, text = timed(cmd, args.timeout)
                times[tool].append(seconds)
                cpu[tool].append(cpu_s)
                rss[tool] = max(rss[tool], peak)
                outputs[tool] = text
        ours = outputs["ragassay"] or ""
        for tool in tools:
            text = outputs[tool]
            if text is None:
                same = None
            elif tool == "pytrec_eval":  # prints the scored means only, in its own order
                same = sorted(text.splitlines()) == sorted(
                    line for line in ours.splitlines()
                    if line.split("\t")[0].strip() in PYTREC_SCRIPT)
            else:
                same = text == ours
            rows.append((n, tool, statistics.median(times[tool]), statistics.median(cpu[tool]),
                         rss[tool], same, run.stat().st_size / 2**20))
            verdict = ("same output" if same else "OUTPUT DIFFERS" if same is not None
                       else f"STOPPED after {args.timeout:g} s")
            print(f"  {n:>9,} queries  {tool:<12} {statistics.median(times[tool]):8.3f} s "
                  f"{statistics.median(cpu[tool]):8.3f} s cpu {rss[tool]:8.0f} MB  "
                  f"{verdict}", flush=True)
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print()
    print(table(rows))
    if args.write_docs:
        import docs_table  # bench/docs_table.py, beside this script

        docs_table.write("bench/trec_eval_files.py", table(rows))


def table(rows: list[tuple[int, str, float, float, float, bool | None, float]]) -> str:
    """The Markdown table: wall time, CPU time and peak RSS per tool, and each peer's
    divided by ragassay's (above 1: ragassay is faster or smaller). A tool stopped after
    the timeout shows its times as more than they were when it was stopped ("> 600 s")
    and its ratios as lower bounds."""
    out = ["| queries × 100 docs (run file) | tool | median wall time | median CPU time | "
           "peak RSS | wall / ragassay's | CPU / ragassay's | RSS / ragassay's |",
           "|---|---|---|---|---|---|---|---|"]
    ours = {n: (t, c, m) for n, tool, t, c, m, _, _ in rows if tool == "ragassay"}
    for n, tool, t, c, m, same, size in rows:
        mark = {None: " (stopped)", True: "", False: " (output differs)"}[same]
        more = "> " if same is None else ""
        ratios = ["—"] * 3 if tool == "ragassay" else [
            f"{more if i < 2 else ''}{v / base:.2f}x"
            for i, (v, base) in enumerate(zip((t, c, m), ours[n], strict=True))]
        out.append(f"| {n:,} ({size:,.0f} MiB) | {tool}{mark} | {more}{t:.2f} s | "
                   f"{more}{c:.2f} s | {m:,.0f} MB | {' | '.join(ratios)} |")
    return "\n".join(out)


if __name__ == "__main__":
    main()
