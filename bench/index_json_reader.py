"""The index.json reader of ``ragassay.index.format`` (``json.loads`` of the whole file,
each record's decoded dict dropped once validated) against the simplest version
(``json.loads``, then the same records, the decoded lists kept until the end) and
``ragassay.jsonio.read_json`` (which also refuses duplicate keys and deep nesting), each in
a fresh process: wall time and peak RSS.

    python bench/index_json_reader.py [--chunks 100000] [--repeats 3] [--write-docs]

The file is written by the index writer itself (``ragassay.index.format``) for generated
documents of one 400-character chunk each; every reader ends with the same validated
``Document`` and ``Chunk`` records (the first through ``load_index``'s own code path).
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
import json, resource, sys, time
from pathlib import Path
from ragassay.index import format as f
from ragassay.schema import Chunk, Document
path, how = Path(sys.argv[1]), sys.argv[2]
t0 = time.perf_counter()
if how == "load_index":
    head, docs, chunks = f._read_index_json(path)
else:
    if how == "read_json":  # the project's JSON reader: duplicate keys and depth checked
        from ragassay.jsonio import read_json
        data = read_json(path)
    else:
        data = json.loads(path.read_bytes())
    docs = [Document.model_validate(d) for d in data["documents"]]
    chunks = [Chunk.model_validate({k: v for k, v in c.items() if k != "text_sha256"})
              for c in data["chunks"]]
    del data
s = time.perf_counter() - t0
print(json.dumps({"s": s, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "chunks": len(chunks)}))
"""


def write(path: Path, n: int) -> None:
    from ragassay.index.format import _write_index_json
    from ragassay.schema import Chunk, Document

    words = "lighthouse keeper warranty Gewährleistung 하자보수 기간 availability".split()
    docs = [Document(doc_id=f"d{i}", title=f"Document {i}") for i in range(n)]
    chunks = [Chunk(chunk_id=f"d{i}::chunk-001", doc_id=f"d{i}", seq=1, char_span=(0, 400),
                    text=(" ".join(words[(i + j) % len(words)] for j in range(80)))[:400])
              for i in range(n)]
    meta = {"schema_version": 2, "embedding": {"backend": "hashing", "model": "m",
            "dimension": 4, "normalized": True, "params": {}, "sha256": "0" * 64},
            "build": {"chunking": {}, "fingerprint": "x"}}
    with path.open("wb") as fh:
        _write_index_json(fh, meta, docs, chunks)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--write-docs", action="store_true",
                    help="replace this benchmark's table in docs/benchmarks.md")
    args = ap.parse_args()
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "index.json"
        write(path, args.chunks)
        size = path.stat().st_size / 2**20
        rows = {}
        for _ in range(args.repeats):
            for how in ("load_index", "json.loads", "read_json"):
                out = subprocess.run([sys.executable, "-c", CHILD, str(path), how],
                                     capture_output=True, text=True, check=True).stdout
                rows.setdefault(how, []).append(json.loads(out))
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    lines = [f"index.json of {args.chunks:,} chunks ({size:.0f} MiB), median of {args.repeats}:",
             "", "| reader | seconds | peak RSS (MB) |", "|---|---:|---:|"]
    for how, runs in rows.items():
        lines.append(f"| {how} | {statistics.median(r['s'] for r in runs):.2f} | "
                     f"{statistics.median(r['rss_mb'] for r in runs):,.0f} |")
    print("\n".join(lines))
    if args.write_docs:
        import docs_table  # bench/docs_table.py, beside this script

        docs_table.write("bench/index_json_reader.py", "\n".join(lines))


if __name__ == "__main__":
    main()
