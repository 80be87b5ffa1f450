"""Quality of `ragassay generate` on three small document sets, with a real model.

    python bench/generate_quality.py --base-url http://127.0.0.1:8080/v1 [--n 10] [--seed 0]
                                     [--out experiments/bench/generate] [--max-tokens 320]

The sets: the paragraphs of ``examples/squad_sample/squad_v2_sample.json`` (English) and of
``korquad_v1_sample.json`` (Korean), as ``ragassay import squad`` writes them as documents,
and the German shop pages of ``bench/data/generate_de/documents``. For each set, ``--n``
items are asked with the default mix of kinds; the table gives, per set:

- ``kept``: kept items / candidates tried; ``asked``: kept / ``--n``;
- ``lang``: share of kept questions whose language (:func:`question_language`) is the
  language of their document (the check keeps no other, so it must read 100 %);
- ``dup``: share of kept questions with a near-duplicate among the other kept ones
  (trigram Jaccard ≥ the threshold);
- ``audit ok``: share of kept gold labels in state ``ok`` when ``ragassay gold audit``
  anchors them in the set's own index (must be 100 %);
- ``2nd call``: share of the candidates that reached the second call whose answer matched;
- ``unans+distr``: share of kept items that are unanswerable or distractor items;
- the kind mix of the kept items, tokens and seconds per kept item.

The model's replies are cached under ``--out`` (a rerun makes no call). This file is a
benchmark, not a test: nothing here runs in CI.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from itertools import combinations
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def squad_documents(path: Path, dest: Path) -> Path:
    """The paragraphs of a SQuAD-layout file as a ``documents.jsonl`` folder."""
    from ragassay.importers import read_squad
    from ragassay.jsonio import jsonl_text

    dest.mkdir(parents=True, exist_ok=True)
    (dest / "documents.jsonl").write_text(jsonl_text(read_squad(path).documents),
                                          encoding="utf-8")
    return dest


def measure(name: str, source: Path, out: Path, args: argparse.Namespace) -> dict[str, Any]:
    from ragassay.anchor import anchor_gold
    from ragassay.endpoint import EndpointConfig, OpenAICompatClient
    from ragassay.generate import NEAR_DUPLICATE, generate_set, question_language, similarity
    from ragassay.gold import load_gold, read_questions
    from ragassay.goldaudit import gold_audit
    from ragassay.index import load_index

    cfg = EndpointConfig(base_url=args.base_url, model=args.model, max_tokens=args.max_tokens,
                         cache_dir=out / "cache", timeout_s=600)
    folder = out / name
    t0 = time.perf_counter()
    with OpenAICompatClient(cfg) as client:
        gen = generate_set(source, client, folder, n=args.n, seed=args.seed, force=True,
                           command="bench/generate_quality.py")
    seconds = time.perf_counter() - t0
    report = json.loads((folder / "generation.json").read_text(encoding="utf-8"))
    kept = report["kept"]
    row: dict[str, Any] = {"set": name, "asked": args.n, "candidates": len(gen.records),
                           "kept": len(kept), "seconds": round(seconds, 1),
                           "model": report["model"]}
    if not kept:
        return row
    questions = read_questions(folder / "questions.jsonl")
    langs = [q.metadata["language"] for q in questions]
    row["lang"] = sum(question_language(q.question) == lang
                      for q, lang in zip(questions, langs, strict=True)) / len(kept)
    dup = {i for i, j in combinations(range(len(questions)), 2)
           if similarity(questions[i].question, questions[j].question) >= NEAR_DUPLICATE}
    row["dup"] = len(dup) / len(kept)
    audit = gold_audit(questions, anchor_gold(questions, load_gold(folder / "gold.jsonl",
                                                                   questions),
                                              load_index(folder / "index")))
    row["audit_ok"] = audit["states"]["ok"] / audit["labels"] if audit["labels"] else None
    second = [r for r in gen.records if r.second_answer is not None or (
        r.drop is not None and r.drop.reason == "not_answerable_from_chunk")]
    matched = [r for r in second if r.drop is None or r.drop.reason == "near_duplicate"]
    row["second_call"] = len(matched) / len(second) if second else None
    kinds = [q.query_type for q in questions]
    row["kinds"] = {k: kinds.count(k) for k in dict.fromkeys(kinds)}
    row["unans_distr"] = sum(k in ("unanswerable", "distractor") for k in kinds) / len(kept)
    u = report["usage"]
    row["tokens_per_kept"] = round((u["prompt_tokens"] + u["completion_tokens"]) / len(kept))
    row["seconds_per_kept"] = round(seconds / len(kept), 1)
    row["calls"], row["cached_calls"] = u["calls"], u["cached_calls"]
    return row


def pct(v: float | None) -> str:
    return "—" if v is None else f"{100 * v:.0f} %"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base-url", required=True)
    p.add_argument("--model", default="local")
    p.add_argument("--n", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-tokens", type=int, default=320)
    p.add_argument("--out", type=Path, default=ROOT / "experiments/bench/generate")
    p.add_argument("--sets", default="squad_en,korquad_ko,shop_de")
    p.add_argument("--write-docs", action="store_true",
                   help="write the table into docs/benchmarks.md (bench/docs_table.py)")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.out / "sources"
    shutil.rmtree(work, ignore_errors=True)
    sources = {
        "squad_en": lambda: squad_documents(ROOT / "examples/squad_sample/squad_v2_sample.json",
                                            work / "squad_en"),
        "korquad_ko": lambda: squad_documents(
            ROOT / "examples/squad_sample/korquad_v1_sample.json", work / "korquad_ko"),
        "shop_de": lambda: ROOT / "bench/data/generate_de/documents",
    }
    with open("/proc/loadavg", encoding="ascii") as fh:
        print(f"load average before: {fh.read().split()[:3]}", file=sys.stderr)
    rows = [measure(name, sources[name](), args.out, args) for name in args.sets.split(",")]
    lines = ["| set | kept / candidates | kept / asked | lang | dup | audit ok | 2nd call | "
             "unans+distr | kinds | tokens/kept | s/kept |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        kinds = ", ".join(f"{k} {v}" for k, v in r.get("kinds", {}).items()) or "—"
        lines.append(
            f"| {r['set']} | {r['kept']}/{r['candidates']} | {r['kept']}/{r['asked']} | "
            f"{pct(r.get('lang'))} | {pct(r.get('dup'))} | {pct(r.get('audit_ok'))} | "
            f"{pct(r.get('second_call'))} | {pct(r.get('unans_distr'))} | {kinds} | "
            f"{r.get('tokens_per_kept', '—')} | {r.get('seconds_per_kept', '—')} |")
    models = sorted({m for r in rows for m in r["model"].get("reply_models", [])})
    lines.append(f"\nModel: {', '.join(models) or '—'}; total kept "
                 f"{sum(r['kept'] for r in rows)}.")
    print("\n".join(lines))
    if args.write_docs:
        sys.path.insert(0, str(ROOT / "bench"))
        import docs_table  # bench/docs_table.py, beside this script

        docs_table.write("bench/generate_quality.py", "\n".join(lines))
    (args.out / "results.json").write_text(json.dumps(rows, indent=2, ensure_ascii=False),
                                           encoding="utf-8")
    with open("/proc/loadavg", encoding="ascii") as fh:
        print(f"load average after: {fh.read().split()[:3]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
