"""`ragassay index`: builds, skips when fresh, refuses bad input with exit code 2."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from ragassay.cli import app

runner = CliRunner()


def test_index_build_then_if_stale(tmp_path: Path) -> None:
    src = tmp_path / "docs"
    src.mkdir()
    (src / "a.md").write_text("# 과업\n하자보수 기간은 2년으로 한다.\n" * 30, encoding="utf-8")
    out = tmp_path / "index"
    result = runner.invoke(app, ["index", "--source", str(src), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    assert (out / "index.json").is_file() and (out / "embeddings.npy").is_file()
    result = runner.invoke(app, ["index", "--source", str(src), "--out", str(out), "--if-stale"])
    assert result.exit_code == 0 and "up to date" in result.output
    (src / "b.txt").write_text("새 문서", encoding="utf-8")
    result = runner.invoke(app, ["index", "--source", str(src), "--out", str(out), "--if-stale",
                                 "-q"])
    assert result.exit_code == 0 and "source changed" in result.output


def test_index_refuses_an_empty_document_and_keeps_the_old_index(tmp_path: Path) -> None:
    src = tmp_path / "docs"
    src.mkdir()
    (src / "a.txt").write_text("지체상금률은 0.5%로 한다.", encoding="utf-8")
    out = tmp_path / "index"
    first = runner.invoke(app, ["index", "--source", str(src), "--out", str(out), "-q"])
    assert first.exit_code == 0
    before = (out / "index.json").read_bytes()
    (src / "empty.txt").write_text("  \n", encoding="utf-8")
    result = runner.invoke(app, ["index", "--source", str(src), "--out", str(out), "-q"])
    assert result.exit_code == 2
    assert "empty.txt" in result.output and "no text" in result.output
    assert (out / "index.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "index"]  # no temp folder left


def test_index_bad_parameters(tmp_path: Path) -> None:
    result = runner.invoke(app, ["index", "--source", str(tmp_path), "--out",
                                 str(tmp_path / "i"), "--chunk-size", "50", "--overlap", "50"])
    assert result.exit_code == 2 and "overlap" in result.output
    result = runner.invoke(app, ["index", "--source", str(tmp_path), "--out",
                                 str(tmp_path / "i"), "--embedder", "nope"])
    assert result.exit_code == 2 and "hashing" in result.output


def test_a_broken_pdf_is_one_line_naming_the_file(tmp_path: Path) -> None:
    src = tmp_path / "docs"
    src.mkdir()
    (src / "a.pdf").write_bytes(b"%PDF-1.4 broken")
    result = CliRunner().invoke(app, ["index", "--source", str(src), "--out",
                                      str(tmp_path / "index")])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "a.pdf: cannot read PDF" in lines[0]
