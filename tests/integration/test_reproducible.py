"""A run's numbers do not depend on the machine's BLAS threads or the order of the questions.

End to end: the contract evaluation run with 1 and with 2 BLAS / OpenMP threads, and with the
questions file shuffled, gives the same run folder (apart from timings, latencies, row order
and the provenance of the questions file). Unit: exact dense search gives bit-identical
scores and rankings whatever the thread count, query order or batch size.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from builders import ROOT

from ragassay.report.html import decode_row
from ragassay.vector import ExactSearch

CONFIG = ROOT / "configs/eval/rag_quality_v1.yaml"
THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
ROW_FILES = ("answers.jsonl", "retrieved_chunks.jsonl", "failure_cases.jsonl")
TEXT_FILES = ("summary.md", "report.html")


def run_eval(config: Path, out: Path, threads: int) -> Path:
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    env.update({name: str(threads) for name in THREAD_VARS})
    env.update(PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]), COLUMNS="200")
    proc = subprocess.run([sys.executable, "-m", "eval.naive_rag.run_eval", "--config",
                           str(config), "--run-id", "X", "--output-root", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    return out / "X"


def shuffled_config(tmp: Path) -> Path:
    """A copy of the contract config with absolute paths, its questions file shuffled."""
    cfg = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    for key, value in cfg.items():
        if isinstance(value, str) and key.endswith(("_dir", "_path", "_root")):
            cfg[key] = str((CONFIG.parent / value).resolve())
    lines = Path(cfg["questions_path"]).read_text(encoding="utf-8").splitlines()
    order = list(lines)
    random.Random(5).shuffle(order)
    assert order != lines
    questions = tmp / "shuffled_questions.jsonl"
    questions.write_text("\n".join(order) + "\n", encoding="utf-8")
    cfg["questions_path"] = str(questions)
    path = tmp / "rag_quality_v1_shuffled.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def metrics_without_timings(run: Path, *, drop_input_provenance: bool) -> str:
    m = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    del m["timings"]
    if drop_input_provenance:
        # Another config file pointing at another questions file: their paths and hashes.
        prov = m["provenance"]
        for key in ("config_path", "config_sha256"):
            prov.pop(key)
        prov["inputs_sha256"] = sorted(
            h for p, h in prov["inputs_sha256"].items() if not p.endswith("questions.jsonl"))
    return json.dumps(m, ensure_ascii=False, indent=1)


def rows_by_id(path: Path) -> dict[str, dict[str, Any]]:
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        row.pop("latency_ms", None)
        rows[row["question_id"]] = row
    return rows


def text_lines(path: Path, *, shuffled: bool) -> list[str]:
    """The lines (HTML: elements) but the run's date and its measured latencies; with
    ``shuffled``, also but the lines naming the config or questions file, and sorted."""
    lines = [line for line in path.read_text(encoding="utf-8").replace("><", ">\n<").splitlines()
             if not line.startswith(("<dd>20", '<p class="latency">'))]
    if shuffled:
        lines = sorted(_rows_sorted(line) for line in lines
                       if "rag_quality_v1" not in line and "questions.jsonl" not in line)
    return lines


_ROWS = '<script type="application/json" id="rows">'


def _rows_sorted(line: str) -> str:
    """The page's embedded question rows, decoded and sorted by id (their order, and so
    their string table, follows the questions file)."""
    if not line.startswith(_ROWS):
        return line
    data = json.loads(line[len(_ROWS):].removesuffix("</script>"))
    rows = sorted((decode_row(r, data["strings"]) for r in data["rows"]), key=lambda r: r["id"])
    return _ROWS + json.dumps(rows, sort_keys=True)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("repro")
    return {"1 thread": run_eval(CONFIG, tmp / "t1", 1),
            "2 threads": run_eval(CONFIG, tmp / "t2", 2),
            "shuffled": run_eval(shuffled_config(tmp), tmp / "shuffled", 2)}


@pytest.mark.parametrize("other", ["2 threads", "shuffled"])
def test_contract_run_is_reproducible(runs: dict[str, Path], other: str) -> None:
    base, run = runs["1 thread"], runs[other]
    shuffled = other == "shuffled"
    assert metrics_without_timings(base, drop_input_provenance=shuffled) == \
        metrics_without_timings(run, drop_input_provenance=shuffled)
    for name in ROW_FILES:
        want, got = rows_by_id(base / name), rows_by_id(run / name)
        assert sorted(want) == sorted(got), name
        for qid in want:
            assert want[qid] == got[qid], (name, qid)
    for name in TEXT_FILES:
        assert text_lines(base / name, shuffled=shuffled) == \
            text_lines(run / name, shuffled=shuffled), name
    assert sorted(p.name for p in base.iterdir()) == sorted(p.name for p in run.iterdir())


def test_shuffled_questions_file_is_another_order(runs: dict[str, Path]) -> None:
    def ids(run: Path) -> list[str]:
        return [json.loads(line)["question_id"]
                for line in (run / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert ids(runs["shuffled"]) != ids(runs["1 thread"])
    assert sorted(ids(runs["shuffled"])) == sorted(ids(runs["1 thread"]))


# --- exact dense search, directly -------------------------------------------------------


def hashing_like(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """Sparse-ish non-negative unit rows (like hashed n-gram counts), some near-duplicates
    so that near ties, where a last bit decides the order, are common."""
    x = rng.poisson(0.05, (n, d)).astype(np.float64) * rng.random((n, d))
    half = n // 2
    x[half : 2 * half] = x[:half] + 1e-7 * rng.random((half, d))
    x[:, 0] += 1e-3  # no zero rows
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture(scope="module")
def vectors() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    emb = hashing_like(rng, 2000, 256)
    q = np.concatenate([hashing_like(rng, 2000, 256), emb[:1000]])  # 3,000 queries
    return emb, q


def test_exact_search_is_bit_identical_across_threads_orders_and_batches(
        vectors: tuple[np.ndarray, np.ndarray]) -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    emb, q = vectors
    search = ExactSearch(emb)
    results = {}
    for threads in (1, 2):
        with threadpoolctl.threadpool_limits(limits=threads):
            found = search.search(q, 10)
            results[f"{threads} threads"] = (search.scores(q), found.positions, found.scores)
    perm = np.random.default_rng(12).permutation(len(q))
    back = np.argsort(perm)
    found = search.search(q[perm], 10)
    results["shuffled"] = (search.scores(q[perm])[back], found.positions[back],
                           found.scores[back])
    small = ExactSearch(emb)
    small.batch_size, small._block = 7, 333
    found = small.search(q, 10)
    results["small batches"] = (small.scores(q), found.positions, found.scores)
    alone = np.concatenate([search.scores(q[i : i + 1]) for i in range(0, len(q), 97)])
    want = results.pop("1 threads")
    for name, got in results.items():
        for w, g in zip(want, got, strict=True):
            assert w.tobytes() == g.tobytes(), name
    assert alone.tobytes() == want[0][::97].tobytes()  # each query on its own
