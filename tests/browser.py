"""Headless Chromium for the page tests and scripts: the one place its binary, its driver and
its switches are named.

Debian's chromium and chromedriver (never downloaded). The switches keep the browser off the
network: no background requests, no component updates or sync, every host name resolved to
"not found" except the loopback, and a dead loopback proxy for anything else, so a page that
tried to load a remote resource would fail here instead of connecting (checked with
``scripts/netcheck.py``; what remains is Chromium's and ChromeDriver's IPv6 reachability
probe, a datagram connect() that sends no packet and that no switch turns off).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

CHROMEDRIVER = "/usr/bin/chromedriver"
BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
OFFLINE_SWITCHES = (
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    "--no-first-run", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--disable-domain-reliability", "--no-pings",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1",
    "--proxy-server=127.0.0.1:9",
)

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
except ImportError:  # pragma: no cover - depends on the environment
    webdriver = None  # type: ignore[assignment]

MISSING = ("selenium is not installed (pip install selenium)" if webdriver is None
           else "chromium is not installed (apt-get install chromium)" if BROWSER is None
           else f"{CHROMEDRIVER} is missing (apt-get install chromium-driver)"
           if not Path(CHROMEDRIVER).is_file() else None)


def chrome(*switches: str, prefs: dict[str, Any] | None = None,
           console_log: bool = False) -> Any:
    """A headless Chromium driven by selenium with :data:`OFFLINE_SWITCHES` and ``switches``;
    ``prefs`` set as the profile's preferences; ``console_log`` keeps the console for
    ``driver.get_log("browser")``."""
    opts = webdriver.ChromeOptions()
    for arg in (*OFFLINE_SWITCHES, *switches):
        opts.add_argument(arg)
    opts.binary_location = str(BROWSER)
    if prefs:
        opts.add_experimental_option("prefs", prefs)
    if console_log:
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
