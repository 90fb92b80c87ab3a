"""What every chart of the report shares: a headless figure, its finish (axes, legend beside, UTC along a long run's
top), its PNG as a data URI (report.html stays one self-contained file), the op classes' colours, and a series frame
summed per second."""

from __future__ import annotations

import base64
import io

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .time_axis import first_epoch, utc_axis

__all__ = ["COLORS", "figure", "legend_beside", "per_second", "png", "text", "time_axes"]

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


def png(fig: Figure) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=96)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def legend_beside(ax: Axes, handles: list | None = None, labels: list | None = None) -> None:
    """The legend right of the axes, never over the data (the layout narrows the axes to hold it)."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=8)


def time_axes(fig: Figure, ax: Axes, title: str, ylabel: str = "", frame: pd.DataFrame | None = None) -> str:
    """The finish every over-time chart shares: labels (a long run: UTC along the top), zero-based y, legend, grid; then
    the PNG."""
    if frame is not None and not frame.empty:
        utc_axis(ax, first_epoch(frame), frame["t"].max())
    ax.set_xlabel("seconds since start")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_ylim(bottom=0)
    legend_beside(ax)
    ax.grid(alpha=0.3)
    return png(fig)


def per_second(frame: pd.DataFrame, value: str, by: str) -> pd.DataFrame:
    """Seconds down (0 to the last), one column per ``by`` value (in order); seconds with no requests are zero. Summed
    into one array (pandas' pivot_table held 40 MB for ten minutes over 50 keys, the report's peak)."""
    frame = frame[frame["t"] >= 0]
    if frame.empty:
        return pd.DataFrame(index=range(0))
    codes, names = pd.factorize(frame[by], sort=True)
    seconds, values = frame["t"].to_numpy(np.int64), frame[value].to_numpy()
    table = np.zeros((int(seconds.max()) + 1, len(names)), dtype=values.dtype)
    np.add.at(table, (seconds, codes), values)
    return pd.DataFrame(table, columns=pd.Index(names, name=by))
