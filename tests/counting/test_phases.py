"""A run's phases and its peak: the moving average's best window."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from loadtest.counting.phases import Phases, moving_average_peak, peak_window


def test_moving_average_peak_is_the_best_10_second_window():
    series = [0.0] * 5 + [100.0] * 10 + [0.0] * 5 + [1000.0]
    assert moving_average_peak(series) == (4 * 100.0 + 1000.0) / 10  # the window ending on the spike wins
    assert moving_average_peak([4.0, 8.0]) == 6.0  # shorter than the window: its mean
    assert moving_average_peak([]) == 0.0


def test_a_run_still_going_is_all_steady_and_a_stopped_one_leaves_out_its_ramp_and_partial_second():
    running = Phases.of(range(100, 105), started=100.0, steady_from=None, stopped=None)
    assert running.steady == running.span == range(100, 105) and running.ramped
    stopped = Phases.of(range(100, 112), started=100.0, steady_from=102.5, stopped=110.4)
    assert stopped.steady == range(103, 110) and stopped.window == 7  # shorter than 10 s: its own length
    never = Phases.of(range(100, 105), started=100.0, steady_from=None, stopped=104.2)
    assert not never.ramped and never.steady == range(100, 104)


@settings(max_examples=300, derandomize=True)
@given(
    rows=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 10**6)), max_size=40),
    extra=st.integers(0, 30),
    window=st.integers(1, 15),
    steady_from=st.integers(0, 40),
)
def test_the_peak_and_mean_of_a_partitions_rows_are_those_of_its_seconds_made_whole(rows, extra, window, steady_from):
    """A month of logs is 2.6 million seconds and a partition has rows in few of them: its figures are read from its
    rows (several in one second added), and equal those of the whole series, a second each, zeros between."""
    last = max([t for t, _ in rows], default=0) + extra
    phases = Phases.of([t for t, _ in rows], 0, steady_from, last + 1)
    phases = Phases(phases.span, phases.steady, min(window, len(phases.span)), phases.ramped)
    dense = np.zeros(len(phases.span))
    for t, n in rows:
        dense[t - phases.span.start] += n
    seconds, values = np.array([t for t, _ in rows], np.int64), np.array([n for _, n in rows], np.float64)
    assert phases.sparse_peak(seconds, values) == round(moving_average_peak(dense, phases.window), 2)
    steady = dense[phases.steady.start - phases.span.start : phases.steady.stop - phases.span.start]
    assert phases.sparse_mean(seconds, values) == (round(float(steady.sum()) / len(steady), 2) if len(steady) else 0.0)
    if rows:  # where the peak lies: a window of the span whose own seconds sum to it
        peak, start, length = peak_window(seconds, values, phases.span.start, phases.span.stop - 1, phases.window)
        assert length == phases.window and phases.span.start <= start <= phases.span.stop - length
        assert dense[start - phases.span.start : start - phases.span.start + length].sum() / length == peak
