"""What every chart of the report shares: a headless figure, its finish (axes, legend beside, UTC along a long run's
top), its SVG as a data URI (report.html stays one self-contained file; the browser draws its text), the op classes'
colours, and a series frame summed per second."""

from __future__ import annotations

import base64
import io
import warnings

import numpy as np
import pandas as pd
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .time_axis import bin_words, first_epoch, utc_axis

__all__ = ["COLORS", "figure", "image", "legend_beside", "per_second", "text", "time_axes"]

COLORS = {"GET": "#1f77b4", "PUT": "#ff7f0e", "ALL": "#555555"}


def text(value: object) -> str:
    """A string from input (a key, a strategy, a family) as matplotlib draws it: as typed. Each ``$`` escaped, so that
    mathtext never reads it as math: ``$^^$`` is a PartitionKey Azure takes, and mathtext cannot parse it."""
    return str(value).replace("$", r"\$")


def figure(figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    """A figure on the Agg canvas and its axes: headless, and without pyplot's figure manager (nothing to close).

    Constrained layout makes room for the legend beside the axes as it draws; ``bbox_inches="tight"`` would draw
    every chart twice to find that room (a quarter of a report's rendering time)."""
    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.subplots()


#: The text of a chart as text (the browser draws it with its fonts), its ids the same from one report to the next.
_SVG = {"svg.fonttype": "none", "svg.hashsalt": "partition-stress"}
#: What matplotlib says of a glyph its own font lacks while it measures a label: the browser draws that glyph.
_MISSING_GLYPH = r"Glyph \d+ .* missing from font"


def image(fig: Figure) -> str:
    """The chart as an SVG data URI: its data drawn as pixels (a long run's seconds are a picture, not a path of
    every point), its text as text, drawn by the browser with its fonts. Every key appears as written, in any script
    (CJK, Arabic and Hebrew shaped and in their direction, emoji), where matplotlib's own fonts would draw boxes and
    warn on the console. matplotlib still measures a label with its fonts to lay the chart out: a label in a wider
    script may run a little past the room it was given."""
    for ax in fig.axes:
        for artist in (*ax.lines, *ax.collections, *ax.patches, *ax.images):
            artist.set_rasterized(True)
    buffer = io.BytesIO()
    with rc_context(_SVG), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_MISSING_GLYPH, category=UserWarning)
        fig.savefig(buffer, format="svg", dpi=96, metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def legend_beside(ax: Axes, handles: list | None = None, labels: list | None = None) -> None:
    """The legend right of the axes, never over the data (the layout narrows the axes to hold it)."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=8)


def time_axes(
    fig: Figure, ax: Axes, title: str, ylabel: str = "", frame: pd.DataFrame | None = None, size: int = 1, row: int = 1
) -> str:
    """The finish every over-time chart shares: labels (a long run: UTC along the top; ``size``: the seconds a point
    holds, ``row`` a row of the series, said), zero-based y, legend, grid; then the image."""
    if frame is not None and not frame.empty:
        utc_axis(ax, first_epoch(frame), frame["t"].max())
    ax.set_xlabel("seconds since start" + bin_words(size, row))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_ylim(bottom=0)
    legend_beside(ax)
    ax.grid(alpha=0.3)
    return image(fig)


def per_second(frame: pd.DataFrame, value: str, by: str) -> pd.DataFrame:
    """Seconds down (from 0: only those with rows; ``time_axis.binned`` fills the rest), one column per ``by`` value
    (in order), each cell the second's sum. Made from the rows, never a table of every second (a week of logs over 50
    keys as one held 240 MB, the report's peak)."""
    frame = frame[frame["t"] >= 0]
    if frame.empty:
        return pd.DataFrame(index=range(0))
    sums = frame.groupby(["t", by], sort=True)[value].sum()
    table = sums.unstack(fill_value=0)
    table.columns = pd.Index(table.columns, name=by)
    table.index = pd.Index(table.index.to_numpy(np.int64))
    return table
