"""Index build → save → load round trip, atomic rebuilds, every verification error, staleness."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from builders import ROOT

import ragassay.atomic as atomic
import ragassay.index.staleness as staleness_mod
from ragassay.embed import HashingEmbedder
from ragassay.errors import InputError
from ragassay.index import Index, build_index, fingerprint, index_status, load_index
from ragassay.schema import SCHEMA_VERSION, Chunk, Document

MD = "# 하자보수\n하자보수 기간은 검수 완료일로부터 2년으로 한다. 계약상대자는 무상으로 보수한다.\n"
TXT = "Stadtwerke Lindenau\nDas Kundenportal muss 99,5 % verfügbar sein.\n"
SECTIONED = {"doc_id": "water", "title": "상수도",
             "sections": [{"heading": "개요", "text": "사업 기간은 9개월이다.", "page": 1},
                          {"heading": "별첨", "text": "제출 서류: 제안서, 가격제안서, "
                                                    "사업자등록증, 실적증명서 사본."}]}
PARAMS: dict[str, Any] = {"chunk_size": 40, "overlap": 10, "embedder": "hashing"}


@pytest.fixture
def source(tmp_path: Path) -> Path:
    src = tmp_path / "raw"
    src.mkdir()
    (src / "a.md").write_text(MD, encoding="utf-8")
    (src / "b.txt").write_text(TXT, encoding="utf-8")
    (src / "c.json").write_text(json.dumps(SECTIONED, ensure_ascii=False), encoding="utf-8")
    (src / "notes.xlsx").write_bytes(b"\x00")
    return src


def build(source: Path, out: Path, **kw: Any) -> Index:
    return build_index(source, out, progress=False, **{**PARAMS, **kw})


def status(out: Path, source: Path, **kw: Any) -> str | None:
    return index_status(out, source, **{**PARAMS, **kw})


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def written_layout(data: dict[str, Any]) -> str:
    """index.json as the build writes it: the head indented, then a record per line (the
    layout the loader reads line by line)."""
    head = json.dumps({k: v for k, v in data.items() if k not in ("documents", "chunks")},
                      ensure_ascii=False, indent=1)
    keys = [k for k in ("documents", "chunks") if k in data]
    lists = [f' "{k}": [\n' + ",\n".join(" " + json.dumps(r, ensure_ascii=False)
                                          for r in data[k]) + "\n ]" for k in keys]
    return head[:-2] + ",\n" + ",\n".join(lists) + "\n}\n"


def edit_json(out: Path, change: Callable[[dict[str, Any]], Any], layout: str = "compact"
              ) -> None:
    """Change the decoded index.json and write it back: on one line (read as one JSON
    document), or in the written layout (read line by line)."""
    path = out / "index.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    text = (written_layout(data) if layout == "written"
            else json.dumps(data, ensure_ascii=False))
    path.write_text(text, encoding="utf-8")


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


# --- build and load ------------------------------------------------------------------


def test_build_then_load_round_trip(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "index"
    built = build(source, out)
    loaded = load_index(out)
    assert loaded.meta == built.meta
    assert [d.model_dump() for d in loaded.documents] == [d.model_dump() for d in built.documents]
    assert [c.model_dump() for c in loaded.chunks] == [c.model_dump() for c in built.chunks]
    np.testing.assert_array_equal(loaded.embeddings, built.embeddings)
    assert loaded.embeddings.dtype == np.float32

    assert [d.doc_id for d in loaded.documents] == ["a", "b", "water"]
    b = loaded.meta["build"]
    assert b["chunking"] == {"strategy": "fixed_chars", "chunk_size": 40, "overlap": 10}
    assert (b["num_documents"], b["num_chunks"]) == (3, len(loaded.chunks))
    assert b["skipped"] == ["notes.xlsx"]
    assert loaded.meta["embedding"]["model"] == "hashing-char-2-4-d1024"
    # Row i is chunk i's vector.
    first = loaded.chunks[0]
    np.testing.assert_allclose(loaded.embeddings[0],
                               HashingEmbedder().embed_documents([first.text])[0], atol=1e-7)
    # Sectioned JSON keeps its pages; page-less parts have none.
    water = loaded.chunks_of("water")
    assert water[0].page_span == (1, 1) and water[-1].page_span is None


def test_index_json_is_plain_deterministic_json(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "index"
    build(source, out)
    raw = (out / "index.json").read_text(encoding="utf-8")
    assert raw.endswith("}\n") and "하자보수" in raw  # ensure_ascii=False
    data = json.loads(raw)
    assert list(data) == ["schema_version", "embedding", "build", "documents", "chunks"]
    assert data["schema_version"] == SCHEMA_VERSION
    npy = (out / "embeddings.npy").read_bytes()
    assert data["embedding"]["sha256"] == hashlib.sha256(npy).hexdigest()
    assert data["chunks"][0]["chunk_id"] == "a::chunk-001"
    assert data["chunks"][0]["char_span"] == [0, 40]


def test_rebuild_is_byte_identical(source: Path, tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    build(source, one)
    first = files_of(one)
    build(source, two)
    build(source, one)  # in place, over the old one
    assert files_of(one) == first == files_of(two)
    assert leftovers(tmp_path) == []


def test_progress_bar_path_builds_the_same_index(source: Path, tmp_path: Path) -> None:
    build(source, tmp_path / "quiet")
    build_index(source, tmp_path / "loud", progress=True, batch_size=2, **PARAMS)
    assert files_of(tmp_path / "quiet") == files_of(tmp_path / "loud")


def test_fingerprint_covers_sources_chunking_and_embedder() -> None:
    emb = HashingEmbedder().describe()
    chunking = {"strategy": "fixed_chars", "chunk_size": 40, "overlap": 10}
    base = fingerprint([("a.md", "1"), ("b.txt", "2")], chunking, emb)
    # Order and repeats (several documents of one .jsonl) do not matter.
    assert fingerprint([("b.txt", "2"), ("a.md", "1"), ("a.md", "1")], chunking, emb) == base
    assert fingerprint([("a.md", "1"), ("b.txt", "3")], chunking, emb) != base
    assert fingerprint([("a.md", "1"), ("b.txt", "2")], {**chunking, "overlap": 0}, emb) != base
    other = HashingEmbedder(dimension=512).describe()
    assert fingerprint([("a.md", "1"), ("b.txt", "2")], chunking, other) != base


# --- the Index record ----------------------------------------------------------------


def test_index_lookups() -> None:
    chunks = [Chunk(chunk_id=f"{d}::chunk-{s:03d}", doc_id=d, text=f"{d}{s}", seq=s)
              for d, s in [("x", 2), ("y", 1), ("x", 1)]]
    idx = Index(path=Path("."), meta={}, documents=[Document(doc_id="x"), Document(doc_id="y")],
                chunks=chunks, embeddings=np.zeros((3, 2), dtype=np.float32))
    assert idx.chunk("y::chunk-001").text == "y1"
    assert idx.position("x::chunk-001") == 2
    assert idx.has("x::chunk-002") and not idx.has("x::chunk-003")
    assert [c.seq for c in idx.chunks_of("x")] == [1, 2]  # seq order, not index order
    assert idx.chunks_of("nope") == []
    assert idx.document("y").doc_id == "y" and idx.has_document("x")
    assert not idx.has_document("z")
    with pytest.raises(KeyError):
        idx.chunk("missing")
    with pytest.raises(KeyError):
        idx.document("z")
    with pytest.raises(ValueError, match="duplicate chunk_id"):
        Index(path=Path("."), meta={}, documents=[], chunks=chunks + chunks[:1],
              embeddings=np.zeros((4, 2), dtype=np.float32))


# --- atomic rebuild and refusals -----------------------------------------------------


def test_failed_embedding_keeps_the_old_index(source: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "index"
    build(source, out)
    before = files_of(out)
    (source / "a.md").write_text(MD + "추가 문단.\n", encoding="utf-8")

    def boom(self: HashingEmbedder, texts: list[str]) -> np.ndarray:
        raise RuntimeError("embedding backend crashed")

    monkeypatch.setattr(HashingEmbedder, "embed_documents", boom)
    with pytest.raises(RuntimeError, match="crashed"):
        build(source, out)
    assert files_of(out) == before
    load_index(out)
    assert leftovers(tmp_path) == []


def test_failed_write_keeps_the_old_index_and_removes_the_temp_folder(
        source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "index"
    build(source, out)
    before = files_of(out)
    real = atomic._open_new

    def fail_on_npy(path: Path) -> Any:
        if path.name == "embeddings.npy":
            raise OSError(28, "No space left on device")
        return real(path)

    monkeypatch.setattr(atomic, "_open_new", fail_on_npy)
    with pytest.raises(OSError, match="No space"):
        build(source, out, overlap=5)
    assert files_of(out) == before
    assert leftovers(tmp_path) == []


def test_failed_swap_puts_the_old_index_back(source: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "index"
    build(source, out)
    before = files_of(out)
    real = os.rename

    def fail_moving_new_in(src: Any, dst: Any) -> None:
        if Path(src).name.startswith(".index.tmp-"):
            raise OSError(13, "Permission denied")
        real(src, dst)

    # the two-rename swap (where the atomic exchange is not available)
    monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    monkeypatch.setattr(atomic.os, "rename", fail_moving_new_in)
    with pytest.raises(OSError, match="Permission denied"):
        build(source, out, overlap=5)
    monkeypatch.undo()
    assert files_of(out) == before
    assert leftovers(tmp_path) == []


def test_refuses_an_out_dir_holding_other_files(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "index"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    with pytest.raises(InputError, match=r"other files \(notes\.txt\)"):
        build(source, out)
    assert (out / "notes.txt").read_text() == "keep me"
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="not a folder"):
        build(source, tmp_path / "file")


def test_refuses_an_out_dir_inside_the_source(source: Path) -> None:
    with pytest.raises(InputError, match="inside the source folder"):
        build(source, source / "index")


def test_empty_out_dir_and_missing_parents_are_fine(source: Path, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    build(source, tmp_path / "empty")
    build(source, tmp_path / "deep" / "er" / "index")
    load_index(tmp_path / "deep" / "er" / "index")


def test_no_documents(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "sheet.xlsx").write_bytes(b"\x00")
    with pytest.raises(InputError, match=r"no supported documents \(\.txt .*\.json\)") as exc:
        build(src, tmp_path / "index")
    assert exc.value.path == str(src)
    assert not (tmp_path / "index").exists()


@pytest.mark.parametrize(("kw", "message"), [
    ({"chunk_size": 0}, "chunk_size"),
    ({"overlap": 40}, "overlap"),
    ({"embedder": "nope"}, "unknown embedder"),
    ({"embedder_params": {"dims": 3}}, "bad parameters"),
])
def test_bad_parameters_fail_before_writing(source: Path, tmp_path: Path, kw: dict[str, Any],
                                            message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build(source, tmp_path / "index", **kw)
    assert not (tmp_path / "index").exists()


# --- load_index verification ---------------------------------------------------------


@pytest.fixture
def built(source: Path, tmp_path: Path) -> Path:
    out = tmp_path / "index"
    build(source, out)
    return out


def load_error(out: Path) -> InputError:
    with pytest.raises(InputError) as exc:
        load_index(out)
    return exc.value


@pytest.mark.parametrize("name", ["index.json", "embeddings.npy"])
def test_missing_file(built: Path, name: str) -> None:
    (built / name).unlink()
    err = load_error(built)
    assert err.path == str(built / name) and "file not found" in err.message


def test_malformed_json(built: Path) -> None:
    (built / "index.json").write_text('{"schema_version": 1,\n "embedding": ', encoding="utf-8")
    err = load_error(built)
    assert "malformed JSON" in err.message and err.line == 2


@pytest.mark.parametrize(("change", "field", "message"), [
    (lambda d: d.update(schema_version=99), "schema_version", "99 is not supported"),
    (lambda d: d.pop("schema_version"), "schema_version", "None is not supported"),
    (lambda d: d["embedding"].pop("dimension"), "embedding.dimension", "missing"),
    (lambda d: d["embedding"].update(dimension="1024"), "embedding.dimension", "expected int"),
    (lambda d: d["build"].pop("fingerprint"), "build.fingerprint", "missing"),
    (lambda d: d.pop("chunks"), "chunks", "missing"),
    (lambda d: d["chunks"][1].pop("text"), "chunks.1.text", "Field required"),
    (lambda d: d["chunks"][2].update(char_span="0-40"), "chunks.2.char_span", ""),
    (lambda d: d["documents"][0].pop("doc_id"), "documents.0.doc_id", "Field required"),
    (lambda d: d["chunks"][1].update(chunk_id=d["chunks"][0]["chunk_id"]), "chunks.1.chunk_id",
     "duplicate chunk_id 'a::chunk-001' (also chunks.0)"),
    (lambda d: d["chunks"][0].update(doc_id="ghost"), "chunks.0.doc_id", "unknown document"),
])
@pytest.mark.parametrize("layout", ["compact", "written"])
def test_bad_index_json_names_the_field(built: Path, change: Callable[[dict[str, Any]], Any],
                                        field: str, message: str, layout: str) -> None:
    edit_json(built, change, layout)
    err = load_error(built)
    assert err.path == str(built / "index.json")
    assert err.field == field and message in err.message
    assert "rebuild with `ragassay index`" in err.message


def test_index_json_read_line_by_line_or_whole_gives_the_same_index(built: Path) -> None:
    path = built / "index.json"
    written = path.read_text(encoding="utf-8")
    assert written_layout(json.loads(written)) == written  # the test's layout is the build's
    streamed = load_index(built)
    edit_json(built, lambda d: None)  # the same data on one line: decoded whole
    whole = load_index(built)
    assert (streamed.meta, streamed.documents, streamed.chunks) == \
        (whole.meta, whole.documents, whole.chunks)
    # a record line broken in place: the whole-file decoder names the line
    path.write_text(written.replace('"seq": ', '"seq" ', 1), encoding="utf-8")
    err = load_error(built)
    assert "malformed JSON" in err.message and err.line is not None and err.line > 5


def test_embeddings_are_a_read_only_map_of_the_file(built: Path) -> None:
    index = load_index(built)
    assert isinstance(index.embeddings, np.memmap) and not index.embeddings.flags.writeable
    assert np.array_equal(index.embeddings, np.load(built / "embeddings.npy"))


def test_row_count_mismatch(built: Path) -> None:
    n = len(load_index(built).chunks)
    edit_json(built, lambda d: d["chunks"].pop())
    err = load_error(built)
    assert err.path == str(built / "embeddings.npy")
    assert err.message == (f"embeddings.npy has {n} rows but index.json lists {n - 1} chunks: "
                           "rebuild with `ragassay index`")


def test_dimension_mismatch(built: Path) -> None:
    edit_json(built, lambda d: d["embedding"].update(dimension=512))
    err = load_error(built)
    assert "vectors have 1024 dimensions" in err.message
    assert "embedding.dimension 512" in err.message


def save_npy(out: Path, array: np.ndarray) -> None:
    with (out / "embeddings.npy").open("wb") as fh:
        np.save(fh, array)


def test_wrong_dtype(built: Path) -> None:
    save_npy(built, load_index(built).embeddings.astype(np.float64))
    assert "dtype is float64, expected float32" in load_error(built).message


def test_sidecar_from_another_build(built: Path) -> None:
    emb = load_index(built).embeddings
    save_npy(built, emb[::-1].copy())  # same shape and dtype, other rows
    err = load_error(built)
    assert "does not match embedding.sha256" in err.message and "another build" in err.message


def test_unreadable_npy(built: Path) -> None:
    (built / "embeddings.npy").write_bytes(b"not numpy")
    assert "not a readable .npy array" in load_error(built).message


def test_one_dimensional_npy(built: Path) -> None:
    save_npy(built, np.zeros(3, dtype=np.float32))
    assert "expected a 2-d array" in load_error(built).message


# --- index_status --------------------------------------------------------------------


def test_status_up_to_date(source: Path, built: Path) -> None:
    assert status(built, source) is None
    assert status(built, source, embedder_params={}) is None
    assert status(built, source, embedder_params={"dimension": 1024,
                                                  "ngram_range": (2, 4)}) is None


def test_status_does_not_depend_on_where_the_sources_are(source: Path, built: Path,
                                                         tmp_path: Path) -> None:
    shutil.copytree(source, tmp_path / "elsewhere")
    assert status(built, tmp_path / "elsewhere") is None


def test_status_missing_and_unreadable(source: Path, built: Path, tmp_path: Path) -> None:
    assert status(tmp_path / "nothing", source) == "missing"
    (built / "index.json").write_text("{", encoding="utf-8")
    reason = status(built, source)
    assert reason is not None and reason.startswith("unreadable: ") and "index.json" in reason


def test_status_parameters_changed(source: Path, built: Path) -> None:
    assert status(built, source, embedder_params={"dimension": 256}) == "embedder changed"
    assert status(built, source, chunk_size=41) == "chunking changed"
    assert status(built, source, overlap=0) == "chunking changed"


def test_status_sources_changed(source: Path, built: Path) -> None:
    (source / "a.md").write_text(MD + "more\n", encoding="utf-8")
    assert status(built, source) == "source changed: a.md"
    (source / "a.md").write_text(MD, encoding="utf-8")
    assert status(built, source) is None
    (source / "new.txt").write_text("new", encoding="utf-8")
    assert status(built, source) == "source changed: new.txt"
    (source / "b.txt").unlink()
    assert status(built, source) == "source changed: b.txt, new.txt"
    for name in ("x.txt", "y.txt"):
        (source / name).write_text(name, encoding="utf-8")
    assert status(built, source) == "source changed: b.txt, new.txt, x.txt (+1 more)"
    (source / "ignored.xlsx").write_bytes(b"\x01")  # unsupported files do not count
    assert status(built, source) == "source changed: b.txt, new.txt, x.txt (+1 more)"


def test_status_source_folder_gone(built: Path, tmp_path: Path) -> None:
    reason = status(built, tmp_path / "gone")
    assert reason is not None and reason.startswith("source unreadable: ")


def test_status_other_loader_version(source: Path, built: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(staleness_mod, "INGEST_VERSION", 10_000)
    assert status(built, source) == "built by another loader version"


# --- import weight -------------------------------------------------------------------



def modules_after(code: str) -> set[str]:
    """The modules loaded by running ``code`` in a fresh interpreter (from the repo root)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    code += "\nimport sys\nprint('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_scoring_modules_use_the_store_only() -> None:
    """Scoring, gold anchoring and diagnosis read chunks: no embedder, loader or HTTP code."""
    loaded = modules_after("import ragassay.diagnose, ragassay.gold, ragassay.predictions")
    assert "ragassay.store" in loaded
    assert not {m for m in loaded
                if m.split(".")[0] == "httpx" or m.startswith(("ragassay.embed",
                                                                "ragassay.ingest",
                                                                "ragassay.index"))}


def test_an_extractive_run_imports_no_http_client(tmp_path: Path) -> None:
    """The offline fixture evaluation (dense retrieval, extractive answers) never loads
    httpx nor the OpenAI-compatible embedder."""
    loaded = modules_after(
        "import ragassay.cli, ragassay.pipeline, ragassay.index\n"
        "from ragassay.config import load_config\n"
        "from ragassay.run import run_evaluation\n"
        "cfg = load_config('configs/eval/rag_quality_v1.yaml')\n"
        f"run_evaluation(cfg, run_id='imports', output_root={str(tmp_path)!r})\n")
    assert {"ragassay.pipeline", "ragassay.retrieve", "ragassay.index.build"} <= loaded
    assert "httpx" not in loaded and "ragassay.embed.openai_compat" not in loaded
