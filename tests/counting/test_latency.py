"""Latency at any length: aged seconds rolled into their minutes, nothing lost from the run's percentiles."""

from __future__ import annotations

import random

from synthetic import Clock, fire, listener

from loadtest.counting.counts import RunCounts
from loadtest.counting.histograms import max_ms, ms_at
from loadtest.counting.latency import LIVE_FOR_S, PER_SECOND_FOR_S, ROLLUP_S, Latency

START = 1_000_030  # half a minute in: the roll-up goes by whole minutes of wall-clock time


def filled(seconds: int, seed: int = 3) -> Latency:
    draw, latency = random.Random(seed), Latency()
    for second in range(START, START + seconds):
        for op_class in ("GET", "PUT"):
            hist = latency.at(second, op_class)
            for _ in range(5):
                hist.record_value(int(draw.lognormvariate(8, 0.7)))
    return latency


def kept_apart(latency: Latency) -> set[tuple[int, str]]:
    """The (second, op class) kept per second: live or packed."""
    return latency.seconds.keys() | latency.packed.keys()


def percentiles(latency: Latency) -> dict[str, tuple]:
    return {op: (h.get_total_count(), *(ms_at(h, p) for p in (50, 95, 99, 100))) for op, h in latency.by_op_class().items()}


def test_seconds_ten_minutes_old_go_into_their_minutes_and_the_runs_percentiles_stay_exact():
    latency = filled(3600)
    whole = percentiles(latency)
    newest = START + 3599
    latency.roll_up(newest)
    kept = {second for second, _ in kept_apart(latency)}
    oldest_kept = newest - PER_SECOND_FOR_S
    assert min(kept) == oldest_kept - oldest_kept % ROLLUP_S and max(kept) == newest  # whole minutes
    assert all(minute % ROLLUP_S == 0 and minute < min(kept) for minute, _ in latency.minutes)
    assert len(latency.minutes) == 2 * len({m for m, _ in latency.minutes}) == 2 * ((min(kept) - START) // ROLLUP_S + 1)
    assert percentiles(latency) == whole  # histograms add without loss
    latency.roll_up(newest)  # again: nothing moves twice
    assert percentiles(latency) == whole


def test_an_aged_second_reads_its_minutes_figures_and_a_window_counts_a_minute_once():
    latency = filled(1200)
    minute = START - START % ROLLUP_S + ROLLUP_S  # the first whole minute
    inside = set(range(minute, minute + ROLLUP_S))
    before = latency.over(inside)
    latency.roll_up(START + 1199)
    assert (minute, "GET") in latency.minutes and (minute, "GET") not in kept_apart(latency)
    after = latency.over({minute + 5, minute + 6})  # two of its seconds: the minute, once
    assert after.get_total_count() == before.get_total_count() == 2 * 5 * ROLLUP_S
    read = latency.figures()
    assert read(minute + 7, "GET") == read(minute + 50, "GET") != (0.0,) * 4
    newest = latency.seconds[(START + 1199, "GET")]
    packed = {(second, op) for second, op in latency.packed if second >= START + 1199 - PER_SECOND_FOR_S}
    assert packed and all(read(second, op) != (0.0,) * 4 for second, op in packed)  # a packed second reads its own
    assert read(START + 1199, "GET") == (ms_at(newest, 50), ms_at(newest, 95), ms_at(newest, 99), max_ms(newest))
    assert read(START + 5000, "GET") == (0.0,) * 4


def test_a_count_with_minutes_merges_into_another_and_an_older_one_without_them_still_does():
    counts = RunCounts(clock=Clock(START + 1800))
    counts.latency = filled(1800)
    counts.corrected = filled(1800, seed=5)
    counts.compact()
    assert counts.latency.minutes and counts.corrected.minutes
    snapshot = counts.snapshot()
    into = RunCounts(clock=Clock(START + 1800))
    into.merge(snapshot)
    assert percentiles(into.latency) == percentiles(counts.latency)
    assert percentiles(into.corrected) == percentiles(counts.corrected)
    older = {k: v for k, v in snapshot.items() if not k.endswith("_minutes")}  # as written before the roll-up
    into = RunCounts(clock=Clock(START + 1800))
    into.merge(older)
    assert into.latency.by_op_class()["GET"].get_total_count() == 5 * len(kept_apart(counts.latency)) // 2


def test_the_listener_holds_ten_minutes_of_per_second_histograms_however_long_the_run():
    clock, env, metrics = listener(float(START))
    for second in range(2 * 3600):
        clock.now = START + second + 0.5
        fire(env, op_class="GET", ms=3.0)
        fire(env, op="upsert", op_class="PUT", ms=4.0)
        metrics.compact()
    per_op = {op: sum(1 for _, o in kept_apart(metrics.latency) if o == op) for op in ("GET", "PUT")}
    assert all(PER_SECOND_FOR_S <= n <= PER_SECOND_FOR_S + ROLLUP_S for n in per_op.values()), per_op
    live = {op: sum(1 for _, o in metrics.latency.seconds if o == op) for op in ("GET", "PUT")}
    assert live == {"GET": LIVE_FOR_S + 1, "PUT": LIVE_FOR_S + 1}, live  # the rest kept encoded
    assert {op: h.get_total_count() for op, h in metrics.latency.by_op_class().items()} == {"GET": 7200, "PUT": 7200}


def test_a_report_for_a_packed_second_joins_it_and_every_reading_counts_both_once():
    """A worker's late report lands in a live histogram beside the packed one: figures, windows, the run's percentiles
    and the encoding for the master all count both, and the next roll makes them one."""
    latency = filled(200)
    newest = START + 199
    latency.roll_up(newest)
    late = (START + 10, "GET")
    assert late in latency.packed and late not in latency.seconds
    whole = latency.over({START + 10}).get_total_count()
    latency.at(*late).record_value(50_000)
    assert latency.over({START + 10}).get_total_count() == whole + 1
    assert latency.figures()(*late)[3] >= 50.0
    seconds, _ = latency.encoded()
    encoded = {(second, op): text for second, op, text in seconds}
    assert len(seconds) == len(encoded) == len(kept_apart(latency))
    again = Latency()
    for (second, op), text in encoded.items():
        again.add_encoded(second, op, text)
    assert percentiles(again) == percentiles(latency)
    latency.roll_up(newest)
    assert late not in latency.seconds and latency.over({START + 10}).get_total_count() == whole + 1


def test_a_second_recorded_into_its_minute_at_once_reads_as_one_rolled_up_there():
    """Records read long after they were made (``traffic``): a second already further behind the newest than the
    seconds kept apart goes straight into its minute's histogram, as the roll-up would put it; the run's percentiles,
    each second's figures and the minutes' counts are those of a second-by-second count rolled up."""
    draw, seconds = random.Random(5), range(START, START + 3 * PER_SECOND_FOR_S)
    values = {
        (s, op): [int(draw.lognormvariate(8, 0.7)) for _ in range(draw.randrange(4))] for s in seconds for op in ("GET", "PUT")
    }
    newest = seconds[-1]
    rolled, direct = Latency(), Latency()
    aged = newest - PER_SECOND_FOR_S - (newest - PER_SECOND_FOR_S) % ROLLUP_S
    for (second, op_class), recorded in values.items():
        for value in recorded:
            rolled.at(second, op_class).record_value(value)
            (direct.at_minute if second < aged else direct.at)(second, op_class).record_value(value)
    rolled.roll_up(newest)
    direct.roll_up(newest)
    assert direct.minutes.keys() == rolled.minutes.keys() and len(rolled.minutes) > 2 * 2 * PER_SECOND_FOR_S // ROLLUP_S - 4
    for op_class, hist in rolled.by_op_class().items():
        assert [ms_at(direct.by_op_class()[op_class], p) for p in (50, 99, 100)] == [ms_at(hist, p) for p in (50, 99, 100)]
        assert direct.by_op_class()[op_class].get_total_count() == hist.get_total_count()
    read_rolled, read_direct = rolled.figures(), direct.figures()
    assert all(read_direct(s, op) == read_rolled(s, op) for s in seconds for op in ("GET", "PUT"))
