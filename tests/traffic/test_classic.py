"""The classic form's repeats within an hour (``HourSeen``): found as a set of every record's key would find them,
in batches of any size, while holding a hash a record."""

from __future__ import annotations

import random

import pytest

from loadtest.traffic.classic import HourSeen


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_repeats_are_those_a_set_of_every_key_finds_in_batches_of_any_size(seed):
    draw = random.Random(seed)
    hours = sorted(draw.choice(["2026-11-27T10", "2026-11-27T11", "2026-11-27T12"]) for _ in range(20_000))
    records = [(hour, f"req-{draw.randrange(6_000)}", str(draw.choice([1, 1, 1, 2]))) for hour in hours]
    truth, held = [], set()
    for i, record in enumerate(records):
        if record[0] != (records[i - 1][0] if i else None):
            held = set()  # a new hour: what the last one held is let go
        truth.append(record in held)
        held.add(record)
    seen, found, start = HourSeen(), [], 0
    while start < len(records):
        batch = records[start : start + draw.choice([1, 7, 500, 3_000])]
        found += [start + i for i in seen.repeated(*zip(*batch, strict=True))]
        start += len(batch)
    assert found == [i for i, repeat in enumerate(truth) if repeat] and 1_000 < len(found) < 15_000
    assert len(seen._runs) <= 12 and sum(map(len, seen._runs)) == len({r for r in records if r[0] == hours[-1]})


def test_a_record_read_one_at_a_time_is_a_repeat_only_within_its_hour():
    seen = HourSeen()
    assert not seen.repeat("2026-11-27T10", "a", "1") and seen.repeat("2026-11-27T10", "a", "1")
    assert not seen.repeat("2026-11-27T10", "a", "2") and not seen.repeat("2026-11-27T11", "a", "1")
