"""The evaluation core as a user meets it: the Python API, the run record and its folder,
honest aggregates, the command line's paths, run ids, exit codes and file modes."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from builders import ROOT
from typer.testing import CliRunner

import ragassay
from ragassay import evaluate_rag
from ragassay.cli import app
from ragassay.config import EvalConfig
from ragassay.errors import InputError
from ragassay.reasons import NO_GOLD, NO_TERMS, NOT_CITED
from ragassay.runfolder import check_run_id, read_run_folder
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

SHOP = ROOT / "examples/shop_faq_de"
runner = CliRunner()

CHUNKS = [Chunk(chunk_id="faq::1", doc_id="faq", text="Die Lieferzeit beträgt 3 Werktage."),
          Chunk(chunk_id="faq::2", doc_id="faq", text="Rücksendungen sind 14 Tage möglich."),
          Chunk(chunk_id="faq::3", doc_id="faq", text="Wir liefern nach Österreich.")]


def q(qid: str, must: list[str], answerable: bool = True, terms: list[str] | None = None
      ) -> Question:
    return Question(question_id=qid, question=f"Frage {qid}?", answerable=answerable,
                    must_contain=must, expected_terms=terms or [])


def pred(qid: str, ranked: list[str], text: str, cite: list[str],
         status: str = "supported") -> Prediction:
    return Prediction(question_id=qid,
                      retrieved=[RetrievedChunk(chunk_id=c, score=1 - i / 10)
                                 for i, c in enumerate(ranked)],
                      answer=Answer(text=text, status=status,  # type: ignore[arg-type]
                                    citations=[Citation(chunk_id=c) for c in cite]))


def gold(qid: str, *chunk_ids: str, claim: str | None = None) -> GoldRecord:
    return GoldRecord(question_id=qid, gold_evidence=[
        GoldEvidence(chunk_id=c, doc_id="faq", support_claim=claim) for c in chunk_ids])


QUESTIONS = [q("a", ["3 Werktage"]), q("b", ["14 Tage"], terms=["14"]),
             q("c", [], answerable=False), q("d", ["Österreich"])]
GOLD = [gold("a", "faq::1"), gold("b", "faq::2"), gold("c"), gold("d", "faq::3")]
PREDS = [
    pred("a", ["faq::1", "faq::2"], "3 Werktage.", ["faq::1"]),  # found, grounded, right
    pred("b", ["faq::1", "faq::2"], "30 Tage.", ["faq::2"]),  # found@2, number not in source
    pred("c", ["faq::3"], "Ich weiß es nicht.", [], status="insufficient"),  # declined: right
]  # "d" has no prediction


def test_the_api_scores_records_in_memory_with_hand_checked_verdicts() -> None:
    result = evaluate_rag(QUESTIONS, GOLD, PREDS, CHUNKS, EvalConfig(pipeline={"top_k": 2}))
    verdicts = {r.question_id: (r.checks.found, r.checks.grounded, r.checks.right)
                for r in result.questions}
    assert verdicts == {"a": (True, True, True), "b": (True, False, False),
                        "c": (None, True, True), "d": (None, None, None)}
    assert result.question("b").scores["groundedness_reason"] == "number 30 Tage not in source"
    assert result.question("d").not_measured == "no prediction for this question"
    # found counts answerable questions only; "d" is not measured, never a silent 0
    assert result.totals.line() == ("found@2 2/2 (1 not measured) · grounded 2/3 (1 not "
                                    "measured) · right 2/3 (1 not measured)")
    assert result.metrics.counts.without_prediction == 1
    recall = result.metrics.retrieval["recall_at_5"]
    assert (recall.mean, recall.n, recall.missing) == (1.0, 2, 2)
    assert recall.missing_reasons == {"no prediction for this question": 1,
                                      "unanswerable question (no gold)": 1}


def test_the_api_checks_ids_like_the_file_readers() -> None:
    with pytest.raises(InputError, match="unknown chunk 'faq::9'"):
        evaluate_rag(QUESTIONS, GOLD, [pred("a", ["faq::9"], "x", [])], CHUNKS)
    with pytest.raises(InputError, match="gold for unknown question 'zz'"):
        evaluate_rag(QUESTIONS, [gold("zz", "faq::1")], [], CHUNKS)


def test_a_written_run_reads_back_equal(tmp_path: Path) -> None:
    result = evaluate_rag(QUESTIONS, GOLD, PREDS, CHUNKS, EvalConfig(pipeline={"top_k": 2}))
    folder = result.write(tmp_path / "run")
    assert read_run_folder(folder) == result
    assert json.loads((folder / "metrics.json").read_text())["schema_version"] == 1
    with pytest.raises(InputError, match="already exists"):
        result.write(folder)


def readme_python_block() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## The Python API", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_readme_api_example_gives_the_cli_metrics(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                  ) -> None:
    monkeypatch.chdir(ROOT)
    cli = runner.invoke(app, ["run", "-c", "examples/shop_faq_de/config.yaml", "--k", "3",
                              "--run-id", "faq-api", "--output-root", str(tmp_path), "-q"])
    assert cli.exit_code == 0, cli.output
    # the README's example, exactly as written there, writing into a scratch folder
    code = readme_python_block().replace('"experiments/runs/faq-api"', repr(str(
        tmp_path / "api" / "faq-api")))
    namespace: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102
    result = namespace["result"]
    assert isinstance(result, ragassay.RunResult)
    api = json.loads((tmp_path / "api" / "faq-api" / "metrics.json").read_text())
    written = json.loads((tmp_path / "faq-api" / "metrics.json").read_text(encoding="utf-8"))
    for m in (api, written):  # what the in-memory API cannot know: file hashes and timings
        m.pop("timings")
        m["provenance"].pop("inputs_sha256", None)
        m["provenance"]["index"]["build"].pop("source_dir")
    assert api == written
    assert result.questions == read_run_folder(tmp_path / "faq-api").questions


def test_gold_that_cannot_be_placed_is_not_measured_never_zero() -> None:
    broken = [gold("a", "faq::1"), gold("b", "faq::7", claim="Der Text steht nirgends"),
              gold("c"), gold("d", "faq::3")]
    result = evaluate_rag(QUESTIONS, broken, PREDS, CHUNKS)
    b = result.question("b")
    assert b.scores["hallucination_flag"] is None and b.checks.found is None
    assert b.missing["hallucination_flag"] == NO_GOLD
    assert "evaluation_failure.no_gold_evidence" in b.failures
    assert result.metrics.answer["hallucination_flag"].missing_reasons[NO_GOLD] == 1


def test_fields_the_set_lacks_are_not_applicable_not_failures() -> None:
    result = evaluate_rag(QUESTIONS, GOLD, PREDS, CHUNKS)
    assert result.metrics.not_applicable["answer_relevancy"] == {NO_TERMS: 2}
    assert all("evaluation_failure.metric_missing" not in result.question(i).failures
               for i in "abc")
    # a supported answer that cites nothing keeps citation_accuracy from being measured
    uncited = [pred("a", ["faq::1"], "3 Werktage.", []), *PREDS[1:]]
    a = evaluate_rag(QUESTIONS, GOLD, uncited, CHUNKS).question("a")
    assert a.failures["evaluation_failure.metric_missing"] == {
        "missing": {"citation_accuracy": NOT_CITED}}


@pytest.mark.parametrize("bad", ["", " ", "a/b", "..", ".hidden", "a\nb", "x" * 129])
def test_bad_run_ids_are_refused(bad: str) -> None:
    with pytest.raises(InputError):
        check_run_id(bad)


def test_bad_run_id_exits_2(tmp_path: Path) -> None:
    res = runner.invoke(app, ["run", "-c", str(SHOP / "config.yaml"), "--run-id", "a\nb",
                              "--output-root", str(tmp_path)])
    assert res.exit_code == 2 and "invalid run id" in res.output


def test_command_line_values_apply_before_the_check_from_any_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a config with neither index_dir nor predictions: only the command line completes it
    (tmp_path / "my.yaml").write_text(
        f"questions_path: {SHOP / 'questions.jsonl'}\ngold_evidence_path: gold.jsonl\n"
        "output_root: out\n", encoding="utf-8")
    (tmp_path / "gold.jsonl").write_bytes((SHOP / "gold.jsonl").read_bytes())
    work = tmp_path / "elsewhere"
    work.mkdir()
    (work / "P.jsonl").write_bytes((SHOP / "predictions.jsonl").read_bytes())
    monkeypatch.chdir(work)
    res = runner.invoke(app, ["run", "-c", "../my.yaml", "--predictions", "P.jsonl",
                              "--chunks", str(SHOP / "chunks.jsonl"), "--run-id", "r", "-q"])
    assert res.exit_code == 0, res.output
    metrics = json.loads((tmp_path / "out" / "r" / "metrics.json").read_text())  # config-relative
    assert "../gold.jsonl" in metrics["provenance"]["inputs_sha256"]


def test_run_folder_and_reports_are_readable_by_others(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        result = evaluate_rag(QUESTIONS, GOLD, PREDS, CHUNKS)
        folder = result.write(tmp_path / "run")
        res = runner.invoke(app, ["gate", str(folder), "--bar", "correct >= 0",
                                  "--junit", str(tmp_path / "gate.xml")])
    finally:
        os.umask(old)
    assert res.exit_code == 1  # one question not measured, none allowed
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    for path in [*folder.iterdir(), tmp_path / "gate.xml"]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path


def test_export_trec_goes_into_the_run_folder_and_takes_rows_without_scores(
        tmp_path: Path) -> None:
    unscored = [p.model_copy(update={"retrieved": [RetrievedChunk(chunk_id=h.chunk_id)
                                                   for h in p.retrieved]}) for p in PREDS]
    folder = evaluate_rag(QUESTIONS, GOLD, unscored, CHUNKS, run_id="my run").write(tmp_path / "r")
    res = runner.invoke(app, ["export-trec", str(folder)])
    assert res.exit_code == 0, res.output
    lines = (folder / "trec" / "run.trec").read_text().splitlines()
    assert lines[:2] == ["a Q0 faq::1 1 2.0 my%20run", "a Q0 faq::2 2 1.0 my%20run"]


@pytest.mark.parametrize("k", [1, 3])
def test_exported_trec_files_score_like_the_run(k: int, tmp_path: Path) -> None:
    """Round trip: the shop FAQ (chunk ids with spaces, scores not always in list order)
    exported and scored by `ragassay trec-eval` gives each question's values of the run."""
    cfg = SHOP / "config.yaml"
    res = runner.invoke(app, ["run", "-c", str(cfg), "--k", str(k), "--run-id", "r",
                              "--output-root", str(tmp_path), "-q"])
    assert res.exit_code == 0, res.output
    run = read_run_folder(tmp_path / "r")
    assert any(" " in h.chunk_id for q in run.questions for h in q.retrieved)
    assert runner.invoke(app, ["export-trec", str(tmp_path / "r")]).exit_code == 0
    trec = tmp_path / "r" / "trec"
    res = runner.invoke(app, ["trec-eval", str(trec / "qrels.trec"), str(trec / "run.trec"),
                              "-q", "-m", f"recall.{k}", "-m", f"P.{k}", "-m", f"ndcg_cut.{k}",
                              "-m", "map"])
    assert res.exit_code == 0, res.output
    got: dict[tuple[str, str], float] = {}
    for line in res.stdout.splitlines():
        name, qid, value = (part.strip() for part in line.split("\t"))
        got[(name, qid)] = float(value)
    names = {f"recall_at_{k}": f"recall_{k}", f"precision_at_{k}": f"P_{k}", "map": "map"}
    checked = 0
    for q in run.questions:
        if not q.gold_grades or not q.measured:
            continue
        qid = q.question_id.replace(" ", "%20")
        for ours, theirs in names.items():
            if ours in q.retrieval:
                assert got[(theirs, qid)] == pytest.approx(q.retrieval[ours], abs=5e-5), (
                    q.question_id, ours)
                checked += 1
    assert checked >= 2 * 8


def test_a_bug_is_an_internal_error_not_bad_input(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("boom")

    monkeypatch.setattr("ragassay.core.score_answer", broken)
    args = ["run", "-c", str(SHOP / "config.yaml"), "--output-root", str(tmp_path), "-q"]
    res = runner.invoke(app, args)
    assert res.exit_code == 4 and "internal error: ValueError: boom" in res.output
    assert "Traceback" not in res.output
    res = runner.invoke(app, ["--debug", *args, "--run-id", "d"])
    assert res.exit_code == 4 and "Traceback" in res.output


def test_a_run_folder_without_provenance_is_bad_input(tmp_path: Path) -> None:
    folder = evaluate_rag(QUESTIONS, GOLD, PREDS, CHUNKS).write(tmp_path / "r")
    data = json.loads((folder / "metrics.json").read_text())
    del data["provenance"]
    (folder / "metrics.json").write_text(json.dumps(data))
    res = runner.invoke(app, ["gate", str(folder), "--bar", "correct>=0"])
    assert res.exit_code == 2
    assert "metrics.json: field 'provenance'" in res.output


def test_k_beyond_what_there_is_is_capped_with_a_note(tmp_path: Path) -> None:
    res = runner.invoke(app, ["run", "-c", str(ROOT / "configs/eval/rag_quality_v1.yaml"),
                              "--k", "1000", "--run-id", "big", "--output-root", str(tmp_path),
                              "-q"])
    assert res.exit_code == 0, res.output
    assert "k=1000 is more than the 56 chunks of the index: using k=56" in res.output
    run = read_run_folder(tmp_path / "big")
    assert run.totals.k == 56 and run.metrics.notes
    assert "k=1000 is more than the 56 chunks" in (tmp_path / "big" / "summary.md").read_text()
    # a sweep over a huge range is capped at the longest retrieved list: quick, with a note
    res = runner.invoke(app, ["sweep", "-c", str(SHOP / "config.yaml"), "--k", "1..100000000",
                              "--sweep-id", "s", "--output-root", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "give the same result as" in res.output
    rows = json.loads((tmp_path / "s" / "sweep.json").read_text())["rows"]
    assert [r["k"] for r in rows] == list(range(1, len(rows) + 1)) and len(rows) <= 10


def test_an_output_root_that_is_a_file_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "runs").write_text("not a folder")
    res = runner.invoke(app, ["run", "-c", str(SHOP / "config.yaml"), "--output-root",
                              str(tmp_path / "runs"), "--run-id", "r"])
    assert res.exit_code == 2 and "not a folder" in res.output


def test_a_run_folder_lost_between_two_renames_is_put_back_when_read(tmp_path: Path) -> None:
    folder = evaluate_rag(QUESTIONS, GOLD, PREDS, CHUNKS).write(tmp_path / "r")
    before = read_run_folder(folder)
    # a two-rename replacement killed after moving the old folder aside (pid long gone)
    folder.rename(tmp_path / ".r.old-4194999-00c0ffee")
    res = runner.invoke(app, ["report", str(folder)])
    assert res.exit_code == 0, res.output
    assert read_run_folder(folder) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]


def shop_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    for f in SHOP.iterdir():
        if f.is_file():
            (folder / f.name).write_bytes(f.read_bytes())
    return folder


def test_lenient_turns_unknown_keys_into_notes(tmp_path: Path) -> None:
    shop = shop_copy(tmp_path)
    lines = (shop / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace('"question_id"', '"must_contian": "x", "question_id"')
    (shop / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = ["run", "-c", str(shop / "config.yaml"), "--output-root", str(tmp_path), "-q"]
    strict = runner.invoke(app, [*args, "--run-id", "strict"])
    assert strict.exit_code == 2 and "did you mean must_contain" in strict.output
    lenient = runner.invoke(app, [*args, "--run-id", "lenient", "--lenient"])
    assert lenient.exit_code == 0, lenient.output
    assert "must_contian" in lenient.output
    assert any("must_contian" in n for n in read_run_folder(tmp_path / "lenient").metrics.notes)


def test_gold_that_changes_a_denominator_is_said_on_the_terminal(tmp_path: Path) -> None:
    shop = shop_copy(tmp_path)
    gold = (shop / "gold.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(gold[0])
    first["gold_evidence"] = []
    gold[0] = json.dumps(first, ensure_ascii=False)
    (shop / "gold.jsonl").write_text("\n".join(gold) + "\n", encoding="utf-8")
    res = runner.invoke(app, ["run", "-c", str(shop / "config.yaml"), "--output-root",
                              str(tmp_path), "--run-id", "g", "-q"])
    assert res.exit_code == 0, res.output
    qid = first["question_id"]
    assert f"note: {qid}:" in res.output
    assert f"note: {qid}:" in (tmp_path / "g" / "summary.md").read_text(encoding="utf-8")


def test_destinations_that_are_links_are_refused_not_replaced(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "r").symlink_to(target)
    res = runner.invoke(app, ["run", "-c", str(SHOP / "config.yaml"), "--output-root",
                              str(tmp_path / "runs"), "--run-id", "r", "--force", "-q"])
    assert res.exit_code == 2 and "is a symbolic link" in res.output
    assert (tmp_path / "runs" / "r").is_symlink() and list(target.iterdir()) == []
    link = tmp_path / "index"
    link.symlink_to(target)
    res = runner.invoke(app, ["index", "--source", str(ROOT / "data/raw"), "--out", str(link),
                              "-q"])
    assert res.exit_code == 2 and link.is_symlink() and list(target.iterdir()) == []


def test_a_megabyte_question_is_refused(tmp_path: Path) -> None:
    shop = shop_copy(tmp_path)
    lines = (shop / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[1])
    row["question"] = "Wie lange? " * 100_000
    lines[1] = json.dumps(row, ensure_ascii=False)
    (shop / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = runner.invoke(app, ["run", "-c", str(shop / "config.yaml"), "--output-root",
                              str(tmp_path), "-q"])
    assert res.exit_code == 2 and "questions.jsonl:2: field 'question'" in res.output


def test_one_id_in_nfc_and_nfd_is_one_id_and_the_run_says_so(tmp_path: Path) -> None:
    """``rückgabe-1`` typed on Linux (NFC: ``ü`` is U+00FC) and the same id from a macOS file
    name (NFD: ``u`` + U+0308) are one chunk: the gold and the predictions below write it in
    NFD, the chunk file in NFC; every id is read as NFC, the run scores them as the
    unchanged example does, and metrics.json notes the ids that were changed."""
    import shutil
    import unicodedata

    plain, mixed = tmp_path / "plain", tmp_path / "mixed"
    for folder in (plain, mixed):
        shutil.copytree(SHOP, folder)
    nfd = unicodedata.normalize("NFD", "rückgabe-1")
    assert nfd != "rückgabe-1"
    for name in ("gold.jsonl", "predictions.jsonl"):
        path = mixed / name
        path.write_text(path.read_text("utf-8").replace("rückgabe-1", nfd), "utf-8")
    runs = {}
    for folder in (plain, mixed):
        res = runner.invoke(app, ["run", "-c", str(folder / "config.yaml"), "-q", "--run-id",
                                  "r", "--output-root", str(folder / "runs")])
        assert res.exit_code == 0, res.output
        runs[folder.name] = read_run_folder(folder / "runs" / "r")
    assert runs["mixed"].totals == runs["plain"].totals
    notes = runs["mixed"].metrics.notes
    assert [n for n in notes if "NFC" in n] == [
        "1 id(s) were not in Unicode NFC form and were read as NFC, so that one id written "
        "two ways is one id: 'ru\\u0308ckgabe-1'"]
    assert not [n for n in runs["plain"].metrics.notes if "NFC" in n]


def test_gold_lists_do_not_depend_on_the_order_of_the_questions_file(tmp_path: Path) -> None:
    """``gold.reanchored`` in metrics.json is in question id order: the questions file
    reversed records the same gold summary."""
    import shutil

    folders = {}
    for name in ("as-is", "reversed"):
        folder = tmp_path / name
        shutil.copytree(SHOP, folder)
        gold = folder / "gold.jsonl"
        rows = [json.loads(x) for x in gold.read_text("utf-8").splitlines()]
        for row in rows[1:6:4]:  # two labels whose chunk id is gone: re-anchored by claim
            row["gold_evidence"][0]["chunk_id"] = "gone-" + row["question_id"]
        gold.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                        "utf-8")
        if name == "reversed":
            path = folder / "questions.jsonl"
            lines = path.read_text("utf-8").splitlines()
            path.write_text("".join(x + "\n" for x in reversed(lines)), "utf-8")
        res = runner.invoke(app, ["run", "-c", str(folder / "config.yaml"), "-q", "--run-id",
                                  "r", "--output-root", str(folder / "runs")])
        assert res.exit_code == 0, res.output
        folders[name] = read_run_folder(folder / "runs" / "r").metrics.gold
    assert folders["as-is"] == folders["reversed"]
    ids = [r["question_id"] for r in folders["reversed"]["reanchored"]]
    assert len(ids) == 2 and ids == sorted(ids)
