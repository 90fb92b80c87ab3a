"""Every finding kind's badge is visible on every page that shows badges, checked in real headless Chromium."""

from __future__ import annotations

import pytest
from browser import chromium_page
from helpers import run_info
from synthetic import recorded

from loadtest.findings.assess import assess
from loadtest.report import render, render_comparison
from loadtest.results.comparison import Comparison, StrategyOutcome
from loadtest.results.form import Finding, FindingKind
from loadtest.results.summary import build

#: Each badge's background, the page's background behind it (the first ancestor that paints one), and its text colour.
READ_BADGES = """
spans => spans.map(span => {
  const painted = el => { for (; el; el = el.parentElement) { const c = getComputedStyle(el).backgroundColor;
    if (c !== "rgba(0, 0, 0, 0)" && c !== "transparent") return c; } return "rgb(255, 255, 255)"; };
  return {kind: span.textContent.trim(), background: painted(span), behind: painted(span.parentElement),
          text: getComputedStyle(span).color};
})
"""


def _luminance(css: str) -> float:
    """WCAG relative luminance of an ``rgb(r, g, b)`` colour."""
    channels = [int(c) / 255 for c in css[css.index("(") + 1 : css.index(")")].split(",")[:3]]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(a: str, b: str) -> float:
    light, dark = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def _report(tmp_path) -> str:
    results = assess(build(recorded({t: [{"entities": 5}] for t in range(12)}), run_info()))
    results.findings = [
        Finding(kind=kind, partition="hot", op_class=None, message=f"{kind} measured", remedy="") for kind in FindingKind
    ]
    return render(results, tmp_path / "report").read_text()


def _comparison(tmp_path) -> str:
    outcome = StrategyOutcome(strategy="single", run_dir=str(tmp_path), exit_code=0, findings=list(FindingKind))
    return render_comparison(Comparison(strategies=[outcome], partition_target=2000, settings={}), tmp_path).read_text()


@pytest.mark.browser
def test_every_finding_kind_has_a_visible_badge_on_every_page(tmp_path):
    pages = {"report": _report(tmp_path), "comparison": _comparison(tmp_path)}
    with chromium_page() as page:
        for name, html in pages.items():
            page.set_content(html)
            badges = page.eval_on_selector_all("span.kind", READ_BADGES)
            shown = {b["kind"] for b in badges}
            assert shown >= set(FindingKind), f"{name}: no badge for {sorted(set(FindingKind) - shown)}"
            unseen = sorted(b["kind"] for b in badges if b["background"] == b["behind"])
            faint = sorted(b["kind"] for b in badges if _contrast(b["text"], b["background"]) < 4.5)
            assert (unseen, faint) == ([], []), f"{name}: backgrounds the page's {unseen}, text without contrast {faint}"
