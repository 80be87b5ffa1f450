"""The evaluation config: contract checks and file:line:field errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import ROOT

from ragassay.config import load_config
from ragassay.errors import InputError

CONTRACT = ROOT / "configs/eval/rag_quality_v1.yaml"


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "c.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def test_contract_config_loads() -> None:
    cfg = load_config(CONTRACT)
    assert cfg.pipeline.name == "naive_baseline"
    assert cfg.pipeline.top_k == 10
    assert cfg.retrieval_cutoffs() == [5, 10]
    assert len(cfg.sha256) == 64


@pytest.mark.parametrize(
    ("key", "value", "line"),
    [
        ("rerank", "true", 6),
        ("retrieval_backend", "hybrid", 7),
        ("metadata_first", "true", 6),
        ("verifier_retry", "true", 6),
        ("query_expansion", "hyde", 6),
    ],
)
def test_contract_violation_names_file_line_field(tmp_path: Path, key: str, value: str,
                                                  line: int) -> None:
    lines = ["index_dir: i", "questions_path: q", "gold_evidence_path: g", "pipeline:",
             "  name: naive_baseline"]
    if key == "retrieval_backend":
        lines.append("  top_k: 10")
    lines.append(f"  {key}: {value}")
    p = write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(InputError) as exc:
        load_config(p)
    assert exc.value.line == line
    assert exc.value.field == f"pipeline.{key}"
    assert str(exc.value).startswith(f"{p}:{line}: field 'pipeline.{key}'")


def test_unknown_pipeline_and_unknown_key(tmp_path: Path) -> None:
    p = write(tmp_path, "index_dir: i\nquestions_path: q\ngold_evidence_path: g\n"
                        "pipeline:\n  name: fancy\n")
    with pytest.raises(InputError, match="unknown pipeline 'fancy'"):
        load_config(p)
    p = write(tmp_path, "index_dir: i\nquestions_path: q\ngold_evidence_path: g\ntop_kk: 3\n")
    with pytest.raises(InputError) as exc:
        load_config(p)
    assert (exc.value.line, exc.value.field) == (4, "top_kk")


def test_missing_required_key_and_bad_metric(tmp_path: Path) -> None:
    p = write(tmp_path, "index_dir: i\nquestions_path: q\n")
    with pytest.raises(InputError) as exc:
        load_config(p)
    assert exc.value.field == "gold_evidence_path"
    p = write(tmp_path, "index_dir: i\nquestions_path: q\ngold_evidence_path: g\nmetrics:\n"
                        "  retrieval:\n    - recall_at_5\n    - recal_at_10\n")
    with pytest.raises(InputError) as exc:
        load_config(p)
    assert (exc.value.line, exc.value.field) == (7, "metrics.retrieval.1")


def test_malformed_yaml_and_bad_types(tmp_path: Path) -> None:
    p = write(tmp_path, "index_dir: [unclosed\n")
    with pytest.raises(InputError, match="malformed YAML"):
        load_config(p)
    p = write(tmp_path, "index_dir: i\nquestions_path: q\ngold_evidence_path: g\n"
                        "pipeline:\n  top_k: 0\n")
    with pytest.raises(InputError) as exc:
        load_config(p)
    assert (exc.value.line, exc.value.field) == (5, "pipeline.top_k")
