"""General IR evaluation (trec_eval semantics) and TREC files: closed-form examples."""

from __future__ import annotations

import math
from math import log2
from pathlib import Path

import pytest

from ragassay.errors import InputError
from ragassay.metrics.ir import Measure, evaluate, list_measures, parse_measure, rank_documents
from ragassay.metrics.measures import canonical_name
from ragassay.metrics.trec import format_results, read_qrels, read_run, write_qrels, write_run

# --- measure names ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ndcg@5", Measure("ndcg", 5)),
        ("ndcg_cut.5", Measure("ndcg", 5)),
        ("ndcg_cut_5", Measure("ndcg", 5)),
        ("NDCG@5", Measure("ndcg", 5)),
        ("ndcg", Measure("ndcg")),
        ("P@5", Measure("precision", 5)),
        ("precision@5", Measure("precision", 5)),
        ("P.5", Measure("precision", 5)),
        ("P_5", Measure("precision", 5)),
        ("recall@10", Measure("recall", 10)),
        ("recall.10", Measure("recall", 10)),
        ("mrr@10", Measure("mrr", 10)),
        ("recip_rank", Measure("mrr")),
        ("mrr", Measure("mrr")),
        ("map", Measure("map")),
        ("map_cut_10", Measure("map", 10)),
        ("hit@5", Measure("hit", 5)),
        ("success.5", Measure("hit", 5)),
        ("r_precision", Measure("r_precision")),
        ("Rprec", Measure("r_precision")),
        (" map ", Measure("map")),
    ],
)
def test_parse_spellings(text: str, expected: Measure) -> None:
    assert parse_measure(text) == expected
    assert Measure.parse(text) == expected


def test_canonical_and_trec_names() -> None:
    assert str(Measure("ndcg", 5)) == "ndcg_at_5"
    assert str(Measure("map")) == "map"
    assert parse_measure(str(Measure("precision", 3))) == Measure("precision", 3)
    assert [parse_measure(t).trec_name for t in ("ndcg@5", "P@5", "recall@10", "mrr", "map",
                                                 "hit@1", "Rprec", "mrr@10")] == [
        "ndcg_cut_5", "P_5", "recall_10", "recip_rank", "map", "success_1", "Rprec",
        "recip_rank_cut_10",
    ]
    assert {Measure("ndcg", 5): 1}[parse_measure("ndcg_cut_5")] == 1  # usable as a key


def test_unknown_measure_suggests_nearest() -> None:
    with pytest.raises(ValueError, match=r"unknown measure 'ndgc@5'; did you mean ndcg_at_5"):
        parse_measure("ndgc@5")
    with pytest.raises(ValueError, match="valid measures: precision, recall"):
        parse_measure("bleu")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ndcg@0", "cutoff must be >= 1"),
        ("P@-3", "cutoff must be >= 1"),
        ("recall@ten", "not an integer"),
        ("P", "needs a cutoff"),
        ("hit", "needs a cutoff"),
        ("Rprec@5", "takes no cutoff"),
    ],
)
def test_bad_cutoffs(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_measure(text)


def test_list_measures_has_formulas() -> None:
    infos = list_measures()
    assert [i.name for i in infos][:7] == [
        "precision", "recall", "hit", "mrr", "ndcg", "map", "r_precision"]
    assert all(i.formula and i.trec_eval for i in infos)


# --- closed-form values -------------------------------------------------------------------

# One query: relevant a (grade 2), c (grade 1), e (never retrieved, grade 3); b judged 0.
QRELS = {"q1": {"a": 2, "b": 0, "c": 1, "e": 3}}
# Ranking by score: x, a, b, c.
RUN = {"q1": {"a": 0.9, "b": 0.8, "c": 0.7, "x": 1.0}}


def score(metric: str, qrels: dict = QRELS, run: dict = RUN, **kw: object) -> float:
    row = evaluate(qrels, run, [metric], **kw)["per_query"]["q1"]  # type: ignore[arg-type]
    return row[canonical_name(metric)]


def test_closed_forms() -> None:
    assert score("precision@2") == 1 / 2
    assert score("precision@10") == 2 / 10  # divided by k, not by the 4 retrieved
    assert score("recall@2") == 1 / 3
    assert score("recall@4") == 2 / 3
    assert score("recall") == 2 / 3
    assert score("hit@1") == 0 and score("hit@2") == 1
    assert score("mrr@1") == 0 and score("mrr@2") == 1 / 2 and score("mrr") == 1 / 2
    idcg_3 = 3 / log2(2) + 2 / log2(3) + 1 / log2(4)
    assert score("ndcg@3") == pytest.approx((2 / log2(3)) / idcg_3)
    assert score("ndcg@4") == pytest.approx((2 / log2(3) + 1 / log2(5)) / idcg_3)
    assert score("ndcg") == pytest.approx((2 / log2(3) + 1 / log2(5)) / idcg_3)
    assert score("map") == pytest.approx((1 / 2 + 2 / 4) / 3)
    assert score("map@3") == pytest.approx((1 / 2) / 3)
    assert score("r_precision") == pytest.approx(1 / 3)  # R = 3: top 3 = x, a, b


def test_ties_are_broken_by_doc_id_descending() -> None:
    scores = {"a": 1.0, "c": 1.0, "b": 1.0, "z": 0.5, "y": 2.0}
    assert rank_documents(scores) == ["y", "c", "b", "a", "z"]
    qrels = {"q1": {"a": 1}}
    run = {"q1": {"a": 1.0, "b": 1.0, "c": 1.0}}
    assert score("mrr", qrels, run) == 1 / 3  # a sorts last among the tied
    assert score("mrr", qrels, run, keep_order=True) == 1.0  # mapping order is the ranking


def test_list_runs_keep_their_order() -> None:
    qrels = {"q1": {"a": 1}}
    assert score("mrr", qrels, {"q1": ["b", "a"]}) == 1 / 2
    assert score("precision@2", qrels, {"q1": ("a",)}) == 1 / 2


def test_duplicate_document_in_list_names_the_query() -> None:
    with pytest.raises(ValueError, match=r"query 'q1': document 'a' appears more than once"):
        evaluate({"q1": {"a": 1}}, {"q1": ["a", "b", "a"]}, ["map"])


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "high"])
def test_bad_scores_name_the_query(bad: object) -> None:
    with pytest.raises(ValueError, match="query 'q1'"):
        evaluate({"q1": {"a": 1}}, {"q1": {"a": bad}}, ["map"])


def test_query_sets() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}, "q3": {"a": 0}, "q4": {}}
    run = {"q1": {"a": 1.0}, "q3": {"a": 1.0}, "q4": {"a": 1.0}, "q9": {"a": 1.0}}
    zero = evaluate(qrels, run, ["map", "P@1"])
    # q2 judged but not retrieved: 0 (trec_eval -c); q3 has no relevant doc: evaluated, 0;
    # q4 has no judgments and q9 no qrels: ignored.
    assert list(zero["per_query"]) == ["q1", "q2", "q3"]
    assert zero["per_query"]["q2"] == {"map": 0.0, "precision_at_1": 0.0}
    assert zero["mean"] == {"map": 1 / 3, "precision_at_1": 1 / 3}
    skip = evaluate(qrels, run, ["map"], missing_queries="skip")
    assert list(skip["per_query"]) == ["q1", "q3"]
    assert skip["mean"] == {"map": 1 / 2}


def test_empty_inputs() -> None:
    out = evaluate({}, {}, ["ndcg@10"])
    assert out == {"per_query": {}, "mean": {"ndcg_at_10": None}}
    empty_ranking = evaluate({"q1": {"a": 1}}, {"q1": {}}, ["ndcg@10", "mrr", "r_precision"])
    assert empty_ranking["per_query"]["q1"] == {"ndcg_at_10": 0.0, "mrr": 0.0,
                                                "r_precision": 0.0}


def test_measures_are_deduplicated_in_request_order() -> None:
    out = evaluate(QRELS, RUN, ["P@2", "map", "precision@2", Measure("ndcg", 3)])
    assert list(out["mean"]) == ["precision_at_2", "map", "ndcg_at_3"]


def test_bad_missing_policy() -> None:
    with pytest.raises(ValueError, match="missing_queries"):
        evaluate(QRELS, RUN, ["map"], missing_queries="drop")  # type: ignore[arg-type]


def test_result_does_not_depend_on_input_order() -> None:
    qrels = {"q2": {"b": 1, "a": 2}, "q1": {"a": 1}}
    run = {"q1": {"b": 0.5, "a": 0.5}, "q2": {"a": 0.1, "b": 0.3}}
    flipped_qrels = {q: dict(reversed(list(v.items()))) for q, v in reversed(list(qrels.items()))}
    flipped_run = {q: dict(reversed(list(v.items()))) for q, v in reversed(list(run.items()))}
    assert evaluate(qrels, run, ["ndcg@2", "mrr"]) == evaluate(
        flipped_qrels, flipped_run, ["ndcg@2", "mrr"]
    )


# --- TREC files ---------------------------------------------------------------------------


def test_read_write_round_trip(tmp_path: Path) -> None:
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"c": 1}}
    run = {"q1": {"a": 0.25, "b": 0.25, "z": 1.5}, "q2": ["c", "d"]}
    write_qrels(qrels, tmp_path / "qrels.txt")
    write_run(run, tmp_path / "run.txt", tag="test")
    assert (tmp_path / "qrels.txt").read_text() == "q1 0 a 2\nq1 0 b 0\nq2 0 c 1\n"
    assert (tmp_path / "run.txt").read_text() == (
        "q1 Q0 z 1 1.5 test\nq1 Q0 b 2 0.25 test\nq1 Q0 a 3 0.25 test\n"
        "q2 Q0 c 1 2.0 test\nq2 Q0 d 2 1.0 test\n"
    )
    assert read_qrels(tmp_path / "qrels.txt") == qrels
    back = read_run(tmp_path / "run.txt")
    assert back["q1"] == run["q1"]
    assert rank_documents(back["q2"]) == ["c", "d"]


@pytest.mark.parametrize(
    ("text", "line", "field", "message"),
    [
        ("q1 0 a 1\nq1 0 b\n", 2, None, "expected 4 columns"),
        ("q1 0 a 1\n\nq1 0 b high\n", 3, "grade", "not an integer"),
        ("q1 0 a 1\nq1 0 a 2\n", 2, "docid", "judged twice"),
    ],
)
def test_qrels_errors(tmp_path: Path, text: str, line: int, field: str | None,
                      message: str) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        read_qrels(path)
    assert (info.value.line, info.value.field, info.value.path) == (line, field, str(path))


@pytest.mark.parametrize(
    ("text", "line", "field", "message"),
    [
        ("q1 Q0 a 1 0.5\n", 1, None, "expected 6 columns"),
        ("q1 Q0 a 1 0.5 t\nq1 Q0 b 2 x t\n", 2, "score", "not a finite number"),
        ("q1 Q0 a 1 nan t\n", 1, "score", "not a finite number"),
        ("q1 Q0 a 1 0.5 t\nq1 Q0 a 2 0.4 t\n", 2, "docid", "retrieved twice"),
    ],
)
def test_run_errors(tmp_path: Path, text: str, line: int, field: str | None,
                    message: str) -> None:
    path = tmp_path / "run.txt"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        read_run(path)
    assert (info.value.line, info.value.field) == (line, field)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read_run(tmp_path / "nope.txt")


def test_format_results_matches_trec_eval_layout() -> None:
    out = evaluate(QRELS, RUN, ["ndcg@3", "P@2", "map"])
    text = format_results(out, per_query=True)
    ndcg = (2 / log2(3)) / (3 / log2(2) + 2 / log2(3) + 1 / log2(4))
    assert text.splitlines() == [
        f"ndcg_cut_3            \tq1\t{ndcg:.4f}",
        "P_2                   \tq1\t0.5000",
        "map                   \tq1\t0.3333",
        f"ndcg_cut_3            \tall\t{ndcg:.4f}",
        "P_2                   \tall\t0.5000",
        "map                   \tall\t0.3333",
    ]
    assert format_results(out).count("\n") == 3


def test_means_add_per_query_values_left_to_right_as_trec_eval() -> None:
    # recall per query 1/10, 0, 0, 3/10, 0, 1/4, 0, 1/5: the exact mean is 17/160 = 0.10625;
    # trec_eval adds the doubles left to right in query order and prints 0.1063, where
    # math.fsum would give 0.1062.
    fractions = [(1, 10), (0, 1), (0, 1), (3, 10), (0, 1), (1, 4), (0, 1), (1, 5)]
    qrels = {f"q{i}": {f"d{j}": 1 for j in range(den)} for i, (_, den) in enumerate(fractions)}
    run = {f"q{i}": {f"d{j}": 1.0 for j in range(num)} | {"x": 0.0}
           for i, (num, _) in enumerate(fractions)}
    res = evaluate(qrels, run, ["recall.10"])
    assert f"{res['mean']['recall_at_10']:.4f}" == "0.1063"
    values = [res["per_query"][q]["recall_at_10"] for q in sorted(qrels)]
    assert f"{math.fsum(values) / len(values):.4f}" == "0.1062"
    # 7/8, 1/3, 1, 1/6: left to right 0.59374999..., fsum 0.59375
    qrels2 = {"q1": {f"d{j}": 1 for j in range(8)}, "q2": {f"d{j}": 1 for j in range(3)},
              "q3": {"d0": 1}, "q4": {f"d{j}": 1 for j in range(6)}}
    run2 = {"q1": {f"d{j}": 1.0 for j in range(7)}, "q2": {"d0": 1.0}, "q3": {"d0": 1.0},
            "q4": {"d0": 1.0}}
    out = format_results(evaluate(qrels2, run2, ["recall.10"]))
    assert out == "recall_10             \tall\t0.5937\n"


# --- trec_eval's bpref, gm_map and interpolated precision, by hand ------------------------
# Ranked: n1 (judged 0), r1, u (unjudged), r2; relevant r1, r2, r3 (never retrieved);
# judged non-relevant n1, n2. R = 3, N = 2.
JUDGED = {"q": {"r1": 1, "r2": 1, "r3": 1, "n1": 0, "n2": 0}}
RANKED = {"q": ["n1", "r1", "u", "r2"]}


def test_bpref_counts_judged_nonrelevant_documents_above_each_hit() -> None:
    # r1 and r2 each have n1 above them: 1 - min(1, 3) / min(2, 3) = 0.5; (0.5 + 0.5) / 3
    got = evaluate(JUDGED, RANKED, ["bpref"])["per_query"]["q"]["bpref"]
    assert got == pytest.approx(1 / 3)


def test_gm_map_is_ap_per_query_and_a_geometric_mean() -> None:
    # AP = (1/2 + 2/4) / 3 = 1/3; a second query with AP 0 counts as 0.00001
    qrels = {**JUDGED, "z": {"a": 1}}
    run = {**RANKED, "z": ["b"]}
    result = evaluate(qrels, run, ["gm_map", "map"])
    assert result["per_query"]["q"]["gm_map"] == pytest.approx(1 / 3)
    assert result["mean"]["gm_map"] == pytest.approx(math.sqrt(1 / 3 * 0.00001))
    assert result["mean"]["map"] == pytest.approx(1 / 6)


def test_iprec_at_recall_levels_are_fractions() -> None:
    # P at r1 = 1/2, at r2 = 2/4. Level x needs int(x * 3 + 0.9) relevant found:
    # 0 -> 0 (best P anywhere, 0.5), 0.3 -> 1, 0.5 -> 2 (0.5 at or after r2), 1 -> 3 > 2: 0
    names = ["iprec_at_recall@0", "iprec_at_recall_at_0.3", "iprec_at_recall.0.5",
             "iprec_at_recall_1.00"]
    got = evaluate(JUDGED, RANKED, names)["per_query"]["q"]
    assert got == {"iprec_at_recall_at_0": 0.5, "iprec_at_recall_at_0.3": 0.5,
                   "iprec_at_recall_at_0.5": 0.5, "iprec_at_recall_at_1": 0.0}
    assert parse_measure("iprec_at_recall_0.10").trec_name == "iprec_at_recall_0.10"
    with pytest.raises(ValueError, match="a number >= 0"):
        parse_measure("iprec_at_recall@-1")
