"""Outages from synthetic seconds: what counts as one, its seconds, and the cause the run knows."""

from helpers import run_info
from synthetic import recorded

from loadtest.findings.assess import assess, checks_for, exit_code
from loadtest.findings.outages import outages
from loadtest.options.rules import fail_on
from loadtest.results.summary import build


def served(partitions=("hot",), per_second=20, ms=5.0):
    return [{"partition": p, "ms": ms} for p in partitions for _ in range(per_second)]


def results_of(seconds, start=1_000_000.0, **info):
    return assess(build(recorded(seconds, start=start), run_info(**info)))


def frozen(seconds=20, at=8, frozen_s=6, partitions=("hot",), **info):
    """Every partition served each second, nothing from ``at`` for ``frozen_s`` s; the operations that waited through
    it end as it comes back (their latency covers it), one of them after a timed-out attempt."""
    events = {t: served(partitions) for t in range(seconds) if not at <= t < at + frozen_s}
    back = at + frozen_s
    events[back] = served(partitions) + [
        {"partition": p, "ms": frozen_s * 1000.0 - 300, "attempts": 2} for p in partitions
    ]  # started as it froze, and waited through it
    return results_of(events, **info)


def test_a_frozen_target_is_one_outage_naming_its_seconds_and_the_whole_target():
    results = frozen()
    (outage,) = outages(results)
    assert (outage.partition, outage.start, outage.end) == ("hot", 8, 13)  # seconds 8 to 14 served nothing
    assert outage.shared == ("target", 8, 13) and outage.failed == 1 and outage.longest_ms == 5700
    (finding,) = [f for f in results.findings if f.kind == "OUTAGE"]
    assert "completed nothing for 6 s, from 8 s to 14 s" in finding.message
    assert "the whole target answered nothing" in finding.message and "5.7 s" in finding.message
    assert finding.partition == "hot" and finding.remedy
    code, messages = exit_code(results, checks_for(fail_on("--fail-on", "outage")))  # CI can fail a run on one
    assert code == 3 and "--fail-on outage: 1 OUTAGE finding(s)" in messages[0]


def test_a_long_runs_outage_says_its_seconds_in_utc_too():
    """Past ten minutes a finding's seconds carry the wall-clock time (Azure's logs and metrics are in it): second 0
    here is epoch 1,700,000,000, 22:13:20 UTC."""
    long = frozen(seconds=700, at=650, start=1_700_000_000.0, duration_s=700)
    (finding,) = [f for f in long.findings if f.kind == "OUTAGE"]
    assert "completed nothing for 6 s, from 650 s to 656 s (22:24:10 to 22:24:16 UTC)" in finding.message
    short = frozen()
    assert "UTC" not in next(f for f in short.findings if f.kind == "OUTAGE").message


def test_the_whole_target_frozen_over_many_partitions_is_one_finding():
    results = frozen(partitions=("a", "b", "c", "d"))
    assert len(outages(results)) == 4
    (finding,) = [f for f in results.findings if f.kind == "OUTAGE"]
    assert finding.message.startswith("4 partitions ('a', 'b', 'c' and 1 more) completed nothing for 6 s")


def test_one_partition_only_refused_is_throttled_not_out_unless_its_range_was_offline_being_moved():
    """Issue #64: a run at 1,016 % of its budget was THROTTLED and OUTAGE "completed nothing for 2 s ... only this
    partition's operations went unanswered or refused" — one cause, two findings. Refusals are answers: THROTTLED's.
    A range the partition layer had offline, moving it after a split, answers 503s too: that is its outage."""
    events = {t: served(("a", "z")) for t in range(20)}
    for t in range(8, 12):  # 'a' only refused, its operations failing with ServerBusy after their retries
        events[t] = served(("z",)) + [{"partition": "a", "error": "ServerBusy", "attempts": 3, "throttled": 3}] * 5
    results = results_of(events)
    kinds = {f.kind for f in results.findings if f.partition == "a"}
    assert outages(results) == [] and "OUTAGE" not in kinds and "THROTTLED" in kinds
    results.range_splits = [{"t": 7.6, "key": "m", "low": "", "high": "", "offline_until_t": 12.6}]
    (outage,) = outages(results)
    assert (outage.partition, outage.start, outage.end, outage.failed) == ("a", 8, 11, 60)  # its refusals, offline
    assert "split the range of keys from '' up to the end at 'm' at 7.6 s" in outage.cause
    results.range_splits = [{"t": 7.6, "key": "m", "low": "m", "high": "", "offline_until_t": 12.6}]  # not a's range
    assert outages(results) == []
    unanswered = {t: served(("a", "z")) for t in range(20)}
    for t in range(8, 12):  # 'a' unanswered while 'z' was served: its own outage
        unanswered[t] = served(("z",)) + [{"partition": "a", "error": "ConnectionError", "attempts": 3}] * 5
    (outage,) = outages(results_of(unanswered))
    assert outage.failed == 60 and "only this partition's operations went unanswered while" in outage.cause


def test_no_outage_for_a_pause_a_quiet_partition_a_slow_operation_alone_or_a_lost_target():
    one_second = {t: served() for t in range(20) if t != 8}
    one_second[9] = served() + [{"partition": "hot", "ms": 1500.0}]
    assert outages(results_of(one_second)) == []  # one second: a pause
    quiet = {t: [{"partition": "hot"}] for t in range(0, 20, 4)}  # an operation every 4 s, none waiting between
    quiet[8] = [{"partition": "hot", "ms": 3500.0}]  # one slow one on a partition served under once a second
    assert outages(results_of(quiet)) == []
    lost = {t: served() for t in range(10)}
    lost.update({t: [{"partition": "hot", "error": "ConnectionError"}] * 20 for t in range(10, 16)})
    results = results_of(lost)
    assert outages(results) == [] and "TARGET_LOST" in [f.kind for f in results.findings]


def test_outages_in_a_simulation_say_simulated():
    events = {t: served(("a",)) for t in range(20)}
    for t in range(8, 11):
        events[t] = [{"partition": "a", "error": "ServerBusy", "attempts": 1, "throttled": 1}] * 5
    results = results_of(events, simulated=True)
    results.range_splits = [{"t": 8.0, "key": "b", "low": "", "high": "", "offline_until_t": 11.0}]
    assert outages(results)[0].cause.startswith("the simulated partition layer split")
    assess(results)
    assert "the longest operation" not in [f for f in results.findings if f.kind == "OUTAGE"][0].message  # timed nothing
