"""Write sharding as a key strategy a run sends (``sharded:N:KEYS:DESIGN``): the design's keys with the named hot ones
over prefixed buckets, drawn as the design draws, every row a user reads one the seeding wrote."""

from __future__ import annotations

from collections import Counter

import pytest

from loadtest.exit_codes import UsageError
from loadtest.workload.key_specs import key_strategy
from loadtest.workload.key_templates import bucket_key


def test_the_hot_key_is_written_over_its_buckets_as_the_design_would_draw_it():
    strategy = key_strategy("sharded:4:k0000000:set:5", skew="hotspot:50,20", seed=1)
    buckets = [bucket_key("k0000000", j, 4) for j in range(4)]
    assert strategy.keys() == [*buckets, "k0000001", "k0000002", "k0000003", "k0000004"]
    keys, shares = strategy.access_shares(1000)
    assert dict(zip(keys, shares, strict=True)) == pytest.approx(
        {**dict.fromkeys(buckets, 0.125), **{k: 0.125 for k in keys[4:]}}
    )
    seeded = Counter(strategy.seeded(i, 1000)[0] for i in range(1000))
    drawn = Counter(strategy.existing(1000) for _ in range(4000))
    assert {key for key, _ in drawn} == set(strategy.keys())  # every bucket and every other key, nothing else
    rows = {key: {strategy.seeded(i, 1000)[1] for i in range(1000) if strategy.seeded(i, 1000)[0] == key} for key in seeded}
    assert all(row in rows[key] for key, row in drawn)  # a read finds a seeded row
    assert sum(n for (key, _), n in drawn.items() if key in buckets) == pytest.approx(2000, rel=0.1)  # the hot key's half
    assert {strategy.new_partition() for _ in range(400)} == set(strategy.keys())


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("sharded:1:k0000000:set:5", "takes N from 2 to 1000"),
        ("sharded:x:k0000000:set:5", "takes N from 2 to 1000"),
        ("sharded:4::set:5", "names the hot keys"),
        ("sharded:4:k0000000:", "names the hot keys"),
        ("sharded:4:nope:set:5", "'nope' is not one of the design's keys"),
        ("sharded:4:k0000000:guid", "shards a design of fixed keys"),
        ("sharded:4:00-k0000000:sharded:4:k0000000:set:5", "shards a design of fixed keys"),
        ("sharded:4:k0000000:set:x", "set:N takes N"),
    ],
)
def test_a_sharded_spec_is_read_whole_or_refused_in_one_line(spec, said):
    with pytest.raises(UsageError) as refused:
        key_strategy(spec)
    message = str(refused.value)
    assert said in message and message.count("\n") == 0 and message.startswith(f"--key-strategy {spec!r}")
