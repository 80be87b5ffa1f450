"""Sweep over k, run comparison with paired tests, TREC export checked against pytrec_eval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import ROOT
from typer.testing import CliRunner

from ragassay.cli import app
from ragassay.config import load_config
from ragassay.errors import InputError
from ragassay.metrics.trec import read_qrels, read_run
from ragassay.run import run_evaluation
from ragassay.sweep import parse_k_range, parse_thresholds, run_sweep

CONFIG = ROOT / "configs/eval/rag_quality_v1.yaml"
runner = CliRunner()


def test_parse_k_range() -> None:
    assert list(parse_k_range("1..4")) == [1, 2, 3, 4]
    assert len(parse_k_range("1..100000000")) == 100_000_000  # a range: nothing allocated
    assert parse_k_range("5, 1,3") == [1, 3, 5]
    for bad, msg in (("3..1", "empty"), ("0..3", "at least 1"), ("-2", "at least 1"),
                     ("a..b", "cannot parse"), ("", "empty")):
        with pytest.raises(InputError, match=msg):
            parse_k_range(bad)
    assert parse_thresholds(None) == [None]
    assert parse_thresholds("0.7,0.6") == [None, 0.6, 0.7]
    with pytest.raises(InputError, match="cannot parse"):
        parse_thresholds("high")


def test_sweep_on_the_fixture(tmp_path: Path, at_root: None) -> None:
    cfg = load_config(CONFIG)
    rows, notes = run_sweep(cfg, [1, 5, 10], [None, 0.2])
    assert notes == []
    by = {(r["k"], r["threshold"]): r for r in rows}
    # The sweep at k=5 and k=10 equals the contract run's recall@5 / recall@10.
    contract = run_evaluation(cfg, run_id="s", output_root=tmp_path).metrics.model_dump()
    assert by[(5, None)]["recall_at_k"] == contract["retrieval"]["recall_at_5"]["mean"]
    assert by[(10, None)]["recall_at_k"] == contract["retrieval"]["recall_at_10"]["mean"]
    assert by[(10, None)]["right"] == contract["checks"]["right"]
    # More context costs more tokens; a threshold never adds any.
    assert by[(1, None)]["prompt_tokens"] < by[(5, None)]["prompt_tokens"] < by[
        (10, None)]["prompt_tokens"]
    for k in (1, 5, 10):
        assert by[(k, 0.2)]["prompt_tokens"] <= by[(k, None)]["prompt_tokens"]
        assert by[(k, 0.2)]["recall_at_k"] <= by[(k, None)]["recall_at_k"]


def test_sweep_cli_writes_table_json_and_plot(tmp_path: Path, at_root: None) -> None:
    result = runner.invoke(app, ["sweep", "-c", str(CONFIG), "--k", "1..3", "--output-root",
                                 str(tmp_path), "--sweep-id", "sw"])
    assert result.exit_code == 0, result.output
    assert {p.name for p in (tmp_path / "sw").iterdir()} == {"sweep.json", "sweep.md",
                                                             "sweep.png"}
    assert len(json.loads((tmp_path / "sw/sweep.json").read_text())["rows"]) == 3
    assert (tmp_path / "sw/sweep.png").read_bytes()[:4] == b"\x89PNG"
    again = runner.invoke(app, ["sweep", "-c", str(CONFIG), "--k", "1..3", "--output-root",
                                str(tmp_path), "--sweep-id", "sw"])
    assert again.exit_code == 2 and "already exists" in again.output
    bad = runner.invoke(app, ["sweep", "-c", str(CONFIG), "--k", "0..3"])
    assert bad.exit_code == 2 and "--k" in bad.output


CI_KEYS = {f"{name}_{part}" for name in ("recall_at_k", "grounded", "right")
           for part in ("mean", "ci_low", "ci_high")}


def test_sweep_rows_carry_bootstrap_cis(tmp_path: Path, at_root: None) -> None:
    from ragassay.core import predict, score
    from ragassay.inputs import load_inputs
    from ragassay.metrics.stats import aggregate

    cfg = load_config(CONFIG)
    result = runner.invoke(app, ["sweep", "-c", str(CONFIG), "--k", "1,5",
                                 "--threshold", "0.2,0.3", "--output-root", str(tmp_path),
                                 "--sweep-id", "ci"])
    assert result.exit_code == 0, result.output
    rows = json.loads((tmp_path / "ci/sweep.json").read_text())["rows"]
    assert len(rows) == 6
    for r in rows:
        assert CI_KEYS <= set(r)  # the old keys stay
        assert {"k", "threshold", "recall_at_k", "found", "grounded", "right",
                "prompt_tokens", "answerer_calls", "cost_total"} <= set(r)
        assert r["cost_total"] is None  # the extractive answerer has no price
        for name in ("recall_at_k", "grounded", "right"):
            low, mean, high = (r[f"{name}_ci_low"], r[f"{name}_mean"], r[f"{name}_ci_high"])
            assert low <= mean <= high
        assert r["recall_at_k_mean"] == pytest.approx(r["recall_at_k"])
        g = r["grounded"]
        assert r["grounded_mean"] == pytest.approx(g["passed"] / g["total"])
    # The same CI as the stats module gives for that setting's per-question values.
    inputs = load_inputs(cfg)
    scored = score(cfg, inputs, predict(cfg, inputs, k=5), k=5)
    want = aggregate({q.question_id: q.retrieval.get("recall_at_5") for q in scored},
                     seed=cfg.seed, n_resamples=cfg.metrics.bootstrap_resamples)
    row = next(r for r in rows if r["k"] == 5 and r["threshold"] is None)
    assert (row["recall_at_k_ci_low"], row["recall_at_k_ci_high"]) == (want["ci_low"],
                                                                      want["ci_high"])


def test_sweep_plot_has_one_panel_per_threshold(tmp_path: Path, at_root: None) -> None:
    import matplotlib.image as mpimg

    from ragassay.sweep import plot_sweep

    rows, _ = run_sweep(load_config(CONFIG), [1, 2, 3], [None, 0.2, 0.3])
    png = tmp_path / "three.png"
    assert plot_sweep(rows, png, chosen_k=2, title="t") == 3
    one = tmp_path / "one.png"
    assert plot_sweep([r for r in rows if r["threshold"] is None], one, chosen_k=2) == 1
    three_img, one_img = mpimg.imread(png), mpimg.imread(one)
    # panels side by side (5.2 in each; one panel gets 8 in for its title and legend)
    assert three_img.shape[0] == one_img.shape[0]
    assert three_img.shape[1] == pytest.approx(one_img.shape[1] * 15.6 / 8, rel=0.02)


def test_compare_two_runs(tmp_path: Path, at_root: None) -> None:
    cfg = load_config(CONFIG)
    run_evaluation(cfg, run_id="k10", output_root=tmp_path)
    cfg.pipeline.top_k = 3
    run_evaluation(cfg, run_id="k3", output_root=tmp_path)
    out = tmp_path / "cmp.json"
    result = runner.invoke(app, ["compare", str(tmp_path / "k10"), str(tmp_path / "k3"),
                                 "-m", "recall_at_10", "-m", "correct", "--json", str(out)])
    assert result.exit_code == 0, result.output
    comparisons = {c["metric"]: c for c in json.loads(out.read_text())["comparisons"]}
    recall = comparisons["recall_at_10"]
    assert recall["delta"] < 0 and recall["losses"] > 0 and recall["wins"] == 0
    assert recall["n"] == 13 and 0 < recall["p_randomization"] <= 1
    bad = runner.invoke(app, ["compare", str(tmp_path / "k10"), str(tmp_path / "k3"), "-m",
                              "recal"])
    assert bad.exit_code == 2 and "unknown metric" in bad.output


def test_exported_trec_files_agree_with_pytrec_eval(tmp_path: Path, at_root: None) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    cfg = load_config(CONFIG)
    run = run_evaluation(cfg, run_id="t", output_root=tmp_path)
    result = runner.invoke(app, ["export-trec", str(run.folder), "--out", str(tmp_path / "trec")])
    assert result.exit_code == 0, result.output
    qrels, trec_run = read_qrels(tmp_path / "trec/qrels.trec"), read_run(tmp_path /
                                                                         "trec/run.trec")
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"recall.5", "ndcg_cut.5", "map"}).evaluate(
        trec_run)
    for row in (json.loads(line) for line in (run.folder / "retrieved_chunks.jsonl")
                .read_text(encoding="utf-8").splitlines()):
        m, qid = row["metrics"], row["question_id"]
        if m["recall_at_5"] is None:
            assert qid not in ref
            continue
        assert m["recall_at_5"] == pytest.approx(ref[qid]["recall_5"], abs=1e-9)
        assert m["ndcg_at_5"] == pytest.approx(ref[qid]["ndcg_cut_5"], abs=1e-9)
        assert m["map"] == pytest.approx(ref[qid]["map"], abs=1e-9)
    printed = runner.invoke(app, ["trec-eval", str(tmp_path / "trec/qrels.trec"),
                                  str(tmp_path / "trec/run.trec"), "-m", "ndcg_cut.5"])
    assert printed.exit_code == 0 and printed.output.startswith("ndcg_cut_5")


def test_compare_and_report_of_runs_from_a_config_without_metrics(tmp_path: Path) -> None:
    """Two run folders ragassay wrote always compare: from a config without `metrics:`
    the defaults include judge_faithfulness, measured on no question without a judge; the
    comparison leaves it out (nothing to pair) instead of calling it unknown."""
    import shutil

    shop = tmp_path / "shop"
    shutil.copytree(ROOT / "examples/shop_faq_de", shop)
    text = (shop / "config.yaml").read_text("utf-8")
    start = text.index("metrics:")
    end = text.index("decline_phrases:")
    (shop / "config.yaml").write_text(text[:start] + text[end:], "utf-8")
    runner = CliRunner()
    for run_id, k in (("a", "3"), ("b", "2")):
        res = runner.invoke(app, ["run", "-c", str(shop / "config.yaml"), "-q", "--run-id",
                                  run_id, "--k", k, "--output-root", str(tmp_path / "runs")])
        assert res.exit_code == 0, res.output
    a, b = str(tmp_path / "runs/a"), str(tmp_path / "runs/b")
    res = runner.invoke(app, ["compare", a, b, "--format", "json"])
    assert res.exit_code == 0, res.output
    compared = {c["metric"] for c in json.loads(res.stdout)["comparisons"]}
    assert "judge_faithfulness" not in compared and "faithfulness" in compared
    res = runner.invoke(app, ["report", a, b])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "runs/b/compare-a.html").is_file()
