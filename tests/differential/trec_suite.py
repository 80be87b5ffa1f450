"""trec_eval's test suite, for ragassay: TREC files, option sets, and three ways to print them.

The case files live in ``tests/differential/trec_eval_suite/`` in trec_eval's own test-folder
layout (``qrels.NAME``, ``results.NAME``, ``out.NAME.OPTIONS`` = what the trec_eval binary
printed). This module writes random cases (seeded), lists the option sets a case is run
with, and prints a case three ways: ``ragassay trec-eval`` (the CLI, in-process), the
trec_eval binary, and pytrec_eval's per-query values (trec_eval's C code) laid out as
trec_eval prints them (the per-query values added left to right for the ``all`` lines).

Every line must be identical. A binary that refuses ``#`` comment lines or blank lines
(trec_eval 9.0.4 does) is given a copy of the file without them.

Run against a binary (``scripts/build_trec_eval.sh`` builds one):

    python -m tests.differential.trec_suite --binary PATH --files 2000 --seed 1
    python -m tests.differential.trec_suite --binary PATH --write-expected   # out.* files
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragassay.metrics.reference import MIN_GEO_MEAN, c_float

SUITE = Path(__file__).with_name("trec_eval_suite")

# trec_eval families with long cut-offs, their default cut-offs, and the other measures.
CUT_FAMILIES = {"P": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
                "recall": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
                "ndcg_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
                "map_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
                "success": (1, 5, 10)}
PLAIN = ("map", "Rprec", "recip_rank", "ndcg", "num_q", "num_ret", "num_rel", "num_rel_ret")
# the rest of trec_eval's all_trec set: uncut measures, fraction parameters, and its sets
MORE_PLAIN = ("runid", "gm_map", "bpref", "relstring", "infAP", "gm_bpref", "utility",
              "11pt_avg", "binG", "G", "ndcg_rel", "Rndcg", "set_P", "set_relative_P",
              "set_recall", "set_map", "set_F", "num_nonrel_judged_ret")
FRACTION_FAMILIES = {"iprec_at_recall": (0.0, 0.1, 0.25, 0.5, 0.9, 1.0),
                     "Rprec_mult": (0.2, 0.5, 1.0, 1.5, 2.0)}
NICKNAMES = ("official", "all_trec", "set")

# The option sets every stored case is run with (name -> trec_eval arguments), as in
# trec_eval's test folder (out.test, out.test.q, out.test.qc, ...).
STORED_OPTIONS: dict[str, list[str]] = {
    "default": [],
    "q": ["-q"],
    "qc": ["-q", "-c"],
    "qcM": ["-q", "-c", "-M", "5"],
    "ql": ["-q", "-l", "2"],
    "qJ": ["-q", "-J"],
    "nq": ["-n", "-q"],
    "families": ["-q", "-m", "P", "-m", "recall", "-m", "ndcg_cut", "-m", "map_cut",
                 "-m", "success", "-m", "ndcg", "-m", "map"],
    "cutoffs": ["-q", "-m", "P.3,1,7", "-m", "recall.2,50", "-m", "ndcg_cut.1000,3",
                "-m", "map_cut.4", "-m", "success.2", "-m", "num_q", "-m", "num_rel_ret",
                "-m", "Rprec", "-m", "recip_rank"],
    "first_params": ["-q", "-m", "P", "-m", "P.5", "-m", "P.10", "-m", "official"],
    "qJMl": ["-q", "-J", "-M", "3", "-l", "2", "-m", "ndcg_cut.1,2,3", "-m", "map",
             "-m", "num_ret"],
}


# --- random cases ---------------------------------------------------------------------------


@dataclass
class Case:
    """One qrels file and one run file, as text."""

    qrels: str
    results: str
    features: set[str] = field(default_factory=set)


def random_case(rng: random.Random) -> Case:
    """A random qrels/run pair covering what trec_eval's reader and measures meet.

    Features (each drawn at random): ties in score, queries missing from the run or from
    the qrels, queries whose judgments are all 0 or negative, graded (0-4) or binary grades,
    grades written ``1.0``, run lines with trailing columns, ``#`` comment lines, tabs,
    scores in exponent notation, a ``rank`` column that disagrees with the scores, long
    rankings (past the 1000 cut-off) now and then.
    """
    features: set[str] = set()
    n_q = rng.choice([1, 1, 2, 3, 5, 8, 12, 20])
    qids = rng.sample([f"{p}{i}" for p in ("q", "", "Q", "t.") for i in range(1, 60)], n_q)
    pool = [f"{p}{i}" for p in ("d", "D", "doc-", "x") for i in range(0, 80)]
    max_grade = rng.choice([1, 1, 2, 3, 4])
    float_grades = rng.random() < 0.15
    comments = rng.random() < 0.15
    extra_cols = rng.random() < 0.15
    tabs = rng.random() < 0.2
    sep = "\t" if tabs else " "
    qrels_lines: list[str] = []
    run_lines: list[str] = []
    for qid in qids:
        kind = rng.random()
        if kind < 0.1:
            pass  # only in the run
        else:
            judged = rng.sample(pool, rng.randint(1, 25))
            style = rng.random()
            for doc in judged:
                if style < 0.1:
                    grade = 0
                    features.add("all_zero")
                elif style < 0.15:
                    grade = -1
                    features.add("all_negative")
                else:
                    grade = rng.choice([-1, 0, 0, *range(1, max_grade + 1)])
                text = f"{grade}.0" if float_grades and rng.random() < 0.5 else str(grade)
                qrels_lines.append(sep.join([qid, rng.choice(["0", "0", "Q0", "1"]), doc,
                                             text]))
        if rng.random() < 0.15 and kind >= 0.1:
            features.add("missing_from_run")
            continue
        depth = rng.choice([0, 1, 3, 5, 10, 20, 40]) if rng.random() > 0.02 else 1100
        if depth == 0:
            continue
        if depth > len(pool):
            docs = [*pool, *(f"extra{i}" for i in range(depth - len(pool)))]
            features.add("long")
        else:
            docs = rng.sample(pool, depth)
        score_kind = rng.random()
        for rank, doc in enumerate(docs, start=1):
            if score_kind < 0.4:
                score = str(rng.randint(0, 4))  # many ties
                features.add("ties")
            elif score_kind < 0.5:
                score = f"{rng.uniform(-5, 5):.3e}"
            else:
                score = f"{rng.uniform(-2, 20):.{rng.choice([1, 2, 6])}f}"
            shown_rank = rank if rng.random() > 0.1 else rng.randint(0, 2000)
            cols = [qid, "Q0", doc, str(shown_rank), score, "run1"]
            if extra_cols and rng.random() < 0.5:
                cols.append(rng.choice(["x", "1 2", "extra column"]))
            run_lines.append(sep.join(cols))
    rng.shuffle(run_lines)  # trec_eval sorts; file order must not matter
    if rng.random() < 0.5:
        qrels_lines.sort()
    if comments:
        features.add("comments")
        for lines in (qrels_lines, run_lines):
            for _ in range(rng.randint(1, 3)):
                lines.insert(rng.randint(0, len(lines)), rng.choice(["# comment", "#x y z"]))
    if float_grades:
        features.add("float_grades")
    if extra_cols:
        features.add("trailing_columns")
    return Case("".join(line + "\n" for line in qrels_lines),
                "".join(line + "\n" for line in run_lines), features)


def random_options(rng: random.Random, every_measure: bool = False) -> list[str]:
    """Random trec_eval arguments: flags (-q -c -n -J -l -M) and -m lists, comma lists
    (unique cut-offs in any order), repeated families, the official set; with
    ``every_measure`` any measure of trec_eval's all_trec set and its sets too."""
    args: list[str] = []
    for flag in ("-q", "-c", "-n", "-J"):
        if rng.random() < (0.6 if flag == "-q" else 0.25):
            args.append(flag)
    if rng.random() < 0.25:
        args += ["-l", str(rng.randint(1, 3))]
    if rng.random() < 0.25:
        args += ["-M", str(rng.choice([1, 2, 3, 5, 10, 50]))]
    for _ in range(rng.choice([0, 1, 2, 3, 5])):
        kind = rng.random()
        if kind < 0.1:
            args += ["-m", rng.choice(NICKNAMES) if every_measure else "official"]
        elif every_measure and kind < 0.3:
            args += ["-m", rng.choice(MORE_PLAIN)]
        elif every_measure and kind < 0.4:
            family = rng.choice(list(FRACTION_FAMILIES))
            if rng.random() < 0.5:
                args += ["-m", family]
            else:
                levels = rng.sample(FRACTION_FAMILIES[family], rng.randint(1, 3))
                args += ["-m", f"{family}.{','.join(map(str, levels))}"]
        elif kind < 0.4:
            args += ["-m", rng.choice(PLAIN)]
        else:
            family = rng.choice([*CUT_FAMILIES, *(["relative_P"] if every_measure else [])])
            if rng.random() < 0.4:
                args += ["-m", family]
            else:
                cuts = rng.sample([1, 2, 3, 4, 5, 7, 10, 15, 20, 30, 100, 1000],
                                  rng.randint(1, 4))
                args += ["-m", f"{family}.{','.join(map(str, cuts))}"]
    return args


# --- three ways to print a case ----------------------------------------------------------


def ragassay_text(args: Sequence[str], qrels: Path, results: Path) -> tuple[int, str]:
    """``ragassay trec-eval ARGS QRELS RESULTS``, in this process: (exit code, stdout)."""
    from click.testing import CliRunner

    result = CliRunner().invoke(_command(), ["trec-eval", *args, str(qrels), str(results)])
    return result.exit_code, result.stdout


@functools.cache
def _command() -> Any:
    """The ``ragassay`` command line, built once (typer builds it again on every call)."""
    import typer

    from ragassay.cli import app

    return typer.main.get_command(app)


def find_binary() -> Path | None:
    """A trec_eval binary: ``$TREC_EVAL_BINARY``, else the one
    ``scripts/build_trec_eval.sh`` builds, else ``trec_eval`` on PATH."""
    given = os.environ.get("TREC_EVAL_BINARY")
    if given:
        return Path(given)
    built = Path(__file__).parents[2] / ".cache" / "trec_eval" / "trec_eval"
    if built.is_file():
        return built
    found = shutil.which("trec_eval")
    return Path(found) if found else None


class Binary:
    """A trec_eval binary, run on a case as trec_eval's test folder runs it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with tempfile.TemporaryDirectory() as tmp:  # does it read '#' and blank lines?
            q, r = Path(tmp) / "q", Path(tmp) / "r"
            q.write_text("# comment\n\nq1 0 d1 1\n")
            r.write_text("# comment\n\nq1 Q0 d1 1 1 t\n")
            self.reads_comments = subprocess.run(
                [str(path), "-m", "map", str(q), str(r)], capture_output=True,
                check=False).returncode == 0
        version = subprocess.run([str(path), "-v"], capture_output=True, text=True,
                                 check=False)
        self.version = (version.stdout + version.stderr).strip()
        self.stderr = ""  # of the last run

    def text(self, args: Sequence[str], qrels: Path, results: Path) -> tuple[int, str]:
        """(exit code, stdout)."""
        with tempfile.TemporaryDirectory() as tmp:
            if not self.reads_comments:
                qrels = _without_comments(qrels, Path(tmp) / "qrels")
                results = _without_comments(results, Path(tmp) / "results")
            done = subprocess.run([str(self.path), *args, str(qrels), str(results)],
                                  capture_output=True, text=True, check=False)
        self.stderr = done.stderr
        return done.returncode, done.stdout


def _without_comments(path: Path, out: Path) -> Path:
    lines = path.read_text().splitlines(keepends=True)
    out.write_text("".join(line for line in lines
                           if line.strip() and not line.lstrip().startswith("#")))
    return out


def _read_columns(path: Path, n: int) -> Iterator[list[str]]:
    """The first n columns of each line that is not blank nor a ``#`` comment."""
    for line in path.read_text().splitlines():
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            yield fields[:n]


def pytrec_eval_text(args: Sequence[str], qrels_path: Path, results_path: Path
                     ) -> tuple[int, str]:
    """What trec_eval prints for these arguments, from pytrec_eval's per-query values.

    Files are read here (not by ragassay's reader); the run is ranked by score descending,
    then document id descending (trec_eval's order) and cut to ``-M``; ``-c`` gives each
    judged query missing from the run an empty ranking and no lines of its own. The ``all``
    lines add the per-query values left to right in query order (trec_eval's ``%.4f`` of
    that sum over the number of queries; counts are sums). Exit code 1 when no query has
    judgments and results.
    """
    import pytrec_eval

    opts = _parse_args(args)
    qrels: dict[str, dict[str, int]] = {}
    for qid, _iter, doc, grade in _read_columns(qrels_path, 4):
        qrels.setdefault(qid, {})[doc] = int(float(grade))
    scored: dict[str, dict[str, float]] = {}
    runid = ""
    for qid, _q0, doc, _rank, score, tag in _read_columns(results_path, 6):
        scored.setdefault(qid, {})[doc] = float(score)
        runid = tag
    run: dict[str, dict[str, float]] = {}
    for qid, scores in scored.items():
        ranked = sorted(scores.items(), key=lambda item: (item[1], item[0].encode()),
                        reverse=True)
        if opts["max_docs"] is not None:
            ranked = ranked[:opts["max_docs"]]
        run[qid] = dict(ranked)
    missing = [q for q in qrels if q not in run] if opts["complete"] else []
    run.update({q: {} for q in missing})
    measures, uncut_ndcg = _without_uncut_ndcg(opts["measures"])
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, set(measures), relevance_level=opts["level"],
        judged_docs_only_flag=opts["judged_only"])
    per = evaluator.evaluate(run)
    if not set(per) - set(missing):
        return 1, ""
    qids = sorted(per, key=str.encode)
    names = [n for n in next(iter(per.values())) if n != "runid"]
    for qid in missing:  # trec_eval -c: a query missing from the run scores 0
        per[qid] = {n: (math.log(MIN_GEO_MEAN) if n == "gm_map" else
                        v if n.startswith("num_") else 0.0) for n, v in per[qid].items()}
    if uncut_ndcg:  # trec_eval prints ndcg just before ndcg_cut, map_cut and success
        names.remove(uncut_ndcg)
        at = next((i for i, n in enumerate(names)
                   if n.startswith(("ndcg_cut_", "map_cut_", "success_"))), len(names))
        names.insert(at, "ndcg")
        for row in per.values():
            row["ndcg"] = row[uncut_ndcg]
    counts = {"num_ret", "num_rel", "num_rel_ret"}

    def line(name: str, qid: str, value: float) -> str:
        shown = str(int(value)) if name in counts | {"num_q"} else c_float(value)
        return f"{name:<22}\t{qid}\t{shown}\n"

    lines: list[str] = []
    if opts["per_query"]:
        lines += [line(n, q, per[q][n]) for q in qids if q not in missing
                  for n in names if n not in ("num_q", "gm_map")]
    if opts["summary"]:
        if "runid" in opts["measures"]:
            lines.append(f"{'runid':<22}\tall\t{runid}\n")
        for name in names:
            total = 0.0
            for qid in qids:
                total += per[qid][name]
            lines.append(line(name, "all", total if name in counts | {"num_q"}
                              else math.exp(total / len(qids)) if name == "gm_map"
                              else total / len(qids)))
    return 0, "".join(lines)


_UNCUT = 100_000  # longer than any ranking or judgment list of this suite


def _without_uncut_ndcg(measures: list[str]) -> tuple[list[str], str | None]:
    """pytrec_eval's uncut ``ndcg`` hangs after many evaluators in one process, so it is
    asked for as ``ndcg_cut`` at a cut-off past every ranking (the same sum). Returns the
    measures to ask for and the name that stands for ndcg (None when not asked for)."""
    if "ndcg" not in measures:
        return measures, None
    rest = [m for m in measures if m != "ndcg"]
    cut = next((m for m in rest if m.partition(".")[0] == "ndcg_cut"), None)
    if cut is None:
        return [*rest, f"ndcg_cut.{_UNCUT}"], f"ndcg_cut_{_UNCUT}"
    given = cut.partition(".")[2] or ",".join(map(str, CUT_FAMILIES["ndcg_cut"]))
    rest[rest.index(cut)] = f"ndcg_cut.{given},{_UNCUT}"
    return rest, f"ndcg_cut_{_UNCUT}"


def _parse_args(args: Sequence[str]) -> dict:
    """The arguments of this suite's option sets, with trec_eval's ``-m`` rule: a family's
    cut-offs are those of its first ``-m`` with parameters, else its defaults."""
    opts: dict = {"per_query": False, "complete": False, "summary": True, "level": 1,
                  "max_docs": None, "judged_only": False}
    specs: list[str] = []
    it = iter(args)
    for arg in it:
        if arg == "-q":
            opts["per_query"] = True
        elif arg == "-c":
            opts["complete"] = True
        elif arg == "-n":
            opts["summary"] = False
        elif arg == "-J":
            opts["judged_only"] = True
        elif arg == "-l":
            opts["level"] = int(next(it))
        elif arg == "-M":
            opts["max_docs"] = int(next(it))
        elif arg == "-m":
            specs.append(next(it))
        else:
            raise ValueError(f"option {arg!r} is not in this suite")
    chosen: dict[str, str | None] = {}
    for spec in specs or ["official"]:
        name, _, params = spec.partition(".")
        if name == "official":
            for member in ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map",
                           "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P"):
                chosen.setdefault(member, None)
            continue
        if chosen.get(name) is None:
            chosen[name] = params or None
    opts["measures"] = [f"{n}.{p}" if p else n for n, p in chosen.items()]
    return opts


# --- the suite on many random files -------------------------------------------------------


def compare_random(binary: Binary | None, files: int, seed: int, options_per_file: int,
                   *, with_pytrec_eval: bool, out: Path) -> dict[str, int]:
    """Write ``files`` random cases into ``out`` and print each with the default options,
    ``-q`` and ``options_per_file`` random option sets: ragassay against the binary (and
    pytrec_eval). Returns counts, per reference: invocations with identical output (and
    their lines, and the lines that are not counts), invocations both refused, known
    differences (:data:`KNOWN`) and differences (each printed to stderr)."""
    from ragassay.progress import track

    rng = random.Random(seed)
    counts = {"files": 0, "invocations": 0}
    labels = (["trec_eval"] if binary else []) + (["pytrec_eval"] if with_pytrec_eval else [])
    for label in labels:
        counts.update({f"{label} {key}": 0 for key in (
            "identical", "lines", "value lines", "both refused", "differences",
            *(KNOWN if label == "trec_eval" else ()))})
    for i in track(range(files), "random trec files", enabled=True):
        case = random_case(rng)
        q, r = out / f"qrels.{i}", out / f"results.{i}"
        q.write_text(case.qrels)
        r.write_text(case.results)
        counts["files"] += 1
        option_sets = [[], ["-q"], *(random_options(rng, every_measure=not with_pytrec_eval)
                                     for _ in range(options_per_file))]
        for args in option_sets:
            ours = ragassay_text(args, q, r)
            counts["invocations"] += 1
            for label in labels:
                code, text = (binary.text(args, q, r) if label == "trec_eval" and binary
                              else pytrec_eval_text(args, q, r))
                if code != 0 and ours[0] != 0:
                    counts[f"{label} both refused"] += 1
                elif (code == 0) == (ours[0] == 0) and text == ours[1]:
                    counts[f"{label} identical"] += 1
                    counts[f"{label} lines"] += text.count("\n")
                    counts[f"{label} value lines"] += sum(
                        1 for ln in text.splitlines() if not ln.startswith("num_"))
                elif known := (_known_difference(binary, args, case, code, text, ours[1])
                               if label == "trec_eval" else None):
                    counts[f"{label} {known}"] += 1
                else:
                    counts[f"{label} differences"] += 1
                    print(f"DIFFERENT from {label}: case {i} ({sorted(case.features)}), "
                          f"args {args}: exit {code} vs ours {ours[0]}\n"
                          f"{_diff(text, ours[1])}", file=sys.stderr)
    return counts


KNOWN = {
    "trec_eval_failed_on_all_negative_query": "trec_eval (9.0.4) exits 4 ('Can't calculate "
    "measure') when the first query it evaluates has only negative grades; ragassay "
    "evaluates it (it scores 0)",
    "trec_eval_c_num_rel_ignores_l": "with -c and -l N > 1, trec_eval (9.0.4) prints as "
    "num_rel 'all' the judged documents of grade >= 1 (ignoring -l); ragassay counts "
    "grade >= N, as trec_eval does per query",
}
"""Differences of the trec_eval 9.0.4 binary that ragassay does not copy, counted apart."""


def _known_difference(binary: Binary | None, args: Sequence[str], case: Case, code: int,
                      text: str, ours: str) -> str | None:
    if binary is None:
        return None
    if code == 4 and "Can't calculate measure" in binary.stderr and \
            _has_all_negative_query(case.qrels):
        return "trec_eval_failed_on_all_negative_query"
    if code == 0 and "-c" in args and "-l" in args:
        differ = [(a, b) for a, b in zip(text.splitlines(), ours.splitlines(), strict=False)
                  if a != b]
        same_shape = text.count("\n") == ours.count("\n")
        if same_shape and differ and all(a.startswith("num_rel ") and "\tall\t" in a
                                         for a, _ in differ):
            return "trec_eval_c_num_rel_ignores_l"
    return None


def _has_all_negative_query(qrels: str) -> bool:
    grades: dict[str, list[float]] = {}
    for line in qrels.splitlines():
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            grades.setdefault(fields[0], []).append(float(fields[3]))
    return any(all(g < 0 for g in judged) for judged in grades.values())


def _diff(expected: str, got: str) -> str:
    import difflib

    return "".join(list(difflib.unified_diff(expected.splitlines(keepends=True),
                                             got.splitlines(keepends=True),
                                             "reference", "ragassay", n=0))[:40])


def write_expected(binary: Binary) -> int:
    """Write ``out.NAME.OPTIONS`` for every stored case: the binary's whole output."""
    written = 0
    for qrels in sorted(SUITE.glob("qrels.*")):
        name = qrels.name.removeprefix("qrels.")
        results = SUITE / f"results.{name}"
        for tag, args in STORED_OPTIONS.items():
            with tempfile.TemporaryDirectory() as tmp:
                q, r = qrels, results
                if not binary.reads_comments:
                    q = _without_comments(qrels, Path(tmp) / "q")
                    r = _without_comments(results, Path(tmp) / "r")
                done = subprocess.run([str(binary.path), *args, str(q), str(r)],
                                      capture_output=True, text=True, check=False)
            path = SUITE / f"out.{name}.{tag}"
            path.write_text(done.stdout if done.returncode == 0 else
                            f"# trec_eval exit {done.returncode}\n")
            written += 1
    return written


def write_stored_cases(seed: int = 17) -> None:
    """(Re)write the random part of the stored cases (``qrels.rand*``), seeded."""
    rng = random.Random(seed)
    for old in SUITE.glob("*.rand*"):
        old.unlink()
    for i in range(4):
        case = random_case(rng)
        (SUITE / f"qrels.rand{i}").write_text(case.qrels)
        (SUITE / f"results.rand{i}").write_text(case.results)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", type=Path, help="trec_eval binary (default: "
                        "$TREC_EVAL_BINARY, .cache/trec_eval/trec_eval, or PATH)")
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--options-per-file", type=int, default=6)
    parser.add_argument("--pytrec-eval", action="store_true",
                        help="compare with pytrec_eval too")
    parser.add_argument("--write-expected", action="store_true",
                        help="write the stored cases' out.* files with the binary")
    parser.add_argument("--write-cases", action="store_true",
                        help="rewrite the stored random cases (qrels.rand*, results.rand*)")
    ns = parser.parse_args(argv)
    if ns.write_cases:
        write_stored_cases()
    path = ns.binary or find_binary()
    binary = Binary(path) if path else None
    if ns.write_expected:
        if binary is None:
            parser.error("--write-expected needs a trec_eval binary")
        print(f"wrote {write_expected(binary)} files with {binary.version}")
        return 0
    if binary is None and not ns.pytrec_eval:
        parser.error("no trec_eval binary found: give --binary or --pytrec-eval")
    with tempfile.TemporaryDirectory() as tmp:
        counts = compare_random(binary, ns.files, ns.seed, ns.options_per_file,
                                with_pytrec_eval=ns.pytrec_eval, out=Path(tmp))
    against = binary.version if binary else "pytrec_eval"
    print(f"against {against}" + (" and pytrec_eval" if binary and ns.pytrec_eval else ""))
    for key, value in counts.items():
        print(f"  {key}: {value:,}")
    for key, why in KNOWN.items():
        if counts.get(f"trec_eval {key}"):
            print(f"  ({key}: {why})")
    return 1 if any(v for k, v in counts.items() if k.endswith("differences")) else 0

if __name__ == "__main__":
    sys.exit(main())
