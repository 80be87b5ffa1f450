"""The measure table: one name per measure, every spelling parsing to it, and the RAG rows
and trec_eval-style evaluation computed by the same kernels."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ragassay.cli import app
from ragassay.metrics import (
    ANSWER_MEASURES,
    RAG_CUT_FAMILIES,
    RETRIEVAL_FAMILIES,
    Measure,
    canonical_name,
    evaluate,
    list_measures,
    measure_info,
    parse_measure,
    rag_measure,
    rag_metric_names,
    retrieval_scores,
)
from ragassay.metrics.retrieval import dedupe_ranking, empty_scores
from ragassay.metrics.trec import write_qrels, write_run

# --- names --------------------------------------------------------------------------------


def test_recall_at_5_has_one_value_and_one_name() -> None:
    spellings = ["recall_at_5", "recall@5", "recall.5", "recall_5", " RECALL@5 ", "Recall_At_5"]
    parsed = [parse_measure(s) for s in spellings]
    assert all(m == Measure("recall", 5) for m in parsed)
    assert len(set(parsed)) == 1  # one dict key
    assert {str(m) for m in parsed} == {"recall_at_5"}
    assert {canonical_name(s) for s in spellings} == {"recall_at_5"}
    assert Measure.parse("recall.5") is not None and Measure.parse(Measure("recall", 5)) == (
        Measure("recall", 5))


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("P.5", "precision_at_5"),
        ("P_5", "precision_at_5"),
        ("precision@5", "precision_at_5"),
        ("ndcg_cut.10", "ndcg_at_10"),
        ("ndcg_cut_10", "ndcg_at_10"),
        ("ndcg", "ndcg"),
        ("recip_rank", "mrr"),
        ("recip_rank_cut_10", "mrr_at_10"),
        ("mrr@10", "mrr_at_10"),
        ("map", "map"),
        ("map_cut.100", "map_at_100"),
        ("success.5", "hit_at_5"),
        ("success_at_5", "hit_at_5"),
        ("Rprec", "r_precision"),
        ("recall", "recall"),
        ("groundedness", "groundedness"),
        ("Hallucination_Flag", "hallucination_flag"),
    ],
)
def test_trec_and_alias_spellings(text: str, canonical: str) -> None:
    assert canonical_name(text) == canonical


@pytest.mark.parametrize("family", RETRIEVAL_FAMILIES)
def test_canonical_and_trec_names_parse_back(family: str) -> None:
    info = measure_info(family)
    cutoffs: list[int | None] = [] if info.needs_cutoff else [None]
    if info.takes_cutoff:
        cutoffs += [1, 5, 100]
    for k in cutoffs:
        m = Measure(family, k)
        assert parse_measure(str(m)) == m
        assert parse_measure(m.trec_name) == m


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("recal_at_5", "did you mean recall_at_5"),
        ("ndgc@5", "did you mean ndcg_at_5"),
        ("groundednes", "did you mean groundedness"),
        ("hallucination", "did you mean hallucination_flag"),
    ],
)
def test_unknown_name_says_did_you_mean(text: str, hint: str) -> None:
    with pytest.raises(ValueError, match=f"unknown measure '{text}'; {hint}"):
        canonical_name(text)


def test_unknown_name_without_a_near_one_lists_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="valid measures: precision, recall") as info:
        canonical_name("bleu")
    assert "did you mean" not in str(info.value)
    assert "groundedness" in str(info.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [("recall_at_0", "cutoff must be >= 1"), ("P", "needs a cutoff"),
     ("faithfulness@5", "takes no cutoff"), ("recall_at_x", "unknown measure")],
)
def test_bad_cutoffs(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        canonical_name(text)


# --- the table ----------------------------------------------------------------------------


def test_groups_directions_and_cutoffs() -> None:
    # the RAG measures first, then trec_eval's others (docs/trec_eval.md lists them)
    assert RETRIEVAL_FAMILIES[:7] == (
        "precision", "recall", "hit", "mrr", "ndcg", "map", "r_precision")
    assert {"gm_map", "bpref", "iprec_at_recall", "infap", "set_f"} <= set(RETRIEVAL_FAMILIES)
    assert ANSWER_MEASURES == (
        "judge_faithfulness", "faithfulness", "groundedness", "answer_relevancy", "correct",
        "citation_accuracy", "hallucination_flag", "unanswerable_detection_flag",
        "claim_precision", "claim_recall", "context_utilisation", "noise_sensitivity")
    infos = list_measures(None)
    assert [i.name for i in infos] == [*RETRIEVAL_FAMILIES, *ANSWER_MEASURES]
    assert [i.name for i in list_measures()] == list(RETRIEVAL_FAMILIES)
    assert [i.name for i in list_measures("answer")] == list(ANSWER_MEASURES)
    assert [i.name for i in infos if not i.higher_is_better] == ["hallucination_flag",
                                                                 "noise_sensitivity"]
    assert Measure("hallucination_flag").higher_is_better is False
    assert [i.name for i in infos if i.needs_cutoff] == [
        "precision", "hit", "rprec_mult", "relative_p", "iprec_at_recall"]
    for info in infos:
        assert info.formula
        assert (info.kernel is not None) == (info.group == "retrieval")
        assert bool(info.trec_eval) == (info.group == "retrieval")
        assert not info.takes_cutoff or info.group == "retrieval"


def test_evaluate_refuses_answer_measures() -> None:
    with pytest.raises(ValueError, match="groundedness is an answer measure"):
        evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["groundedness"])


def test_rag_metric_names() -> None:
    assert rag_metric_names((1, 5)) == [
        "recall_at_1", "precision_at_1", "hit_at_1", "mrr_at_1", "ndcg_at_1",
        "recall_at_5", "precision_at_5", "hit_at_5", "mrr_at_5", "ndcg_at_5", "map"]
    assert str(rag_measure("recall@5")) == "recall_at_5"
    assert str(rag_measure("map")) == "map"
    for other in ("r_precision", "map_at_5", "recall", "groundedness"):
        with pytest.raises(ValueError, match="not a per-question retrieval metric"):
            rag_measure(other)


# --- one set of kernels -------------------------------------------------------------------

KS = (1, 2, 3, 5, 10)
ids = st.sampled_from([f"c{i}" for i in range(10)])
questions = st.lists(
    st.tuples(st.lists(ids, max_size=14),
              st.dictionaries(ids, st.integers(min_value=-1, max_value=3), max_size=6)),
    min_size=1, max_size=6)
MEASURES = [f"{family}_at_{k}" for k in KS for family in RAG_CUT_FAMILIES] + ["map", "mrr"]


@given(questions)
@settings(max_examples=300, deadline=None)
def test_retrieval_scores_equal_evaluate_per_query(cases: list[tuple[list[str], dict]]) -> None:
    # All questions in one evaluate call, so its padded batch differs from the one-row case.
    qrels = {f"q{i}": gold for i, (_, gold) in enumerate(cases)}
    run = {f"q{i}": dedupe_ranking(ranked) for i, (ranked, _) in enumerate(cases)}
    ours = evaluate(qrels, run, MEASURES)["per_query"]
    for i, (ranked, gold) in enumerate(cases):
        any_hit = retrieval_scores(ranked, gold, ks=KS, hit_policy="any")
        all_hit = retrieval_scores(ranked, gold, ks=KS, hit_policy="all")
        if not any(g >= 1 for g in gold.values()):
            # not measurable in a RAG row (None); trec_eval scores such a query 0
            assert any_hit == all_hit == empty_scores(KS, num_retrieved=len(run[f"q{i}"]))
            continue
        ref = ours[f"q{i}"]
        for name in rag_metric_names(KS):
            if name.startswith("hit_at_"):
                continue
            assert any_hit[name] == ref[name] == all_hit[name], name
        for k in KS:
            assert any_hit[f"hit_at_{k}"] == ref[f"hit_at_{k}"]
            assert all_hit[f"hit_at_{k}"] == (ref[f"recall_at_{k}"] == 1.0)
        rank = any_hit["rank"]
        assert (1 / rank if rank else 0.0) == ref["mrr"]


# --- ragassay trec-eval -m ----------------------------------------------------------------


def test_trec_eval_accepts_trec_and_canonical_names(tmp_path: Path) -> None:
    qrels = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"d": 1}}
    run = {"q1": {"a": 0.5, "b": 0.9, "c": 0.1, "x": 0.3}, "q2": {"y": 1.0, "d": 0.5}}
    write_qrels(qrels, tmp_path / "qrels.txt")
    write_run(run, tmp_path / "run.txt")
    names = ["recall.5", "ndcg_cut.10", "P.5", "recip_rank", "map", "recall_at_5", "mrr@10",
             "success_1"]
    args = ["trec-eval", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")]
    result = CliRunner().invoke(app, [*args, *(x for n in names for x in ("-m", n))])
    assert result.exit_code == 0, result.output
    expected = evaluate(qrels, run, names, missing_queries="skip")["mean"]
    lines = [line.split("\t") for line in result.stdout.splitlines()]
    # recall_at_5 is recall.5: printed once; measures in trec_eval's print order
    assert [(name.strip(), qid) for name, qid, _ in lines] == [
        ("map", "all"), ("recip_rank", "all"), ("recip_rank_cut_10", "all"), ("P_5", "all"),
        ("recall_5", "all"), ("ndcg_cut_10", "all"), ("success_1", "all")]
    printed = {name.strip(): float(v) for name, _, v in lines}
    for key, value in expected.items():
        trec_name = parse_measure(key).trec_name
        assert printed[trec_name] == pytest.approx(round(value, 4))  # type: ignore[arg-type]

    bad = CliRunner().invoke(app, [*args, "-m", "ndgc_cut.10"])
    assert bad.exit_code == 2
    assert "did you mean ndcg_at_10" in bad.output
