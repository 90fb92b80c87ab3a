"""A run's phases and its peak: the moving average's best window."""

from __future__ import annotations

from loadtest.phases import Phases, moving_average_peak


def test_moving_average_peak_is_the_best_10_second_window():
    series = [0.0] * 5 + [100.0] * 10 + [0.0] * 5 + [1000.0]
    assert moving_average_peak(series) == (4 * 100.0 + 1000.0) / 10  # the window ending on the spike wins
    assert moving_average_peak([4.0, 8.0]) == 6.0  # shorter than the window: its mean
    assert moving_average_peak([]) == 0.0


def test_a_run_still_going_is_all_steady_and_a_stopped_one_leaves_out_its_ramp_and_partial_second():
    running = Phases.of(range(100, 105), started=100.0, steady_from=None, stopped=None)
    assert running.steady == running.span == list(range(100, 105)) and running.ramped
    stopped = Phases.of(range(100, 112), started=100.0, steady_from=102.5, stopped=110.4)
    assert stopped.steady == list(range(103, 110)) and stopped.window == 7  # shorter than 10 s: its own length
    never = Phases.of(range(100, 105), started=100.0, steady_from=None, stopped=104.2)
    assert not never.ramped and never.steady == list(range(100, 104))
