"""The summary step on synthetic buckets: which seconds the means cover, and every bucket counted in its own second."""

from __future__ import annotations

import pytest
from helpers import run_info
from synthetic import environment, fire, recorded

from loadtest.findings.assess import assess
from loadtest.report import render
from loadtest.results.summary import build

START = 1_000_000.0


def at(metrics, env, second: float, events: list[dict]) -> None:
    """``events`` counted ``second`` seconds after ``START`` (a worker's last report, a clock behind the master's)."""
    metrics.clock.now = START + second
    for kwargs in events:
        fire(env, **kwargs)


@pytest.mark.parametrize("late", [1, 2], ids=["the-next-second", "two-seconds-on"])
def test_the_mean_leaves_out_the_stops_partial_second_and_the_seconds_after_it(late):
    """10 whole seconds at 120 entities/s, users stopped 0.3 s into second 10 (36 entities there), and a worker's last
    report landing ``late`` seconds after the stop (2 entities): the steady mean is 120, over the 10 whole seconds.
    Once a 3-worker run at 120/s offered reported 99.7."""
    env = environment()
    metrics = recorded({t: [{"entities": 120}] for t in range(10)}, env=env)
    at(metrics, env, 10.1, [{"entities": 36}])
    at(metrics, env, 10 + late + 0.2, [{"entities": 2}])
    metrics.stopped = START + 10.3
    results = build(metrics, run_info())
    (row,) = results.rows("GET")
    assert (row.mean_eps, results.account.mean_eps, results.run.steady_seconds) == (120.0, 120.0, 10)
    assert row.entities == 10 * 120 + 36 + 2  # every bucket is still counted
    assert results.timeseries["entities"].sum() == row.entities


def test_a_ramp_that_never_finished_leaves_no_steady_phase_and_the_mean_covers_the_ramp(tmp_path):
    """``-u 100 -r 1 -t 30s``: spawning never completed (no ``steady_from``). The run says it had no steady phase
    (``steady_seconds`` 0) and its means cover the seconds the users ran, ramp included, the stop's partial second out."""
    env = environment()
    metrics = recorded({t: [{"entities": 10 * (t + 1)}] for t in range(30)}, env=env)
    at(metrics, env, 30.1, [{"entities": 999}])
    metrics.steady_from, metrics.stopped = None, START + 30.4
    samples = {int(START) + t: {"users": t + 1} for t in range(31)}
    results = build(metrics, run_info(users=100), samples=samples)
    (row,) = results.rows("GET")
    assert (results.run.steady_seconds, results.run.steady_from_s) == (0, 0.0)
    assert row.mean_eps == sum(10 * (t + 1) for t in range(30)) / 30
    assert max(sample["users"] for sample in results.load) == 31
    html = " ".join(render(assess(results), tmp_path).read_text().split())
    assert "No steady phase</b>: no whole second had every user running" in html and "at most 31 of 100 users ran" in html


def test_a_ramp_that_finished_in_the_stops_partial_second_leaves_no_steady_phase_either():
    metrics = recorded({t: [{"entities": 10}] for t in range(3)}, steady_from=2)
    metrics.steady_from, metrics.stopped = START + 2.6, START + 2.8
    results = build(metrics, run_info())
    assert results.run.steady_seconds == 0 and results.rows("GET")[0].mean_eps == 10.0


def test_buckets_from_before_the_start_count_in_their_own_seconds_not_the_runs_last():
    """A worker whose clock is behind the master's: its first report lands in the second before the run's start. That
    second leads the account's series (as the partition's) and never lands in its last seconds."""
    env = environment()
    metrics = recorded({t: [{"entities": 100}] for t in range(12)}, steady_from=1, env=env)
    at(metrics, env, -0.5, [{"entities": 400}])  # the second before START
    results = build(metrics, run_info())
    (row,) = results.rows("GET")
    account = results.account
    assert account.entities == row.entities == 12 * 100 + 400
    assert (account.mean_eps, account.peak_eps) == (row.mean_eps, row.peak_eps) == (100.0, 130.0)
    by_second = results.timeseries.groupby("t")["entities"].sum().to_dict()
    assert min(by_second) == 0 and by_second[0] == 400 and by_second[max(by_second)] == 100
