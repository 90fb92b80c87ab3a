"""report.html: one self-contained page rendered from the results alone (charts inlined)."""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, PackageLoader, select_autoescape

from ..backend import redact
from ..results import Results
from ..verdict import REMEDIES

__all__ = ["render"]

_templates = Environment(loader=PackageLoader("loadtest", "report"), autoescape=select_autoescape(["html", "j2"]))


def render(results: Results, out: Path) -> Path:
    """Write ``out/report.html`` from ``results`` and return its path."""
    from .charts import all_charts  # matplotlib loads only when a report is drawn

    page = _templates.get_template("template.html.j2").render(
        r=results,
        charts=all_charts(results),
        remedies=REMEDIES,
        kinds=sorted({f.kind for f in results.findings}),
    )
    path = Path(out) / "report.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(redact(page), encoding="utf-8")
    return path
