"""The columnar TREC reader and the columnar evaluate: the same rows, values and errors as
reading line by line with ``str.split`` and evaluating from dicts (and as pytrec_eval)."""

from __future__ import annotations

import math
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from builders import ROOT

from ragassay.errors import InputError
from ragassay.metrics.columnar import encode_ids, pair_hash, read_table
from ragassay.metrics.columnar import reader as columns
from ragassay.metrics.columnar.reader import _decimals
from ragassay.metrics.ir import evaluate
from ragassay.metrics.trec import read_qrels, read_run


def line_by_line(text: bytes, expected: int, extra: bool) -> list[list[str]]:
    """The reference: bytes.splitlines, UTF-8, str.split, '#' comments, blank lines."""
    rows = []
    for data in text.splitlines():
        fields = data.decode("utf-8").split()
        if not fields or fields[0].startswith("#"):
            continue
        assert len(fields) == expected or (extra and len(fields) > expected)
        rows.append(fields)
    return rows


def random_run(rng: random.Random) -> bytes:
    seps = [" ", "\t", "  ", " \t ", "\x0b", "\x1c"]
    ends = ["\n", "\r\n", "\r"]
    lines = []
    for q in range(rng.randint(1, 6)):
        for d in rng.sample(range(30), rng.randint(1, 12)):
            score = rng.choice([f"{rng.uniform(-5, 5):.{rng.randint(0, 9)}f}", "1e-3", "7",
                                "-0", "+2.5", "1_000", "3.", ".25", repr(rng.random())])
            cols = [f"q{q}", "Q0", f"doc-{d}", str(rng.randint(1, 99)), score, "tag"]
            cols += ["extra"] * rng.randint(0, 2)
            lines.append(rng.choice(seps).join(cols))
        lines += rng.choice([[], [""], ["# a comment"], ["   "]])
    return "".join(line + rng.choice(ends) for line in lines).encode()


@pytest.mark.parametrize("chunk", [1 << 20, 64])
def test_run_reads_as_line_by_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   chunk: int) -> None:
    monkeypatch.setattr(columns, "_CHUNK", chunk)  # many chunks: lines split at their ends
    rng = random.Random(7)
    for i in range(60):
        text = random_run(rng)
        path = tmp_path / f"run{i}"
        path.write_bytes(text)
        expected: dict[str, dict[str, float]] = {}
        for fields in line_by_line(text, 6, extra=True):
            expected.setdefault(fields[0], {})[fields[2]] = float(fields[4])
        got = read_run(path)
        assert got == expected
        assert all(np.signbit(got[q][d]) == np.signbit(v)
                   for q, docs in expected.items() for d, v in docs.items())


def test_qrels_read_float_grades_and_comments(tmp_path: Path) -> None:
    path = tmp_path / "qrels"
    path.write_bytes(b"# judged by hand\nq1 0 d1 1.0\n\nq1 0 d2 0\r\nq2\t0\td3\t-1\nq2 0 d4 3\n")
    assert read_qrels(path) == {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": -1, "d4": 3}}


def test_unicode_whitespace_splits_as_str_split(tmp_path: Path) -> None:
    path = tmp_path / "run"
    path.write_bytes("q1\u00a0Q0 d1 1 0.5 t\nq1 Q0 dé 2 0.25\u3000t\n".encode())
    assert read_run(path) == {"q1": {"d1": 0.5, "dé": 0.25}}


def test_non_ascii_ids_keep_utf8_order(tmp_path: Path) -> None:
    path = tmp_path / "run"
    path.write_bytes("qé Q0 dä 1 1 t\nqé Q0 dz 2 1 t\n".encode())
    t = read_table(path, "run")
    assert [d.decode() for d in t.docid.tolist()] == ["dä", "dz"]


@pytest.mark.parametrize("chunk", [1 << 20, 16])
@pytest.mark.parametrize(("text", "line", "needle"), [
    (b"q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 t\n", 2, "expected 6 columns"),
    (b"q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 nan t\n", 2, "score 'nan' is not a finite number"),
    (b"q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 x1 t\n", 2, "field 'score'"),
    (b"q1 Q0 d1 1 0.5 t\nq1 Q0 d\xff 2 1 t\n", 2, "not UTF-8 text (byte 0xff at column 8)"),
    (b"q1 Q0 d1 1 0.5 t\nq1 Q0 d1 2 0.4 t\nq1 Q0\n", 2,
     "document 'd1' retrieved twice for query 'q1'"),
    (b"# \xe9\nq1 Q0 d1 1 0.5 t\n", 1, "byte 0xe9 at column 3"),
])
def test_run_errors_name_the_first_bad_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            chunk: int, text: bytes, line: int,
                                            needle: str) -> None:
    monkeypatch.setattr(columns, "_CHUNK", chunk)
    path = tmp_path / "run.trec"
    path.write_bytes(text)
    with pytest.raises(InputError) as exc:
        read_table(path, "run")
    assert exc.value.line == line and needle in str(exc.value)
    assert str(exc.value).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize(("text", "line", "needle"), [
    (b"q1 0 d1 1\nq1 0 d2 1.5\n", 2, "grade '1.5' is not an integer"),
    (b"q1 0 d1 1\nq1 0 d2 1 extra\n", 2, "expected 4 columns"),
    (b"q1 0 d1 1\nq1 0 d1 2\n", 2, "document 'd1' judged twice for query 'q1'"),
    (b"q1 0 d1 1e400\n", 1, "not an integer"),
])
def test_qrels_errors(tmp_path: Path, text: bytes, line: int, needle: str) -> None:
    path = tmp_path / "qrels.trec"
    path.write_bytes(text)
    with pytest.raises(InputError) as exc:
        read_table(path, "qrels")
    assert exc.value.line == line and needle in str(exc.value)


def decimals_of(tokens: list[str]) -> tuple[np.ndarray, np.ndarray]:
    ids = encode_ids(tokens)
    return _decimals(ids.view("<u8").reshape(len(ids), -1),
                     np.array([len(t.encode()) for t in tokens]))


def test_decimals_are_read_exactly_as_float() -> None:
    rng = random.Random(3)
    tokens = ["0", "-0", "+1", "5.", ".5", "000123", "0.1", "0.3", "123456789012345",
              "12345678.9012345", "-1234567.8901234", "+.00000000000001", "99999999",
              "100000000", "1234567890123456", "1e5", "-", ".", "1.2.3", "+-1", "inf",
              "12345678901234567", "1-2", "1+", "0.5\x00", "1,5", "٣"]
    tokens += [f"{rng.uniform(-1e6, 1e6):.{rng.randint(0, 9)}f}" for _ in range(20000)]
    values, fast = decimals_of(tokens)
    for token, value, ok in zip(tokens, values.tolist(), fast.tolist(), strict=True):
        if ok:
            assert value == float(token) and np.signbit(value) == np.signbit(float(token))
    assert fast[:14].all() and not fast[14:27].any()
    assert fast[27:].tolist() == [sum(c.isdigit() for c in t) <= 15 and len(t) <= 16
                                  for t in tokens[27:]]


def random_number_text(rng: random.Random) -> str:
    """Decimals with up to 20 characters, some of them not numbers at all."""
    digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 17)))
    if digits and rng.random() < 0.7:
        at = rng.randint(0, len(digits))
        digits = digits[:at] + "." + digits[at:]
    text = rng.choice(["", "", "-", "+"]) + digits
    if rng.random() < 0.1:  # a character that is not a digit, anywhere
        at = rng.randint(0, len(text))
        text = text[:at] + rng.choice("e.-+x_ E") + text[at:]
    return text or "0"


def test_numbers_are_what_float_reads() -> None:
    """Every token, fast or not, reads as float() reads it (a score that float() refuses
    is an error naming it), in 1 and 2 words."""
    rng = random.Random(17)
    tokens = [random_number_text(rng) for _ in range(30000)]
    tokens += ["1e308", "1e309", "-1e-400", "4.9e-324", "2.2250738585072011e-308",
               "0.1000000000000000055511151231257827", "9007199254740993", "1_000", "0x10",
               "nan", "Infinity", "1e", ".e1", "00", "-00.00", "0.5\x00", "1\x002", "٣"]
    ids = encode_ids(tokens)
    words = ids.view("<u8").reshape(len(ids), -1)
    lengths = np.array([len(t.encode()) for t in tokens])
    values, error = columns._numbers(words, lengths, np.arange(1, len(tokens) + 1),
                                     columns._KINDS["run"])
    expected = [float(t) if _is_float(t) else math.nan for t in tokens]
    finite = [math.isfinite(v) for v in expected]
    first_bad = finite.index(False)
    assert error is not None and error[0] == first_bad + 1 and error[2] == "score"
    assert len(values) == first_bad
    for token, got, want in zip(tokens, values.tolist(), expected, strict=False):
        assert got == want and np.signbit(got) == np.signbit(want), token
    good = [t for t, ok in zip(tokens, finite, strict=True) if ok]
    ids = encode_ids(good)
    values, error = columns._numbers(ids.view("<u8").reshape(len(ids), -1),
                                     np.array([len(t.encode()) for t in good]),
                                     np.arange(1, len(good) + 1), columns._KINDS["run"])
    assert error is None
    assert values.tolist() == [float(t) for t in good]
    assert np.signbit(values).tolist() == [math.copysign(1, float(t)) < 0 for t in good]


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def tables_equal(a: columns.Table, b: columns.Table) -> bool:
    return (a.qid.tolist() == b.qid.tolist() and a.docid.tolist() == b.docid.tolist()
            and a.value.tobytes() == b.value.tobytes() and a.line.tolist() == b.line.tolist()
            and a.pairs.tolist() == pair_hash(a.qid, a.docid).tolist())


@pytest.mark.parametrize("chunk", [7, 64, 333])
def test_blocks_parsed_in_threads_read_as_one_block(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     chunk: int) -> None:
    """Many small blocks, parsed two at a time (lines split at block ends, \r\n pairs at
    a block end, comments, blank lines, extra columns, no final line break) give the table
    of one block read serially, and the same first error."""
    rng = random.Random(chunk)
    for i in range(30):
        text = random_run(rng)
        if rng.random() < 0.3:
            text = text.rstrip(b"\r\n")
        if rng.random() < 0.3:  # a bad line somewhere
            lines = text.split(b"\n")
            at = rng.randrange(len(lines))
            lines[at] = rng.choice([b"q1 Q0 x 1 nan t", b"q1 Q0", b"q1 Q0 d\xff 1 1 t"])
            text = b"\n".join(lines)
        path = tmp_path / f"run{i}"
        path.write_bytes(text)
        results = []
        for size, threads in ((1 << 20, 1), (chunk, 2), (chunk, 3)):
            monkeypatch.setattr(columns, "_CHUNK", size)
            monkeypatch.setattr(columns, "_THREADS", threads)
            try:
                results.append(read_table(path, "run"))
            except InputError as exc:
                results.append(str(exc))  # type: ignore[arg-type]
        serial, *threaded = results
        for other in threaded:
            if isinstance(serial, str):
                assert other == serial
            else:
                assert isinstance(other, columns.Table) and tables_equal(other, serial)


def test_blocks_keep_line_breaks_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """A block ends after a line break; a \r at the end of a read waits for the next read,
    where a \n may follow it; a line longer than a read is one block."""
    import io

    monkeypatch.setattr(columns, "_CHUNK", 4)
    framed = [b[1:-9] for b in columns._blocks(io.BytesIO(b"ab\r\ncd\rlonger line\nx"))]
    assert framed == [b"ab\r\n", b"cd\r", b"longer line\n", b"x"]
    assert all(b.startswith(b" ") and b.endswith(b" " + bytes(8))
               for b in columns._blocks(io.BytesIO(b"a\nb\n")))


def test_standard_input_is_read_in_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    qids = [f"q{i % 7}" if i < 300 else f"a-longer-query-id-{i % 7}" for i in range(500)]
    text = b"".join(f"{q} Q0 d{i} 1 0.{i} t\r\n".encode() for i, q in enumerate(qids))
    monkeypatch.setattr(columns, "_CHUNK", 100)  # its arrays double, and widen at row 300
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text)))
    t = read_table("-", "run")
    assert len(t) == 500 and t.line.tolist() == list(range(1, 501))
    assert t.value.tolist() == [float(f"0.{i}") for i in range(500)]
    assert [q.decode() for q in t.qid.tolist()] == qids
    assert t.pairs.tolist() == pair_hash(t.qid, t.docid).tolist()


# --- evaluate from columns ----------------------------------------------------------------

MEASURES = ["ndcg@10", "mrr@10", "recall@100", "map", "P@5", "r_precision", "hit@3", "ndcg"]


def random_case(rng: random.Random) -> tuple[dict, dict]:
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    docs = [f"d{i}" for i in range(25)]
    for q in range(rng.randint(1, 30)):
        qid = rng.choice(["q", "Q", "query-"]) + str(q)
        if rng.random() < 0.9:
            qrels[qid] = {d: rng.randint(-1, 3) for d in rng.sample(docs, rng.randint(1, 8))}
        if rng.random() < 0.9:
            scores = [0.0, 0.5, 1.0, 2.0] if rng.random() < 0.5 else [rng.random()]
            run[qid] = {d: rng.choice(scores) if len(scores) > 1 else rng.random()
                        for d in rng.sample(docs, rng.randint(0, 20))}
    return qrels, run


def as_columns(d: dict) -> tuple[list, list, list]:
    return ([q for q, docs in d.items() for _ in docs], [x for docs in d.values() for x in docs],
            [v for docs in d.values() for v in docs.values()])


@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_columns_give_the_dict_values_bit_for_bit(missing: str) -> None:
    rng = random.Random(11)
    for _ in range(150):
        qrels, run = random_case(rng)
        # columns cannot list a query without documents: the dicts leave it out too
        run = {q: docs for q, docs in run.items() if docs or rng.random() < 0.5}
        ours = evaluate(qrels, run, MEASURES, missing_queries=missing)  # type: ignore[arg-type]
        nonempty = {q: docs for q, docs in run.items() if docs}
        same = evaluate(qrels, nonempty, MEASURES, missing_queries=missing)  # type: ignore[arg-type]
        assert evaluate(tuple(as_columns(qrels)), tuple(as_columns(run)), MEASURES,
                        missing_queries=missing) == same  # type: ignore[arg-type]
        for q_in, r_in in [(as_columns(qrels), run)]:
            got = evaluate(tuple(q_in) if isinstance(q_in, list | tuple) else q_in,
                           tuple(r_in) if isinstance(r_in, list | tuple) else r_in,
                           MEASURES, missing_queries=missing)  # type: ignore[arg-type]
            assert got == ours


def test_columns_agree_with_pytrec_eval() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = random.Random(5)
    names = {"ndcg_cut_10": "ndcg_at_10", "recall_100": "recall_at_100", "map": "map",
             "P_5": "precision_at_5", "recip_rank": "mrr"}
    for _ in range(100):
        qrels, run = random_case(rng)
        run = {q: docs for q, docs in run.items() if docs}
        ref = pytrec_eval.RelevanceEvaluator(qrels, set(names)).evaluate(run)
        got = evaluate(tuple(as_columns(qrels)), tuple(as_columns(run)), list(names.values()),
                       missing_queries="skip")["per_query"]
        assert set(got) == set(ref)
        for qid, values in ref.items():
            for theirs, mine in names.items():
                assert abs(got[qid][mine] - values[theirs]) < 1e-9, (qid, mine)


def test_a_data_frame_is_columns() -> None:
    pd = pytest.importorskip("pandas")
    qrels = pd.DataFrame({"qid": ["q1", "q1", "q2"], "docid": ["a", "b", "c"],
                          "grade": [1, 0, 2]})
    run = pd.DataFrame({"qid": ["q1", "q1", "q2", "q2"], "docid": ["a", "b", "c", "x"],
                        "score": [0.9, 0.8, 0.1, 0.7]})
    res = evaluate(qrels, run, ["mrr", "ndcg@2"])
    assert res["per_query"] == {"q1": {"mrr": 1.0, "ndcg_at_2": 1.0},
                                "q2": {"mrr": 0.5, "ndcg_at_2": pytest.approx(1 / np.log2(3))}}
    with pytest.raises(ValueError, match="missing score"):
        evaluate(qrels, run.rename(columns={"score": "s"}), ["mrr"])


def test_bad_columns_are_refused() -> None:
    qrels = (["q1"], ["a"], [1])
    with pytest.raises(ValueError, match="document 'a' appears more than once in the run"):
        evaluate(qrels, (["q1", "q1"], ["a", "a"], [1.0, 2.0]), ["mrr"])
    with pytest.raises(ValueError, match="run scores must be finite"):
        evaluate(qrels, (["q1"], ["a"], [float("nan")]), ["mrr"])
    with pytest.raises(ValueError, match="differ in length"):
        evaluate(qrels, (["q1", "q1"], ["a"], [1.0]), ["mrr"])
    with pytest.raises(ValueError, match="qrels grades must be integers"):
        evaluate((["q1"], ["a"], [1.5]), (["q1"], ["a"], [1.0]), ["mrr"])


# --- the console command ------------------------------------------------------------------


def test_trec_eval_starts_without_typer(tmp_path: Path) -> None:
    (tmp_path / "q").write_text("q1 0 d1 1\n")
    (tmp_path / "r").write_text("q1 Q0 d1 1 0.5 t\n")
    code = ("import sys\nfrom ragassay.command import main\ntry:\n    main(sys.argv[1:])\n"
            "except SystemExit:\n    pass\n"
            "assert not {'typer', 'rich', 'pydantic'} & set(sys.modules), 'imported'\n")
    res = subprocess.run([sys.executable, "-c", code, "trec-eval", "-m", "map",
                          str(tmp_path / "q"), str(tmp_path / "r")], capture_output=True,
                         text=True, env={"PYTHONPATH": str(ROOT / "src")})
    assert res.returncode == 0, res.stderr
    assert res.stdout == "map                   \tall\t1.0000\n"
    res = subprocess.run([sys.executable, "-m", "ragassay", "trec-eval", "--help"],
                         capture_output=True, text=True, env={"PYTHONPATH": str(ROOT / "src")})
    assert res.returncode == 0 and "-M N" in res.stdout and "Relevance level" in res.stdout
