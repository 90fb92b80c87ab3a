"""Outputs rendered from the results alone: report.html, one self-contained page (here: ``template.html.j2`` for a run,
``compare.html.j2`` for a comparison; the charts inlined, ``charts``, ``canvas``, ``heat_map``, ``ceiling_chart``,
``designs_chart``, on ``time_axis``; its first words, ``headline``; the badges, ``badges``), ``--junit``'s XML
(``junit``) and ``server-logs.kql`` (``server_logs``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from ..counting.buckets import OTHER, UNATTRIBUTED
from ..outputs import COMPARISON_PAGE, REPORT_FILE, write_text
from ..redact import redact
from ..results.finding_kinds import CHECKLIST
from ..results.form import Results
from ..results.schema import USER_SETTINGS
from .badges import badge_css
from .headline import verdict_sentences, what_ran

if TYPE_CHECKING:
    from ..results.comparison import Comparison

__all__ = ["render", "render_comparison"]


def _redacted(value: Any) -> Any:
    """Each value a page shows, redacted before Jinja escapes it (``finalize``): escaped, a SAS's ``&sig=`` reads
    ``&amp;sig=``, which the patterns do not see."""
    if isinstance(value, Markup):  # a value marked safe (a chart): it stays so
        return Markup(redact(str(value)))
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return redact(str(value))


_templates = Environment(
    loader=PackageLoader("loadtest", "report"), autoescape=select_autoescape(["html", "j2"]), finalize=_redacted
)
_templates.globals["badge_css"] = badge_css  # every page's finding badges, from the kinds' severities


def render(results: Results, out: Path) -> Path:
    """Write ``out/report.html`` from ``results`` and return its path."""
    from .charts import all_charts  # matplotlib loads only when a report is drawn

    rows = results.hottest_rows()
    page = _templates.get_template("template.html.j2").render(
        r=results,
        rows=rows,
        hidden=len(results.partitions) - len(rows),
        other=OTHER,
        unattributed=UNATTRIBUTED,
        checklist=[f for f in results.findings if f.kind in CHECKLIST],
        practices=list(CHECKLIST),
        charts=all_charts(results),
        verdict=verdict_sentences(results),
        what_ran=what_ran(results),
        class_settings=USER_SETTINGS,
    )
    return write_text(Path(out) / REPORT_FILE, page)  # every value redacted as rendered (_redacted)


def render_comparison(comparison: Comparison, out: Path) -> Path:
    """Write ``out/comparison.html``: the strategies side by side, ranked, each linked to its run's report."""
    from .charts import strategy_peaks

    page = _templates.get_template("compare.html.j2").render(c=comparison, chart=strategy_peaks(comparison))
    return write_text(Path(out) / COMPARISON_PAGE, page)
