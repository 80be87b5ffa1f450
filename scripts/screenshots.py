"""Regenerate the screenshots of docs/screenshots from the current report pages.

    python scripts/screenshots.py [OUT_DIR]      # default: docs/screenshots

It builds the pages the README shows in a temporary folder, as a user would from a copy of
the repository's fixture (``ragassay run --config configs/eval/rag_quality_v1.yaml``, so the
config path shown is the relative one): the fixture's report (k = 10), the comparison of
the fixture at k = 10 and k = 3 (``ragassay report BASE NEW``), and the report of a generated
set of 2,000 questions. Before any screenshot, every page is checked for a path of this
machine (:mod:`machine_paths`: users' and temporary folders, and the literal temporary
folder, repository and home folder); one found stops the script with exit 1. The pages are
then drawn in headless Chromium (``tests/browser.py``: the offline switches) and the top of
each is written as a 256-colour PNG (when Pillow is installed; else as Chromium wrote it).
Needs the test extra's selenium, chromium with chromium-driver, and a font with Hangul
(Debian: ``apt-get install fonts-noto-cjk``; without one the Korean text is drawn as boxes,
so the script refuses to run).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from contextlib import chdir
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "scripts")]

from machine_paths import machine_paths  # noqa: E402

CONFIG = "configs/eval/rag_quality_v1.yaml"
# what the fixture's config reads (and the index's source documents, for its staleness
# check), copied into the temporary folder (relative to the root)
FIXTURE = (CONFIG, "data/index", "data/eval", "data/raw")
# screenshot → (page, window height in pixels): the top of the page down to that height
SHOTS = {"report-fixture.png": ("fixture", 2500), "compare-fixture-k3.png": ("compare", 2400),
         "report-2000.png": ("gen2000", 1800)}


def run_cli(*args: str, code: int = 0) -> None:
    from typer.testing import CliRunner

    import ragassay.cli as cli

    res = CliRunner().invoke(cli.app, list(args))
    if res.exit_code != code:
        raise SystemExit(f"ragassay {' '.join(args)}: exit {res.exit_code}\n{res.output}")


def build_pages(work: Path, *, large: bool = True) -> dict[str, Path]:
    """The pages of the screenshots, built in ``work`` (a copy of the fixture there, the
    commands run from there with relative paths): ``fixture``, ``compare`` and, with
    ``large``, ``gen2000``."""
    from synthetic import make_eval_set

    for rel in FIXTURE:
        src, dest = ROOT / rel, work / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dest)
        else:
            shutil.copy2(src, dest)
    quiet = ("-q", "--no-progress", "--output-root", "runs")
    with chdir(work):
        run_cli("run", "--config", CONFIG, "--run-id", "fixture", *quiet)
        run_cli("run", "--config", CONFIG, "--run-id", "fixture-k3", "--k", "3", *quiet)
        run_cli("report", "runs/fixture", "runs/fixture-k3")
        pages = {"fixture": work / "runs/fixture/report.html",
                 "compare": work / "runs/fixture-k3/compare-fixture.html"}
        if large:
            config = make_eval_set(Path("gen2000-set"), 2000, seed=0)
            # exit 3: the generated set has questions without a prediction
            run_cli("run", "--config", str(config), "--run-id", "gen2000", *quiet, code=3)
            pages["gen2000"] = work / "runs/gen2000/report.html"
    return pages


def paths_in_pages(pages: dict[str, Path], work: Path) -> list[str]:
    """``page: path`` for every path of this machine that a page holds."""
    folders = {str(work), str(work.resolve()), str(ROOT), str(Path.home())}
    return [f"{name}: {found}" for name, page in pages.items()
            for found in machine_paths(page.read_text(encoding="utf-8"), folders)]


def _opened(driver: Any, name: str) -> None:
    """The page as the README shows it: the first question (the first flip on the
    comparison page) opened, with its answer, citations and retrieved chunks."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    selector = {"fixture": "#qtable > tbody details summary",
                "compare": "table.flips > tbody details summary"}.get(name)
    if selector is None:
        return
    driver.find_element(By.CSS_SELECTOR, selector).click()
    detail = ".detail" if name == "fixture" else ".side"
    WebDriverWait(driver, 10).until(
        lambda d: d.find_element(By.CSS_SELECTOR, selector.rsplit(" ", 1)[0] + " "
                                 + detail).text)


def screenshot(driver: Any, path: Path, height: int) -> None:
    """The top of the page, ``height`` pixels tall, 1,280 wide (as a 256-colour PNG when
    Pillow is there, to keep it small)."""
    driver.set_window_size(1280, height)
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(str(path))
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as img:
        img.convert("RGB").quantize(256).save(path, optimize=True)


def missing_font() -> str | None:
    """Why the Korean text of the pages would not be drawn (no font with Hangul known to
    fontconfig, which Chromium asks), or None."""
    if shutil.which("fc-list") is None:
        return None  # not fontconfig's platform: Chromium finds the system's fonts itself
    listed = subprocess.run(["fc-list", ":lang=ko", "family"], capture_output=True,
                            text=True, check=False).stdout
    return None if listed.strip() else ("no font with Hangul is installed: the Korean "
                                        "text would be boxes (apt-get install fonts-noto-cjk)")


def shoot(pages: dict[str, Path], out: Path) -> list[Path]:
    """Every screenshot of :data:`SHOTS` into ``out``, drawn in headless Chromium."""
    from browser import MISSING, chrome
    from selenium.webdriver.support.ui import WebDriverWait

    missing = MISSING or missing_font()
    if missing is not None:
        raise SystemExit(missing)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    driver = chrome("--window-size=1280,1000")
    try:
        for file, (name, height) in SHOTS.items():
            driver.set_window_size(1280, 1000)
            driver.get(pages[name].as_uri())
            WebDriverWait(driver, 60).until(lambda d: d.execute_script(
                "return document.readyState === 'complete' && "
                "document.documentElement.hasAttribute('data-ready')"))
            _opened(driver, name)
            screenshot(driver, out / file, height)
            written.append(out / file)
    finally:
        driver.quit()
    return written


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs/screenshots"
    with tempfile.TemporaryDirectory(prefix="ragassay-screenshots-") as tmp:
        work = Path(tmp)
        pages = build_pages(work)
        found = paths_in_pages(pages, work)
        if found:
            raise SystemExit("a page holds a path of this machine:\n" + "\n".join(found))
        for path in shoot(pages, out):
            print(f"{path.name}: {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
