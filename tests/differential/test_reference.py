"""The fast path against the reference: ``ragassay trec-eval`` (numpy columns, kernels)
against :mod:`ragassay.metrics.reference` (plain dicts and loops, trec_eval's C code line
by line) on seeded random files, every option set; and :func:`ragassay.metrics.ir.evaluate`
against the reference's per-query values. Needs no binary: this runs everywhere."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from ragassay.metrics import reference
from ragassay.metrics.ir import evaluate

from .trec_suite import ragassay_text, random_case

OPTION_SETS = [[], ["-q"], ["-q", "-c"], ["-q", "-l", "2"], ["-q", "-J"], ["-q", "-M", "3"],
               ["-c", "-J", "-M", "5"], ["-n", "-q", "-l", "3"]]


def _columns(text: str, n: int) -> list[list[str]]:
    return [f[:n] for f in (line.split() for line in text.splitlines())
            if f and not f[0].startswith("#")]


def _reference_text(args: list[str], qrels_text: str, run_text: str, version: int = 9
                    ) -> str:
    qrels: dict[str, dict[str, int]] = {}
    for qid, _, doc, grade in _columns(qrels_text, 4):
        qrels.setdefault(qid, {})[doc] = int(float(grade))
    run: dict[str, dict[str, float]] = {}
    rows = _columns(run_text, 6)
    for qid, _, doc, _, score, _tag in rows:
        run.setdefault(qid, {})[doc] = float(score)
    tag = rows[-1][5] if rows else ""  # trec_eval's runid: the last line's tag
    opts = {"per_query": "-q" in args, "complete": "-c" in args, "judged_only": "-J" in args,
            "level": int(args[args.index("-l") + 1]) if "-l" in args else 1,
            "max_docs": int(args[args.index("-M") + 1]) if "-M" in args else None}
    text = reference.trec_eval_text(qrels, run, runid=tag, version=version, **opts)
    if "-n" in args:
        text = "".join(line for line in text.splitlines(keepends=True)
                       if "\tall\t" not in line)
    return text


@pytest.mark.parametrize("version", [9, 10])
@pytest.mark.parametrize("seed", range(3))
def test_trec_eval_default_output_is_the_references(seed: int, version: int,
                                                    tmp_path: Path) -> None:
    rng = random.Random(seed)
    for i in range(10):
        case = random_case(rng)
        q, r = tmp_path / f"qrels.{i}", tmp_path / f"results.{i}"
        q.write_text(case.qrels)
        r.write_text(case.results)
        for args in OPTION_SETS:
            code, ours = ragassay_text(["--trec-eval-version", str(version), *args], q, r)
            if code != 0:  # no query to evaluate (or, in 10, a judged query not in the run)
                with pytest.raises(ValueError):
                    _reference_text(args, case.qrels, case.results, version)
                continue
            expected = _reference_text(args, case.qrels, case.results, version)
            if "-c" in args and "-l" in args:  # the reference counts -c's num_rel by -l
                continue
            assert ours == expected, (seed, i, args, sorted(case.features))


@pytest.mark.parametrize("seed", range(4))
def test_evaluate_is_the_references_per_query(seed: int) -> None:
    rng = random.Random(100 + seed)
    for _ in range(40):
        case = random_case(rng)
        qrels: dict[str, dict[str, int]] = {}
        for qid, _, doc, grade in _columns(case.qrels, 4):
            qrels.setdefault(qid, {})[doc] = int(float(grade))
        run: dict[str, dict[str, float]] = {}
        for qid, _, doc, _, score, _tag in _columns(case.results, 6):
            run.setdefault(qid, {})[doc] = float(score)
        names = ["map", "gm_map", "r_precision", "bpref", "mrr", "ndcg", "ndcg_at_5",
                 "precision_at_5", "recall_at_10", "hit_at_1", "map_at_5",
                 "iprec_at_recall_at_0", "iprec_at_recall_at_0.5", "utility"]
        got = evaluate(qrels, run, names, missing_queries="skip")["per_query"]
        for qid, values in got.items():
            rr = reference.judged_ranking(qrels[qid], run[qid])
            want = {"map": reference.average_precision(rr),
                    "gm_map": reference.average_precision(rr),
                    "r_precision": reference.r_precision(rr), "bpref": reference.bpref(rr),
                    "mrr": reference.reciprocal_rank(rr), "ndcg": reference.ndcg(rr),
                    "ndcg_at_5": reference.ndcg(rr, 5),
                    "precision_at_5": reference.precision(rr, 5),
                    "recall_at_10": reference.recall(rr, 10),
                    "hit_at_1": reference.success(rr, 1),
                    "map_at_5": reference.average_precision(rr, 5),
                    "utility": reference.utility(rr)}
            iprec = reference.iprec_at_recall(rr, (0.0, 0.5))
            want["iprec_at_recall_at_0"], want["iprec_at_recall_at_0.5"] = iprec
            for name, value in want.items():
                assert values[name] == pytest.approx(value, rel=1e-12, abs=1e-15) or (
                    math.isnan(value) and math.isnan(values[name])), (qid, name)
