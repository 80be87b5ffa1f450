"""Size and load time of report.html at 16 (the fixture), 2,000 and 10,000 questions.

    PYTHONPATH=src:tests python scripts/report_timing.py [OUT_DIR]

Per page: its size, and in headless Chromium (``tests/browser.py``) the median of
three loads of: first contentful paint (the static summary), the moment the inline script
has drawn the question list (``data-ready``), and ``document.readyState == complete``
(``loadEventEnd``), all in ms from navigation start.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

from browser import chrome
from selenium.webdriver.support.ui import WebDriverWait
from synthetic import make_eval_set
from typer.testing import CliRunner

import ragassay.cli as cli

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str) -> None:
    res = CliRunner().invoke(cli.app, list(args))
    if res.exit_code != 0:
        raise SystemExit(res.output)


def _median(values: list[float | None]) -> str:
    got = [v for v in values if v is not None]
    return f"{statistics.median(got):.0f} ms" if got else "n/a"


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
    pages = {}
    run("run", "--config", str(ROOT / "configs/eval/rag_quality_v1.yaml"), "--run-id", "n16",
        "--output-root", str(out), "--force")
    pages[16] = out / "n16" / "report.html"
    for n in (2000, 10000):
        config = make_eval_set(out / f"set{n}", n, seed=0)
        run("run", "--config", str(config), "--run-id", f"n{n}", "--output-root", str(out),
            "--force")
        pages[n] = out / f"n{n}" / "report.html"
    drv = chrome("--window-size=1280,1000")
    print("| questions | page size | first paint | list drawn | readyState complete |")
    print("|---:|---:|---:|---:|---:|")
    try:
        for n, page in pages.items():
            samples = []
            for _ in range(3):
                drv.get("about:blank")
                drv.get(page.as_uri())
                WebDriverWait(drv, 60).until(lambda d: d.execute_script(
                    "return document.readyState === 'complete' && "
                    "performance.timing.loadEventEnd > 0"))
                samples.append(drv.execute_script("""
                  var t=performance.timing,p=performance.getEntriesByType('paint');
                  var fcp=p.filter(function(e){return e.name==='first-contentful-paint';});
                  return [fcp.length?fcp[0].startTime:null,
                          +document.documentElement.getAttribute('data-ready'),
                          t.loadEventEnd-t.navigationStart];"""))
            med = [_median([s[i] for s in samples]) for i in range(3)]
            size = page.stat().st_size
            print(f"| {n:,} | {size / 1e6:.2f} MB | {med[0]} | {med[1]} | {med[2]} |")
    finally:
        drv.quit()


if __name__ == "__main__":
    main()
