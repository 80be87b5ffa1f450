"""The HTML report, rendered from the typed run record: the real fixture run, small runs built
in memory with `evaluate_rag(...)` and written with `RunResult.write`, escaping, determinism,
the question table's checks, errors of a broken run folder, and (when chromium is
installed) the page as a real browser parses it."""

from __future__ import annotations

import html
import json
import re
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from browser import BROWSER, OFFLINE_SWITCHES
from builders import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from ragassay import (
    Checks,
    EvalConfig,
    InputError,
    QuestionResult,
    RunResult,
    evaluate_rag,
    load_config,
    read_run_folder,
)
from ragassay.checks import totals, verdict_text
from ragassay.diagnose import LABELS
from ragassay.reasons import NO_PREDICTION
from ragassay.report.charts import BAR_PLOT_W, FAIL_LABEL_W, FAIL_PLOT_W, LABEL_W
from ragassay.report.html import decode_row, failing_first, render_html, write_html
from ragassay.report.summary import gold_line
from ragassay.run import run_evaluation
from ragassay.runfolder import Aggregate
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

CONFIG = ROOT / "configs/eval/rag_quality_v1.yaml"


# --- reading the page -------------------------------------------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class Page(HTMLParser):
    """The page parsed: tag balance problems, and the questions table (header cells, then
    per question its tbody class, its main-row cell texts and its failure-label titles)."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.header: list[str] = []
        self.rows: list[dict[str, Any]] = []
        self.svgs = 0
        self.scripts = 0
        self._in_questions = False
        self._depth = 0  # tables open inside the questions table (the chunk tables)
        self._tbody: str | None = None
        self._row: dict[str, Any] | None = None
        self._cell: list[str] | None = None
        self.feed(text)
        self.close()
        if self.stack:
            self.problems.append(f"unclosed: {self.stack}")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "script":
            self.scripts += 1
        if tag == "svg":
            self.svgs += 1
        if tag not in VOID:
            self.stack.append(tag)
        if tag == "table" and self._in_questions:
            self._depth += 1
        if tag == "table" and a.get("class") == "questions":
            self._in_questions = True
        if not self._in_questions or self._depth:
            return
        if tag == "tbody":
            self._tbody = a.get("class") or ""
        elif tag == "tr" and a.get("class") == "main":
            self._row = {"tbody": self._tbody, "cells": [], "labels": []}
        elif tag in ("td", "th") and (self._row is not None or tag == "th"):
            self._cell = []
        elif tag == "span" and self._row is not None and "title" in a:
            self._row["labels"].append(a["title"])

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "svg":
            self.svgs += 1  # self-closing: nothing to balance

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()
        if not self._in_questions:
            return
        if tag == "table" and self._depth:
            self._depth -= 1
            return
        if self._depth:
            return
        if tag in ("td", "th") and self._cell is not None:
            text = "".join(self._cell)
            if tag == "th":
                self.header.append(text)
            elif self._row is not None:
                self._row["cells"].append(text)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None
        elif tag == "table":
            self._in_questions = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None and not self._depth:
            self._cell.append(data)


def page_of(folder: Path) -> str:
    # bytes decoded: `read_text` would turn a "\r" of the run's text into "\n"
    return (folder / "report.html").read_bytes().decode("utf-8")


def metric_row(page: str, name: str) -> str:
    """The `<tr>` of one metric in a metrics table."""
    found = re.search(rf"<tr><td>{re.escape(name)}</td>.*?</tr>", page)
    assert found, f"no table row for {name}"
    return found.group(0)


def static_part(page: str) -> str:
    """The page before its embedded JSON rows and script (what shows with JavaScript off)."""
    return page.split('<script type="application/json"', 1)[0]


def embedded(page: str, element_id: str) -> Any:
    """The JSON embedded as ``<script type="application/json" id=...>``."""
    m = re.search(rf'<script type="application/json" id="{element_id}">(.*?)</script>', page,
                  re.S)
    assert m, f"no #{element_id}"
    return json.loads(m.group(1))


def grounded_cell(q: QuestionResult) -> str:
    text = verdict_text(q.checks.grounded)
    reason = q.scores.get("groundedness_reason")
    return f"{text} ({reason})" if reason else text


def rank_cell(q: QuestionResult) -> str:
    rank = q.retrieval.get("rank")
    return "—" if rank is None else "absent" if rank == 0 else str(rank)


# --- a small run built in memory --------------------------------------------------------

WARRANTY = "How long is the warranty?"
CHUNKS = [
    Chunk(chunk_id="d::chunk-001", doc_id="d", text="The warranty lasts two years from delivery."),
    Chunk(chunk_id="d::chunk-002", doc_id="d", text="The budget is 5000 euros."),
    Chunk(chunk_id="d::chunk-003", doc_id="d", text="Shipping takes 3 days."),
]


def tiny(k: int = 3, *, question: str = WARRANTY, answer: str = "Two years [d::chunk-001]",
         run_id: str = "tiny", chunks: list[Chunk] | None = None,
         reanchor: bool = False) -> RunResult:
    """Five questions, evaluated at top_k ``k``:

    - q1 answerable: gold chunk-001 ranked 2nd (found at k=3, not at k=1), right answer;
    - q2 answerable: gold ranked 1st, wrong number (not grounded, not right);
    - q3 unanswerable, declined (grounded and right; found not applicable);
    - q4 answerable without a prediction (not measured);
    - q5 answerable: gold never retrieved (rank "absent").
    """
    chunks = chunks or CHUNKS
    c1, c2, c3 = (c.chunk_id for c in chunks)
    questions = [
        Question(question_id="q1", question=question, answerable=True, must_contain=["two years"]),
        Question(question_id="q2", question="Budget?", answerable=True, must_contain=["5000"]),
        Question(question_id="q3", question="Who is the CEO?", answerable=False),
        Question(question_id="q4", question="Never answered?", answerable=True),
        Question(question_id="q5", question="Shipping time?", answerable=True,
                 must_contain=["3 days"]),
    ]
    # With `reanchor`, q1's label points at chunk-002, whose text lacks the required terms:
    # the anchoring moves it to chunk-001 and the run reports it.
    label = GoldEvidence(chunk_id=c2 if reanchor else c1, required_terms=["two years"])
    gold = [
        GoldRecord(question_id="q1", gold_evidence=[label]),
        GoldRecord(question_id="q2", gold_evidence=[GoldEvidence(chunk_id=c2)]),
        GoldRecord(question_id="q3", gold_evidence=[]),
        GoldRecord(question_id="q4", gold_evidence=[GoldEvidence(chunk_id=c3)]),
        GoldRecord(question_id="q5", gold_evidence=[GoldEvidence(chunk_id=c3)]),
    ]
    predictions = [
        Prediction(question_id="q1",
                   retrieved=[RetrievedChunk(chunk_id=c3, score=0.9),
                              RetrievedChunk(chunk_id=c1, score=0.5)],
                   answer=Answer(text=answer, status="supported",
                                 citations=[Citation(chunk_id=c1, page=3)])),
        Prediction(question_id="q2", retrieved=[RetrievedChunk(chunk_id=c2, score=0.9)],
                   answer=Answer(text="It is 4000.", status="supported",
                                 citations=[Citation(chunk_id=c2)])),
        Prediction(question_id="q3", retrieved=[RetrievedChunk(chunk_id=c3, score=0.1)],
                   answer=Answer(text="I don't know", status="abstained")),
        Prediction(question_id="q5", retrieved=[RetrievedChunk(chunk_id=c2, score=0.4)],
                   answer=Answer(text="3 days", status="supported",
                                 citations=[Citation(chunk_id=c2)])),
    ]
    cfg = EvalConfig(pipeline={"top_k": k}, metrics={"bootstrap_resamples": 100})
    return evaluate_rag(questions, gold, predictions, chunks, cfg, run_id=run_id)


def written(result: RunResult, folder: Path) -> tuple[Path, str]:
    """Write the run folder; return it and its report page."""
    result.write(folder)
    return folder, page_of(folder)


@pytest.fixture(scope="module")
def tiny3(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunResult, Path, str]:
    result = tiny(3)
    folder, page = written(result, tmp_path_factory.mktemp("tiny3") / "run")
    return result, folder, page


# --- the real run -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunResult, Path]:
    """The shipped fixture evaluated once into a temporary output root (from another cwd:
    the config's paths are relative to the config file)."""
    out = tmp_path_factory.mktemp("runs")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(out)
        got = run_evaluation(load_config(CONFIG), run_id="html", output_root=out)
    # `run_evaluation` returns the result (its `folder` set); older versions a pair.
    result, folder = got if isinstance(got, tuple) else (got, got.folder)
    assert folder == out / "html"
    return result, folder


def test_real_run_lists_every_question_with_its_text(real_run: tuple[RunResult, Path]) -> None:
    result, run_dir = real_run
    page = page_of(run_dir)
    assert len(result.questions) == 16
    for q in result.questions:
        assert f'<td class="ids">{html.escape(q.question_id)}</td>' in page
        assert html.escape(q.question) in page  # Korean, German and English alike
    assert '<meta charset="utf-8">' in page
    assert "한빛시" in page
    parsed = Page(page)
    assert parsed.problems == []
    assert [r["cells"][0] for r in parsed.rows] == [
        q.question_id for q in failing_first(result.questions)]  # failing questions first


def test_real_run_has_one_svg_per_chart(real_run: tuple[RunResult, Path]) -> None:
    page = page_of(real_run[1])
    # retrieval means, answer means, failure labels
    assert page.count("<svg") == 3
    assert page.count("</svg>") == 3
    # the two JSON blocks (rows, chunk texts) and the one script, nothing loaded from outside
    assert page.count("<script") == 3 and "<script src" not in page
    assert "http" not in page.split("</head>")[0] and "http" not in page.split("<script>")[-1]


def test_real_run_failure_line_and_highlighted_rows(real_run: tuple[RunResult, Path]) -> None:
    result, run_dir = real_run
    page = page_of(run_dir)
    counts = result.metrics.failures["counts"]
    assert len(counts) == len(LABELS)
    fired = sum(1 for n in counts.values() if n > 0)
    assert f"{fired} of {len(LABELS)} labels fired" in page
    failing = [q for q in result.questions if q.failures]
    assert failing and len(failing) < 16
    assert page.count('<tbody class="q fail">') == len(failing)
    assert page.count('<tbody class="q">') == 16 - len(failing)
    assert page.count("<details>") == 16
    assert html.escape(result.totals.line()) in page


def test_real_run_lists_reanchored_gold(real_run: tuple[RunResult, Path]) -> None:
    result, run_dir = real_run
    page = page_of(run_dir)
    moved = result.metrics.gold["reanchored"]
    assert moved, "the fixture carries re-anchored gold"
    assert html.escape(gold_line(result.metrics.gold)) in page
    assert "15 labels: 13 ok, 1 split, 1 lost_in_parsing" in page
    for m in moved:
        assert html.escape(m["reason"]) in page


def test_real_run_is_byte_identical_across_calls(real_run: tuple[RunResult, Path],
                                                 tmp_path: Path) -> None:
    result, run_dir = real_run
    assert render_html(result) == render_html(result)
    first = write_html(run_dir, tmp_path / "a.html").read_bytes()
    second = write_html(run_dir, tmp_path / "b.html").read_bytes()
    assert first == second
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.html", "b.html"]  # no temp left
    # The page written with the folder (from memory) is the page of the folder read back.
    assert first == (run_dir / "report.html").read_bytes()
    assert first.decode("utf-8") == render_html(result)


def test_real_run_write_html_default_path_and_rewrite(real_run: tuple[RunResult, Path]
                                                     ) -> None:
    run_dir = real_run[1]
    before = (run_dir / "report.html").read_bytes()
    out = write_html(run_dir)
    assert out == run_dir / "report.html"
    assert out.read_bytes() == before
    assert write_html(run_dir).read_bytes() == before  # its own report.html is not an input
    assert before.decode("utf-8") == render_html(read_run_folder(run_dir))
    assert not [p for p in run_dir.parent.iterdir() if p.name.startswith(".")]


# --- the question table -----------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 3])
def test_found_header_and_check_cells_follow_the_run_k(k: int, tmp_path: Path) -> None:
    result = tiny(k)
    assert result.totals.k == k
    _, page = written(result, tmp_path / "run")
    parsed = Page(page)
    assert parsed.problems == []
    assert parsed.header == ["id", "question", "rank", f"found@{k}", "grounded", "right",
                             "failure labels"]
    other = 3 if k == 1 else 1
    assert f"<th>found@{other}</th>" not in page and "<th>found@5</th>" not in page
    assert len(parsed.rows) == len(result.questions) == 5
    for q, row in zip(failing_first(result.questions), parsed.rows, strict=True):
        ids, text, rank, found, grounded, right, _labels = row["cells"]
        assert (ids, text) == (q.question_id, q.question)
        assert rank == rank_cell(q)
        assert found == verdict_text(q.checks.found), q.question_id
        assert grounded == grounded_cell(q), q.question_id
        assert right == verdict_text(q.checks.right), q.question_id
        assert row["tbody"] == ("q fail" if q.failures else "q")
        assert row["labels"] == list(q.failures)
    # Same predictions, another k: only q1 (gold ranked 2nd) changes its found verdict.
    found = {q.question_id: q.checks.found for q in result.questions}
    assert found == {"q1": k >= 2, "q2": True, "q3": None, "q4": None, "q5": False}
    cells = {r["cells"][0]: r["cells"][3] for r in parsed.rows}
    assert cells == {"q1": "yes" if k >= 2 else "no", "q2": "yes", "q3": "—", "q4": "—",
                     "q5": "no"}


@pytest.mark.parametrize("k", [1, 3])
def test_totals_line_is_on_the_page(k: int, tmp_path: Path) -> None:
    result = tiny(k)
    _, page = written(result, tmp_path / "run")
    line = result.totals.line()
    assert line.startswith(f"found@{k} ")
    assert f"<p><strong>{html.escape(line)}</strong></p>" in page
    # the line is the tally of the very checks the rows show
    again = totals(((q.answerable, q.checks) for q in result.questions), k=k,
                   hit_policy=result.totals.hit_policy)
    assert again == result.totals
    # q1's cited gold is in the context at k=3 only; q2 and q5 cite chunks without the answer
    found, grounded = ("1/3", "1/4") if k == 1 else ("2/3", "2/4")
    assert line == (f"found@{k} {found} (1 not measured) · grounded {grounded} (1 not "
                    "measured) · right 3/4 (1 not measured)")


def test_question_without_prediction_shows_not_measured(
        tiny3: tuple[RunResult, Path, str]) -> None:
    result, _, page = tiny3
    q4 = result.question("q4")
    assert q4.answer is None and q4.not_measured == NO_PREDICTION
    assert q4.checks == Checks()
    block = re.search(r'<tbody class="q[^"]*"><tr class="main"><td class="ids">q4</td>.*?'
                      r"</details></td></tr></tbody>", page, re.S)
    assert block, "no block for q4"
    assert f'<h4>Not measured</h4><p class="nm">{html.escape(NO_PREDICTION)}</p>' in block.group(0)
    assert "<h4>Answer" not in block.group(0)  # no answer, no citations to show
    assert "no retrieved chunks recorded" in block.group(0)
    # the others have an answer section, none says "Not measured"
    assert static_part(page).count("<h4>Not measured</h4>") == 1


def test_question_details(tmp_path: Path) -> None:
    result = tiny(3)
    result.question("q1").gold_rank_in_index = {"d::chunk-001": 7}
    _, page = written(result, tmp_path / "run")
    assert '<td class="num">absent</td>' in page  # q5: its gold was never retrieved
    assert "rank 7 in the whole index" in page
    assert "d::chunk-001</span>, page 3" in page
    assert "No gold chunk for this question." in page  # q3, unanswerable
    assert "<h4>Retrieved (top 2 of 2)</h4>" in page  # q1
    assert page.count("<details>") == 5


def test_failure_line_chart_and_highlighted_rows(tiny3: tuple[RunResult, Path, str]) -> None:
    result, _, page = tiny3
    failures = result.metrics.failures
    counts = failures["counts"]
    fired = {label: n for label, n in counts.items() if n > 0}
    assert fired and len(counts) == len(LABELS)
    assert f"{len(fired)} of {len(LABELS)} labels fired" in page
    with_failures = [q for q in result.questions if q.failures]
    assert failures["questions_with_failures"] == len(with_failures)
    assert f"; {len(with_failures)} of 5 questions have at least one failure" in page
    assert page.count('<tbody class="q fail">') == len(with_failures)
    assert page.count('<tbody class="q">') == 5 - len(with_failures)
    assert page.count("<svg") == 3 and page.count("</svg>") == 3
    chart = page[page.index('aria-label="Failure labels that fired'):]
    chart = chart[:chart.index("</svg>")]
    most = max(fired.values())
    assert most <= 10  # axis step 1: its end is the largest count
    for label, n in fired.items():
        assert f"<title>{label}: {n}</title>" in chart
        assert f'width="{n / most * FAIL_PLOT_W:.1f}"' in chart
    for label in set(counts) - set(fired):  # a label with count 0 gets no bar
        assert f"<title>{label}:" not in chart
    assert chart.count("<rect") == len(fired)
    assert f'<text x="{FAIL_LABEL_W - 8}"' in chart


def test_run_without_failures_draws_no_failure_chart(tmp_path: Path) -> None:
    result = tiny(3)
    for q in result.questions:
        q.failures = {}
    result.metrics.failures = {**result.metrics.failures,
                               "counts": dict.fromkeys(LABELS, 0), "by_category": {},
                               "questions_with_failures": 0}
    _, page = written(result, tmp_path / "run")
    assert f"0 of {len(LABELS)} labels fired" in page and "No failure detected." in page
    assert page.count("<svg") == 2
    assert '<tbody class="q fail">' not in page and page.count('<tbody class="q">') == 5


# --- metrics section --------------------------------------------------------------------


def test_metric_without_mean_is_listed_as_not_measured(
        tiny3: tuple[RunResult, Path, str]) -> None:
    result, _, page = tiny3
    agg = result.metrics.answer["answer_relevancy"]  # no question has expected_terms
    assert agg.mean is None and agg.n == 0 and agg.missing == 5
    row = metric_row(page, "answer_relevancy")
    assert '<td class="num nm">not measured</td>' in row
    assert row.endswith('<td class="num">—</td><td class="num">0</td>'
                        '<td class="num">5</td></tr>')  # no CI, n 0, missing 5
    assert "answer_relevancy: not measured (5 missing)" in page  # its row in the chart
    assert "Not measured: " in page and "answer_relevancy (5 missing)" in page
    measured = [n for n, a in result.metrics.means().items() if a.mean is not None]
    for name in measured:
        assert "not measured" not in metric_row(page, name)


def test_bar_and_whisker_geometry(tmp_path: Path) -> None:
    result = tiny(3)
    result.metrics.retrieval["hit_at_5"] = Aggregate(mean=0.5, n=1, missing=1, ci_low=0.1,
                                                     ci_high=0.4)
    _, page = written(result, tmp_path / "run")
    assert f'<rect x="{LABEL_W}"' in page
    assert f'width="{0.5 * BAR_PLOT_W:.1f}"' in page
    lo, hi = LABEL_W + 0.1 * BAR_PLOT_W, LABEL_W + 0.4 * BAR_PLOT_W
    assert f'd="M{lo:.1f} ' in page and f"H{hi:.1f}M" in page
    assert "hit_at_5: mean 0.500, 95% CI [0.100, 0.400], n 1, missing 1" in page
    assert metric_row(page, "hit_at_5") == (
        '<tr><td>hit_at_5</td><td class="num">0.500</td><td class="num">[0.100, 0.400]</td>'
        '<td class="num">1</td><td class="num">1</td></tr>')
    # an aggregate as evaluate computed it is drawn the same way
    recall = result.metrics.retrieval["recall_at_5"]
    assert recall.mean is not None and recall.ci_low is not None and recall.ci_high is not None
    assert f'width="{min(max(recall.mean, 0), 1) * BAR_PLOT_W:.1f}"' in page
    assert (f"recall_at_5: mean {recall.mean:.3f}, 95% CI [{recall.ci_low:.3f}, "
            f"{recall.ci_high:.3f}], n {recall.n}, missing {recall.missing}") in page


def test_stale_index_warning(tmp_path: Path) -> None:
    fresh = tiny(3)
    assert fresh.metrics.provenance.index["stale"] is None
    _, fresh_page = written(fresh, tmp_path / "fresh")
    stale = tiny(3)
    stale.metrics.provenance.index["stale"] = "source changed: <a>.md"
    _, stale_page = written(stale, tmp_path / "stale")
    assert "index is stale" not in fresh_page
    assert "index is stale" in stale_page and "source changed: &lt;a&gt;.md" in stale_page


def test_reanchored_labels_are_listed(tmp_path: Path) -> None:
    moved_run = tiny(3, reanchor=True)
    moved = moved_run.metrics.gold["reanchored"]
    assert [(m["question_id"], m["labelled_chunk_id"], m["chunk_ids"]) for m in moved] == [
        ("q1", "d::chunk-002", ["d::chunk-001"])]
    moved_run.metrics.gold["reanchored"].append(
        {"question_id": "q5", "labelled_chunk_id": "d::x", "status": "unanchored",
         "chunk_ids": [], "reason": "claim <now> in no chunk"})
    _, page = written(moved_run, tmp_path / "moved")
    assert html.escape(gold_line(moved_run.metrics.gold)) in page
    assert html.escape(moved[0]["reason"]) in page
    assert "claim &lt;now&gt; in no chunk" in page and "(nowhere)" in page
    _, none = written(tiny(3), tmp_path / "none")
    assert "4 labels: 4 ok; every answerable question has usable gold</p></section>" in none


# --- escaping and determinism -----------------------------------------------------------

EVIL = '<script>alert("x")</script>'


def test_script_is_escaped_everywhere(tmp_path: Path) -> None:
    chunks = [c.model_copy(update={"chunk_id": f"{EVIL}{c.chunk_id}"}) for c in CHUNKS]
    result = tiny(3, question=EVIL, answer=EVIL, run_id=EVIL, chunks=chunks)
    q1 = result.question("q1")
    q1.failures = {**q1.failures, "answer_failure.partial_answer": {"why": EVIL}}
    result.metrics.provenance.index["stale"] = EVIL
    result.metrics.gold["reanchored"] = [{"question_id": EVIL, "labelled_chunk_id": EVIL,
                                         "status": EVIL, "chunk_ids": [EVIL], "reason": EVIL}]
    folder, page = written(result, tmp_path / "run")
    assert "<script" not in static_part(page) and EVIL not in page
    # only the page's own three script elements; the JSON rows hold every "<" as \u003c
    assert page.count("<script") == 3 and page.count("</script") == 3 and "<!--" not in page
    data = embedded(page, "rows")
    row = decode_row(data["rows"][0], data["strings"])
    assert row["q"] == EVIL and row["text"] == EVIL and row["id"] == "q1"
    assert row["ev"]["answer_failure.partial_answer"] == {"why": EVIL}
    assert f"{EVIL}d::chunk-003" in [c[1] for c in row["ret"]]
    assert f"{EVIL}d::chunk-003" in embedded(page, "chunks")
    escaped = html.escape(EVIL)
    assert f"<title>ragassay run {escaped}</title>" in page
    assert f'<td class="question">{escaped}</td>' in page
    assert f'<p class="answer">{escaped}</p>' in page
    assert f'<span class="ids">{escaped}d::chunk-001</span>, page 3' in page  # citation
    assert f'<td class="ids">{escaped}d::chunk-003</td>' in page  # retrieved chunk
    # the failure evidence, pretty-printed as JSON, is escaped too
    assert html.escape(json.dumps(EVIL)) in page
    parsed = Page(page)
    assert parsed.problems == [] and parsed.scripts == 3
    assert parsed.rows[0]["cells"][1] == EVIL  # the text survives, as text
    assert write_html(folder).read_bytes().decode("utf-8") == page


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=30, deadline=None)
@given(question=_TEXT.filter(str.strip), answer=_TEXT)
def test_any_text_is_escaped(question: str, answer: str) -> None:
    result = tiny(3, question=question, answer=answer)
    with tempfile.TemporaryDirectory() as tmp:
        folder, page = written(result, Path(tmp) / "run")
        assert write_html(folder).read_bytes().decode("utf-8") == page  # read back: same page
    low = page.lower()
    assert low.count("<script") == 3 and low.count("</script") == 3 and "<!--" not in page
    data = embedded(page, "rows")
    row = decode_row(data["rows"][0], data["strings"])
    assert row["q"] == question and row["text"] == answer
    assert f'<td class="question">{html.escape(question)}</td>' in page
    assert f'<p class="answer">{html.escape(answer or "—")}</p>' in page
    parsed = Page(page)
    assert parsed.problems == []
    assert parsed.rows[0]["cells"][1] == question


def test_page_is_byte_identical_across_calls(tiny3: tuple[RunResult, Path, str],
                                             tmp_path: Path) -> None:
    result, folder, page = tiny3
    assert render_html(result) == render_html(result) == page
    assert render_html(read_run_folder(folder)) == page
    a = write_html(folder, tmp_path / "a.html").read_bytes()
    b = write_html(folder, tmp_path / "b.html").read_bytes()
    assert a == b == page.encode("utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.html", "b.html"]


def test_write_html_default_path_and_rewrite(tmp_path: Path) -> None:
    folder, page = written(tiny(3), tmp_path / "run")
    (folder / "report.html").write_text("stale page", encoding="utf-8")
    out = write_html(folder)
    assert out == folder / "report.html"
    assert out.read_bytes().decode("utf-8") == page
    assert write_html(folder).read_bytes().decode("utf-8") == page
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # no temporary left


# --- a broken run folder ----------------------------------------------------------------


@pytest.fixture()
def run_folder(tmp_path: Path) -> Path:
    return written(tiny(3), tmp_path / "run")[0]


@pytest.mark.parametrize("name", ["metrics.json", "answers.jsonl", "retrieved_chunks.jsonl",
                                  "failure_cases.jsonl"])
def test_missing_file_names_it(run_folder: Path, name: str, tmp_path: Path) -> None:
    (run_folder / name).unlink()
    with pytest.raises(InputError) as err:
        write_html(run_folder, tmp_path / "out.html")
    assert err.value.path.endswith(name)
    assert not (tmp_path / "out.html").exists()


def test_missing_folder_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        write_html(tmp_path / "nowhere")
    assert err.value.path.endswith("metrics.json")


def test_malformed_metrics_names_line(run_folder: Path) -> None:
    (run_folder / "metrics.json").write_text('{\n  "retrieval": {,\n}', encoding="utf-8")
    with pytest.raises(InputError) as err:
        write_html(run_folder)
    assert err.value.path.endswith("metrics.json") and err.value.line == 2


def test_malformed_answers_line_names_line_and_field(run_folder: Path) -> None:
    path = run_folder / "answers.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[2])
    row["checks"] = {"found": "perhaps"}
    lines[2] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        write_html(run_folder)
    assert err.value.path.endswith("answers.jsonl") and err.value.line == 3
    assert err.value.field == "checks.found"
    lines[2] = "{not json"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        write_html(run_folder)
    assert err.value.path.endswith("answers.jsonl") and err.value.line == 3


def test_duplicate_question_id_is_refused(run_folder: Path) -> None:
    path = run_folder / "answers.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 5
    with path.open("a", encoding="utf-8") as fh:
        fh.write(lines[0] + "\n")
    with pytest.raises(InputError) as err:
        write_html(run_folder)
    assert err.value.path.endswith("answers.jsonl")
    assert err.value.line == 6 and err.value.field == "question_id"


# --- a real browser ---------------------------------------------------------------------


@pytest.mark.skipif(BROWSER is None, reason="chromium is not installed")
def test_page_in_a_headless_browser(tmp_path: Path) -> None:
    result = tiny(1, question=EVIL)
    folder, _ = written(result, tmp_path / "run")
    assert BROWSER is not None
    done = subprocess.run(
        [BROWSER, *OFFLINE_SWITCHES, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
         (folder / "report.html").as_uri()],
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    dom = Page(done.stdout)
    assert dom.scripts == 3  # the page's own; the question's <script> stayed text
    assert dom.svgs == 3
    assert dom.header[3] == "found@1"
    ordered = failing_first(result.questions)  # the rows as the script drew them
    assert [r["cells"][0] for r in dom.rows] == [q.question_id for q in ordered]
    assert next(r for r in dom.rows if r["cells"][0] == "q1")["cells"][1] == EVIL
    for q, row in zip(ordered, dom.rows, strict=True):
        assert row["cells"][3:6] == [verdict_text(q.checks.found), grounded_cell(q),
                                     verdict_text(q.checks.right)]
    assert html.escape(result.totals.line()) in done.stdout


def test_embedded_rows_decode_to_the_questions(real_run: tuple[RunResult, Path]) -> None:
    """The compact rows the page's script reads say what the run record says."""
    result, run_dir = real_run
    data = embedded(page_of(run_dir), "rows")
    assert data["k"] == result.totals.k
    rows = [decode_row(r, data["strings"]) for r in data["rows"]]
    for q, r in zip(failing_first(result.questions), rows, strict=True):
        assert r["id"] == q.question_id and r["q"] == q.question and r["topic"] == q.topic
        assert r["c"] == [q.checks.found, q.checks.grounded, q.checks.right]
        assert r["lab"] == list(q.failures) and (r["ev"] or {}) == q.failures
        assert r["gold"] == q.gold_chunk_ids and r["nret"] == len(q.retrieved)
        assert [(x[0], x[1], x[3]) for x in r["ret"]] == [
            (h.rank, h.chunk_id, h.gold) for h in q.retrieved[:len(r["ret"])]]
        assert q.answer is not None and r["text"] == q.answer.text
        assert r["cited"] == q.scores["cited_ids"]
    assert embedded(page_of(run_dir), "chunks") == result.chunk_texts
