"""`ragassay import squad|beir|trec|bidmate`: small files written here, imported, indexed and
run end to end; bad layouts named by file and JSON path; --skip-bad; atomic output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from builders import ROOT
from typer.testing import CliRunner

from ragassay.cli import app
from ragassay.jsonio import read_json, read_jsonl
from ragassay.schema import GoldRecord, Question
from ragassay.store import read_chunks

runner = CliRunner()

# Three sentences per paragraph; the second paragraph is long enough for several chunks.
P1 = ("The Ashbrook mill was built in 1742. Its wheel is four metres across. "
      "The millstones ground three hundred kilograms of flour in an hour.")
P2 = ("Honey bees live in colonies with one queen. " + "Workers gather nectar from flowers "
      "all summer long and bring it back to the hive. " * 6 + "A colony needs twenty "
      "kilograms of honey to survive the winter.")


def squad_file(tmp: Path, *, version: str = "v2.0", **overrides: Any) -> Path:
    def qa(qid: str, question: str, context: str, answer: str | None) -> dict[str, Any]:
        if answer is None:
            return {"id": qid, "question": question, "answers": [], "is_impossible": True}
        return {"id": qid, "question": question, "is_impossible": False,
                "answers": [{"text": answer, "answer_start": context.index(answer)}]}

    data = {"version": version, "data": [
        {"title": "Ashbrook mill", "paragraphs": [{"context": P1, "qas": [
            qa("m1", "When was the Ashbrook mill built?", P1, "1742"),
            qa("m2", "How much flour did the millstones grind in an hour?", P1,
               "three hundred kilograms"),
            qa("m3", "Who owned the mill in 1900?", P1, None)]}]},
        {"title": "Honey bees", "paragraphs": [{"context": P2, "qas": [
            qa("b1", "How much honey does a colony need for the winter?", P2,
               "twenty kilograms of honey"),
            qa("b2", "How many queens does a colony have?", P2, "one queen")]}]}]}
    data.update(overrides)
    path = tmp / "squad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def invoke(*args: str) -> Any:
    return runner.invoke(app, [str(a) for a in args])


def index_and_run(out: Path, *extra: str, config: str = "config.yaml") -> dict[str, Any]:
    res = invoke("index", "--source", out / "documents", "--out", out / "index", "-q", *extra)
    assert res.exit_code == 0, res.output
    res = invoke("run", "-c", out / config, "--run-id", "r", "-q")
    assert res.exit_code == 0, res.output
    metrics: dict[str, Any] = read_json(out / "runs/r/metrics.json")
    return metrics


def test_squad_v2_imports_and_runs_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "set"
    res = invoke("import", "squad", squad_file(tmp_path), "--out", out)
    assert res.exit_code == 0, res.output
    questions = {q.question_id: q for q in read_jsonl(out / "questions.jsonl", Question)}
    gold = {g.question_id: g for g in read_jsonl(out / "gold.jsonl", GoldRecord)}
    assert questions["m1"].must_contain == ["1742"] and questions["m1"].answerable
    assert not questions["m3"].answerable and gold["m3"].gold_evidence == []
    label = gold["b1"].gold_evidence[0]
    # The sentence holding the answer is the claim; its chunk at 400/80 is the second one.
    assert label.support_claim == "A colony needs twenty kilograms of honey to survive the winter."
    assert label.chunk_id == "honey-bees-p001::chunk-002" and label.doc_id == "honey-bees-p001"
    assert label.required_terms == ["twenty kilograms of honey"]
    metrics = index_and_run(out)
    assert metrics["gold"]["reanchored"] == []  # placed where the default index puts them
    assert metrics["retrieval"]["recall_at_10"]["n"] == 4


def test_gold_survives_rechunking(tmp_path: Path) -> None:
    out = tmp_path / "set"
    assert invoke("import", "squad", squad_file(tmp_path), "--out", out).exit_code == 0
    metrics = index_and_run(out, "--chunk-size", "90", "--overlap", "20")
    moved = {r["question_id"]: r for r in metrics["gold"]["reanchored"]}
    assert moved, "smaller chunks move the labels"
    assert all(r["chunk_ids"] for r in moved.values())  # every label found its new chunk
    assert metrics["retrieval"]["recall_at_10"]["n"] == 4  # no question lost its gold


def test_chunking_options_place_labels_for_that_index(tmp_path: Path) -> None:
    out = tmp_path / "set"
    res = invoke("import", "squad", squad_file(tmp_path), "--out", out, "--chunk-size", "90",
                 "--overlap", "20")
    assert res.exit_code == 0, res.output
    assert "chunk_size: 90" in (out / "config.yaml").read_text(encoding="utf-8")
    metrics = index_and_run(out, "--chunk-size", "90", "--overlap", "20")
    assert [r for r in metrics["gold"]["reanchored"] if r["status"] != "split"] == []


def test_korquad_v1_layout(tmp_path: Path) -> None:
    ctx = "한강철교는 1900년에 개통되었다. 한강대교는 1917년에 처음 놓였다."
    data = {"version": "KorQuAD_v1.0", "data": [{"title": "한강 다리", "paragraphs": [
        {"context": ctx, "qas": [
            {"id": "k1", "question": "한강철교는 언제 개통되었나?",
             "answers": [{"text": "1900년", "answer_start": ctx.index("1900년")}]},
            {"id": "k2", "question": "한강대교는 언제 놓였나?",
             "answers": [{"text": "1917년", "answer_start": ctx.index("1917년")}]}]}]}]}
    src = tmp_path / "korquad.json"
    src.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "ko"
    assert invoke("import", "squad", src, "--out", out).exit_code == 0
    gold = {g.question_id: g for g in read_jsonl(out / "gold.jsonl", GoldRecord)}
    assert gold["k2"].gold_evidence[0].support_claim == "한강대교는 1917년에 처음 놓였다."
    assert gold["k2"].gold_evidence[0].doc_id == "한강-다리-p001"
    assert read_json(out / "import.json")["format"] == "KorQuAD KorQuAD_v1.0"
    metrics = index_and_run(out)
    assert metrics["retrieval"]["hit_at_5"]["mean"] == 1.0


def test_first_answer_held_by_all_alternatives_is_must_contain(tmp_path: Path) -> None:
    ctx = "The Denver Broncos won the game."
    qa = {"id": "a", "question": "Who won?", "answers": [
        {"text": "The Denver Broncos", "answer_start": 0},
        {"text": "Denver Broncos", "answer_start": 4}]}
    src = tmp_path / "s.json"
    src.write_text(json.dumps({"version": "1.1", "data": [{"title": "Game", "paragraphs": [
        {"context": ctx, "qas": [qa]}]}]}), encoding="utf-8")
    assert invoke("import", "squad", src, "--out", tmp_path / "o").exit_code == 0
    (q,) = read_jsonl(tmp_path / "o/questions.jsonl", Question)
    assert q.must_contain == ["Denver Broncos"]
    assert q.metadata["answers"] == ["The Denver Broncos", "Denver Broncos"]


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(("overrides", "where"), [
    ({"data": {"title": "x"}}, "field 'data': expected a list of articles, got dict"),
    ({"data": [{"title": "t", "paragraphs": [{"context": "c", "qas": [
        {"id": "q", "question": "?", "answers": [{"text": "c", "answer_start": "0"}]}]}]}]},
     "field 'data.0.paragraphs.0.qas.0.answers.0.answer_start': expected an integer"),
    ({"data": [{"title": "t", "paragraphs": [{"qas": []}]}]},
     "field 'data.0.paragraphs.0.context': expected a string, got nothing"),
    ({"data": [{"title": "t", "paragraphs": [{"context": "c", "qas": [
        {"id": "q", "question": "", "answers": []}]}]}]},
     "field 'data.0.paragraphs.0.qas.0.question'"),
    ({"data": [{"title": "t", "paragraphs": [{"context": "c", "qas": [
        {"id": "q", "question": "a?", "answers": []}, {"id": "q", "question": "b?"}]}]}]},
     "field 'data.0.paragraphs.0.qas.1.id': duplicate question id 'q'"),
])
def test_bad_layout_names_file_and_json_path(tmp_path: Path, overrides: dict[str, Any],
                                             where: str) -> None:
    src = squad_file(tmp_path, **overrides)
    res = invoke("import", "squad", src, "--out", tmp_path / "o")
    assert res.exit_code == 2, res.output
    assert str(src) in res.output and where in res.output, res.output
    assert not (tmp_path / "o").exists()


def test_answer_span_mismatch_stops_unless_skip_bad(tmp_path: Path) -> None:
    src = squad_file(tmp_path)
    data = json.loads(src.read_text(encoding="utf-8"))
    data["data"][0]["paragraphs"][0]["qas"][1]["answers"][0]["answer_start"] += 3
    src.write_text(json.dumps(data), encoding="utf-8")
    res = invoke("import", "squad", src, "--out", tmp_path / "o")
    assert res.exit_code == 2
    assert "question 'm2': answer 'three hundred kilograms' does not match the context" in \
        " ".join(res.output.split())
    assert not (tmp_path / "o").exists()
    res = invoke("import", "squad", src, "--out", tmp_path / "o", "--skip-bad")
    assert res.exit_code == 0, res.output
    assert "skipped m2" in res.output
    ids = [q.question_id for q in read_jsonl(tmp_path / "o/questions.jsonl", Question)]
    assert ids == ["m1", "m3", "b1", "b2"]
    (skipped,) = read_json(tmp_path / "o/import.json")["skipped"]
    assert skipped["question_id"] == "m2"
    assert skipped["where"].endswith("data.0.paragraphs.0.qas.1.answers.0")


def test_existing_out_is_refused_and_kept_or_replaced_whole(tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "mine.txt").write_text("keep", encoding="utf-8")
    src = squad_file(tmp_path)
    res = invoke("import", "squad", src, "--out", out)
    assert res.exit_code == 2 and "already exists" in res.output
    assert [p.name for p in out.iterdir()] == ["mine.txt"]
    # A bad file with --force leaves the old folder as it was.
    bad = tmp_path / "bad.json"
    bad.write_text('{"data": [', encoding="utf-8")
    assert invoke("import", "squad", bad, "--out", out, "--force").exit_code == 2
    assert [p.name for p in out.iterdir()] == ["mine.txt"]
    assert invoke("import", "squad", src, "--out", out, "--force").exit_code == 0
    assert not (out / "mine.txt").exists() and (out / "questions.jsonl").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


# --- BEIR and TREC ------------------------------------------------------------------------


CORPUS = [
    {"_id": "d1", "title": "Mills", "text": "The Ashbrook mill was built in 1742. It ground "
     "wheat for the farms around it."},
    {"_id": "d2", "title": "Bees", "text": "A honey bee colony has one queen. Workers gather "
     "nectar."},
    {"_id": "d3", "title": "Lighthouses", "text": "A lighthouse marks a harbour entrance. Its "
     "lens sends a beam far out to sea."},
]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def beir_folder(tmp: Path, qrels: str | None = None) -> Path:
    root = tmp / "beir"
    write_jsonl(root / "corpus.jsonl", CORPUS)
    write_jsonl(root / "queries.jsonl", [{"_id": "1", "text": "When was the mill built?"},
                                         {"_id": "2", "text": "How many queens has a colony?"},
                                         {"_id": "3", "text": "unjudged query"}])
    (root / "qrels").mkdir()
    (root / "qrels/test.tsv").write_text(
        qrels or "query-id\tcorpus-id\tscore\n1\td1\t2\n2\td2\t1\n2\td3\t0\n", encoding="utf-8")
    return root


def test_beir_imports_graded_judgements_and_runs(tmp_path: Path) -> None:
    out = tmp_path / "set"
    res = invoke("import", "beir", beir_folder(tmp_path), "--out", out)
    assert res.exit_code == 0, res.output
    gold = {g.question_id: g for g in read_jsonl(out / "gold.jsonl", GoldRecord)}
    assert sorted(gold) == ["1", "2"]  # query 3 has no judgement
    (label,) = gold["1"].gold_evidence
    assert (label.chunk_id, label.grade) == ("d1::chunk-001", 2)
    assert label.support_claim == "The Ashbrook mill was built in 1742."
    assert [e.doc_id for e in gold["2"].gold_evidence] == ["d2"]  # grade 0 left out
    notes = read_json(out / "import.json")["notes"]
    assert any("grade ≤ 0" in n for n in notes)
    metrics = index_and_run(out)
    assert metrics["gold"]["reanchored"] == []
    assert metrics["retrieval"]["recall_at_5"]["mean"] == 1.0
    assert index_and_run_bm25(out)["retrieval"]["recall_at_5"]["n"] == 2


def test_imported_configs_say_which_extra_they_need(tmp_path: Path) -> None:
    """The BM25 and hybrid configs of an imported set name the bm25 extra and the line that
    installs it (ragassay is not on a public index: the packages themselves, or the clone
    form); the naive baseline needs no extra and says none."""
    out = tmp_path / "set"
    assert invoke("import", "beir", beir_folder(tmp_path), "--out", out).exit_code == 0
    line = ("#   pip install 'bm25s>=0.3' 'kiwipiepy>=0.24'  (the [bm25] extra; in a clone: "
            "pip install -e '.[bm25]')")
    for name in ("config.bm25.yaml", "config.hybrid.yaml"):
        assert line in (out / name).read_text("utf-8").splitlines(), name
    assert "pip install" not in (out / "config.yaml").read_text("utf-8")


def index_and_run_bm25(out: Path) -> dict[str, Any]:
    res = invoke("run", "-c", out / "config.bm25.yaml", "--run-id", "b", "-q")
    assert res.exit_code == 0, res.output
    metrics: dict[str, Any] = read_json(out / "runs/b/metrics.json")
    return metrics


def test_beir_errors_name_file_line_and_field(tmp_path: Path) -> None:
    root = beir_folder(tmp_path, qrels="query-id\tcorpus-id\tscore\n1\tnope\t1\n")
    res = invoke("import", "beir", root, "--out", tmp_path / "o")
    assert res.exit_code == 2 and "judges document 'nope'" in res.output
    root = beir_folder(tmp_path / "b", qrels="query-id\tcorpus-id\tscore\n1\td1\thigh\n")
    res = invoke("import", "beir", root, "--out", tmp_path / "o")
    assert res.exit_code == 2 and "test.tsv:2: field 'score'" in res.output
    write_jsonl(root / "queries.jsonl", [{"_id": "1", "text": 5}])
    (root / "qrels/test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t1\n",
                                         encoding="utf-8")
    res = invoke("import", "beir", root, "--out", tmp_path / "o")
    assert res.exit_code == 2 and "queries.jsonl:1: field 'text': expected a string" in res.output
    res = invoke("import", "beir", root, "--out", tmp_path / "o", "--split", "dev")
    assert res.exit_code == 2 and "splits here: test" in res.output


def test_trec_topics_qrels_and_corpus(tmp_path: Path) -> None:
    topics = tmp_path / "topics.txt"
    topics.write_text("<top>\n<num> Number: 301\n<title> mill built year\n<desc> Description:\n"
                      "When was the Ashbrook mill built?\n</top>\n<top>\n<num> Number: 302\n"
                      "<title> bee queen\n<desc> How many queens has a colony?\n</top>\n",
                      encoding="utf-8")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("301 0 d1 1\n302 0 d2 1\n302 0 d1 0\n", encoding="utf-8")
    corpus = write_jsonl(tmp_path / "corpus.jsonl",
                         [{"doc_id": r["_id"], "title": r["title"], "text": r["text"]}
                          for r in CORPUS])
    out = tmp_path / "set"
    res = invoke("import", "trec", "--qrels", qrels, "--topics", topics, "--corpus", corpus,
                 "--out", out, "--field", "desc")
    assert res.exit_code == 0, res.output
    questions = {q.question_id: q for q in read_jsonl(out / "questions.jsonl", Question)}
    assert questions["301"].question == "When was the Ashbrook mill built?"
    metrics = index_and_run(out)
    assert metrics["retrieval"]["recall_at_5"]["n"] == 2
    res = invoke("import", "trec", "--qrels", qrels, "--topics", topics, "--corpus", corpus,
                 "--out", tmp_path / "t")  # the title by default
    assert res.exit_code == 0, res.output
    assert [q.question for q in read_jsonl(tmp_path / "t/questions.jsonl", Question)] == [
        "mill built year", "bee queen"]
    bad = tmp_path / "q2.txt"
    bad.write_text("301 0 d1\n", encoding="utf-8")
    res = invoke("import", "trec", "--qrels", bad, "--topics", topics, "--corpus", corpus,
                 "--out", tmp_path / "o")
    assert res.exit_code == 2 and "q2.txt:1: expected 4 columns" in res.output


# --- the contract project -------------------------------------------------------------------


def bidmate_project(tmp: Path, *, schema_version: int = 2, raw: bool = True) -> Path:
    root = tmp / "project"
    (root / "configs/eval").mkdir(parents=True)
    (root / "configs/eval/rag_quality_v1.yaml").write_text(
        "schema_version: 1\nname: rag_quality_v1\nindex_dir: data/index\n"
        "questions_path: data/eval/rag_questions.jsonl\n"
        "gold_evidence_path: data/eval/gold_evidence.jsonl\noutput_root: experiments/runs\n"
        "pipeline:\n  name: naive_baseline\n  top_k: 10\n  retrieval_mode: flat\n"
        "  retrieval_backend: dense\n  metadata_first: false\n  rerank: false\n"
        "  verifier_retry: false\n  query_expansion: identity\n"
        "  prompt_profile: minimal_grounded_extractive\n  bm25_tokenizer: regex\n"
        "  bm25_backend: okapi\nmetrics:\n  retrieval: [recall_at_5, recall_at_10]\n"
        "  answer: [faithfulness, answer_relevancy]\n", encoding="utf-8")
    sections = [{"heading": "사업 개요", "text": "기관 A는 품질관리 플랫폼을 구축한다."},
                {"heading": "보안", "text": "로그는 감사 저장소에 1년 이상 보관한다. "
                 "이상 접근은 운영자에게 즉시 알린다."}]
    if raw:
        (root / "data/raw").mkdir(parents=True)
        (root / "data/raw/rfp_a.json").write_text(json.dumps(
            {"doc_id": "rfp-a", "title": "기관 A RFP", "agency": "기관 A", "sections": sections},
            ensure_ascii=False), encoding="utf-8")
    write_jsonl(root / "data/eval/rag_questions.jsonl", [
        {"question_id": "q1", "question": "로그 보관 기간은?", "answerable": True,
         "expected_terms": ["1년 이상"], "difficulty": "easy"},
        {"question_id": "q2", "question": "이상 접근 시 조치는?"},
        {"question_id": "q3", "question": "GPU 모델명은?", "answerable": False}])
    write_jsonl(root / "data/eval/gold_evidence.jsonl", [
        {"question_id": "q1", "gold_evidence": [
            {"doc_id": "rfp-a", "chunk_id": "rfp-a::chunk-002", "required_terms": ["1년 이상"],
             "support_claim": "로그는 감사 저장소에 1년 이상 보관한다.", "source": "manual"}]},
        {"question_id": "q2", "doc_id": "rfp-a", "chunk_id": "rfp-a::chunk-002",
         "support_claim": "이상 접근은 운영자에게 즉시 알린다."},
        {"question_id": "q3", "gold_evidence": []}])
    chunks = [{"chunk_id": f"rfp-a::chunk-{i:03d}", "doc_id": "rfp-a", "title": "기관 A RFP",
               "section": s["heading"], "text": s["text"], "tokens": ["x"],
               "page_span": [i, i], "embedding_idx": i - 1}
              for i, s in enumerate(sections, start=1)]
    (root / "data/index").mkdir(parents=True)
    (root / "data/index/index.json").write_text(json.dumps(
        {"schema_version": schema_version, "embedding": {"backend": "hashing"},
         "build": {"source_dir": "data/raw"}, "documents": [], "chunks": chunks},
        ensure_ascii=False), encoding="utf-8")
    return root


def test_bidmate_project_imports_and_runs(tmp_path: Path) -> None:
    out = tmp_path / "set"
    res = invoke("import", "bidmate", bidmate_project(tmp_path), "--out", out)
    assert res.exit_code == 0, res.output
    report = read_json(out / "import.json")
    keys = {m["key"]: m for m in report["config_keys"]}
    assert keys["pipeline.retrieval_mode"]["status"] == "dropped"  # flat: what ragassay does
    assert keys["pipeline.bm25_tokenizer"]["status"] == "unmapped"
    assert keys["pipeline.bm25_backend"]["status"] == "unmapped"
    assert keys["pipeline.prompt_profile"]["status"] == "dropped"
    assert keys["pipeline.top_k"]["status"] == "mapped"
    assert keys["metrics.answer.1"]["to"] == "metrics.answer: answer_relevancy"
    assert "pipeline.bm25_tokenizer" in res.output  # the table lists every key
    questions = {q.question_id: q for q in read_jsonl(out / "questions.jsonl", Question)}
    assert questions["q2"].answerable and questions["q1"].metadata == {"difficulty": "easy"}
    gold = {g.question_id: g for g in read_jsonl(out / "gold.jsonl", GoldRecord)}
    assert gold["q1"].gold_evidence[0].metadata == {"source": "manual"}
    assert gold["q2"].gold_evidence[0].support_claim == "이상 접근은 운영자에게 즉시 알린다."
    doc = read_json(out / "documents/rfp_a.json")
    assert doc["metadata"] == {"agency": "기관 A"}
    chunks = read_chunks(out / "chunks.jsonl")
    assert [c.chunk_id for c in chunks.chunks] == ["rfp-a::chunk-001", "rfp-a::chunk-002"]
    metrics = index_and_run(out)
    # The project's section chunk ids are not ragassay's: every label re-anchored, none lost.
    assert {r["status"] for r in metrics["gold"]["reanchored"]} <= {"reanchored", "ok",
                                                                    "also_in"}
    assert metrics["retrieval"]["recall_at_5"]["n"] == 2


def test_bidmate_without_documents_rebuilds_them_from_the_index(tmp_path: Path) -> None:
    out = tmp_path / "set"
    res = invoke("import", "bidmate", bidmate_project(tmp_path, raw=False), "--out", out)
    assert res.exit_code == 0, res.output
    doc = read_json(out / "documents/rfp-a.json")
    assert [s["heading"] for s in doc["sections"]] == ["사업 개요", "보안"]
    assert doc["sections"][1]["page"] == 2
    assert index_and_run(out)["retrieval"]["recall_at_5"]["n"] == 2


def test_bidmate_index_of_another_schema_is_named(tmp_path: Path) -> None:
    res = invoke("import", "bidmate", bidmate_project(tmp_path, schema_version=3), "--out",
                 tmp_path / "o")
    assert res.exit_code == 2
    assert "index.json: field 'schema_version': expected schema_version 2" in res.output


# --- the contract's minimums ------------------------------------------------------------------


def contract_set(tmp: Path, *, answerable: int, unanswerable: int, top_k: int = 10,
                 preset: str = "naive_baseline") -> Path:
    """A SQuAD file with that many questions, imported; returns its config."""
    qas = [{"id": f"a{i}", "question": f"When was the mill built ({i})?",
            "answers": [{"text": "1742", "answer_start": P1.index("1742")}]}
           for i in range(answerable)]
    qas += [{"id": f"u{i}", "question": f"Who owned the mill ({i})?", "answers": [],
             "is_impossible": True} for i in range(unanswerable)]
    src = tmp / "c.json"
    src.write_text(json.dumps({"version": "v2.0", "data": [{"title": "Mill", "paragraphs": [
        {"context": P1, "qas": qas}]}]}), encoding="utf-8")
    out = tmp / "set"
    assert invoke("import", "squad", src, "--out", out).exit_code == 0
    assert invoke("index", "--source", out / "documents", "--out", out / "index",
                  "-q").exit_code == 0
    config = out / ("config.yaml" if preset == "naive_baseline" else f"config.{preset}.yaml")
    text = config.read_text(encoding="utf-8").replace("top_k: 10", f"top_k: {top_k}")
    config.write_text(text, encoding="utf-8")
    return config


def contract(config: Path, *args: str) -> SimpleNamespace:
    """The contract command, as a user runs it."""
    proc = subprocess.run([sys.executable, "-m", "eval.naive_rag.run_eval", "--config",
                           str(config), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "COLUMNS": "200", "PYTHONPATH":
                                            os.pathsep.join([str(ROOT / "src"), str(ROOT)])})
    return SimpleNamespace(exit_code=proc.returncode, output=proc.stdout + proc.stderr)


@pytest.mark.parametrize(("answerable", "unanswerable", "message"), [
    (9, 3, "the contract needs at least 10 answerable questions, the file has 9"),
    (10, 2, "the contract needs at least 3 unanswerable questions, the file has 2"),
])
def test_the_contract_command_checks_its_question_minimums(
        tmp_path: Path, answerable: int, unanswerable: int, message: str) -> None:
    config = contract_set(tmp_path, answerable=answerable, unanswerable=unanswerable)
    res = contract(config, "--run-id", "c")
    assert res.exit_code == 2, res.output
    assert f"questions.jsonl: field 'answerable': {message}" in " ".join(res.output.split())
    assert not (config.parent / "runs/c").exists()
    # `ragassay run` is free of the minimums; `--contract` asks for them.
    assert invoke("run", "-c", config, "--run-id", "free", "-q").exit_code == 0
    assert invoke("run", "-c", config, "--run-id", "c", "-q", "--contract").exit_code == 2


def test_the_contract_command_checks_top_k(tmp_path: Path) -> None:
    config = contract_set(tmp_path, answerable=10, unanswerable=3, top_k=5)
    res = contract(config, "--run-id", "c")
    assert res.exit_code == 2
    line = " ".join(res.output.split())
    assert "config.yaml:" in line and "field 'pipeline.top_k': the contract measures " \
        "naive_baseline at top_k 10 (got 5)" in line
    res = contract(config.parent / "config.yaml", "--run-id", "c", "--k", "10")
    assert res.exit_code == 0, res.output  # 10 answerable, 3 unanswerable, k 10: the contract


def test_other_presets_are_free_under_the_contract_command(tmp_path: Path) -> None:
    config = contract_set(tmp_path, answerable=2, unanswerable=0, top_k=3, preset="bm25")
    res = contract(config, "--run-id", "c", "-q")
    assert res.exit_code == 0, res.output


def test_bidmate_predictions_score_against_its_own_chunks(tmp_path: Path) -> None:
    """The project's index read as chunks: its own system's predictions, citing its chunk
    ids, are scored with its labels as they stand (no re-anchoring needed)."""
    out = tmp_path / "set"
    assert invoke("import", "bidmate", bidmate_project(tmp_path), "--out", out).exit_code == 0
    preds = write_jsonl(tmp_path / "preds.jsonl", [
        {"question_id": "q1", "retrieved": [{"chunk_id": "rfp-a::chunk-002", "score": 0.9}],
         "answer": {"text": "1년 이상 보관한다 [rfp-a::chunk-002]", "status": "supported"}},
        {"question_id": "q2", "retrieved": [{"chunk_id": "rfp-a::chunk-001", "score": 0.5}],
         "answer": {"text": "알 수 없습니다", "status": "insufficient"}},
        {"question_id": "q3", "retrieved": [], "answer": {"text": "", "status": "abstained"}}])
    res = invoke("run", "-c", out / "config.yaml", "--chunks", out / "chunks.jsonl",
                 "--predictions", preds, "--run-id", "p", "-q")
    assert res.exit_code == 0, res.output
    metrics = read_json(out / "runs/p/metrics.json")
    assert metrics["gold"]["reanchored"] == []
    assert metrics["retrieval"]["recall_at_5"]["mean"] == 0.5  # q1 found, q2 not


def test_every_annotators_answer_is_an_alternative_and_the_majority_places_the_label(
        tmp_path: Path) -> None:
    # Three annotators: two mark the answer in the second sentence, one in the first.
    ctx = ("The Panthers lost to the Broncos in 2016. "
           "The game was won by the Denver Broncos, 24 to 10.")
    second = ctx.index("Denver Broncos")
    qa = {"id": "a", "question": "Who won the game?", "answers": [
        {"text": "Broncos", "answer_start": ctx.index("Broncos")},  # first sentence
        {"text": "Denver Broncos", "answer_start": second},
        {"text": "the Denver Broncos, 24 to 10", "answer_start": second - 4},
        {"text": "Denver", "answer_start": second}]}
    qb = {"id": "b", "question": "What was the score?", "answers": [
        {"text": "24 to 10", "answer_start": ctx.index("24")}]}
    qc = {"id": "c", "question": "Who lost?", "answers": [
        {"text": "The Panthers", "answer_start": 0}, {"text": "Panthers", "answer_start": 4},
        {"text": "The Panthers lost", "answer_start": 0}]}
    src = tmp_path / "s.json"
    src.write_text(json.dumps({"version": "v2.0", "data": [{"title": "Game", "paragraphs": [
        {"context": ctx, "qas": [qa, qb, qc]}]}]}), encoding="utf-8")
    assert invoke("import", "squad", src, "--out", tmp_path / "o").exit_code == 0
    q = {x.question_id: x for x in read_jsonl(tmp_path / "o/questions.jsonl", Question)}
    gold = {g.question_id: g for g in read_jsonl(tmp_path / "o/gold.jsonl", GoldRecord)}
    # "Denver Broncos" and its longer forms hold "Broncos" or "Denver": those two are left.
    assert q["a"].must_contain == [["Broncos", "Denver"]]
    assert q["a"].metadata["answers"] == ["Broncos", "Denver Broncos",
                                          "the Denver Broncos, 24 to 10", "Denver"]
    # Three of four answers stand in the second sentence: it is the claim, not the first's.
    label = gold["a"].gold_evidence[0]
    assert label.support_claim == "The game was won by the Denver Broncos, 24 to 10."
    assert label.required_terms == ["Denver"] and q["a"].expected_answer == "Denver"
    assert q["b"].must_contain == ["24 to 10"]
    assert q["c"].must_contain == ["Panthers"]
    assert gold["c"].gold_evidence[0].support_claim == "The Panthers lost to the Broncos in 2016."


def test_an_answer_of_another_annotator_makes_the_reply_right(tmp_path: Path) -> None:
    # The first annotator answered "a Fresnel lens", the second quoted more of the sentence;
    # the reply says what the second marked, not the first's words.
    from ragassay.metrics.answer import score_answer
    from ragassay.schema import Answer

    ctx = "From the 1820s many towers received a Fresnel lens made of glass prisms."
    qa = {"id": "f", "question": "What did the towers receive?", "answers": [
        {"text": "a Fresnel lens", "answer_start": ctx.index("a Fresnel")},
        {"text": "Fresnel lens made of glass prisms", "answer_start": ctx.index("Fresnel")}]}
    src = tmp_path / "s.json"
    src.write_text(json.dumps({"version": "v2.0", "data": [{"title": "Lamps", "paragraphs": [
        {"context": ctx, "qas": [qa]}]}]}), encoding="utf-8")
    assert invoke("import", "squad", src, "--out", tmp_path / "o").exit_code == 0
    (q,) = read_jsonl(tmp_path / "o/questions.jsonl", Question)
    assert q.must_contain == [["a Fresnel lens", "Fresnel lens made of glass prisms"]]
    for text, right in (("The Fresnel lens made of glass prisms.", 1), ("A lens.", 0)):
        reply = Answer(text=text, status="supported")
        assert score_answer(q, reply, context_ids=[], gold_ids=[], chunk_texts={}).correct \
            == right


def test_a_sentence_longer_than_two_chunks_is_labelled_where_its_run_starts(
        tmp_path: Path) -> None:
    # 400/80 windows start at 0, 320, 640, 960; the list starts at 351 (in windows 1 and 2)
    # and ends at about 1,240: windows 2..4 hold it, so its label names window 2, and the
    # run finds it there: split, not re-anchored.
    lead = "The harbour has quays and boats. " * 10 + "Fishing is old here. "
    items = ", ".join(f"pier number {i} on the east side" for i in range(1, 28))
    ctx = lead + "The piers are " + items + "."
    qa = {"id": "l", "question": "Which pier comes first?", "answers": [
        {"text": "pier number 1 on", "answer_start": ctx.index("pier number 1 on")}]}
    src = tmp_path / "s.json"
    src.write_text(json.dumps({"version": "v2.0", "data": [{"title": "Piers", "paragraphs": [
        {"context": ctx, "qas": [qa]}]}]}), encoding="utf-8")
    out = tmp_path / "o"
    assert invoke("import", "squad", src, "--out", out).exit_code == 0
    (gold,) = read_jsonl(out / "gold.jsonl", GoldRecord)
    label = gold.gold_evidence[0]
    assert label.support_claim is not None and len(label.support_claim) > 800
    start = ctx.index(label.support_claim)
    assert start == 351 and 1040 < start + len(label.support_claim) <= 1360
    assert label.chunk_id == "piers-p001::chunk-002"
    metrics = index_and_run(out)
    (moved,) = metrics["gold"]["reanchored"]
    assert (moved["status"], moved["chunk_ids"]) == ("split", [
        "piers-p001::chunk-002", "piers-p001::chunk-003", "piers-p001::chunk-004"])


def _bidmate_with_doc_ids(tmp: Path, doc_ids: list[str]) -> Path:
    """A project without source documents, whose index has one chunk per doc id."""
    root = bidmate_project(tmp, raw=False)
    path = root / "data/index/index.json"
    data = json.loads(path.read_text("utf-8"))
    base = data["chunks"][0]
    data["chunks"] = [{**base, "doc_id": d, "chunk_id": f"c{i}", "embedding_idx": i}
                      for i, d in enumerate(doc_ids)]
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return root


def test_bidmate_doc_ids_that_slugify_alike_are_all_kept(tmp_path: Path) -> None:
    """``Foo Bar``, ``foo-bar`` and ``FOO_BAR`` all slugify to ``foo-bar``: the first keeps
    the name, the others get 8 hex digits of their id's SHA-256; three files, three ids."""
    import hashlib

    ids = ["Foo Bar", "foo-bar", "FOO_BAR"]
    out = tmp_path / "set"
    res = invoke("import", "bidmate", _bidmate_with_doc_ids(tmp_path, ids), "--out", out)
    assert res.exit_code == 0, res.output
    files = sorted(p.name for p in (out / "documents").iterdir())
    want = ["foo-bar.json", *(f"foo-bar-{hashlib.sha256(i.encode()).hexdigest()[:8]}.json"
                              for i in ids[1:])]
    assert files == sorted(want)
    assert sorted(read_json(out / "documents" / f)["doc_id"] for f in files) == sorted(ids)


@pytest.mark.parametrize(("doc_id", "says"), [
    ("!!!", "'!!!' has no letter or digit"),
    ("x" * 300, "is 300 bytes as a file name; at most 200"),
])
def test_bidmate_doc_id_that_cannot_name_a_file_is_named(
        tmp_path: Path, doc_id: str, says: str) -> None:
    res = invoke("import", "bidmate", _bidmate_with_doc_ids(tmp_path, ["ok", doc_id]),
                 "--out", tmp_path / "set")
    assert res.exit_code == 2, res.output
    assert says in res.stderr and "field 'doc_id'" in res.stderr
    assert not (tmp_path / "set").exists()
