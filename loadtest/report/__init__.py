"""report.html: one self-contained page rendered from the results alone (charts inlined)."""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, PackageLoader, select_autoescape

from ..backend import redact
from ..metrics import OTHER
from ..results import Results
from ..verdict import REMEDIES

__all__ = ["render"]

_templates = Environment(loader=PackageLoader("loadtest", "report"), autoescape=select_autoescape(["html", "j2"]))


SHOWN_PARTITIONS = 10


def _shown_rows(results: Results) -> list:
    """The 10 hottest partitions' rows (by peak), then the other partitions' aggregate."""
    peaks: dict[str, float] = {}
    for row in results.partitions:
        if row.partition != OTHER:
            peaks[row.partition] = max(peaks.get(row.partition, 0.0), row.peak_eps)
    shown = set(sorted(peaks, key=lambda p: (-peaks[p], p))[:SHOWN_PARTITIONS])
    order = {"GET": 0, "PUT": 1, "ALL": 2}
    rows = [r for r in results.partitions if r.partition in shown]
    rows.sort(key=lambda r: (-peaks[r.partition], r.partition, order.get(r.op_class, 3)))
    return rows + [r for r in results.partitions if r.partition == OTHER]


def render(results: Results, out: Path) -> Path:
    """Write ``out/report.html`` from ``results`` and return its path."""
    from .charts import all_charts  # matplotlib loads only when a report is drawn

    rows = _shown_rows(results)
    page = _templates.get_template("template.html.j2").render(
        r=results,
        rows=rows,
        hidden=len(results.partitions) - len(rows),
        other=OTHER,
        charts=all_charts(results),
        remedies=REMEDIES,
        kinds=sorted({f.kind for f in results.findings}),
    )
    path = Path(out) / "report.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(redact(page), encoding="utf-8")
    return path
