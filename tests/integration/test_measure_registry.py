"""A measure added at run time: one kernel and one MeasureInfo, nothing else.

The toy measure ``rel_count`` counts the relevant documents in the top k (|rel ∩ top-k|,
not divided by anything). Registered with trec_eval's name ``rel_count_{k}``, print place
12.5 (after ``P``, before ``recall``), default cutoffs 1 and 3 and ``rag="cut"``, it is
printed by ``ragassay trec-eval`` and carried by the RAG question rows and a run's metrics,
with no other file touched. The values are worked by hand below.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ragassay import evaluate_rag as evaluate
from ragassay.config import EvalConfig
from ragassay.metrics import evaluate as ir_evaluate
from ragassay.metrics.kernels import Cutoffs, Relevance
from ragassay.metrics.measures import (
    MeasureInfo,
    list_measures,
    parse_measure,
    register_measure,
    unregister_measure,
)
from ragassay.metrics.retrieval import rag_metric_names, retrieval_scores
from ragassay.schema import (
    Answer,
    Chunk,
    GoldEvidence,
    GoldRecord,
    Prediction,
    Question,
    RetrievedChunk,
)
from ragassay.trec_eval_cli import trec_eval_main


def rel_count(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    return r.found_at(cutoffs).astype(np.float64)


TOY = MeasureInfo("rel_count", "retrieval", "rel_count_at_k = |rel ∩ top-k|",
                  cutoff="required", trec=("rel_count_{k}",), kernel=rel_count,
                  trec_order=12.5, trec_cutoffs=(1, 3), rag="cut")


@pytest.fixture
def toy() -> Iterator[MeasureInfo]:
    register_measure(TOY)
    try:
        yield TOY
    finally:
        unregister_measure(TOY.name)


# q1 ranks d1 (relevant), d2, d3 (relevant); q2 ranks e1, e2 (relevant)
QRELS = "q1 0 d1 1\nq1 0 d3 2\nq2 0 e2 1\nq2 0 e9 0\n"
RUN = ("q1 Q0 d1 1 3.0 toy\nq1 Q0 d2 2 2.0 toy\nq1 Q0 d3 3 1.0 toy\n"
       "q2 Q0 e1 1 2.0 toy\nq2 Q0 e2 2 1.0 toy\n")


def _trec_eval(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    code = trec_eval_main([*args, str(tmp_path / "qrels"), str(tmp_path / "run")])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def test_a_registered_measure_is_in_the_table_and_parsed(toy: MeasureInfo) -> None:
    assert toy in list_measures()
    assert str(parse_measure("rel_count@3")) == "rel_count_at_3"
    assert parse_measure("rel_count_3").trec_name == "rel_count_3"


def test_trec_eval_prints_it_with_its_defaults_and_in_its_place(
        toy: MeasureInfo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # top 1: q1 1 (d1), q2 0; top 3: q1 2, q2 1; means 0.5 and 1.5
    assert _trec_eval(tmp_path, capsys, "-m", "rel_count") == (
        "rel_count_1           \tall\t0.5000\nrel_count_3           \tall\t1.5000\n")
    out = _trec_eval(tmp_path, capsys, "-q", "-m", "recall.2", "-m", "rel_count.2",
                     "-m", "P.2")
    # trec_eval's order: P, then the toy (12.5), then recall; q2's top 2 holds e2
    assert [line.split("\t")[0].strip() for line in out.splitlines()[:3]] == [
        "P_2", "rel_count_2", "recall_2"]
    assert "rel_count_2           \tq2\t1.0000\n" in out
    assert ir_evaluate({"q1": {"d1": 1}}, {"q1": ["d2", "d1"]}, ["rel_count_at_1",
                       "rel_count_at_2"])["mean"] == {"rel_count_at_1": 0.0,
                                                      "rel_count_at_2": 1.0}


def test_the_rag_rows_and_a_run_carry_it(toy: MeasureInfo) -> None:
    assert "rel_count_at_1" in rag_metric_names((1, 3))
    row = retrieval_scores(["c2", "c1", "c3"], {"c1": 1, "c3": 1}, ks=(1, 3))
    assert (row["rel_count_at_1"], row["rel_count_at_3"]) == (0.0, 2.0)
    chunks = [Chunk(chunk_id=f"c{i}", doc_id="d", text=f"Text {i}.") for i in (1, 2, 3)]
    result = evaluate(
        [Question(question_id="a", question="A?", answerable=True, must_contain=["Text 1"])],
        [GoldRecord(question_id="a", gold_evidence=[GoldEvidence(chunk_id="c1", doc_id="d")])],
        [Prediction(question_id="a", retrieved=[RetrievedChunk(chunk_id="c2", score=0.9),
                                                RetrievedChunk(chunk_id="c1", score=0.8)],
                    answer=Answer(text="Text 1.", status="supported"))],
        chunks, EvalConfig(pipeline={"top_k": 2},
                           metrics={"retrieval": ["recall_at_2", "rel_count_at_2"]}))
    assert result.question("a").retrieval["rel_count_at_2"] == 1.0
    assert result.metrics.retrieval["rel_count_at_2"].mean == 1.0  # the run's metrics


def test_unregistered_it_is_gone(toy: MeasureInfo) -> None:
    unregister_measure(toy.name)
    with pytest.raises(ValueError, match="unknown measure"):
        parse_measure("rel_count_at_3")
    assert "rel_count_at_1" not in rag_metric_names((1,))
    register_measure(toy)  # for the fixture's clean-up


def test_a_taken_name_or_a_missing_kernel_is_refused() -> None:
    with pytest.raises(ValueError, match="taken"):
        register_measure(MeasureInfo("recall", "retrieval", "x", kernel=rel_count))
    with pytest.raises(ValueError, match="needs a kernel"):
        register_measure(MeasureInfo("toy_without_kernel", "retrieval", "x"))
