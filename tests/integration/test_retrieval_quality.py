"""`bench/retrieval_quality.py` on the shipped SQuAD and KorQuAD samples (the fast backends).

The samples are small enough that every backend finds every gold chunk; what this checks is
that the script imports both layouts, anchors their gold, runs each preset's retriever and
prints the table that docs/retrievers.md quotes for the public dev sets.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from builders import ROOT

SAMPLES = ROOT / "examples" / "squad_sample"


def test_the_backend_table_of_the_shipped_samples(tmp_path: Path) -> None:
    out = tmp_path / "rows.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "retrieval_quality.py"),
         "--squad", str(SAMPLES / "squad_v2_sample.json"),
         "--korquad", str(SAMPLES / "korquad_v1_sample.json"),
         "--backends", "hashing,bm25,hybrid", "--json", str(out)],
        capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    rows = json.loads(out.read_text(encoding="utf-8"))
    # 16 answerable SQuAD questions, 6 KorQuAD ones (the sample's README), three backends.
    assert [(r["set"], r["backend"], r["n"]) for r in rows] == [
        ("SQuAD v2.0", "hashing", 16), ("SQuAD v2.0", "bm25", 16), ("SQuAD v2.0", "hybrid", 16),
        ("KorQuAD KorQuAD_v1.0_sample", "hashing", 6), ("KorQuAD KorQuAD_v1.0_sample", "bm25", 6),
        ("KorQuAD KorQuAD_v1.0_sample", "hybrid", 6)]
    by = {(r["set"], r["backend"]): r for r in rows}
    for name in ("SQuAD v2.0", "KorQuAD KorQuAD_v1.0_sample"):
        assert by[name, "bm25"]["recall"] == 1.0  # each sample question names its sentence
        halves = max(by[name, "hashing"]["recall"], by[name, "bm25"]["recall"])
        assert by[name, "hybrid"]["recall"] >= halves  # fusion no worse than its better half
    assert "| SQuAD v2.0 | bm25 | 16 | 1.000 | 1.000 | 1.000 | — |" in done.stdout
