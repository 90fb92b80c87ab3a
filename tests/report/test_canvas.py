"""Every chart draws a key as it was written: its text is text in the chart's SVG, drawn by the browser with its fonts
(CJK, Arabic, Hebrew, emoji, ``$…$``, HTML's characters), and matplotlib warns of no glyph its own fonts lack."""

from __future__ import annotations

import base64
import re
import warnings
import xml.etree.ElementTree as ET

import pytest
from browser import chromium_page
from helpers import run_info
from synthetic import recorded

from loadtest.findings.assess import assess
from loadtest.report import render
from loadtest.results.summary import build

#: Valid PartitionKeys (none holds / \\ # ? or a control character) in the scripts and characters users write.
KEYS = ["東京-注文", "مرحبا", "שלום", "🔥-hot", "$^^$", '<b>"a" & b</b>', "Ünïcødé ñ"]
SVG = "{http://www.w3.org/2000/svg}"


def _texts(uri: str) -> list[str]:
    """The text a chart's SVG shows, each element's whole."""
    assert uri.startswith("data:image/svg+xml;base64,"), uri[:40]
    root = ET.fromstring(base64.b64decode(uri.split(",", 1)[1]))
    return ["".join(element.itertext()) for element in root.iter(f"{SVG}text")]


@pytest.mark.browser
def test_every_key_is_drawn_as_written_in_every_chart_that_names_keys(tmp_path, artifacts):
    seconds = {t: [{"op": "read", "partition": key, "entities": 5 + i} for i, key in enumerate(KEYS)] for t in range(12)}
    results = assess(build(recorded(seconds), run_info(partition_target=50)))
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        page = render(results, tmp_path).read_text()
    assert not [str(w.message) for w in said if "Glyph" in str(w.message) or "font" in str(w.message)]
    charts = re.findall(r'<img class="chart" id="chart-([a-z]+)"[^>]*src="([^"]+)"', page)
    shown = {name: _texts(uri) for name, uri in charts}
    assert set(KEYS) <= set(shown["heat"]), shown["heat"]  # a row each, the label the key whole
    assert {f"{key} GET" for key in KEYS} <= set(shown["peaks"]), shown["peaks"]  # a bar each: the key, its op class
    with chromium_page(height=2200) as browser:
        browser.goto((tmp_path / "report.html").as_uri())
        browser.wait_for_load_state("load")
        widths = browser.eval_on_selector_all("img.chart", "imgs => imgs.map(i => i.complete ? i.naturalWidth : 0)")
        assert len(widths) == len(charts) and all(w > 400 for w in widths), widths
        assert browser.evaluate("() => window.__pwned") is None
        browser.screenshot(path=str(artifacts / "report-keys-as-written.png"), full_page=True)
