"""The report pages in a real browser: headless Chromium driven by selenium through the
Debian chromedriver (``/usr/bin/chromedriver``, never downloaded). The fixture report, a
2,000-question generated report and a comparison page (the fixture at k=10 vs k=3) load with
no console error, show the totals of ``metrics.json``, filter, sort, and open a question with
its chunk texts. Skipped, with the reason, when chromium, chromedriver or selenium is missing.

The screenshots of these pages in docs/screenshots are made by ``scripts/screenshots.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import MISSING, chrome
from builders import ROOT
from synthetic import make_eval_set
from typer.testing import CliRunner

import ragassay.cli as cli
from ragassay.runfolder import read_run_folder

CONFIG = ROOT / "configs/eval/rag_quality_v1.yaml"
try:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:  # pragma: no cover - depends on the environment
    pass

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

runner = CliRunner()


def run_cli(*args: str, code: int = 0) -> None:
    res = runner.invoke(cli.app, list(args))
    assert res.exit_code == code, res.output


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The fixture at its k (10) and at k=3, a generated set of 2,000 questions, and the
    comparison page of the first two."""
    out = tmp_path_factory.mktemp("browser")
    run_cli("run", "--config", str(CONFIG), "--run-id", "fixture", "--output-root", str(out))
    run_cli("run", "--config", str(CONFIG), "--run-id", "fixture-k3", "--k", "3",
            "--output-root", str(out))
    config = make_eval_set(out / "gen2000-set", 2000, seed=0)
    run_cli("run", "--config", str(config), "--run-id", "gen2000", "--output-root", str(out),
            code=3)  # the generated set has questions without a prediction
    run_cli("report", str(out / "fixture"), str(out / "fixture-k3"))
    return {"fixture": out / "fixture", "k3": out / "fixture-k3", "gen": out / "gen2000",
            "compare": out / "fixture-k3" / "compare-fixture.html"}


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    drv = chrome("--window-size=1280,1000", console_log=True)
    try:
        yield drv
    finally:
        drv.quit()


def load(driver: Any, page: Path) -> None:
    driver.get(page.as_uri())
    WebDriverWait(driver, 30).until(lambda d: d.execute_script(
        "return document.readyState === 'complete' && "
        "document.documentElement.hasAttribute('data-ready')"))
    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert errors == [], errors


def visible_rows(driver: Any) -> list[dict[str, Any]]:
    """The question rows as drawn: id and the three check cells."""
    return driver.execute_script("""
      return Array.from(document.querySelectorAll('#qtable > tbody')).map(function(b){
        var c=b.querySelector('tr.main').children;
        return {id:c[0].textContent, rank:c[2].textContent, found:c[3].textContent,
                grounded:c[4].textContent.split(' ')[0], right:c[5].textContent,
                fail:b.classList.contains('fail')};});""")


def totals_line(run_dir: Path) -> str:
    return read_run_folder(run_dir).totals.line()


def test_fixture_report(runs: dict[str, Path], driver: Any) -> None:
    run_dir = runs["fixture"]
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    load(driver, run_dir / "report.html")
    # the totals shown are the ones metrics.json holds
    shown = driver.find_element(By.CSS_SELECTOR, "section.totals p.line").text
    checks = metrics["checks"]
    want = " · ".join(f"{'found@' + str(checks['k']) if n == 'found' else n} "
                      f"{checks[n]['passed']}/{checks[n]['total']}"
                      + (f" ({checks[n]['not_measured']} not measured)"
                         if checks[n]["not_measured"] else "")
                      for n in ("found", "grounded", "right"))
    assert shown == want == totals_line(run_dir)
    assert f"{metrics['cost']['prompt_tokens']:,}" in driver.find_element(
        By.CSS_SELECTOR, "section.totals").text
    rows = visible_rows(driver)
    n_fail = metrics["failures"]["questions_with_failures"]
    assert len(rows) == metrics["counts"]["questions"] == 16
    assert [r["fail"] for r in rows] == [True] * n_fail + [False] * (16 - n_fail)
    # a filter changes the visible rows: right = no
    Select(driver.find_element(By.ID, "f-c2")).select_by_value("no")
    rows_no = visible_rows(driver)
    assert rows_no and len(rows_no) < 16 and {r["right"] for r in rows_no} == {"no"}
    assert len(rows_no) == checks["right"]["total"] - checks["right"]["passed"]
    Select(driver.find_element(By.ID, "f-c2")).select_by_value("")
    # sorting by rank: best first, questions without gold (—) last
    Select(driver.find_element(By.ID, "f-sort")).select_by_value("rank")
    ranks = [r["rank"] for r in visible_rows(driver)]
    key = [int(r) if r.isdigit() else 10**9 if r == "absent" else 10**10 for r in ranks]
    assert key == sorted(key) and key[0] == 1
    Select(driver.find_element(By.ID, "f-sort")).select_by_value("fail")
    # open the first question: answer, retrieved list with the k cut-off, chunk texts
    first = driver.find_element(By.CSS_SELECTOR, "#qtable > tbody details summary")
    first.click()
    detail = driver.find_element(By.CSS_SELECTOR, "#qtable > tbody details .detail")
    WebDriverWait(driver, 10).until(lambda d: detail.text)
    assert "Answer" in detail.text and "Retrieved" in detail.text
    texts = detail.find_elements(By.CSS_SELECTOR, "details.chunk")
    assert texts
    texts[0].find_element(By.TAG_NAME, "summary").click()
    chunk = texts[0].find_element(By.CSS_SELECTOR, "pre.ctext").text
    assert len(chunk) > 20
    result = read_run_folder(run_dir)
    assert chunk.strip() in {t.strip() for t in result.chunk_texts.values()}
    assert driver.find_elements(By.CSS_SELECTOR, "tr.cut") or len(
        result.questions[0].retrieved) <= result.totals.k
    assert driver.get_log("browser") == []


def test_generated_report_of_2000_questions(runs: dict[str, Path], driver: Any) -> None:
    run_dir = runs["gen"]
    page = run_dir / "report.html"
    assert page.stat().st_size < 2_000_000
    driver.set_window_size(1280, 1000)
    load(driver, page)
    assert driver.find_element(By.CSS_SELECTOR, "section.totals p.line").text == totals_line(
        run_dir)
    assert len(visible_rows(driver)) == 100  # one page at a time
    count = driver.find_element(By.ID, "count").text
    assert count.startswith("2000 of 2000 questions match")
    driver.find_element(By.ID, "more").click()
    assert len(visible_rows(driver)) == 200
    label = Select(driver.find_element(By.ID, "f-label"))
    label.select_by_value("(no failure)")
    assert not any(r["fail"] for r in visible_rows(driver))
    label.select_by_value("")
    search = driver.find_element(By.ID, "f-text")
    qid = read_run_folder(run_dir).questions[1234].question_id
    search.send_keys(qid)
    rows = visible_rows(driver)
    assert qid in [r["id"] for r in rows] and len(rows) < 100
    driver.execute_script("var e=document.getElementById('f-text');e.value='';"
                          "e.dispatchEvent(new Event('input'))")
    assert driver.get_log("browser") == []


def test_comparison_page(runs: dict[str, Path], driver: Any) -> None:
    page = runs["compare"]
    driver.set_window_size(1280, 1000)
    load(driver, page)
    for name in ("fixture", "k3"):
        run_dir = runs[name]
        shown = driver.find_element(
            By.CSS_SELECTOR, f'.run[data-run="{run_dir.name}"] section.totals p.line').text
        assert shown == totals_line(run_dir)
    deltas = driver.find_elements(By.CSS_SELECTOR, "table.deltas tbody tr")
    assert len(deltas) == len(json.loads((runs["fixture"] / "metrics.json").read_text(
        encoding="utf-8"))["retrieval"]) + len(json.loads((runs["fixture"] / "metrics.json")
                                                          .read_text(encoding="utf-8"))["answer"])
    flips = driver.find_elements(By.CSS_SELECTOR, "table.flips > tbody")
    assert flips, "k=10 vs k=3 flips some found verdicts"
    base = {q.question_id: q.checks for q in read_run_folder(runs["fixture"]).questions}
    cand = {q.question_id: q.checks for q in read_run_folder(runs["k3"]).questions}
    flipped = {qid for qid in base for n in ("found", "grounded", "right")
               if None not in (getattr(base[qid], n), getattr(cand[qid], n))
               and getattr(base[qid], n) != getattr(cand[qid], n)}
    ids = [b.find_element(By.CSS_SELECTOR, "td.ids").text for b in flips]
    assert sorted(ids) == sorted(flipped)
    # filter: only pass→fail
    Select(driver.find_element(By.CSS_SELECTOR, ".f-dir")).select_by_visible_text("pass→fail")
    shown = [b for b in flips if b.is_displayed()]
    assert shown and all(b.get_attribute("data-dir") == "pass→fail" for b in shown)
    Select(driver.find_element(By.CSS_SELECTOR, ".f-dir")).select_by_value("")
    # open one side by side: both answers, both retrieved lists, chunk texts
    flips[0].find_element(By.CSS_SELECTOR, "details summary").click()
    side = flips[0].find_element(By.CSS_SELECTOR, ".side")
    WebDriverWait(driver, 10).until(lambda d: side.text)
    halves = side.find_elements(By.CSS_SELECTOR, ".half")
    assert [h.find_element(By.TAG_NAME, "h3").text for h in halves] == ["fixture", "fixture-k3"]
    for half in halves:
        assert "Retrieved" in half.text and ("Answer" in half.text or "Not measured" in half.text)
    chunk = halves[1].find_element(By.CSS_SELECTOR, "details.chunk")
    chunk.find_element(By.TAG_NAME, "summary").click()
    assert len(chunk.find_element(By.CSS_SELECTOR, "pre.ctext").text) > 20
    assert driver.get_log("browser") == []


def test_page_without_javascript_shows_the_summary(runs: dict[str, Path],
                                                   tmp_path: Path) -> None:
    """With scripts off the header, totals, charts and the first failing questions show."""
    drv = chrome(prefs={"profile.managed_default_content_settings.javascript": 2})
    try:
        drv.get((runs["gen"] / "report.html").as_uri())
        assert drv.find_element(By.CSS_SELECTOR, "section.totals p.line").text == totals_line(
            runs["gen"])
        assert len(drv.find_elements(By.CSS_SELECTOR, "svg.chart")) >= 2
        rows = drv.find_elements(By.CSS_SELECTOR, "#qtable > tbody")
        assert len(rows) == 50 and "fail" in (rows[0].get_attribute("class") or "")
        assert drv.find_element(By.ID, "static-note").is_displayed()
    finally:
        drv.quit()
