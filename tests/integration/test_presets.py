"""The retriever presets run through the same harness as the naive baseline."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import ROOT

from ragassay.config import load_config
from ragassay.errors import InputError
from ragassay.run import run_evaluation


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    out = tmp_path_factory.mktemp("presets")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        configs = {"naive_baseline": "configs/eval/rag_quality_v1.yaml",
                   "bm25": "configs/eval/presets/bm25.yaml",
                   "hybrid": "configs/eval/presets/hybrid.yaml",
                   "dense_use": "configs/eval/presets/dense_use.yaml",
                   "dense_e5": "configs/eval/presets/dense_e5.yaml"}
        return {name: run_evaluation(load_config(path), run_id=name,
                                     output_root=out).metrics.model_dump()
                for name, path in configs.items()}


def test_every_preset_is_scored_on_all_questions(runs: dict[str, dict]) -> None:
    for name, metrics in runs.items():
        assert metrics["pipeline"]["name"] == name
        assert metrics["counts"]["questions"] == 16
        assert metrics["retrieval"]["recall_at_10"]["n"] == 13
        assert metrics["provenance"]["index"]["stale"] is None


def test_lexical_retrieval_beats_the_hashing_baseline_on_the_fixture(runs: dict[str, dict]
                                                                    ) -> None:
    naive = runs["naive_baseline"]["retrieval"]
    for name in ("bm25", "hybrid"):
        assert runs[name]["retrieval"]["recall_at_10"]["mean"] >= naive["recall_at_10"]["mean"]
    assert runs["dense_e5"]["provenance"]["index"]["embedding"]["backend"] == "e5-small"
    assert runs["dense_use"]["provenance"]["index"]["embedding"]["backend"] == "use-multilingual"


def test_dense_e5_needs_an_e5_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    cfg = load_config("configs/eval/presets/dense_e5.yaml")
    cfg.index_dir = Path("data/index")
    cfg.source_dir = None
    with pytest.raises(InputError, match="e5-small"):
        run_evaluation(cfg, run_id="x", output_root=tmp_path)


def test_a_preset_fixes_its_keys(tmp_path: Path) -> None:
    text = (ROOT / "configs/eval/presets/bm25.yaml").read_text(encoding="utf-8")
    path = tmp_path / "c.yaml"
    path.write_text(text.replace("retrieval_backend: bm25", "retrieval_backend: dense"),
                    encoding="utf-8")
    with pytest.raises(InputError, match="bm25 requires retrieval_backend: bm25"):
        load_config(path)


def test_large_index_records_approximate_search_recall(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Above the size threshold the index records its HNSW search and recall vs exact, and
    dense retrieval goes through it (the threshold is lowered so the fixture counts as large)."""
    pytest.importorskip("faiss")
    import ragassay.index as index_module
    from ragassay import vector

    monkeypatch.setattr(vector, "ANN_THRESHOLD", 10)
    built = index_module.build_index(ROOT / "data/raw", tmp_path / "idx", progress=False)
    search = built.meta["search"]
    assert search["kind"] == "hnsw" and search["library"] == "faiss-cpu"
    assert 0.9 <= search["recall_at_10_vs_exact"] <= 1.0
    assert index_module.load_index(tmp_path / "idx").meta["search"] == search
    monkeypatch.chdir(ROOT)
    cfg = load_config("configs/eval/rag_quality_v1.yaml")
    cfg.index_dir, cfg.source_dir = tmp_path / "idx", None
    metrics = run_evaluation(cfg, run_id="ann", output_root=tmp_path / "runs").metrics.model_dump()
    assert metrics["retrieval"]["recall_at_10"]["n"] == 13
