"""The HTML report: the real fixture run, a tiny hand-written run folder, escaping, determinism."""

from __future__ import annotations

import html
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragassay.config import load_config
from ragassay.report.html import BAR_PLOT_W, LABEL_W, render_html, write_html
from ragassay.run import run_evaluation
from ragassay.schema import InputError

ROOT = Path(__file__).resolve().parents[1]
CONFIG = "configs/eval/rag_quality_v1.yaml"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped fixture evaluated once into a temporary output root."""
    out = tmp_path_factory.mktemp("runs")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)  # the config's paths are relative to the repository root
        result = run_evaluation(load_config(CONFIG), run_id="html", output_root=out)
    return result.run_dir


def metric_row(page: str, name: str) -> str:
    """The `<tr>` of one metric in a metrics table."""
    found = re.search(rf"<tr><td>{re.escape(name)}</td>.*?</tr>", page)
    assert found, f"no table row for {name}"
    return found.group(0)


# --- a tiny run folder written by hand ------------------------------------------------


def agg(mean: float | None, n: int, missing: int, lo: float | None = None,
        hi: float | None = None) -> dict[str, Any]:
    return {"mean": mean, "n": n, "missing": missing, "ci_low": lo, "ci_high": hi}


def write_tiny_run(folder: Path, question: str = "How long is the warranty?",
                   answer_text: str = "Two years [d::chunk-001]", stale: str | None = None,
                   reanchored: list[dict[str, Any]] | None = None) -> Path:
    """Two questions: q1 (answerable, fails) and q2 (unanswerable, passes)."""
    folder.mkdir(parents=True, exist_ok=True)
    metrics = {
        "retrieval": {"hit_at_5": agg(0.5, 1, 1, 0.1, 0.4)},
        "answer": {"correct": agg(0.25, 2, 0, 0.0, 1.0),
                   "citation_accuracy": agg(None, 0, 2)},
        "run_id": "tiny",
        "pipeline": {"name": "naive_baseline", "top_k": 2, "retrieval_backend": "dense"},
        "answerer": {"kind": "extractive"},
        "counts": {"questions": 2, "answerable": 1, "unanswerable": 1},
        "failures": {
            "counts": {"retrieval_failure.gold_evidence_not_in_top_k": 1,
                       "retrieval_failure.wrong_similar_clause": 0,
                       "answer_failure.partial_answer": 1},
            "by_category": {"retrieval_failure": 1, "answer_failure": 1},
            "questions_with_failures": 1,
            "unobservable": {},
        },
        "gold": {"reanchored": reanchored or []},
        "provenance": {"index": {"embedding": {"backend": "hashing", "model": "m"},
                                 "build": {"chunking": {"chunk_size": 400}}, "stale": stale},
                       "seed": 7},
    }
    (folder / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    retrieved = [
        {"question_id": "q1", "question": question, "gold_chunk_ids": ["d::chunk-002"],
         "retrieved": [{"rank": 1, "chunk_id": "d::chunk-001", "score": 0.5, "gold": False}],
         "gold_rank_in_index": {"d::chunk-002": 7}, "metrics": {"hit_at_5": 0, "rank": 0}},
        {"question_id": "q2", "question": "Budget?", "gold_chunk_ids": [], "retrieved": [],
         "gold_rank_in_index": {}, "metrics": {"hit_at_5": None, "rank": None}},
    ]
    answers = [
        {"question_id": "q1", "question": question,
         "answer": {"text": answer_text, "status": "supported",
                    "citations": [{"chunk_id": "d::chunk-001", "page": 3}]},
         "scores": {"groundedness": 0, "groundedness_reason": "number 2 not in source",
                    "correct": 0}},
        {"question_id": "q2", "question": "Budget?",
         "answer": {"text": "", "status": "abstained", "citations": []},
         "scores": {"groundedness": 1, "groundedness_reason": "", "correct": 1}},
    ]
    failures = [
        {"question_id": "q1", "question": question,
         "failure_types": ["retrieval_failure.gold_evidence_not_in_top_k",
                           "answer_failure.partial_answer"],
         "evidence": {"retrieval_failure.gold_evidence_not_in_top_k": {"why": question}}},
    ]
    for name, rows in (("retrieved_chunks.jsonl", retrieved), ("answers.jsonl", answers),
                       ("failure_cases.jsonl", failures)):
        (folder / name).write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return folder


# --- the real run ---------------------------------------------------------------------


def test_real_run_lists_every_question_with_its_text(real_run: Path) -> None:
    page = render_html(real_run)
    rows = read_jsonl(real_run / "answers.jsonl")
    assert len(rows) == 16
    for row in rows:
        assert f'<td class="ids">{row["question_id"]}</td>' in page
        assert html.escape(row["question"]) in page  # Korean, German and English alike
    assert '<meta charset="utf-8">' in page
    assert "한빛시" in page


def test_real_run_has_one_svg_per_chart(real_run: Path) -> None:
    page = render_html(real_run)
    # retrieval means, answer means, failure labels
    assert page.count("<svg") == 3
    assert page.count("</svg>") == 3
    assert "<script" not in page and "http" not in page.split("</head>")[0]


def test_real_run_failure_line_and_highlighted_rows(real_run: Path) -> None:
    page = render_html(real_run)
    metrics = json.loads((real_run / "metrics.json").read_text(encoding="utf-8"))
    counts = metrics["failures"]["counts"]
    fired = sum(1 for n in counts.values() if n > 0)
    assert f"{fired} of 24 labels fired" in page
    failing = read_jsonl(real_run / "failure_cases.jsonl")
    assert page.count('<tbody class="q fail">') == len(failing)
    assert page.count('<tbody class="q">') == 16 - len(failing)
    assert page.count("<details>") == 16


def test_real_run_lists_reanchored_gold(real_run: Path) -> None:
    page = render_html(real_run)
    metrics = json.loads((real_run / "metrics.json").read_text(encoding="utf-8"))
    for moved in metrics["gold"]["reanchored"]:
        assert html.escape(moved["reason"]) in page


def test_real_run_is_byte_identical_across_calls(real_run: Path, tmp_path: Path) -> None:
    assert render_html(real_run) == render_html(real_run)
    first = write_html(real_run, tmp_path / "a.html").read_bytes()
    second = write_html(real_run, tmp_path / "b.html").read_bytes()
    assert first == second
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.html", "b.html"]  # no temp left


def test_write_html_default_path_and_rewrite(real_run: Path) -> None:
    out = write_html(real_run)
    assert out == real_run / "report.html"
    before = out.read_bytes()
    assert write_html(real_run).read_bytes() == before  # its own report.html is not an input
    assert before.decode("utf-8") == render_html(real_run)


# --- the tiny run -------------------------------------------------------------------------


def test_question_with_script_is_escaped_everywhere(tmp_path: Path) -> None:
    evil = '<script>alert("x")</script>'
    page = render_html(write_tiny_run(tmp_path / "run", question=evil, answer_text=evil))
    assert "<script" not in page
    assert html.escape(evil) in page  # the question cell and the answer text
    # the failure evidence, pretty-printed as JSON, is escaped too
    assert html.escape(json.dumps(evil)) in page


def test_metric_without_mean_is_listed_as_not_measured(tmp_path: Path) -> None:
    page = render_html(write_tiny_run(tmp_path / "run"))
    row = metric_row(page, "citation_accuracy")
    assert "not measured" in row
    assert row.endswith('<td class="num">0</td><td class="num">2</td></tr>')  # n 0, missing 2
    assert "not measured (2 missing)" in page  # its row in the chart


def test_bar_and_whisker_geometry(tmp_path: Path) -> None:
    page = render_html(write_tiny_run(tmp_path / "run"))
    # hit_at_5: mean 0.5, CI [0.1, 0.4]
    assert f'width="{0.5 * BAR_PLOT_W:.1f}"' in page
    lo, hi = LABEL_W + 0.1 * BAR_PLOT_W, LABEL_W + 0.4 * BAR_PLOT_W
    assert f'd="M{lo:.1f} ' in page and f"H{hi:.1f}M" in page
    assert "hit_at_5: mean 0.500, 95% CI [0.100, 0.400], n 1, missing 1" in page


def test_tiny_run_question_table(tmp_path: Path) -> None:
    page = render_html(write_tiny_run(tmp_path / "run"))
    assert "2 of 3 labels fired" in page
    assert page.count('<tbody class="q fail">') == 1 and page.count('<tbody class="q">') == 1
    assert "<th>found@5</th>" in page
    assert "<td>no (number 2 not in source)</td>" in page
    assert '<td class="num">absent</td>' in page  # rank 0: no gold retrieved
    assert "rank 7 in the whole index" in page
    assert "d::chunk-001</span>, page 3" in page
    assert "wrong_similar_clause" not in page  # count 0: not drawn
    assert page.count("<svg") == 3


def test_stale_index_warning(tmp_path: Path) -> None:
    fresh = render_html(write_tiny_run(tmp_path / "fresh"))
    stale = render_html(write_tiny_run(tmp_path / "stale", stale="source changed: a.md"))
    assert "index is stale" not in fresh
    assert "index is stale" in stale and "source changed: a.md" in stale


def test_reanchored_labels_are_listed(tmp_path: Path) -> None:
    moved = {"question_id": "q1", "labelled_chunk_id": "d::chunk-002", "status": "moved",
             "chunk_ids": ["d::chunk-009"], "reason": "claim <now> in chunk 9"}
    page = render_html(write_tiny_run(tmp_path / "run", reanchored=[moved]))
    assert "1 gold label(s) re-anchored" in page
    assert "claim &lt;now&gt; in chunk 9" in page
    none = render_html(write_tiny_run(tmp_path / "none"))
    assert "none was re-anchored" in none


def test_missing_file_names_it(tmp_path: Path) -> None:
    run = write_tiny_run(tmp_path / "run")
    (run / "answers.jsonl").unlink()
    with pytest.raises(InputError) as err:
        render_html(run)
    assert err.value.path.endswith("answers.jsonl")


def test_malformed_metrics_names_line(tmp_path: Path) -> None:
    run = write_tiny_run(tmp_path / "run")
    (run / "metrics.json").write_text('{\n  "retrieval": {,\n}', encoding="utf-8")
    with pytest.raises(InputError) as err:
        render_html(run)
    assert err.value.path.endswith("metrics.json") and err.value.line == 2


def test_duplicate_question_id_is_refused(tmp_path: Path) -> None:
    run = write_tiny_run(tmp_path / "run")
    line = (run / "answers.jsonl").read_text(encoding="utf-8").splitlines()[0]
    with (run / "answers.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(line + "\n")
    with pytest.raises(InputError) as err:
        render_html(run)
    assert err.value.line == 3 and err.value.field == "question_id"


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=40, deadline=None)
@given(question=_TEXT, answer=_TEXT)
def test_any_text_is_escaped(question: str, answer: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        page = render_html(write_tiny_run(Path(tmp) / "run", question=question or "?",
                                          answer_text=answer))
    assert "<script" not in page.lower()
    assert html.escape(question or "?") in page
    assert html.escape(answer or "—") in page
