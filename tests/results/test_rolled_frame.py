"""A long span's frame (seconds kept around the peaks, the rest per minute or hour) gives the figures the frame of
every second gives: each partition's and the account's peaks and means, served and asked, and every total."""

from __future__ import annotations

import random
from unittest.mock import patch

import numpy as np
import pytest
from helpers import run_info
from hypothesis import given, settings
from hypothesis import strategies as st

from loadtest.counting.counts import RunCounts
from loadtest.counting.histograms import new_histogram
from loadtest.counting.latency import PER_SECOND_FOR_S
from loadtest.counting.phases import Phases
from loadtest.results import rolled_frame, summary
from loadtest.results.rolled_frame import BIN_COLUMN, DAY_S, width_for

START = 1_793_491_200  # 2026-11-01T00:00:00Z
FIGURES = ("peak_eps", "offered_peak_eps", "mean_eps", "offered_mean_eps", "ratio", "offered_ratio")
TOTALS = ("requests", "entities", "offered", "attempts", "throttled", "failures", "throttled_by", "errors")


def _counts(seed: int, days: float, keys: int, rows: int, offset: int) -> RunCounts:
    """Counts as ``loadtest traffic`` leaves them: seconds over ``days`` (bursts: a key's rows cluster), some aged
    into chunks by ``compact``, latency in minutes and in the last seconds."""
    rng = random.Random(seed)
    counts = RunCounts(clock=lambda: 0.0, live=False)
    span = int(days * DAY_S)
    first = START + offset
    seconds = sorted(first + rng.randrange(span) for _ in range(rows))
    bursts = [first + rng.randrange(span) for _ in range(3)]
    seconds += [b + rng.randrange(12) for b in bursts for _ in range(rows // 10)]
    seconds += [first, first + span - 1]
    for second in sorted(min(s, first + span - 1) for s in seconds):
        partition = f"k{min(int(rng.paretovariate(1.1)), keys) - 1:03d}".replace("k001", "ALL")  # a key, not a total
        op_class = rng.choice(("GET", "PUT"))
        bucket = counts.bucket(second, partition, op_class)
        n = rng.randint(1, 40)
        bucket.requests += 1
        bucket.attempts += 1
        bucket.offered += n
        if rng.random() < 0.1:
            bucket.throttled += 1
            bucket.throttled_by["ServerBusy"] += 1
        elif rng.random() < 0.05:
            bucket.failures += 1
            bucket.errors["ResourceNotFound"] += 1
        else:
            bucket.entities += n
        counts.seen(partition, n)
        at = counts.latency.at_minute if second < seconds[-1] - PER_SECOND_FOR_S else counts.latency.at
        at(second, op_class).record_value(rng.randint(1_000, 90_000), 1)
        if rng.random() < 0.01:
            counts.compact(now=second)
    counts.first_attempt["GET"] = new_histogram()
    counts.started, counts.steady_from, counts.stopped = float(first), float(first), float(first + span)
    return counts


@pytest.mark.parametrize(("days", "width"), [(1, 1), (1.5, 60), (7, 60), (7.5, 3600), (40, 3600)])
def test_the_width_follows_the_span(days, width):
    assert width_for(int(days * DAY_S)) == width


@settings(max_examples=8, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    days=st.sampled_from([1.2, 3.0, 7.4, 9.0]),
    keys=st.integers(1, 80),
    offset=st.integers(0, 3599),
)
def test_a_long_spans_rolled_frame_gives_every_figure_of_its_seconds(seed, days, keys, offset):
    """Peaks (each partition's, each op class's and both together, the account's, served and asked), means and totals
    equal those of every second; the series' rows hold the same counts, a bin where no peak was."""
    info = run_info(target_kind="logs", duration_s=days * DAY_S, partition_target=50, account_target=200)
    whole = summary.build(_counts(seed, days, keys, 600, offset), info)
    with patch.object(rolled_frame, "_BATCH_ROWS", 97):  # many batches: windows and bins across their edges
        rolled = summary.build(_counts(seed, days, keys, 600, offset), info, roll=True)
    pairs = {(r.partition, r.op_class): r for r in whole.partitions}
    assert {(r.partition, r.op_class) for r in rolled.partitions} == set(pairs)
    for row in rolled.partitions:
        again = pairs[(row.partition, row.op_class)]
        assert [getattr(row, name) for name in FIGURES + TOTALS] == [getattr(again, name) for name in FIGURES + TOTALS]
    assert rolled.account == whole.account and rolled.keys == whole.keys and rolled.latency == whole.latency
    series, seconds = rolled.timeseries, whole.timeseries
    assert len(series) < len(seconds) and set(series[BIN_COLUMN]) - {1}
    for name in ("requests", "entities", "offered", "throttled", "failures"):
        assert series[name].sum() == seconds[name].sum()
    assert series[BIN_COLUMN].where(series[BIN_COLUMN] > 1).dropna().max() <= width_for(int(days * DAY_S))
    first = int(seconds["second"].min())
    assert series["second"].min() == first and (series["second"] + series[BIN_COLUMN]).max() == seconds["second"].max() + 1
    folded = sum(r["entities"] for r in rolled.key_ranges)
    assert folded == sum(r["entities"] for r in whole.key_ranges)


def test_a_bins_latency_is_its_minutes_together():
    """A bin of an hour reads the percentiles of its 60 minutes added; a second kept its minute's."""
    info = run_info(target_kind="logs", duration_s=8 * DAY_S)
    rolled = summary.build(_counts(7, 8, 5, 400, 0), info, roll=True)
    frame = rolled.timeseries
    hours = frame[frame[BIN_COLUMN] == 3600]
    assert len(hours) and (hours["p99_ms"] > 0).all()
    assert (hours["second"] % 3600 == 0).all()  # whole hours of the wall clock (the span starts on one here)
    kept = frame[frame[BIN_COLUMN] == 1]
    assert len(kept) and (kept["p99_ms"] > 0).all()


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10**6), days=st.sampled_from([2.5, 8.0]))
def test_batches_out_of_time_order_are_read_again_holding_every_row_to_the_same_figures(seed, days):
    """Read in time order, each series holds only its newest seconds; given out of order (shards named in any order),
    that is seen, not guessed past: the batches are read again with every row held, to the same figures."""
    counts = _counts(seed, days, 30, 500, 0)
    phases = Phases.of([], counts.started, counts.steady_from, counts.stopped)
    top = counts.top_partitions()
    frames = list(counts.frames())
    pieces = [frame.iloc[rows] for frame in frames for rows in np.array_split(np.arange(len(frame)), 7) if len(rows)]
    shuffled = random.Random(seed).sample(pieces, len(pieces))
    figures = []
    with patch.object(rolled_frame, "_BATCH_ROWS", 53):
        for given, in_order in ((pieces, True), (shuffled, False)):
            batches = (frame for frame, _ in rolled_frame._batches(given, top))
            assert (rolled_frame._windows_in_order(batches, phases) is not None) == in_order
            frame, _ = rolled_frame.rolled(lambda given=given: iter(given), phases, top, counts.ranges)
            figures.append((summary.partition_rows(frame, phases, 50), summary.account_row(frame, phases, 200)))
    assert figures[0] == figures[1]
