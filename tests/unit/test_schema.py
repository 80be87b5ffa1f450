"""JSONL readers: every bad line is reported with file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragassay.errors import InputError
from ragassay.jsonio import line_of, read_jsonl
from ragassay.schema import GoldRecord, Question


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


Q = {"question_id": "q1", "question": "보증기간은?", "answerable": True}


def test_reads_records_and_remembers_lines(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "q.jsonl", [json.dumps(Q), "", json.dumps({**Q, "question_id":
                                                                           "q2",
                                                                           "must_contain": "2년"})])
    rows = read_jsonl(p, Question, key="question_id")
    assert [r.question_id for r in rows] == ["q1", "q2"]
    assert [line_of(r) for r in rows] == [1, 3]
    assert rows[1].must_contain == ["2년"]  # a single string is a one-item list


def test_malformed_json_line(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "q.jsonl", [json.dumps(Q), '{"question_id": "q2",'])
    with pytest.raises(InputError) as exc:
        read_jsonl(p, Question)
    assert exc.value.line == 2
    assert str(exc.value).startswith(f"{p}:2: malformed JSON")


def test_missing_required_field(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "q.jsonl", [json.dumps({"question_id": "q1", "question": "x"})])
    with pytest.raises(InputError) as exc:
        read_jsonl(p, Question)
    assert (exc.value.line, exc.value.field) == (1, "answerable")


def test_duplicate_key(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "q.jsonl", [json.dumps(Q), json.dumps(Q)])
    with pytest.raises(InputError, match="duplicate question_id 'q1' \\(first on line 1\\)"):
        read_jsonl(p, Question, key="question_id")


def test_nested_field_path(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "g.jsonl", [json.dumps({"question_id": "q1",
                                                       "gold_evidence": [{"doc_id": "a"}]})])
    with pytest.raises(InputError) as exc:
        read_jsonl(p, GoldRecord)
    assert exc.value.field == "gold_evidence.0.chunk_id"


def test_not_an_object_and_missing_file(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "q.jsonl", ["[1, 2]"])
    with pytest.raises(InputError, match="expected a JSON object"):
        read_jsonl(p, Question)
    with pytest.raises(InputError, match="file not found"):
        read_jsonl(tmp_path / "nope.jsonl", Question)


def test_a_record_keeps_its_line_through_copy_and_pickle(tmp_path: Path) -> None:
    import copy
    import pickle

    from ragassay.gold import read_questions

    path = tmp_path / "q.jsonl"
    path.write_text('{"question_id": "a", "question": "x?", "answerable": false}\n\n'
                    '{"question_id": "b", "question": "y?", "answerable": false}\n')
    a, b = read_questions(path)
    assert (line_of(a), line_of(b)) == (1, 3)
    for kept in (a.model_copy(), copy.deepcopy(a), pickle.loads(pickle.dumps(a))):
        assert line_of(kept) == 1 and kept == a
    fresh = Question(question_id="a", question="x?", answerable=False)
    assert line_of(fresh) is None and fresh != a  # the line is part of the record, as before
