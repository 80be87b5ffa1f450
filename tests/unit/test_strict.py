"""Strict inputs at the reader level: no coercion, unknown keys (and the lenient mode), YAML
keys given twice, byte order marks, undecodable bytes, line length, chunk text hashes, gold
that changes a denominator, skipped source files. The CLI side is in test_bad_input.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from builders import ROOT

from ragassay.errors import InputError
from ragassay.gold import anchor_gold, check_gold, gold_warnings
from ragassay.index import load_index, skipped_note
from ragassay.jsonio import iter_jsonl, parse_record, read_json, read_jsonl, read_yaml
from ragassay.schema import (
    Chunk,
    GoldEvidence,
    GoldRecord,
    Prediction,
    Question,
    RetrievedChunk,
    Usage,
)
from ragassay.store import store_of_chunks

Q = {"question_id": "q1", "question": "Wie lange?", "answerable": True}


def field_of(model: type[Any], data: dict[str, Any]) -> str | None:
    with pytest.raises(InputError) as exc:
        parse_record(model, data, "f.jsonl", 3)
    return exc.value.field


@pytest.mark.parametrize("model, data, field", [
    (Question, {**Q, "question_id": 12}, "question_id"),
    (Question, {**Q, "answerable": "true"}, "answerable"),
    (GoldEvidence, {"chunk_id": "a", "grade": "2"}, "grade"),
    (GoldEvidence, {"chunk_id": "a", "grade": 2.5}, "grade"),
    (GoldEvidence, {"chunk_id": "a", "grade": 2.0}, "grade"),
    (GoldEvidence, {"chunk_id": "a", "page_span": [2, 1]}, "page_span"),
    (GoldEvidence, {"chunk_id": 5}, "chunk_id"),
    (RetrievedChunk, {"chunk_id": "a", "score": "0.9"}, "score"),
    (RetrievedChunk, {"chunk_id": "a", "score": True}, "score"),
    (Usage, {"prompt_tokens": -1}, "prompt_tokens"),
    (Usage, {"prompt_tokens": "5"}, "prompt_tokens"),
    (Chunk, {"chunk_id": "a", "doc_id": "d", "text": "t", "page_span": [0, 1]}, "page_span.0"),
    (Chunk, {"chunk_id": "a", "doc_id": "d", "text": "t", "char_span": [5, 2]}, "char_span"),
    (Prediction, {"question_id": "q", "answer": {"status": "supported"}, "latency_ms": "5"},
     "latency_ms"),
])
def test_no_coercion(model: type[Any], data: dict[str, Any], field: str) -> None:
    assert field_of(model, data) == field


def test_numbers_and_tuples_still_load() -> None:
    assert parse_record(RetrievedChunk, {"chunk_id": "a", "score": 1}, "f").score == 1.0
    ev = parse_record(GoldEvidence, {"chunk_id": "a", "page_span": [1, 2], "grade": 0}, "f")
    assert ev.page_span == (1, 2) and ev.grade == 0


def test_unknown_key_with_did_you_mean() -> None:
    with pytest.raises(InputError) as exc:
        parse_record(Question, {**Q, "must_contian": ["x"]}, "q.jsonl", 4)
    assert str(exc.value).startswith("q.jsonl:4: field 'must_contian': unknown field "
                                     "'must_contian'; did you mean must_contain?")
    nested = {"question_id": "q", "gold_evidence": [{"chunk_id": "a"}, {"chunk_id": "b",
                                                                       "supportclaim": "x"}]}
    with pytest.raises(InputError, match="did you mean support_claim"):
        parse_record(GoldRecord, nested, "g.jsonl", 1)
    assert field_of(GoldRecord, nested) == "gold_evidence.1.supportclaim"


def test_usage_keeps_its_source_and_refuses_other_keys() -> None:
    usage = parse_record(Usage, {"prompt_tokens": 3, "source": "counted"}, "p")
    assert usage.model_extra == {"source": "counted"}
    with pytest.raises(InputError, match="did you mean source"):
        parse_record(Usage, {"sorce": "counted"}, "p")
    assert field_of(Prediction, {"question_id": "q", "answer": {"status": "supported"},
                                 "usage": {"tokens": 3}}) == "usage.tokens"


def test_lenient_mode_turns_unknown_keys_into_warnings(tmp_path: Path) -> None:
    p = tmp_path / "g.jsonl"
    p.write_text(json.dumps({"question_id": "q1", "note": "x", "gold_evidence": [
        {"chunk_id": "a", "grdae": 2}]}) + "\n", encoding="utf-8")
    with pytest.raises(InputError):
        read_jsonl(p, GoldRecord)
    warnings: list[str] = []
    [rec] = read_jsonl(p, GoldRecord, lenient=True, warnings=warnings)
    assert rec.gold_evidence[0].grade == 1
    assert warnings == [
        f"{p}:1: field 'gold_evidence.0.grdae': unknown field 'grdae'; did you mean grade? "
        "(known: chunk_id, doc_id, grade, metadata, page_span, previous_chunk_id, "
        "required_terms, support_claim); ignored",
        f"{p}:1: field 'note': unknown field 'note'; known: gold_evidence, metadata, "
        "question_id; ignored",
    ]
    # other errors are still errors
    p.write_text(json.dumps({"question_id": 3, "note": "x", "gold_evidence": []}) + "\n",
                 encoding="utf-8")
    with pytest.raises(InputError) as exc:
        read_jsonl(p, GoldRecord, lenient=True, warnings=[])
    assert exc.value.field == "question_id"


def test_metadata_is_kept() -> None:
    q = parse_record(Question, {**Q, "metadata": {"source": "faq", "n": [1]}}, "q")
    assert q.metadata == {"source": "faq", "n": [1]}


# --- files -------------------------------------------------------------------------------


BOM = b"\xef\xbb\xbf"


def test_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_bytes(BOM + b'{"a": 1}\n{"a": 2}\n')
    assert list(iter_jsonl(tmp_path / "a.jsonl")) == [(1, {"a": 1}), (2, {"a": 2})]
    (tmp_path / "a.json").write_bytes(BOM + b'{"a": 1}')
    assert read_json(tmp_path / "a.json") == {"a": 1}
    (tmp_path / "a.yaml").write_bytes(BOM + b"a: 1\nb: [2]\n")
    assert read_yaml(tmp_path / "a.yaml") == {"a": 1, "b": [2]}


def test_undecodable_byte_names_line_and_offset(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_bytes(b'{"a":\n "x\xff"}')
    with pytest.raises(InputError) as exc:
        read_json(tmp_path / "a.json")
    assert exc.value.line == 2
    assert "byte 0xff at byte 4 of the line, byte 10 of the file" in str(exc.value)
    (tmp_path / "a.yaml").write_bytes(b"a: 1\nb: \xfe\n")
    with pytest.raises(InputError) as exc:
        read_yaml(tmp_path / "a.yaml")
    assert exc.value.line == 2 and "byte 4 of the line" in str(exc.value)
    (tmp_path / "a.jsonl").write_bytes(BOM + b'{"a": "\xff"}\n')
    with pytest.raises(InputError) as exc:
        list(iter_jsonl(tmp_path / "a.jsonl"))
    assert exc.value.line == 1 and "byte 11 of the line" in str(exc.value)  # BOM counted


def test_line_length_limit(tmp_path: Path) -> None:
    p = tmp_path / "a.jsonl"
    p.write_bytes(b'{"a": "xxxx"}\r\n' + b'{"a": "' + b"x" * 100 + b'"}\n')
    assert len(list(iter_jsonl(p, max_line_bytes=200))) == 2
    with pytest.raises(InputError) as exc:
        list(iter_jsonl(p, max_line_bytes=50))
    assert exc.value.line == 2 and "longer than 50 bytes" in str(exc.value)
    # a line of exactly the limit, with or without its line break, is read
    p.write_bytes(b'{"a": 1}\n{"a": 2}')
    assert len(list(iter_jsonl(p, max_line_bytes=8))) == 2


def test_shipped_lines_are_far_below_the_limit() -> None:
    from ragassay.jsonio import MAX_LINE_BYTES

    files = [*ROOT.glob("data/eval/*.jsonl"), *ROOT.glob("examples/*/*.jsonl"),
             ROOT / "data/judge/labelled.jsonl"]
    assert files
    longest = max(len(line) for f in files for line in f.read_bytes().splitlines())
    assert longest * 1000 < MAX_LINE_BYTES


@pytest.mark.parametrize("text, line, field", [
    ("a: 1\nb: 2\na: 3\n", 3, "a"),
    ("p:\n  k: 1\n  j: 2\n  k: 1\n", 4, "p.k"),
    ("l:\n  - x: 1\n    x: 2\n", 3, "l.0.x"),
    ("1: a\n'1': b\n1: c\n", 3, "1"),
])
def test_yaml_duplicate_keys(tmp_path: Path, text: str, line: int, field: str) -> None:
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as exc:
        read_yaml(tmp_path / "c.yaml")
    assert (exc.value.line, exc.value.field) == (line, field)
    assert "duplicate key" in exc.value.message


def test_yaml_merge_keys_are_no_duplicates(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text("base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  x: 3\n",
                                     encoding="utf-8")
    assert read_yaml(tmp_path / "c.yaml")["d"] == {"x": 3, "y": 2}


def test_shipped_configs_have_no_duplicate_keys() -> None:
    configs = [*ROOT.glob("configs/**/*.yaml"), *ROOT.glob("examples/*/*.yaml")]
    assert configs
    for path in configs:
        read_yaml(path)


# --- index: chunk text hashes -------------------------------------------------------------


@pytest.mark.parametrize("name", ["index", "index_use", "index_e5"])
def test_committed_indexes_load_with_their_hashes(name: str) -> None:
    index = load_index(ROOT / "data" / name)
    assert len(index.chunks) == index.meta["build"]["num_chunks"]
    assert index.skipped == []


def test_chunk_text_edited_in_index_json(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(ROOT / "data/index", tmp_path / "i")
    path = tmp_path / "i/index.json"
    data = json.loads(path.read_text("utf-8"))
    assert all(len(c["text_sha256"]) == 64 for c in data["chunks"])
    data["chunks"][7]["text"] += " (edited)"
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_index(tmp_path / "i")
    assert exc.value.field == "chunks.7.text"
    assert data["chunks"][7]["chunk_id"] in exc.value.message


# --- gold that changes a denominator, skipped files ----------------------------------------


def test_gold_warnings() -> None:
    chunks = [Chunk(chunk_id="d::chunk-001", doc_id="d", text="Die Frist beträgt 14 Tage."),
              Chunk(chunk_id="d::chunk-002", doc_id="d", text="Versand kostet 4,90 €.")]
    store = store_of_chunks(chunks, "chunks.jsonl")
    questions = [Question(question_id=f"q{i}", question="?", answerable=i != 5)
                 for i in range(1, 7)]
    gold = check_gold([
        GoldRecord(question_id="q1", gold_evidence=[GoldEvidence(chunk_id="d::chunk-001")]),
        GoldRecord(question_id="q2", gold_evidence=[]),
        GoldRecord(question_id="q3", gold_evidence=[GoldEvidence(
            chunk_id="d::chunk-099", support_claim="Garantie drei Jahre")]),
        GoldRecord(question_id="q4", gold_evidence=[GoldEvidence(
            chunk_id="d::chunk-099", support_claim="Versand kostet 4,90 €.")]),  # re-anchored
        GoldRecord(question_id="q5", gold_evidence=[]),  # unanswerable: no warning
        GoldRecord(question_id="q6", gold_evidence=[GoldEvidence(chunk_id="x"),
                                                    GoldEvidence(chunk_id="y")]),
    ], questions)
    del gold["q1"]
    warnings = gold_warnings(questions, anchor_gold(questions, gold, store))
    assert warnings == [
        "q1: no gold record; the question is not measured for retrieval",
        "q2: gold_evidence is []; the question is not measured for retrieval",
        "q3: gold label d::chunk-099 is in no chunk (chunk id not in the index; no chunk holds "
        "the support_claim); the question is not measured for retrieval",
        "q6: gold labels x, y are in no chunk (x: chunk id not in the index; the label has no "
        "support_claim or required_terms to re-anchor by, y: chunk id not in the index; the "
        "label has no support_claim or required_terms to re-anchor by); the question is not "
        "measured for retrieval",
    ]


def test_skipped_note() -> None:
    assert skipped_note([]) is None
    assert skipped_note(["a.xlsx", "b.csv"]) == (
        "skipped 2 files of unsupported types: a.xlsx, b.csv")
    assert skipped_note([f"{i}.csv" for i in range(12)], shown=2) == (
        "skipped 12 files of unsupported types: 0.csv, 1.csv (+10 more)")
