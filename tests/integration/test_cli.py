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


# --- trec-eval: trec_eval's options, inputs and output ---------------------------------------


def _trec(tmp_path: Path, qrels: bytes | str, run: bytes | str) -> list[str]:
    q, r = tmp_path / "qrels.trec", tmp_path / "run.trec"
    q.write_bytes(qrels if isinstance(qrels, bytes) else qrels.encode())
    r.write_bytes(run if isinstance(run, bytes) else run.encode())
    return ["trec-eval", str(q), str(r)]


QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\nq3 0 d9 1\n"
RUN = "q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.5 t\nq2 Q0 d3 1 0.7 t\nq2 Q0 dx 2 0.1 t\n"


def _names(output: str) -> list[str]:
    return [line.split("\t")[0].strip() for line in output.splitlines()]


def test_trec_eval_families_expand_to_trec_eval_defaults(tmp_path: Path) -> None:
    args = _trec(tmp_path, QRELS, RUN)
    cuts = ["5", "10", "15", "20", "30", "100", "200", "500", "1000"]
    for family, names in [("ndcg_cut", [f"ndcg_cut_{k}" for k in cuts]),
                          ("map_cut", [f"map_cut_{k}" for k in cuts]),
                          ("P", [f"P_{k}" for k in cuts]),
                          ("recall", [f"recall_{k}" for k in cuts]),
                          ("success", ["success_1", "success_5", "success_10"]),
                          ("recip_rank", ["recip_rank"]), ("ndcg", ["ndcg"]),
                          ("P.10,5", ["P_5", "P_10"])]:
        result = runner.invoke(app, [*args, "-m", family])
        assert result.exit_code == 0, result.output
        assert _names(result.stdout) == names, family
    # measures print in trec_eval's order, whatever the order of -m
    result = runner.invoke(app, [*args, "-m", "success.1", "-m", "P.5", "-m", "map"])
    assert _names(result.stdout) == ["map", "P_5", "success_1"]


def test_trec_eval_default_is_the_official_set(tmp_path: Path) -> None:
    result = runner.invoke(app, _trec(tmp_path, QRELS, RUN))
    assert result.exit_code == 0, result.output
    assert _names(result.stdout) == [
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
        "bpref", "recip_rank", *(f"iprec_at_recall_{k / 10:.2f}" for k in range(11)),
        *(f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000))]
    # runid: the tag of the run's last line; both queries find their relevant document
    # at rank 1, so map, gm_map, bpref and every interpolated precision are 1
    assert result.stdout.splitlines()[:10] == [
        "runid                 \tall\tt", "num_q                 \tall\t2",
        "num_ret               \tall\t4", "num_rel               \tall\t2",
        "num_rel_ret           \tall\t2", "map                   \tall\t1.0000",
        "gm_map                \tall\t1.0000", "Rprec                 \tall\t1.0000",
        "bpref                 \tall\t1.0000", "recip_rank            \tall\t1.0000"]


def test_trec_eval_options(tmp_path: Path) -> None:
    args = _trec(tmp_path, QRELS, RUN)
    # -c: q3 (judged, not retrieved) counts 0 in the mean but has no lines of its own
    result = runner.invoke(app, [*args, "-m", "map", "-q", "-c"])
    assert result.stdout == ("map                   \tq1\t1.0000\nmap                   \tq2\t"
                             "1.0000\nmap                   \tall\t0.6667\n")
    # -n: no summary
    result = runner.invoke(app, [*args, "-m", "map", "-q", "-n"])
    assert [line.split("\t")[1] for line in result.stdout.splitlines()] == ["q1", "q2"]
    # -l 2: only q2's d3 (grade 2) is relevant
    result = runner.invoke(app, [*args, "-m", "map", "-m", "num_rel", "-l", "2"])
    assert result.stdout.splitlines() == ["num_rel               \tall\t1",
                                          "map                   \tall\t0.5000"]
    # -M 1 keeps the top document; -J drops the unjudged dx
    result = runner.invoke(app, [*args, "-m", "num_ret", "-M1"])
    assert result.stdout == "num_ret               \tall\t2\n"
    result = runner.invoke(app, [*args, "-m", "num_ret", "-J"])
    assert result.stdout == "num_ret               \tall\t3\n"
    for bad, where in [(["-l", "0"], "-l"), (["-M", "0"], "-M")]:
        result = runner.invoke(app, [*args, *bad])
        assert result.exit_code == 2 and where in result.output


def test_trec_eval_names_unsupported_options_and_measures(tmp_path: Path) -> None:
    args = _trec(tmp_path, QRELS, RUN)
    for option in (["-N", "100"], ["-D", "1"], ["-R", "prefs"], ["-T", "trec_results"],
                   ["-Z", "z.txt"], ["-o"], ["-v"]):
        result = runner.invoke(app, [*args, *option])
        assert result.exit_code == 2, option
        assert f"option {option[0]}" in result.output and "not supported" in result.output
    for measure in ("all_prefs", "prefs_simp"):  # they read preference judgments
        result = runner.invoke(app, [*args, "-m", measure])
        assert result.exit_code == 2 and repr(measure) in result.output
        assert "preference judgments" in result.output


def test_trec_eval_reads_what_trec_eval_reads(tmp_path: Path) -> None:
    qrels = "# judged\nq1 0 d1 1.0\nq1 0 d2 0\n"
    run = "# comment\nq1 Q0 d1 1 0.9 tag extra columns\nq1 Q0 d2 2 0.5 tag\n"
    result = runner.invoke(app, [*_trec(tmp_path, qrels, run), "-m", "P.1"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "P_1                   \tall\t1.0000\n"
    q = tmp_path / "qrels.trec"
    result = runner.invoke(app, ["trec-eval", str(q), "-", "-m", "P.1"], input=run)
    assert result.exit_code == 0 and result.stdout.endswith("1.0000\n"), result.output
    result = runner.invoke(app, ["trec-eval", "-", str(tmp_path / "run.trec"), "-m", "P.1"],
                           input=qrels)
    assert result.exit_code == 0 and result.stdout.endswith("1.0000\n"), result.output


def test_trec_eval_input_errors_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, [*_trec(tmp_path, b"q1 0 d1 1\nq1 0 d\xff 1\n", RUN), "-m",
                                 "map"])
    assert result.exit_code == 2 and "qrels.trec:2" in result.output
    assert "UTF-8" in result.output
    result = runner.invoke(app, [*_trec(tmp_path, "q1 0 d1 1.5\n", RUN), "-m", "map"])
    assert result.exit_code == 2 and "qrels.trec:1" in result.output
    for qrels, run in [("z9 0 d1 1\n", RUN), ("", RUN), (QRELS, ""), (QRELS, "# only\n")]:
        result = runner.invoke(app, [*_trec(tmp_path, qrels, run), "-m", "map"])
        assert result.exit_code == 2, (qrels, run)
        assert "no query" in result.output
