"""The ranges where new keys land: a key design that keeps making keys past (before) every earlier one has its newest
keys in one range; a fixed key set's end is its largest (smallest) key alone, whatever its order of discovery."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from loadtest.service.key_ends import END_HOLD_S, SETTLE_S, KeyEnd


def test_increasing_keys_land_in_one_range_that_holds_them_for_the_hold():
    end = KeyEnd(1)
    for second in range(100):
        end.see(f"k{second:04d}", float(second))
    assert end.moves == 100 - SETTLE_S  # the first seconds are the key set being found
    assert end.holds("k0099", 99.0) and end.holds("k0050", 99.0)  # last minute's keys: still the newest range
    assert not end.holds("k0005", 99.0)  # found while settling: never joined it
    late = 99.0 + END_HOLD_S + 1
    assert not end.holds("k0050", late) and end.holds("k0099", late)  # past the hold, the end key alone


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 200), seed=st.integers(0, 10_000), rate=st.integers(5, 50))
def test_a_fixed_key_set_once_found_has_its_largest_key_alone_at_its_end(n, seed, rate):
    """Keys drawn at random from a fixed set, ``rate`` a second: the end never takes a key it did not have, once every
    key was seen in the settling seconds, and only its extreme key is in its range."""
    keys = [f"key-{i:05d}" for i in range(n)]
    rng, end, first = random.Random(seed), KeyEnd(1), KeyEnd(-1)
    for key in keys:  # seeded first, in any order
        end.see(key, 0.0)
        first.see(key, 0.0)
    for tick in range(int(SETTLE_S + 30) * rate):
        now = tick / rate
        key = rng.choice(keys)
        end.see(key, now)
        first.see(key, now)
    assert end.moves == first.moves == 0
    inside = [k for k in keys if end.holds(k, 60.0)]
    assert inside == [max(keys)] and [k for k in keys if first.holds(k, 60.0)] == [min(keys)]


def test_decreasing_keys_land_at_the_start():
    end = KeyEnd(-1)
    for second in range(40):
        end.see(f"k{1000 - second:04d}", float(second))
    assert end.moves == 40 - SETTLE_S and end.holds("k0961", 39.0) and not end.holds("k0999", 39.0)


def test_one_key_standing_for_a_new_key_each_write_moves_its_end():
    end = KeyEnd(1)
    for second in range(30):
        end.see("\uffff", float(second), fresh=True)
    assert end.moves == 30 - SETTLE_S and end.key == "\uffff"
