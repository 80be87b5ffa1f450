"""The first hour outside a clone: the wheel, installed into a fresh virtual environment in
a folder that is not the repository, carries what ``ragassay`` needs; ``ragassay init``
writes a starter project there and ``ragassay run`` on it succeeds.

The fresh environment is a real venv (not ``--system-site-packages``, which would see the
repository's own install); only ragassay's dependencies come from this interpreter's
site-packages, through a ``.pth`` file, so that the test needs no package index.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from builders import ROOT


def _env() -> dict[str, str]:
    # nothing of the repository on the path: what runs is the installed wheel
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_NO_INDEX"] = "1"
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with the wheel built from this tree installed in it; its ``bin`` folder."""
    tmp = tmp_path_factory.mktemp("install")
    wheels = tmp / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(wheels), str(ROOT)], check=True, env=_env(), cwd=tmp)
    (wheel,) = wheels.glob("ragassay-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=_env())
    py = venv / "bin" / "python"
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()"
                              "['purelib'])"], check=True, capture_output=True, text=True,
                             env=_env()).stdout.strip()
    # the dependencies from here (after the venv's own site-packages: the wheel wins)
    deps = {sysconfig.get_paths()["purelib"], *site.getsitepackages()}
    (Path(purelib) / "zz_dependencies.pth").write_text(
        "".join(f"{p}\n" for p in sorted(deps) if Path(p).is_dir()), encoding="utf-8")
    subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "-q", str(wheel)],
                   check=True, env=_env())
    return venv / "bin"


def test_the_wheel_runs_outside_the_repository(installed: Path, tmp_path: Path) -> None:
    env = _env()
    where = subprocess.run([str(installed / "python"), "-c",
                            "import ragassay; print(ragassay.__file__)"], check=True,
                           capture_output=True, text=True, env=env, cwd=tmp_path).stdout
    assert str(installed.parent) in where and str(ROOT) not in where, where
    init = subprocess.run([str(installed / "ragassay"), "init", "proj"], capture_output=True,
                          text=True, env=env, cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    readme = (tmp_path / "proj" / "README.md").read_text("utf-8")
    for name in ("config.yaml", "questions.jsonl", "gold.jsonl", "chunks.jsonl",
                 "predictions.jsonl"):
        assert (tmp_path / "proj" / name).is_file()
        assert f"| `{name}` |" in readme  # a line per file
    run = subprocess.run([str(installed / "ragassay"), "run", "-c", "proj/config.yaml",
                          "--run-id", "first", "-q", "--no-progress"], capture_output=True,
                         text=True, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    metrics = json.loads((tmp_path / "proj/runs/first/metrics.json").read_text("utf-8"))
    assert metrics["counts"]["questions"] == 10
    assert (tmp_path / "proj/runs/first/report.html").is_file()
    again = subprocess.run([str(installed / "ragassay"), "init", "proj"], capture_output=True,
                           text=True, env=env, cwd=tmp_path)
    assert again.returncode == 2 and "--force" in again.stderr
