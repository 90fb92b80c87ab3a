"""A long span's buckets as one frame that fits: each second kept where the figures read seconds, the rest summed per
minute or per hour.

A month of production's logs at 10 requests/s is some 12 million rows a second, partition and op class: held as one
frame (and a series with its latency beside it) they were gigabytes. The verdict reads seconds in one place: each
partition's and the account's busiest ``PEAK_WINDOW_S`` seconds (its peak, served and asked, per op class and both
together). Those windows are found first, over every second counted (``_windows``: read in time order, each series'
newest seconds held and the rest let go; every row held where batches come out of order). Their seconds keep their
rows, and every other row goes into its bin (``width_for``: a minute past a day, an hour past a week), a row of
``bin_s`` seconds (whole minutes or hours of the wall clock, the first and last as the span cuts them). Sums are exact
whatever the width; the peaks are exact because the seconds that make each one are all kept, and a window of other
seconds can only read less than it held.

Keys outside the run's top are folded into ``OTHER`` before the windows are looked for (as ``summary.counted`` folds
a frame of seconds), so the other partitions' peak is theirs together, and the entities folded are given per bin and
first key character (``key_ranges``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator

import numpy as np
import pandas as pd

from ..counting.bucket_frame import summed
from ..counting.buckets import GROUPS, OTHER
from ..counting.counts import RunCounts
from ..counting.latency import PER_SECOND_FOR_S, ROLLUP_S
from ..counting.phases import Phases, peak_window
from .series_schema import MAX_BIN_S
from .wall_clock import unit_of

__all__ = ["BIN_COLUMN", "DAY_S", "PAST_A_DAY", "WEEK_S", "bin_start", "binned_leaves_out", "rolled", "width_for"]

DAY_S = 86_400
WEEK_S = 7 * DAY_S
BIN_COLUMN = "bin_s"  # seconds a row holds: 1, or its bin's (the span cuts its first and last)
#: What request logs read over a span past a day leave out beside the rest (``binned_leaves_out``).
PAST_A_DAY = "; past a day, "
_BATCH_ROWS = 250_000  # rows decoded and handled together: few numpy calls a chunk, bounded memory
#: The series that are no partition's alone, named as no PartitionKey can be ('#' is forbidden in keys): the account's
#: (every row), and a partition's op classes together.
_ACCOUNT, _BOTH = "#account", "#both"


def width_for(span_s: int) -> int:
    """Seconds a row not kept holds: every second up to a day, a minute up to a week, an hour beyond."""
    return 1 if span_s <= DAY_S else 60 if span_s <= WEEK_S else MAX_BIN_S


def binned_leaves_out(width: int) -> str:
    """What a span read in bins of ``width`` seconds leaves out (results.logs' ``leaves_out`` ends with it): nothing
    for seconds."""
    if width == 1:
        return ""
    return (
        f"{PAST_A_DAY}the seconds outside each partition's and the account's busiest windows (summed per "
        f"{unit_of(width)}: a partition's own refusals are judged outages only in the seconds kept)"
    )


def _batches(frames: Iterable[pd.DataFrame], top: Collection[str]) -> Iterator[tuple[pd.DataFrame, pd.DataFrame]]:
    """The frames gathered to ``_BATCH_ROWS`` rows, each with keys outside ``top`` folded into ``OTHER``: (the batch,
    its folded rows as they were)."""
    keep = frozenset(top) | GROUPS
    gathered: list[pd.DataFrame] = []
    rows = 0

    def batch() -> tuple[pd.DataFrame, pd.DataFrame]:
        frame = pd.concat(gathered, ignore_index=True)
        folding = ~frame["partition"].isin(keep)
        moved = frame[folding]
        if folding.any():
            frame = frame.assign(partition=frame["partition"].where(~folding, OTHER))
        return frame, moved

    for frame in frames:
        if len(frame):
            gathered.append(frame)
            rows += len(frame)
        if rows >= _BATCH_ROWS:
            yield batch()
            gathered, rows = [], 0
    if gathered:
        yield batch()


def _asked(frame: pd.DataFrame) -> np.ndarray:
    return (frame["offered"] + frame["unsent"]).to_numpy(np.int64)


def _rows(frame: pd.DataFrame, first: int) -> np.ndarray:
    """A batch's (second from the span's first, entities served, entities asked), a column a row: 32 bits where they
    fit (a month's rows are some 12 million)."""
    values = np.stack([frame["second"].to_numpy(np.int64) - first, frame["entities"].to_numpy(np.int64), _asked(frame)])
    return values.astype(np.int32) if values.min() >= 0 and values.max() < 2**31 else values


def _spans(track: np.ndarray, first: int, last: int, window: int) -> list[tuple[int, int]]:
    """The busiest window of a track's rows (``_rows``' form), served and asked: [start, stop) each."""
    spans = []
    for column in (1, 2):
        _, start, length = peak_window(track[0], track[column], 0, last - first, window)
        spans.append((first + start, first + start + length))
    return spans


class _Track:
    """One series read in time order: its best windows so far (served, asked) and the rows of its newest seconds,
    which a window ending later may still hold. Each window is read whole once its last row is in (every row of it
    since is held), and read in part before that (never more than it holds): the best read is the best window."""

    __slots__ = ("best", "newest", "rows", "starts")

    def __init__(self) -> None:
        self.best, self.starts = [-1.0, -1.0], [0, 0]
        self.rows: np.ndarray | None = None
        self.newest = -1

    def add(self, rows: np.ndarray, last: int, window: int) -> bool:
        """A batch's rows of the series; False where one comes before the newest second read (out of time order)."""
        if rows[0].min() < self.newest:
            return False
        held = rows if self.rows is None else np.concatenate([self.rows, rows], axis=1)
        for column in (0, 1):
            peak, start, _ = peak_window(held[0], held[column + 1], 0, last, window)
            if peak > self.best[column]:
                self.best[column], self.starts[column] = peak, start
        self.newest = int(held[0].max())
        self.rows = held[:, held[0] > self.newest - window]
        return True

    def spans(self, first: int, length: int) -> list[tuple[int, int]]:
        return [(first + start, first + start + length) for start in self.starts]


def _windows(frames: Callable[[], Iterable[pd.DataFrame]], phases: Phases) -> dict[str, list[tuple[int, int]]]:
    """Per partition (``_ACCOUNT``: the account, every partition's rows): the [start, stop) of each busiest window, served
    and asked, of each op class and of them together. Read in time order (as records are counted and shards given)
    only the newest seconds of each series are held; batches out of order are read again, every row held."""
    found = _windows_in_order(frames(), phases)
    return _windows_held(frames(), phases) if found is None else found


def _windows_in_order(batches: Iterable[pd.DataFrame], phases: Phases) -> dict[str, list[tuple[int, int]]] | None:
    first, last, window = phases.span.start, phases.span.stop - 1 - phases.span.start, phases.window
    tracks: dict[tuple[str, str], _Track] = {}
    for frame in batches:
        values = _rows(frame, first)
        given = [((_ACCOUNT, _BOTH), values)]
        for partition, rows in frame.groupby("partition", sort=False).indices.items():
            given.append(((partition, _BOTH), values[:, rows]))
            classes = frame["op_class"].to_numpy()[rows]
            for op_class in np.unique(classes):
                given.append(((partition, op_class), values[:, rows[classes == op_class]]))
        for key, rows in given:
            if not tracks.setdefault(key, _Track()).add(rows, last, window):
                return None
    length = min(window, last + 1)
    out: dict[str, list[tuple[int, int]]] = {_ACCOUNT: []}
    for (partition, _), track in tracks.items():
        out.setdefault(partition, []).extend(track.spans(first, length))
    return {partition: sorted(set(spans)) for partition, spans in out.items()}


def _windows_held(batches: Iterable[pd.DataFrame], phases: Phases) -> dict[str, list[tuple[int, int]]]:
    """``_windows`` with every row held: each partition's and op class's (the account's summed per second)."""
    first, last, window = phases.span.start, phases.span.stop - 1, phases.window
    parts: dict[tuple[str, str], list[np.ndarray]] = {}
    account: list[np.ndarray] = []
    for frame in batches:
        values = _rows(frame, first)
        for key, rows in frame.groupby(["partition", "op_class"], sort=False).indices.items():
            parts.setdefault(key, []).append(values[:, rows])
        distinct, inverse = np.unique(values[0], return_inverse=True)
        account.append(np.stack([distinct, *(np.bincount(inverse, weights=v, minlength=len(distinct)) for v in values[1:])]))
    out: dict[str, list[tuple[int, int]]] = {}
    for partition in sorted({p for p, _ in parts}):
        classes = [np.concatenate(parts.pop((partition, c)), axis=1) for p, c in list(parts) if p == partition]
        tracks = [*classes, np.concatenate(classes, axis=1)]
        out[partition] = sorted({span for track in tracks for span in _spans(track, first, last, window)})
    out[_ACCOUNT] = sorted(set(_spans(np.concatenate(account, axis=1), first, last, window))) if account else []
    return out


def _kept(frame: pd.DataFrame, windows: dict[str, list[tuple[int, int]]]) -> np.ndarray:
    """Which rows lie in their partition's windows or the account's."""
    seconds = frame["second"].to_numpy(np.int64)
    kept = np.zeros(len(frame), bool)
    for start, stop in windows[_ACCOUNT]:
        kept |= (seconds >= start) & (seconds < stop)
    for partition, rows in frame.groupby("partition", sort=False).indices.items():
        at = seconds[rows]
        inside = np.zeros(len(rows), bool)
        for start, stop in windows.get(partition, ()):
            inside |= (at >= start) & (at < stop)
        kept[rows] |= inside
    return kept


def bin_start(seconds: np.ndarray, phases: Phases, width: int) -> np.ndarray:
    """The first second of each second's bin: bins of ``width`` on the wall clock (whole minutes, whole hours, as
    the latency's minutes are), the first from the span's first second."""
    return np.maximum(phases.span.start, seconds // width * width)


def _binned(frame: pd.DataFrame, phases: Phases, width: int) -> pd.DataFrame:
    """Each row moved to its bin's first second, with its bin's length (the first and last as the span cuts them)."""
    seconds = frame["second"].to_numpy(np.int64)
    start = bin_start(seconds, phases, width)
    stop = np.minimum((seconds // width + 1) * width, phases.span.stop)
    return frame.assign(second=start, **{BIN_COLUMN: stop - start})


def rolled(
    frames: Callable[[], Iterable[pd.DataFrame]], phases: Phases, top: Collection[str], ranges: Counter[tuple[int, str]]
) -> tuple[pd.DataFrame, Counter[tuple[int, str]]]:
    """Every bucket of ``frames`` (called twice: each pass reads them afresh, a chunk at a time) with keys outside
    ``top`` folded into ``OTHER``, the windows' seconds a row each and the rest per ``width_for`` the span (a
    ``BIN_COLUMN`` says which); and the entities folded (``ranges``, the counts' own, and those folded here) per bin
    and first key character."""
    width = width_for(len(phases.span))
    windows = _windows(lambda: (frame for frame, _ in _batches(frames(), top)), phases)
    kept: list[pd.DataFrame] = []
    binned: list[pd.DataFrame] = []
    folded: Counter[tuple[int, str]] = Counter()
    for frame, moved in _batches(frames(), top):
        inside = _kept(frame, windows)
        kept.append(frame[inside])
        binned.append(summed(_binned(frame[~inside], phases, width).drop(columns=BIN_COLUMN)))
        if len(moved):
            moved = _binned(moved, phases, width)
            by_range = moved.groupby([moved["second"], moved["partition"].str[:1]])["entities"].sum()
            folded.update({(int(second), start): int(n) for (second, start), n in by_range.items()})
    if ranges:  # the counts' own, folded as they aged: a month's are some 200,000 (second, range) pairs
        aged_at, starts = zip(*ranges, strict=True)
        at = bin_start(np.fromiter(aged_at, np.int64, len(ranges)), phases, width).tolist()
        for second, start, n in zip(at, starts, ranges.values(), strict=True):
            folded[(second, start)] += n
    seconds = summed(pd.concat(kept, ignore_index=True)).assign(**{BIN_COLUMN: 1}) if kept else None
    bins = summed(pd.concat(binned, ignore_index=True)) if binned else None
    if bins is not None:
        bins = _binned(bins, phases, width)
    parts = [part for part in (seconds, bins) if part is not None]
    if not parts:
        return pd.DataFrame(), folded
    frame = pd.concat(parts, ignore_index=True)
    return frame.sort_values(["second", "partition", "op_class", BIN_COLUMN], kind="stable", ignore_index=True), folded


def rolled_counts(counts: RunCounts) -> tuple[Phases, pd.DataFrame, Counter[tuple[int, str]]] | None:
    """Records read over more than a day, read back a batch at a time into this form: their phases, frame and key
    ranges (the clock must be whole: records read, not a run still counting); None for a span kept in seconds."""
    if counts.started is None or counts.stopped is None:
        return None
    phases = Phases.of([], counts.started, counts.steady_from, counts.stopped, counts.steady_until)
    if width_for(len(phases.span)) == 1:
        return None
    frame, ranges = rolled(counts.frames, phases, counts.top_partitions(), counts.ranges)
    return phases, frame, ranges


def minute_bins(counts: RunCounts, phases: Phases) -> Callable[[int], int]:
    """A long span's latency read by its bins: every second's histograms rolled into their minutes (here, in
    ``counts``), and the bin each minute falls in."""
    width = width_for(len(phases.span))
    for latency in (counts.latency, counts.corrected):
        latency.roll_up(phases.span[-1] + PER_SECOND_FOR_S + ROLLUP_S)
    return lambda minute: int(bin_start(np.int64(minute), phases, width))
