"""Outages of production's records over the seconds that have records only (``findings.log_outages``): the same runs
of silent seconds a second-by-second reading finds, and memory that does not grow with the span's empty seconds."""

from __future__ import annotations

import numpy as np
from helpers import run_info
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic import recorded

from loadtest.findings.assess import assess
from loadtest.findings.log_outages import Sparse, log_gaps
from loadtest.findings.outages import BEFORE_S, OUTAGE_AFTER_S, SERVED_BEFORE, outages
from loadtest.results.summary import build

SECOND = st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 1))  # (answered, stalled, refused)


def by_the_second(cells: dict[int, tuple[int, int, int]]) -> list[tuple[int, int]]:
    """The definition, read a second at a time over every second of the span: a run of ``OUTAGE_AFTER_S`` or more
    seconds each with stalled records and nothing answered or refused, after the first answered second, whose
    ``BEFORE_S`` seconds before (from that first one) were served ``SERVED_BEFORE`` a second on average."""
    answered = {t: a for t, (a, _, _) in cells.items()}
    served = [t for t in sorted(cells) if answered[t]]
    if not served:
        return []
    first, last = served[0], max(cells)
    silent = [
        t >= first and cells.get(t, (0, 0, 0))[0] == 0 == cells.get(t, (0, 0, 0))[2] and cells.get(t, (0, 0, 0))[1] > 0
        for t in range(last + 1)
    ]
    gaps, t = [], 0
    while t <= last:
        if not silent[t]:
            t += 1
            continue
        start = t
        while t <= last and silent[t]:
            t += 1
        low = max(first, start - BEFORE_S)
        before = [answered.get(s, 0) for s in range(low, start)]
        if t - start >= OUTAGE_AFTER_S and before and sum(before) / len(before) >= SERVED_BEFORE:
            gaps.append((start, t - 1))
    return gaps


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.integers(0, 400), SECOND, max_size=120))
def test_the_seconds_with_records_find_the_gaps_every_second_finds(cells):
    t = np.array(sorted(cells), dtype=np.int64)
    column = lambda i: np.array([cells[s][i] for s in sorted(cells)], dtype=np.int64)  # noqa: E731
    sparse = Sparse(t, column(0), column(1), np.zeros(len(t), np.int64), column(2))
    gaps = log_gaps(sparse, after_s=OUTAGE_AFTER_S, before_s=BEFORE_S, served_before=SERVED_BEFORE)
    assert gaps == by_the_second(cells)


def test_a_partition_whose_records_time_out_while_the_account_is_served_is_out_from_its_own_records():
    """Logs: 'cust-7' served each second, then three seconds of timed-out records only, while 'cust-1' is served
    throughout: one OUTAGE of 'cust-7' read from its records; the quiet seconds between records are none."""
    seconds = {t: [{"partition": "cust-1"}, {"partition": "cust-7"}, {"partition": "cust-7"}] for t in range(20)}
    for t in (10, 11, 12):
        seconds[t] = [{"partition": "cust-1"}, {"partition": "cust-7", "error": "Timeout"}]
    for t in range(25, 60, 7):  # later, records seconds apart: gaps between them are no outage
        seconds[t] = [{"partition": "cust-1"}, {"partition": "cust-7"}]
    results = build(recorded(seconds), run_info(target_kind="logs"))
    results.logs = {"records": 1}  # type: ignore[typeddict-item]
    (outage,) = outages(assess(results))
    assert (outage.partition, outage.start, outage.end, outage.failed) == ("cust-7", 10, 12, 3)
    assert "read from its own records" in outage.cause


def test_a_month_of_records_is_read_for_outages_without_an_array_of_its_seconds():
    """A month's span with records in a few of its seconds: what the outages' reading holds follows the records, not
    the 2.6 million seconds between them (five arrays of every second, the account's and a partition's, held some
    200 MB at the end of a month's read: the peak grew 9 MB a day)."""
    import tracemalloc

    month = 30 * 86_400
    seconds = {t: [{"partition": "cust-1"}, {"partition": "cust-7"}] for t in (*range(10), *range(month - 10, month))}
    results = build(recorded(seconds), run_info(target_kind="logs", duration_s=float(month)))
    results.logs = {"records": 1}  # type: ignore[typeddict-item]
    tracemalloc.start()
    try:
        assert outages(results) == []
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5 * 2**20, f"{peak / 2**20:.0f} MiB held reading a month's outages"
