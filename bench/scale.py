"""How ragassay's cost grows with the number of questions and chunks: seconds, items/s and
peak RSS per stage of `ragassay index` + `ragassay run` on a generated set.

    python bench/scale.py                      # the default shapes (see SHAPES)
    python bench/scale.py --shape 6000x2000    # questions x chunks, repeatable
    python bench/scale.py --large              # adds 100,000 x 1,000,000
    python bench/scale.py --executor process --workers 2
    python bench/scale.py --bm25-ko 20000      # Korean BM25 index build, chunks/s
                                               # (median of 3 cold builds)

The generated set (seeded, deterministic): documents of one chunk each (under 400
characters, so chunk ``d<N>::chunk-001`` is document N's whole text) in English, German and
Korean, each stating a fact about a named item among filler sentences; one question per gold
chunk in turn (questions cycle over the chunks, so 6,000 questions over 2,000 chunks ask
three per chunk). Every question has a gold label with its ``support_claim``; one label in
ten names a wrong chunk id so that anchoring has to find the right one (status
``reanchored``), as labels made on an older chunking do.

Stages, each timed by ragassay itself (``metrics.json`` → ``timings``) except ``index``
(the wall time of ``ragassay index``): index (chunks/s), load and anchor (gold labels/s),
retrieve, answer, score and write (questions/s), and ``total`` (the wall time of
``ragassay run`` as a process, start-up included). Peak RSS is each process's own
``ru_maxrss`` (``os.wait4``). The run uses the naive baseline (hashing embeddings, exact
inner-product search, extractive answerer). Prints a Markdown table at the end.

``--executor``/``--workers`` are handed to ``ragassay run``; an executor that this
ragassay does not offer (``ragassay run --help`` does not list ``--executor``) is skipped
with a note. This file is a benchmark, not a test: nothing here runs in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SHAPES = ("1000x10000", "10000x10000", "100000x10000", "1000x100000", "6000x2000")
LARGE = ("100000x1000000",)
CLI = [sys.executable, "-m", "ragassay.cli"]

# Per language: a fact about {name} with a number, the question asking for it, filler.
LANG: dict[str, dict[str, Any]] = {
    "en": {"fact": "Returns of the {name} are accepted within {n} days of delivery.",
           "question": "Within how many days can I return the {name}?",
           "term": "{n} days",
           "filler": ["The policy applies to orders placed in the online shop.",
                      "Shipping costs are refunded for faulty goods.",
                      "Customer service answers on working days."]},
    "de": {"fact": "Die Rückgabefrist für {name} beträgt {n} Tage ab Lieferung.",
           "question": "Wie lange ist die Rückgabefrist für {name}?",
           "term": "{n} Tage",
           "filler": ["Die Regelung gilt für Bestellungen im Onlineshop.",
                      "Versandkosten werden bei fehlerhafter Ware erstattet.",
                      "Der Kundendienst antwortet an Werktagen."]},
    "ko": {"fact": "{name} 시스템의 하자보수 기간은 {n}개월입니다.",
           "question": "{name} 시스템의 하자보수 기간은 얼마입니까?",
           "term": "{n}개월",
           "filler": ["이 조항은 본 사업의 모든 산출물에 적용됩니다.",
                      "장애 발생 시 계약상대자는 즉시 조치하여야 합니다.",
                      "검수는 발주기관이 지정한 담당자가 수행합니다."]},
}
SYLLABLES = "하자보수기간계약상대발주기관검수완료일지체상금액제안서사업유지관리장애조치"
LATIN = "bcdfghklmnprstvz"
VOWELS = "aeiou"


def item_name(rng: random.Random, lang: str) -> str:
    """A made-up product or system name (names make the facts tell chunks apart)."""
    if lang == "ko":
        return "".join(rng.choices(SYLLABLES, k=4))
    word = "".join(rng.choice(LATIN) + rng.choice(VOWELS) for _ in range(3))
    return word.capitalize() + f"-{rng.randint(10, 999)}"


def write_set(folder: Path, questions: int, chunks: int, seed: int = 0) -> dict[str, Path]:
    """Documents (``raw/docs.jsonl``), questions, gold and a config under ``folder``."""
    rng = random.Random(seed)
    raw = folder / "raw"
    raw.mkdir(parents=True)
    langs = list(LANG)
    facts: list[tuple[str, str, str, str]] = []  # (lang, name, n, fact)
    with open(raw / "docs.jsonl", "w", encoding="utf-8") as out:
        for i in range(chunks):
            lang = langs[i % 3]
            spec = LANG[lang]
            name, n = item_name(rng, lang), str(rng.randint(5, 90))
            fact = spec["fact"].format(name=name, n=n)
            filler = rng.sample(spec["filler"], 2)
            text = " ".join([filler[0], fact, filler[1]])
            facts.append((lang, name, n, fact))
            out.write(json.dumps({"doc_id": f"d{i}", "text": text}, ensure_ascii=False) + "\n")
    with open(folder / "questions.jsonl", "w", encoding="utf-8") as qf, \
            open(folder / "gold.jsonl", "w", encoding="utf-8") as gf:
        for j in range(questions):
            i = j % chunks
            lang, name, n, fact = facts[i]
            spec = LANG[lang]
            qid = f"q{j}"
            qf.write(json.dumps({"question_id": qid, "answerable": True,
                                 "question": spec["question"].format(name=name),
                                 "expected_terms": [spec["term"].format(n=n)]},
                                ensure_ascii=False) + "\n")
            labelled = (i + 1) % chunks if j % 10 == 9 else i  # one in ten: a stale id
            gf.write(json.dumps({"question_id": qid, "gold_evidence": [
                {"chunk_id": f"d{labelled}::chunk-001", "doc_id": f"d{labelled}",
                 "support_claim": fact}]}, ensure_ascii=False) + "\n")
    (folder / "config.yaml").write_text(
        "index_dir: index\nquestions_path: questions.jsonl\n"
        "gold_evidence_path: gold.jsonl\noutput_root: runs\n"
        "pipeline:\n  name: naive_baseline\n  top_k: 5\n", encoding="utf-8")
    return {"raw": raw, "config": folder / "config.yaml"}


def timed(cmd: Sequence[str], cwd: Path) -> tuple[float, float, str]:
    """Run ``cmd``; its wall seconds, its own peak RSS in MB, and its stderr's tail."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONHASHSEED": "0"})
    assert proc.stderr is not None
    err = proc.stderr.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err[-2000:]}")
    return seconds, usage.ru_maxrss / 1024, err[-500:]


def executor_flags(executor: str, workers: int) -> list[str] | None:
    """The ``ragassay run`` flags for the executor, or ``None`` when it has none."""
    if executor == "local" and workers == 1:
        return []
    help_text = subprocess.run([*CLI, "run", "--help"], capture_output=True, text=True).stdout
    if "--executor" not in help_text:
        return None
    return ["--executor", executor, "--workers", str(workers)]


def measure(questions: int, chunks: int, flags: list[str], seed: int = 0) -> list[dict[str, Any]]:
    """One shape: the stage rows (stage, seconds, items, unit, peak RSS)."""
    with tempfile.TemporaryDirectory(prefix="ragassay-scale-") as tmp:
        folder = Path(tmp)
        paths = write_set(folder, questions, chunks, seed)
        index_s, index_rss, _ = timed([*CLI, "index", "--source", str(paths["raw"]),
                                       "--out", "index", "--no-progress"], folder)
        total_s, run_rss, _ = timed([*CLI, "run", "-c", "config.yaml", "--run-id", "r",
                                     "--quiet", "--no-progress", *flags], folder)
        run = folder / "runs" / "r"
        metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
        sizes = {p.name: p.stat().st_size for p in run.iterdir()}
    t = metrics["timings"]
    labels = questions  # one label per question
    rows = [("index", index_s, chunks, "chunks", index_rss),
            ("load", t.get("load_s"), questions, "questions", None),
            ("anchor", t.get("anchor_s"), labels, "labels", None),
            ("retrieve", t.get("retrieve_s"), questions, "questions", None),
            ("answer", t.get("answer_s"), questions, "questions", None),
            ("score", t.get("score_s"), questions, "questions", None),
            ("write", t.get("write_s"), questions, "questions", None),
            ("run total", total_s, questions, "questions", run_rss)]
    extra = {"report_html_mb": sizes.get("report.html", 0) / 2**20,
             "retrieve_ms": t.get("retrieve_ms"), "score_ms": t.get("score_ms")}
    return [{"shape": f"{questions:,} x {chunks:,}", "stage": s, "seconds": sec, "items": n,
             "unit": u, "rss_mb": rss, **(extra if s == "run total" else {})}
            for s, sec, n, u, rss in rows]


def korean_chunks(n: int, seed: int = 0, vocabulary: int = 20_000) -> list[str]:
    """``n`` Korean chunks of about 400 characters: words of 2-4 syllables drawn by Zipf's
    law from ``vocabulary`` types, each with a particle or ending as in running text
    (``index_throughput``'s generator, Korean words only)."""
    from index_throughput import PARTICLES, SYLLABLES, synthetic_text

    rng = random.Random(seed)
    words = ["".join(rng.choices(SYLLABLES, k=rng.randint(2, 4))) for _ in range(vocabulary)]
    cum: list[float] = []
    total = 0.0
    for rank in range(1, len(words) + 1):
        total += 1.0 / rank
        cum.append(total)
    assert PARTICLES  # synthetic_text adds them to Hangul words
    return [synthetic_text(rng, 400, words, cum) for _ in range(n)]


def bm25_korean(chunks: int, seed: int = 0, repeats: int = 3) -> dict[str, Any]:
    """Build a Korean BM25 index (``tokenizer: ko``) over ``chunks`` generated chunks in
    this process, ``repeats`` times from cold (no eojeol analysed yet, as in a fresh run),
    and once more warm (every eojeol known: what the build costs besides Kiwi). Kiwi's
    model and the bm25s package are loaded beforehand (a run loads them once; the import
    is timed on its own)."""
    import statistics

    from ragassay import tokens
    from ragassay.retrieve import BM25Retriever
    from ragassay.schema import Chunk
    from ragassay.store import store_of_chunks

    texts = korean_chunks(chunks, seed)
    store = store_of_chunks([Chunk(chunk_id=f"k{i}", doc_id=f"k{i}", text=t)
                             for i, t in enumerate(texts)], "(generated)")
    start = time.perf_counter()
    import bm25s  # noqa: F401

    import_s = time.perf_counter() - start
    tokens._kiwi().tokenize("모델을 불러옵니다")
    cold = []
    for _ in range(repeats):
        tokens._EOJEOL_TERMS.clear()
        start = time.perf_counter()
        BM25Retriever(store, tokenizer="ko")
        cold.append(time.perf_counter() - start)
    start = time.perf_counter()
    BM25Retriever(store, tokenizer="ko")
    warm = time.perf_counter() - start
    seconds = statistics.median(cold)
    eojeols = len({e for t in texts for e in t.split()})
    return {"chunks": chunks, "seconds": seconds, "chunks_per_s": chunks / seconds,
            "runs": cold, "warm_s": warm, "import_s": import_s,
            "chars": sum(len(t) for t in texts) / chunks, "eojeols": eojeols}


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| questions x chunks | stage | seconds | items/s | peak RSS (MB) |",
             "|---|---|---:|---:|---:|"]
    for r in rows:
        sec = r["seconds"]
        rate = f"{r['items'] / sec:,.0f} {r['unit']}/s" if sec else "—"
        rss = f"{r['rss_mb']:,.0f}" if r["rss_mb"] else ""
        shown = f"{sec:.2f}" if sec is not None else "—"
        lines.append(f"| {r['shape']} | {r['stage']} | {shown} | {rate} | {rss} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shape", action="append", help="QUESTIONSxCHUNKS (repeatable)")
    parser.add_argument("--large", action="store_true", help="add 100000x1000000")
    parser.add_argument("--executor", default="local", choices=("local", "process", "ray"))
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--bm25-ko", type=int, default=0, metavar="CHUNKS",
                        help="also time a Korean BM25 index build over CHUNKS chunks")
    args = parser.parse_args(argv)
    default = [] if args.bm25_ko and not args.large else list(SHAPES)
    shapes = list(args.shape or default) + (list(LARGE) if args.large else [])
    flags = executor_flags(args.executor, args.workers)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}; executor {args.executor}, workers {args.workers}",
          flush=True)
    if flags is None:
        print(f"skipped: this ragassay has no --executor option (executor {args.executor} "
              "needs it); run with --executor local")
        return
    rows: list[dict[str, Any]] = []
    for shape in shapes:
        q, c = (int(x) for x in shape.lower().split("x"))
        shape_rows = measure(q, c, flags)
        rows += shape_rows
        print(table(shape_rows).split("\n", 2)[2], f"(report.html "
              f"{shape_rows[-1]['report_html_mb']:.1f} MB; load average "
              f"{os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)
    if rows:
        print()
        print(table(rows))
    if args.bm25_ko:
        r = bm25_korean(args.bm25_ko)
        print(f"\nKorean BM25 index build: {r['chunks']:,} chunks of {r['chars']:.0f} chars "
              f"({r['eojeols']:,} distinct eojeols) in {r['seconds']:.2f} s = "
              f"{r['chunks_per_s']:,.0f} chunks/s (median of "
              f"{', '.join(f'{s:.2f}' for s in r['runs'])} s; "
              f"{r['eojeols'] / r['seconds']:,.0f} distinct eojeols/s); with every eojeol "
              f"analysed already {r['warm_s']:.2f} s = {r['chunks'] / r['warm_s']:,.0f} "
              f"chunks/s; importing bm25s {r['import_s']:.2f} s; load average "
              f"{os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
