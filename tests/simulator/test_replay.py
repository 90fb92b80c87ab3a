"""A traffic profile as the simulation's demand: each key asked what the logs counted, a tail group standing for its
keys exactly as the keys one by one would, the rate over time following the profile's bins, and the unattributed
demand spread or apart as asked."""

from __future__ import annotations

import json

import numpy as np
import pytest

from loadtest.counting.bucket_frame import to_buckets
from loadtest.counting.buckets import OTHER, UNATTRIBUTED
from loadtest.emulator.budgets import Budgets
from loadtest.service.retry import parse_retry
from loadtest.simulator.demand import Demand
from loadtest.simulator.replay import replay
from loadtest.simulator.simulation import Simulation
from loadtest.traffic import profile_counts
from loadtest.traffic.profile_counts import ProfileCounts

T0 = 1_795_000_000


def profile_of(per_second: list[dict[str, int]], *, unattributed: int = 0) -> dict:
    """Each second's GET operations per key (an entity each), and ``unattributed`` inserts a second."""
    counts = ProfileCounts()
    for s, demand in enumerate(per_second):
        for key, n in demand.items():
            for _ in range(n):
                counts.add(T0 + s, "QueryEntity", "GET", key, 1)
        for _ in range(unattributed):
            counts.add(T0 + s, "InsertEntity", "PUT", UNATTRIBUTED, 1)
    return counts.profile(first=T0, last=T0 + len(per_second) - 1, hashed=False, records=0, entity_bytes=1024)


def simulate(demand: Demand, *, rate: float, seconds: int, shape=None, partition_rate=1e6, account_rate=1e9) -> dict:
    budgets = Budgets(partition_rate=partition_rate, account_rate=account_rate, burst=0.1)
    metrics = Simulation(demand, budgets, parse_retry("none"), rate=rate, seconds=seconds, step=0.1, shape=shape).run()
    served: dict[str, float] = {}
    for (_, partition, _), bucket in to_buckets(metrics.frame()).items():
        served[partition] = served.get(partition, 0) + bucket.entities
    return served


def test_each_key_is_asked_what_the_logs_counted():
    replayed = replay(profile_of([{"hot": 30, "a": 10, "b": 5}] * 4), unattributed="apart")
    assert replayed.mean_rate == 45 and replayed.peak_rate == 45 and list(replayed.shape) == [1.0] * 4
    expected = dict(zip(replayed.demand.keys, replayed.demand.expected(replayed.mean_rate), strict=True))
    assert expected == pytest.approx({"hot": 30, "a": 10, "b": 5})
    served = simulate(replayed.demand, rate=replayed.mean_rate, seconds=4)
    assert served == pytest.approx({"hot": 120, "a": 40, "b": 20}, abs=1)


def test_a_tail_group_is_replayed_as_its_keys_one_by_one(monkeypatch):
    """Under an account budget that binds, the group's share of it is its keys'; its served entities are theirs."""
    monkeypatch.setattr(profile_counts, "HEAVIEST", 1)
    second = {"hot": 40, **{f"t{i:02}": 4 for i in range(20)}}  # twenty tail keys alike: one group of 20
    grouped = replay(profile_of([second] * 5), unattributed="apart")
    assert len(grouped.demand.keys) == 2 and sorted(grouped.demand.key_counts) == [1, 20]
    monkeypatch.setattr(profile_counts, "HEAVIEST", 100)
    apart = replay(profile_of([second] * 5), unattributed="apart")
    assert len(apart.demand.keys) == 21
    limits = {"partition_rate": 30, "account_rate": 90}  # the hot key and the account both throttled
    one = simulate(grouped.demand, rate=grouped.mean_rate, seconds=5, **limits)
    each = simulate(apart.demand, rate=apart.mean_rate, seconds=5, **limits)
    assert one["hot"] == pytest.approx(each["hot"], rel=0.01)
    # each of the 20 keys counted apart is a whole number of entities, within half of its exact share (the rounding is
    # carried from second to second): together within 10 of the group's
    assert one[OTHER] == pytest.approx(sum(v for k, v in each.items() if k != "hot"), abs=20 / 2)
    assert one["hot"] + one[OTHER] == pytest.approx(5 * 90, rel=0.05)  # the account's budget, spent whole


def test_the_rate_follows_the_profiles_time_shape_at_its_scale():
    seconds = [{"k": 10}, {"k": 10}, {"k": 40}, {"k": 10}]  # a peak in the third second
    replayed = replay(profile_of(seconds), unattributed="apart")
    assert replayed.peak_rate == 40 and replayed.mean_rate == 17.5
    budgets = Budgets(partition_rate=1e6, account_rate=1e9, burst=0.1)
    metrics = Simulation(
        replayed.demand, budgets, parse_retry("none"), rate=3 * replayed.mean_rate, seconds=4, step=0.1, shape=replayed.shape
    ).run()
    per_second = [to_buckets(metrics.frame())[(t, "k", "GET")].requests for t in range(4)]
    assert per_second == [30, 30, 120, 30]


@pytest.mark.parametrize("unattributed", ["spread", "apart"])
def test_unattributed_demand_is_spread_as_the_attributed_or_kept_apart(unattributed):
    replayed = replay(profile_of([{"hot": 8, "cool": 2}] * 2, unattributed=5), unattributed=unattributed)
    (inserts,) = [s for s in replayed.demand.streams if s.op == "unattributed PUT"]
    assert inserts.share == pytest.approx(5 / 15) and inserts.keyed == (unattributed == "spread")
    served = simulate(replayed.demand, rate=replayed.mean_rate, seconds=2)
    if unattributed == "spread":  # PUT has no attributed demand here: the inserts land as every op class's does
        assert served == pytest.approx({"hot": 2 * (8 + 4), "cool": 2 * (2 + 1)}, abs=1)
    else:
        assert served == pytest.approx({"hot": 16, "cool": 4, OTHER: 10}, abs=1)
    assert np.isclose(sum(s.share for s in replayed.demand.streams), 1.0)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--key-strategy", "guid", "--mix", "read=1"], "--key-strategy, --mix: with --traffic the profile's partitions"),
        (["--scale", "0"], "--scale '0': must be a multiple above 0 and at most 1000"),
        (["--scale", "2", "--arrival-rate", "100"], "--scale and --arrival-rate: give one"),
        (["--unattributed", "everywhere"], "--unattributed 'everywhere': valid values: spread, apart"),
        (["-t", "1h"], "-t 3600s: longer than the profile's span (2 s)"),
        (["--scale", "1000", "--emulator-partition-rate", "5"], None),  # within the rule: runs
    ],
)
def test_a_replay_refuses_what_the_profile_stands_for_in_one_line(monkeypatch, tmp_path, args, said):
    from helpers import in_process

    path = tmp_path / "traffic.json"
    path.write_text(json.dumps(profile_of([{"k": 3}] * 2)))
    code, stdout, stderr = in_process(monkeypatch, "simulate", "--traffic", str(path), *args, "--out", str(tmp_path / "o"))
    if said is None:
        assert code in (0, 3) and "Production traffic" in (tmp_path / "o" / "report.html").read_text(), stdout + stderr
        return
    assert code == 2 and stderr.count("\n") == 1 and said in stderr, stderr
    assert "Traceback" not in stderr and not (tmp_path / "o").exists()


def test_profile_out_is_checked_before_any_log_is_read(monkeypatch, tmp_path):
    from helpers import in_process

    log = tmp_path / "requests.json"
    log.write_text("{}\n")
    for target, said in (
        (tmp_path / "none" / "t.json", "does not exist or cannot be written"),
        (tmp_path, "a folder; give a file to write"),
        (log, "the file exists; give --overwrite"),
    ):
        code, _, stderr = in_process(
            monkeypatch, "traffic", str(log), "--profile-out", str(target), "--no-report", "--out", str(tmp_path / "o")
        )
        assert code == 2 and stderr.count("\n") == 1 and f"--profile-out {str(target)!r}: " in stderr and said in stderr, stderr
        assert not (tmp_path / "o").exists()


def test_a_replays_own_options_without_a_profile_are_refused(monkeypatch, tmp_path):
    from helpers import in_process

    code, _, stderr = in_process(monkeypatch, "simulate", "--arrival-rate", "10", "--scale", "3", "--split-hot", "4")
    assert code == 2 and stderr.count("\n") == 1 and "--scale, --split-hot: only with --traffic FILE" in stderr, stderr
