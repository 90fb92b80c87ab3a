"""YCSB's distributions: frequencies match their parameters (fixed seeds, stated tolerances)."""

from collections import Counter

import pytest

from loadtest.exit_codes import UsageError
from loadtest.workload.skew import Hotspot, Uniform, Zipfian, parse_skew

DRAWS = 200_000


def frequencies(skew, draws=DRAWS):
    counts = Counter(skew.next() for _ in range(draws))
    return {i: counts[i] / draws for i in range(skew.n)}


@pytest.mark.parametrize("theta", [0.5, 0.8, 0.99])
def test_zipfian_frequencies_follow_one_over_rank_to_the_theta(theta):
    skew = Zipfian(100, seed=7, theta=theta)
    seen = frequencies(skew)
    for rank in (0, 1, 2, 4, 9):  # the head, where the mass is: within 5 % of the expected share
        assert seen[rank] == pytest.approx(skew.probability(rank), rel=0.05), rank
    assert sum(seen[i] for i in range(10)) == pytest.approx(sum(skew.probability(i) for i in range(10)), rel=0.03)
    assert seen[0] > seen[1] > seen[5] > seen[50]


@pytest.mark.parametrize("ops,keys", [(0.8, 0.2), (0.9, 0.1), (0.5, 0.5)])
def test_hotspot_puts_its_share_of_operations_on_its_share_of_keys(ops, keys):
    skew = Hotspot(1000, seed=3, keys=keys, operations=ops)
    seen = frequencies(skew)
    hot_share = sum(seen[i] for i in range(skew.hot))
    assert skew.hot == round(1000 * keys)
    assert hot_share == pytest.approx(ops, abs=0.01)  # within 1 percentage point


def test_uniform_is_flat_within_5_percent():
    seen = frequencies(Uniform(20, seed=1))
    assert all(f == pytest.approx(1 / 20, rel=0.05) for f in seen.values())


def test_a_seed_makes_the_sequence_repeatable():
    assert [Zipfian(50, seed=9).next() for _ in range(5)] == [Zipfian(50, seed=9).next() for _ in range(5)]
    draws = lambda s: [s.next() for _ in range(200)]  # noqa: E731
    assert draws(Hotspot(50, seed=9)) == draws(Hotspot(50, seed=9)) != draws(Hotspot(50, seed=10))


@pytest.mark.parametrize(
    "spec,rule",
    [
        ("zipf", "unknown skew"),
        ("uniform:3", "unknown skew"),
        ("zipfian:1.5", "the zipfian constant (theta) must be between 0 and 1, exclusive"),
        ("zipfian:5", "the zipfian constant (theta) must be between 0 and 1, exclusive"),
        ("zipfian:nan", "must be between 0 and 1"),
        ("zipfian:x", "its parameters are numbers"),
        ("hotspot:80", "its parameters are numbers"),
        ("hotspot:a,b", "its parameters are numbers"),
        ("hotspot:200,10", "OPS from 0 to 100, KEYS above 0 up to 100"),
        ("hotspot:80,0", "OPS from 0 to 100, KEYS above 0 up to 100"),
        ("hotspot:80,inf", "OPS from 0 to 100, KEYS above 0 up to 100"),
    ],
)
def test_bad_skews_name_the_flag_the_rule_and_the_valid_ones(spec, rule):
    with pytest.raises(UsageError) as caught:
        parse_skew(spec, 10)
    message = str(caught.value)
    assert message.startswith(f"--skew {spec!r}: ") and rule in message, message
    assert message.endswith("; valid: uniform, zipfian[:theta], hotspot:OPS%,KEYS%")


def test_parse_skew_reads_parameters():
    assert parse_skew("zipfian:0.8", 10).theta == 0.8
    hot = parse_skew("hotspot:90,10", 100)
    assert (hot.operations, hot.hot) == (0.9, 10)
