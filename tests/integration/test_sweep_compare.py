"""Sweep over k, run comparison with paired tests, TREC export checked against pytrec_eval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import CONTRACT_CONFIG, ROOT, rooted_config, write_config
from typer.testing import CliRunner

from ragassay.cli import app
from ragassay.config import load_config
from ragassay.errors import InputError
from ragassay.metrics.trec import read_qrels, read_run
from ragassay.run import run_evaluation
from ragassay.sweep import parse_k_range, parse_thresholds, run_sweep

CONFIG = CONTRACT_CONFIG
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


def test_sweep_quiet_prints_no_table(tmp_path: Path, at_root: None) -> None:
    """``-q`` as the other commands have it: the files, the last line on stderr, no table."""
    loud = runner.invoke(app, ["sweep", "-c", str(CONFIG), "--k", "1..2", "--output-root",
                               str(tmp_path), "--sweep-id", "loud"])
    assert loud.exit_code == 0 and "| k |" in loud.stdout
    res = runner.invoke(app, ["sweep", "-c", str(CONFIG), "--k", "1..2", "--output-root",
                              str(tmp_path), "--sweep-id", "sw", "-q"])
    assert res.exit_code == 0, res.output
    assert res.stdout == "" and "sweep →" in res.stderr
    assert len(json.loads((tmp_path / "sw/sweep.json").read_text())["rows"]) == 2


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
    from ragassay.inputs import load_inputs
    from ragassay.metrics.stats import aggregate
    from ragassay.predict import predict
    from ragassay.scoring import score

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
    # named at the depth each run used: the k=3 run ranked 3 chunks, so its recall_at_10
    # is a recall@3
    assert recall["depths"] == ["recall@10", "recall@3"]
    assert comparisons["correct"]["depths"] == ["correct", "correct"]
    text = runner.invoke(app, ["compare", str(tmp_path / "k10"), str(tmp_path / "k3"),
                               "-m", "recall_at_10"]).stdout
    assert "| k3 | recall@10 vs recall@3 |" in text
    k3_row = next(line for line in text.splitlines()
                  if line.startswith("| k3 | naive_baseline (k=3, dense"))
    assert f"{recall['mean_b']:.3f} (@3)" in k3_row
    runner.invoke(app, ["report", str(tmp_path / "k10"), str(tmp_path / "k3")])
    page = (tmp_path / "k3/compare-k10.html").read_text(encoding="utf-8")
    assert "<td>found@10 → found@3: yes → no" in page
    assert "<td>recall@10 vs recall@3</td>" in page
    bad = runner.invoke(app, ["compare", str(tmp_path / "k10"), str(tmp_path / "k3"), "-m",
                              "recal"])
    assert bad.exit_code == 2 and "unknown metric" in bad.output


def test_compare_pairs_the_default_measures_of_two_depths(tmp_path: Path) -> None:
    """Without ``metrics.retrieval`` each run measures at its own k (recall@3 at k=3,
    recall@2 at k=2): the comparison pairs a measure with the same measure cut at the
    candidate's depth, as a k=3 baseline's recall@3 is a recall@2 on a k=2 run."""
    plain = rooted_config()
    del plain["metrics"]["retrieval"]
    config = write_config(plain, tmp_path / "config.yaml")
    for k in (3, 2):
        run_evaluation(load_config(config, {"pipeline.top_k": k}), run_id=f"k{k}",
                       output_root=tmp_path)
    out = tmp_path / "cmp.json"
    result = runner.invoke(app, ["compare", str(tmp_path / "k3"), str(tmp_path / "k2"),
                                 "--json", str(out)])
    assert result.exit_code == 0, result.output
    comparisons = {c["metric"]: c for c in json.loads(out.read_text())["comparisons"]}
    assert {"recall_at_3", "mrr_at_3", "ndcg_at_3"} <= set(comparisons)
    recall = comparisons["recall_at_3"]
    assert recall["depths"] == ["recall@3", "recall@2"]
    assert recall["n"] == 13  # every answerable question paired (nothing paired before)
    assert "nothing paired" not in result.output


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


# --- readings, depths and the questions two runs hold -------------------------------------

def tiny_run(folder: Path, answers: dict[str, str], *, texts: dict[str, str] | None = None,
             k: int = 2) -> Path:
    """A run of predictions over two chunks: question ``qN`` asks for ``N`` euros (gold
    chunk ``d::chunk-00N`` retrieved first); ``answers`` maps question ids to answer texts,
    ``texts`` replaces some question texts."""
    from ragassay import EvalConfig, evaluate_rag
    from ragassay.schema import (
        Answer,
        Chunk,
        Citation,
        GoldEvidence,
        GoldRecord,
        Prediction,
        Question,
        RetrievedChunk,
    )

    chunks = [Chunk(chunk_id=f"d::chunk-00{i}", doc_id="d", text=f"Item {i} costs {i}00 euros.")
              for i in (1, 2, 3)]
    texts = texts or {}
    questions, gold, preds = [], [], []
    for qid, text in answers.items():
        n = int(qid[1:])
        questions.append(Question(question_id=qid, question=texts.get(qid, f"Price of {n}?"),
                                  answerable=True, must_contain=[f"{n}00"]))
        gold.append(GoldRecord(question_id=qid, gold_evidence=[
            GoldEvidence(chunk_id=f"d::chunk-00{n}")]))
        preds.append(Prediction(question_id=qid, retrieved=[
            RetrievedChunk(chunk_id=f"d::chunk-00{n}", score=0.9)], answer=Answer(
                text=text, status="supported", citations=[Citation(chunk_id=f"d::chunk-00{n}")])))
    cfg = EvalConfig(pipeline={"top_k": k}, metrics={"bootstrap_resamples": 100})
    result = evaluate_rag(questions, gold, preds, chunks, cfg, run_id=folder.name)
    result.write(folder)
    return folder


def test_reading_is_better_or_worse_only_when_significant() -> None:
    from ragassay.report.compare import reading

    assert reading({"metric": "correct", "delta": 0.2, "p_randomization": 0.01}) == "better"
    assert reading({"metric": "correct", "delta": -0.2, "p_randomization": 0.01}) == "worse"
    # lower is better: more hallucinations is worse
    assert reading({"metric": "hallucination_flag", "delta": 0.2,
                    "p_randomization": 0.01}) == "worse"
    assert reading({"metric": "correct", "delta": 0.2, "p_randomization": 0.05}) == ""
    # with several candidates the Holm-adjusted p decides
    assert reading({"metric": "correct", "delta": 0.2, "p_randomization": 0.01,
                    "p_holm": 0.2}) == ""
    assert reading({"metric": "correct", "delta": None, "p_randomization": None}) == ""


def test_compare_colours_no_difference_that_is_not_significant(tmp_path: Path) -> None:
    """Both questions go from wrong to right: the bootstrap CI of Δ correct is [1, 1] (it
    excludes 0), but with two pairs the randomization p-value is 0.5: no colour (today's
    rule coloured it better by the CI alone)."""
    base = tiny_run(tmp_path / "base", {"q1": "It is 999 euros.", "q2": "It is 999 euros."})
    cand = tiny_run(tmp_path / "cand", {"q1": "It is 100 euros.", "q2": "It is 200 euros."})
    res = runner.invoke(app, ["compare", str(base), str(cand), "-m", "correct", "--format",
                              "json"])
    assert res.exit_code == 0, res.output
    (c,) = json.loads(res.stdout)["comparisons"]
    assert (c["ci_low"], c["ci_high"]) == (1.0, 1.0)
    # 2 of the 4 sign patterns are as extreme: p = 0.5 (sampled: about)
    assert c["p_randomization"] == pytest.approx(0.5, abs=0.05)
    assert c["reading"] == ""
    text = runner.invoke(app, ["compare", str(base), str(cand), "-m", "correct"])
    assert "| no significant difference |" in text.stdout
    page = runner.invoke(app, ["report", str(base), str(cand)])
    assert page.exit_code == 0, page.output
    html_text = (cand / "compare-base.html").read_text(encoding="utf-8")
    assert 'class="delta better"' not in html_text and 'class="delta worse"' not in html_text
    assert "<td>no significant difference</td>" in html_text


def test_compare_notes_questions_missing_or_changed(tmp_path: Path) -> None:
    """The candidate drops q3, adds nothing new but q2's text changed: both are noted in the
    terminal (stderr), the JSON and the page."""
    base = tiny_run(tmp_path / "base", {"q1": "100 euros.", "q2": "200 euros.",
                                        "q3": "300 euros."})
    cand = tiny_run(tmp_path / "cand", {"q1": "100 euros.", "q2": "200 euros."},
                    texts={"q2": "What does item 2 cost?"})
    res = runner.invoke(app, ["compare", str(base), str(cand), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["questions"] == [{
        "candidate": str(cand), "only_in_baseline": ["q3"], "only_in_candidate": [],
        "text_changed": ["q2"]}]
    assert ("note: cand vs base: 1 questions only in base (q3); 1 questions whose text "
            "changed (q2) — not paired, or paired across different texts") in " ".join(
                res.stderr.split())
    back = runner.invoke(app, ["compare", str(cand), str(base), "--format", "json"])
    assert json.loads(back.stdout)["questions"][0]["only_in_candidate"] == ["q3"]
    runner.invoke(app, ["report", str(base), str(cand)])
    page = (cand / "compare-base.html").read_text(encoding="utf-8")
    assert "The runs do not hold the same questions." in page
    assert '<details class="qdiff" data-kind="only_in_baseline"><summary>1 questions only in ' \
           'base</summary><ul><li class="ids">q3</li></ul></details>' in page
    assert "1 questions with a changed text (same id)" in page


def test_compare_page_has_no_bidi_controls(tmp_path: Path) -> None:
    base = tiny_run(tmp_path / "base", {"q1": "100 euros.\u202e"},
                    texts={"q1": "evil\u202etxt.exe?"})
    cand = tiny_run(tmp_path / "cand", {"q1": "999 euros.\u2066"})
    res = runner.invoke(app, ["report", str(base), str(cand)])
    assert res.exit_code == 0, res.output
    page = (cand / "compare-base.html").read_text(encoding="utf-8")
    assert "\u202e" not in page and "\u2066" not in page and "eviltxt.exe?" in page
