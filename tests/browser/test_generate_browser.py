"""The review page of a generated set (`generation.html`) in headless Chromium, driven by
selenium (:mod:`browser`: the Debian chromedriver, kept off the network): it loads with no
console error, shows every kept item with its support sentence marked, and a person marks
accept, reject and edit (changing the question), downloads the decisions, and
`ragassay generate apply` writes the reviewed set from the downloaded file. Skipped, with
the reason, when chromium, chromedriver or selenium is missing."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import MISSING, chrome
from generated_set import GOOD, factoid_order, script, write_docs
from openai_server import FakeOpenAIServer
from typer.testing import CliRunner

from ragassay.cli import app

try:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:  # pragma: no cover - depends on the environment
    pass

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

runner = CliRunner()


@pytest.fixture()
def driver(tmp_path: Path) -> Iterator[Any]:
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    drv = chrome("--window-size=1280,1000", console_log=True,
                 prefs={"download.default_directory": str(downloads),
                        "download.prompt_for_download": False})
    drv.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow",
                                                     "downloadPath": str(downloads)})
    drv.downloads = downloads
    try:
        yield drv
    finally:
        drv.quit()


def test_mark_edit_download_apply(fake_server: FakeOpenAIServer, tmp_path: Path,
                                  driver: Any) -> None:
    docs = write_docs(tmp_path / "docs")
    script(fake_server, factoid_order(docs), GOOD)
    s = tmp_path / "set"
    res = runner.invoke(app, ["generate", "--source", str(docs), "--out", str(s), "--base-url",
                              fake_server.base_url, "--n", "3", "--kinds", "factoid",
                              "--no-cache", "--no-progress"])
    assert res.exit_code == 0, res.output

    driver.get((s / "generation.html").as_uri())
    WebDriverWait(driver, 30).until(lambda d: d.execute_script(
        "return document.documentElement.hasAttribute('data-ready')"))
    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert errors == [], errors
    cards = driver.find_elements(By.CSS_SELECTOR, ".card")
    assert len(cards) == 3
    by_chunk = {}
    for card in cards:
        summary = card.find_element(By.CSS_SELECTOR, "details.chunk summary").text
        by_chunk[summary.split()[-1]] = card
    marked = by_chunk["ko::chunk-001"].find_element(By.CSS_SELECTOR, "mark").text
    assert marked == "보증기간은 검수 완료일로부터 24개월로 한다."
    assert by_chunk["ko::chunk-001"].find_element(By.CSS_SELECTOR, ".a-text").text == "24개월"

    def qid(card: Any) -> str:
        return str(card.get_attribute("data-qid"))

    by_chunk["ko::chunk-001"].find_element(By.CSS_SELECTOR, "[data-d=accept]").click()
    by_chunk["de::chunk-001"].find_element(By.CSS_SELECTOR, "[data-d=reject]").click()
    en = by_chunk["en::chunk-001"]
    en.find_element(By.CSS_SELECTOR, "[data-d=edit]").click()
    box = en.find_element(By.CSS_SELECTOR, ".e-question")
    assert box.is_displayed()
    box.clear()
    box.send_keys("What warranty period does the contract give?")
    assert driver.find_element(By.ID, "tally").text == ("1 accepted, 1 edited, 1 rejected, "
                                                        "0 undecided")
    assert "reject" in by_chunk["de::chunk-001"].get_attribute("class")

    driver.find_element(By.ID, "download").click()
    target = driver.downloads / "decisions.jsonl"
    for _ in range(100):  # the browser writes the file on its own thread
        if target.is_file() and not list(driver.downloads.glob("*.crdownload")):
            break
        time.sleep(0.1)
    rows = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert rows[0]["review"] == "ragassay.review/1" and rows[0]["items"] == 3
    decided = {r["question_id"]: r for r in rows[1:]}
    assert decided[qid(by_chunk["ko::chunk-001"])]["decision"] == "accept"
    assert decided[qid(by_chunk["de::chunk-001"])]["decision"] == "reject"
    assert decided[qid(en)] == {"question_id": qid(en), "decision": "edit",
                                "question": "What warranty period does the contract give?",
                                "answer": "12 months"}

    res = runner.invoke(app, ["generate", "apply", str(target), "--set", str(s), "--out",
                              str(tmp_path / "reviewed")])
    assert res.exit_code == 0, res.output
    kept = [json.loads(x) for x in (tmp_path / "reviewed/questions.jsonl")
            .read_text(encoding="utf-8").splitlines()]
    assert sorted(q["question_id"] for q in kept) == sorted([qid(by_chunk["ko::chunk-001"]),
                                                             qid(en)])
    assert {q["question"] for q in kept} == {"보증기간은 얼마인가요?",
                                             "What warranty period does the contract give?"}
    review = json.loads((tmp_path / "reviewed/review.json").read_text(encoding="utf-8"))
    assert review["rejected"] == [qid(by_chunk["de::chunk-001"])]


def test_user_text_cannot_open_html(fake_server: FakeOpenAIServer, tmp_path: Path,
                                    driver: Any) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    text = ("The note says </script><img src=x onerror=alert(1)> is the tag. The warranty "
            "period is 12 months from acceptance.")
    (docs / "en.txt").write_text(text, encoding="utf-8")
    reply = {"question": "What does the note say <b>is</b> the tag?",
             "answer": "</script><img src=x onerror=alert(1)>",
             "sentence": "The note says </script><img src=x onerror=alert(1)> is the tag."}
    script(fake_server, factoid_order(docs), {"en::chunk-001": (reply, {"answer":
                                                                        reply["answer"]})})
    s = tmp_path / "set"
    res = runner.invoke(app, ["generate", "--source", str(docs), "--out", str(s), "--base-url",
                              fake_server.base_url, "--n", "1", "--kinds", "factoid",
                              "--no-cache", "--no-progress"])
    assert res.exit_code == 0, res.output
    driver.get((s / "generation.html").as_uri())
    WebDriverWait(driver, 30).until(lambda d: d.execute_script(
        "return document.documentElement.hasAttribute('data-ready')"))
    assert driver.find_elements(By.CSS_SELECTOR, "img") == []
    assert driver.find_element(By.CSS_SELECTOR, ".q-text").text == reply["question"]
