"""A run's phases: every second it spans, its steady phase (the seconds its means cover) and the window of its peak.

Mean entities/s covers the steady phase (the whole seconds after all users started and before they stopped; a run
without one says so: ``steady_seconds`` 0); peak is the highest ``PEAK_WINDOW_S``-second moving average (shorter when
the steady phase is: ``peak_window_s``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["PEAK_WINDOW_S", "Phases", "moving_average_peak", "peak_window", "peak_words", "sparse_peak"]

#: Seconds a peak averages (a run's steady phase, when shorter: ``RunInfo.peak_window_s`` holds the one it used).
PEAK_WINDOW_S = 10


def peak_words(*windows: int) -> str:
    """How peaks were averaged, in the words findings and charts share: the window each run used (``peak_window_s``),
    runs with different ones named together."""
    return "/".join(str(w) for w in sorted(set(windows))) + "-second moving average"


def moving_average_peak(values: Sequence[float] | np.ndarray, window: int = PEAK_WINDOW_S) -> float:
    """The highest mean over ``window`` consecutive seconds (the whole series if shorter): the windows' sums as
    differences of running totals (exact for counts, which these are)."""
    if len(values) == 0:
        return 0.0
    window = min(window, len(values))
    totals = np.concatenate(([0.0], np.cumsum(np.asarray(values, dtype=np.float64))))
    return float((totals[window:] - totals[:-window]).max()) / window


def sparse_peak(seconds: np.ndarray, values: np.ndarray, first: int, last: int, window: int = PEAK_WINDOW_S) -> float:
    """``moving_average_peak`` of the series that is ``values`` at ``seconds`` (added where one repeats) and 0 in the
    other seconds of ``first``..``last``, without making it: a month of seconds is 2.6 million, and a partition of
    production's logs has a row in few of them."""
    return peak_window(seconds, values, first, last, window)[0]


def peak_window(
    seconds: np.ndarray, values: np.ndarray, first: int, last: int, window: int = PEAK_WINDOW_S
) -> tuple[float, int, int]:
    """``sparse_peak`` and where it lies: (peak, the window's first second, its length). Values are counts (never
    negative), so a best window can be slid right until it starts at a second with a value or ends at ``last``: those
    are the windows tried, and the first best one is given."""
    length = last - first + 1
    if length <= 0 or not len(seconds):
        return 0.0, first, max(0, min(window, length))
    window = min(window, length)
    order = np.argsort(seconds, kind="stable")
    at, totals = seconds[order] - first, np.concatenate(([0.0], np.cumsum(np.asarray(values, dtype=np.float64)[order])))
    starts = np.minimum(at, length - window)  # each window [start, start + window)
    ends = np.searchsorted(at, starts + window, side="left")
    sums = totals[ends] - totals[np.searchsorted(at, starts, side="left")]
    best = int(sums.argmax())
    return float(sums[best]) / window, int(starts[best]) + first, window


@dataclass(frozen=True)
class Phases:
    """Every second of the run (``span``), the seconds its means cover (``steady``), and the peak window.

    ``steady`` is the steady phase: the whole seconds with every user running, from the first after spawning completed
    to the last before the stop (the stop's second is partial; later ones hold only what finished after it, or a
    worker's clock ahead of the master's). A run with no such second (its ramp never finished, or finished in its
    last, partial second) has no steady phase (``ramped`` False): its means cover the whole seconds its users ran,
    ramp included, and the results say so with ``steady_seconds`` 0. ``span`` starts at the run's start or at an
    earlier bucket (a worker's clock behind the master's): every bucket counts in its own second."""

    span: range
    steady: range
    window: int
    ramped: bool = True

    @classmethod
    def of(
        cls,
        seconds: Iterable[int],
        started: float | None,
        steady_from: float | None,
        stopped: float | None,
        steady_until: float | None = None,
    ) -> Phases:
        """``steady_until``: the steady phase ends earlier than the run (merged engines: when the first stopped)."""
        seconds = list(seconds)
        earliest = min(seconds, default=None)
        start = int(started) if started else (earliest if earliest is not None else 0)
        first = start if earliest is None else min(start, earliest)
        last = max(seconds, default=first)
        if stopped:
            last = max(last, int(stopped) - 1)
        span = range(first, last + 1)  # ranges, not lists: a month of logs spans 2.6 million seconds
        end = int(stopped) if stopped else last + 1  # the first second not wholly before the stop
        if steady_until:
            end = min(end, int(steady_until))
        ran = range(max(first, start), min(last + 1, end)) or span  # a run under a second: its one, partial second
        if steady_from is None and not stopped:  # still running (or a count with no clock): all of it so far
            return cls(span, ran, max(1, min(PEAK_WINDOW_S, len(ran))))
        steady = range(max(ran.start, math.ceil(steady_from)), ran.stop) if steady_from is not None else range(0)
        # a run shorter than the window: the peak window is the steady phase, so peak >= mean
        return cls(span, steady or ran, max(1, min(PEAK_WINDOW_S, len(steady or ran))), ramped=bool(steady))

    def sparse_mean(self, seconds: np.ndarray, values: np.ndarray) -> float:
        """The mean over the steady phase of the series that is ``values`` at ``seconds`` and 0 in its other seconds
        (``sparse_peak``'s form)."""
        if not self.steady:
            return 0.0
        steady = (seconds >= self.steady.start) & (seconds < self.steady.stop)
        return round(float(np.asarray(values, dtype=np.float64)[steady].sum()) / len(self.steady), 2)

    def sparse_peak(self, seconds: np.ndarray, values: np.ndarray) -> float:
        """The peak (``moving_average_peak`` over the window) of the series that is ``values`` at ``seconds`` and 0 in
        the span's other seconds."""
        return round(sparse_peak(seconds, values, self.span.start, self.span.stop - 1, self.window), 2)
