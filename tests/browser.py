"""Debian's headless Chromium, driven by Playwright through its executable path (no browser download)."""

from __future__ import annotations

import shutil
from contextlib import contextmanager

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


_browser: list = []  # the session's one Chromium and its Playwright, launched by the first page asked for


@contextmanager
def chromium_page(width: int = 1200, height: int = 900):
    """A page in a fresh context (its own cookies and storage) of the session's one Chromium: a launch is 0.6 s."""
    if not shutil.which(CHROMIUM):
        pytest.fail("Chromium is missing: scripts/test.sh installs Debian's chromium package")
    if not _browser:
        from playwright.sync_api import sync_playwright

        playwright = sync_playwright().start()
        _browser[:] = [playwright, playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)]
    context = _browser[1].new_context(viewport={"width": width, "height": height})
    try:
        yield context.new_page()
    finally:
        context.close()


def close_chromium() -> None:
    """Called as the session ends (conftest): the browser, then Playwright's driver."""
    if _browser:
        playwright, browser = _browser
        _browser.clear()
        browser.close()
        playwright.stop()
