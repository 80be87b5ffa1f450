"""No file of the project, and no page its screenshots show, holds a path of the machine it
was made on (``scripts/machine_paths.py``): every text file git tracks, and the report and
comparison pages as ``scripts/screenshots.py`` builds them from a temporary folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from builders import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import machine_paths  # noqa: E402
import screenshots  # noqa: E402


@pytest.mark.parametrize("text,found", [
    ("written to /home/ann/runs/r1", ["/home/"]),
    ("config /work/wt-report/configs/eval/x.yaml", ["/work/"]),
    ('"/root/.cache/x"', ["/root/"]),
    ("see /tmp/ray/session_latest", ["/tmp/"]),
    ("a Mac's /Users/ann/x and /private/var/folders/x", ["/Users/", "/private/var/"]),
    (r"C:\Users\ann\runs", ["C:\\Users"]),
    # not a machine path: a URL's path, relative and home-relative paths, system files
    ("https://example.org/home/x and http://127.0.0.1:8080/tmp/x", []),
    ("data/tmp/x, ./work/x, ~/work/x, runs/home/x", []),
    ("/usr/bin/chromedriver, /dev/shm, /proc/net/tcp", []),
])
def test_what_a_machine_path_is(text: str, found: list[str]) -> None:
    assert machine_paths.machine_paths(text) == found


def test_the_folders_a_page_was_built_in_are_found_literally() -> None:
    assert machine_paths.machine_paths("in /srv/ci/build7/runs", ["/srv/ci/build7"]) == \
        ["/srv/ci/build7"]


def test_no_tracked_text_file_holds_a_machine_path() -> None:
    files = machine_paths.tracked_text_files()
    assert ROOT / "README.md" in files and ROOT / "src/ragassay/cli/common.py" in files
    assert not any(p.suffix == ".png" for p in files)  # binary files are not text
    assert machine_paths.hits() == []


def test_the_screenshot_pages_hold_no_machine_path(tmp_path: Path) -> None:
    """The fixture's report and the k=10 vs k=3 comparison built from a copy of the fixture
    in a temporary folder: neither names that folder, the repository, the home folder or any
    other machine path (the 2,000-question page is made by the same code from bare file
    names; ``scripts/screenshots.py`` checks it too)."""
    pages = screenshots.build_pages(tmp_path, large=False)
    assert set(pages) == {"fixture", "compare"}
    html = pages["fixture"].read_text(encoding="utf-8")
    assert "configs/eval/rag_quality_v1.yaml" in html  # the config path, as given
    assert screenshots.paths_in_pages(pages, tmp_path) == []
    # the check finds one: the page of a run whose config was given by its absolute path
    bad = {"fixture": tmp_path / "bad.html"}
    bad["fixture"].write_text(html.replace("configs/eval/", f"{tmp_path}/configs/eval/"),
                              encoding="utf-8")
    assert screenshots.paths_in_pages(bad, tmp_path)
