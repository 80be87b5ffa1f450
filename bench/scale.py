"""How ragassay's cost grows with the number of questions and chunks: seconds, items/s and
peak RSS per stage of `ragassay index` + `ragassay run` on a generated set.

    python bench/scale.py                      # the default shapes (see SHAPES)
    python bench/scale.py --shape 6000x2000    # questions x chunks, repeatable
    python bench/scale.py --shape squad:6000x2000   # the SQuAD-shaped set
    python bench/scale.py --large              # adds 100,000 x 1,000,000
    python bench/scale.py --executor process --workers 2
    python bench/scale.py --bm25-ko 20000      # Korean BM25 index build, chunks/s
                                               # (median of 3 cold builds)
    python bench/scale.py --shape squad:6000x2000 --repeat 3 --write-docs
                                               # median of 3, into docs/benchmarks.md
    python bench/scale.py --shape squad:6000x2000 --repeat 3 --against OLD/src
                                               # and an earlier checkout's code, runs
                                               # alternating, with the CPU ratio

The generated set (seeded, deterministic): documents of one chunk each (under 400
characters, so chunk ``d<N>::chunk-001`` is document N's whole text) in English, German and
Korean, each stating a fact about a named item among filler sentences; one question per gold
chunk in turn (questions cycle over the chunks, so 6,000 questions over 2,000 chunks ask
three per chunk). Every question has a gold label with its ``support_claim``; one label in
ten names a wrong chunk id so that anchoring has to find the right one (status
``reanchored``), as labels made on an older chunking do.

The SQuAD-shaped set (``squad:QxC``, :func:`squad_file`) is what public QA sets look like
instead: a SQuAD v2 file of paragraphs of real lengths (long-tailed around 800 characters,
so 2-3 chunks each at 400/80) of ~25-word sentences drawn from a 30,000-word Zipf
vocabulary, half of the questions unanswerable, three annotators' answers per answerable
one; it goes through ``ragassay import squad`` (alternatives, the sentence as the claim,
labels split across chunks as real ones are), then the same index and run.

Stages, each timed by ragassay itself (``metrics.json`` → ``timings``) except ``index``
(the wall time of ``ragassay index``): index (chunks/s), load and anchor (gold labels/s),
retrieve, answer, score (with the failure diagnosis), claims (every answer's claim checks)
and write (questions/s), ``run total`` (the wall time of ``ragassay run`` as a process,
start-up included) and ``run CPU`` (its user + system seconds: on a busy machine the
figure that means something). Peak RSS is each process's own ``ru_maxrss``
(``os.wait4``). ``--repeat N`` runs each shape N times and shows each figure's median;
``--write-docs`` writes the table into ``docs/benchmarks.md`` (:mod:`docs_table`). The
run uses the naive baseline (hashing embeddings, exact inner-product search, extractive
answerer). Prints a Markdown table at the end.

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

SHAPES = ("1000x10000", "10000x10000", "100000x10000", "1000x100000", "6000x2000",
          "squad:6000x2000")
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


# --- the SQuAD-shaped set: what public QA sets look like ----------------------------------

# SQuAD v2 dev as measured on its first half: paragraphs of 735 characters on average
# (150-3,700, long-tailed), sentences of about 25 words, questions of about 10 words, half
# of the questions unanswerable, three annotators' answers of 1-5 words, often differing by
# a word at either end; 6,000 questions over 650 paragraphs (1,850 chunks at 400/80).
QUESTION_WORDS = ("What", "Which", "Who", "When", "Where", "How many", "In what year",
                  "What kind of")


def zipf_words(rng: random.Random, vocabulary: int) -> tuple[list[str], list[float]]:
    """``vocabulary`` made-up words of 2-12 letters and their cumulative Zipf weights (a few
    words are frequent, most are rare, as in running text)."""
    words = []
    for _ in range(vocabulary):
        n = max(1, min(6, int(rng.expovariate(0.55)) + 1))
        words.append("".join(rng.choice(LATIN) + rng.choice(VOWELS) for _ in range(n)))
    cum, total = [], 0.0
    for rank in range(1, vocabulary + 1):
        total += 1.0 / rank
        cum.append(total)
    return words, cum


def squad_sentence(rng: random.Random, words: list[str], cum: list[float],
                   topic: str) -> list[str]:
    """One sentence's words: ~25 Zipf words, some capitalised (names), some numbers, the
    article's topic in a third of them; one in a hundred is a list of 150-190 words (SQuAD
    has lists of 900-1,200 characters, longer than two chunks)."""
    n = rng.randint(150, 190) if rng.random() < 0.01 else max(6, int(rng.gauss(25, 9)))
    out = []
    for w in rng.choices(words, cum_weights=cum, k=n):
        r = rng.random()
        out.append(str(rng.randint(2, 2020)) if r < 0.04 else w.capitalize() if r < 0.16
                   else w)
    if rng.random() < 0.35:
        out.insert(rng.randrange(len(out) + 1), topic)
    out[0] = out[0].capitalize()  # sentence splitting expects a capital after a full stop
    return out


def squad_file(path: Path, questions: int, chunks: int, seed: int = 0,
               chunking: tuple[int, int] = (400, 80)) -> dict[str, int]:
    """A SQuAD v2 file of that shape at ``path`` (see ``QUESTION_WORDS``): articles of five
    paragraphs titled by their topic (a name many of their sentences and answers hold, as a
    Wikipedia title is), paragraphs added until their 400/80 windows reach ``chunks``; three
    sentences in a hundred repeat one of another article (articles quote each other);
    questions spread over the paragraphs, half unanswerable, each answerable one with three
    annotators' spans around one answer (in three questions of a hundred the first
    annotator marks another sentence; a fifth of those asked about a sentence naming the
    topic ask for the topic itself, whose name the documents' ids spell). Returns the
    counts (paragraphs, chunks, questions, answerable)."""
    rng = random.Random(seed)
    words, cum = zipf_words(rng, 30_000)
    size, overlap = chunking
    paragraphs: list[tuple[str, str, list[tuple[int, int, list[str]]]]] = []
    earlier: list[list[str]] = []  # sentences of the articles before this one
    total, topic = 0, ""
    while total < chunks:
        if len(paragraphs) % 5 == 0:
            earlier += [t for _, _, ss in paragraphs[-5:] for _, _, t in ss]
            topic = "".join(rng.choice(LATIN) + rng.choice(VOWELS)
                            for _ in range(3)).capitalize()
        target = min(3700, max(150, int(rng.lognormvariate(6.5, 0.45))))
        sentences: list[tuple[int, int, list[str]]] = []
        text = ""
        while len(text) < target:
            toks = (rng.choice(earlier) if earlier and rng.random() < 0.03
                    else squad_sentence(rng, words, cum, topic))
            start = len(text) + (1 if text else 0)
            text = (text + " " if text else "") + " ".join(toks) + "."
            sentences.append((start, len(text), toks))
        paragraphs.append((topic, text, sentences))
        total += 1 + max(0, -(-(len(text) - size) // (size - overlap)))
    articles: dict[str, list[Any]] = {}
    qn, answerable = 0, 0
    per = questions / len(paragraphs)
    for pi, (title, text, sentences) in enumerate(paragraphs):
        qas = []
        for _ in range(int(per * (pi + 1)) - int(per * pi)):
            qid = f"q{qn:05d}"
            qn += 1
            s_start, _, toks = rng.choice(sentences)
            content = [t for t in toks if len(t) > 3]
            asked = " ".join(rng.sample(content, min(len(content), rng.randint(3, 7))))
            question = f"{rng.choice(QUESTION_WORDS)} {asked}?"
            if qn % 2 == 0:  # half of them: the paragraph does not say
                qas.append({"id": qid, "question": question, "answers": [],
                            "is_impossible": True})
                continue
            answerable += 1
            answers = _annotators(rng, s_start, toks, 3)
            if title in toks and rng.random() < 0.2:  # asks for the topic: "Paris", in "Paris"
                at = s_start + sum(len(t) + 1 for t in toks[:toks.index(title)])
                answers = [{"text": title, "answer_start": at}] * 3
            if len(sentences) > 1 and rng.random() < 0.03:  # one annotator marks elsewhere
                o_start, _, o_toks = rng.choice([x for x in sentences if x[2] is not toks])
                answers[0] = _annotators(rng, o_start, o_toks, 1)[0]
            qas.append({"id": qid, "question": question, "answers": answers,
                        "is_impossible": False})
        articles.setdefault(f"{title} {pi // 5:04d}", []).append({"context": text, "qas": qas})
    path.write_text(json.dumps({"version": "v2.0", "data": [
        {"title": t, "paragraphs": ps} for t, ps in articles.items()]}), encoding="utf-8")
    return {"paragraphs": len(paragraphs), "chunks": total, "questions": qn,
            "answerable": answerable}


def _annotators(rng: random.Random, start: int, toks: list[str], n: int) -> list[dict[str, Any]]:
    """``n`` annotators' answers in the sentence at ``start``: one span of 1-5 words, each
    annotator giving or taking a word at either end."""
    a = rng.randrange(len(toks))
    b = min(len(toks), a + rng.randint(1, 5))
    offsets = [start + sum(len(t) + 1 for t in toks[:i]) for i in range(len(toks))]
    out = []
    for _ in range(n):
        aa = max(0, min(a + rng.choice((0, 0, -1, 1)), b - 1))
        bb = max(aa + 1, min(len(toks), b + rng.choice((0, 0, -1, 1))))
        out.append({"text": " ".join(toks[aa:bb]), "answer_start": offsets[aa]})
    return out


def timed(cmd: Sequence[str], cwd: Path, src: Path | None = None,
          ) -> tuple[float, float, str, float]:
    """Run ``cmd`` (with the ragassay of source tree ``src`` first on the path, when given);
    its wall seconds, its own peak RSS in MB, its stderr's tail and its CPU seconds (user +
    system)."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [env.get("PYTHONPATH")])])
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=env)
    assert proc.stderr is not None
    err = proc.stderr.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err[-2000:]}")
    return seconds, usage.ru_maxrss / 1024, err[-500:], usage.ru_utime + usage.ru_stime


def executor_flags(executor: str, workers: int) -> list[str] | None:
    """The ``ragassay run`` flags for the executor, or ``None`` when it has none."""
    if executor == "local" and workers == 1:
        return []
    help_text = subprocess.run([*CLI, "run", "--help"], capture_output=True, text=True).stdout
    if "--executor" not in help_text:
        return None
    return ["--executor", executor, "--workers", str(workers)]


def code_name(src: Path) -> str:
    """A source tree's name in the table: its git commit, else its folder's name."""
    done = subprocess.run(["git", "-C", str(src), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else src.parent.name


def measure(questions: int, chunks: int, flags: list[str], seed: int = 0,
            squad: bool = False, src: Path | None = None) -> list[dict[str, Any]]:
    """One shape: the stage rows (stage, seconds, items, unit, peak RSS). ``squad``: the
    SQuAD-shaped set (:func:`squad_file`), imported with ``ragassay import squad``. ``src``:
    the ragassay source tree to run instead of the installed one (``--against``)."""
    with tempfile.TemporaryDirectory(prefix="ragassay-scale-") as tmp:
        folder = Path(tmp)
        if squad:
            squad_file(folder / "squad.json", questions, chunks, seed)
            timed([*CLI, "import", "squad", "squad.json", "--out", "set"], folder, src)
            folder = folder / "set"
            source = folder / "documents"
        else:
            source = write_set(folder, questions, chunks, seed)["raw"]
        index_s, index_rss, _, _ = timed([*CLI, "index", "--source", str(source),
                                          "--out", "index", "--no-progress"], folder, src)
        total_s, run_rss, _, run_cpu = timed([*CLI, "run", "-c", "config.yaml", "--run-id",
                                              "r", "--quiet", "--no-progress", *flags],
                                             folder, src)
        chunks = len(json.loads((folder / "index" / "index.json").read_text(
            encoding="utf-8"))["chunks"])
        run = folder / "runs" / "r"
        metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
        sizes = {p.name: p.stat().st_size for p in run.iterdir()}
    t = metrics["timings"]
    labels = metrics.get("gold", {}).get("labels", questions)  # one per answerable question
    rows = [("index", index_s, chunks, "chunks", index_rss),
            ("load", t.get("load_s"), questions, "questions", None),
            ("anchor", t.get("anchor_s"), labels, "labels", None),
            ("retrieve", t.get("retrieve_s"), questions, "questions", None),
            ("answer", t.get("answer_s"), questions, "questions", None),
            ("score", t.get("score_s"), questions, "questions", None),
            ("claims", t.get("claims_s"), questions, "questions", None),
            ("write", t.get("write_s"), questions, "questions", None),
            ("run total", total_s, questions, "questions", run_rss),
            ("run CPU", run_cpu, questions, "questions", None)]
    extra = {"report_html_mb": sizes.get("report.html", 0) / 2**20,
             "retrieve_ms": t.get("retrieve_ms"), "score_ms": t.get("score_ms")}
    shape = f"{questions:,} x {chunks:,}" + (" SQuAD-shaped" if squad else "") + (
        f" [{code_name(src)}]" if src is not None else "")
    return [{"shape": shape, "stage": s, "seconds": sec, "items": n,
             "unit": u, "rss_mb": rss, **(extra if s == "run total" else {})}
            for s, sec, n, u, rss in rows]


def median_rows(runs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The rows of several runs of one shape, each figure the median over the runs (a
    stage a run did not time stays ``None``)."""
    import statistics

    out = []
    for rows in zip(*runs, strict=True):
        row = dict(rows[0])
        for key in ("seconds", "rss_mb", "report_html_mb"):
            values = [r[key] for r in rows if r.get(key) is not None]
            if key in row:
                row[key] = statistics.median(values) if values else None
        row["runs"] = [r["seconds"] for r in rows]
        out.append(row)
    return out


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
        if len(r.get("runs") or []) > 1 and sec is not None:
            shown += " (" + " / ".join(f"{x:.2f}" for x in r["runs"] if x is not None) + ")"
        lines.append(f"| {r['shape']} | {r['stage']} | {shown} | {rate} | {rss} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shape", action="append", help="QUESTIONSxCHUNKS (repeatable)")
    parser.add_argument("--large", action="store_true", help="add 100000x1000000")
    parser.add_argument("--executor", default="local", choices=("local", "process", "ray"))
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="run each shape N times; the table shows medians")
    parser.add_argument("--write-docs", action="store_true",
                        help="write the table into docs/benchmarks.md")
    parser.add_argument("--against", type=Path, metavar="SRC",
                        help="another ragassay's src/ folder (an earlier commit's checkout): "
                        "each run of a shape is followed by one of that code on the same "
                        "set; the table shows both and the CPU ratio")
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
        squad = shape.lower().startswith("squad:")
        q, c = (int(x) for x in shape.lower().removeprefix("squad:").split("x"))
        runs, other = [], []
        for _ in range(max(1, args.repeat)):  # alternately, so both see the same machine
            runs.append(measure(q, c, flags, squad=squad))
            if args.against:
                other.append(measure(q, c, flags, squad=squad, src=args.against.resolve()))
        shape_rows = median_rows(runs)
        if other:
            other_rows = median_rows(other)
            cpu = [next(r["seconds"] for r in rs if r["stage"] == "run CPU")
                   for rs in (other_rows, shape_rows)]
            print(f"run CPU: {cpu[0]:.2f} s [{code_name(args.against.resolve())}] → "
                  f"{cpu[1]:.2f} s [this code], {cpu[0] / cpu[1]:.1f}x", file=sys.stderr)
            shape_rows = other_rows + shape_rows
        rows += shape_rows
        print(table(shape_rows).split("\n", 2)[2], f"(report.html "
              f"{next(r for r in shape_rows if 'report_html_mb' in r)['report_html_mb']:.1f} MB; "
              f"load average "
              f"{os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)
    if rows:
        print()
        print(table(rows))
        if args.write_docs:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            import docs_table  # bench/docs_table.py, beside this script

            note = (f"\n\n(seconds: the median of {args.repeat} runs, each run's in "
                    "brackets)" if args.repeat > 1 else "")
            docs_table.write("bench/scale.py", table(rows) + note)
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
