import pytest

from loadtest.exit_codes import UsageError
from loadtest.service.entities import validate_key
from loadtest.workload.keys import row_key


@pytest.mark.parametrize("key", ["", "hot", "orders-2026", "é" * 512, "a b", "x" * 512])
def test_valid_keys_pass(key):
    assert validate_key(key) == key


@pytest.mark.parametrize("char", ["/", "\\", "#", "?", "\x00", "\t", "\n", "\x1f", "\x7f", "\x9f"])
def test_forbidden_characters_are_refused_with_the_rule(char):
    with pytest.raises(UsageError, match=r"may not contain / \\ # \? or control characters"):
        validate_key(f"a{char}b")


def test_keys_over_1_kib_are_refused():
    with pytest.raises(UsageError, match="at most 1 KiB"):
        validate_key("x" * 513)


def test_row_keys_sort_lexically_in_numeric_order():
    keys = [row_key(i) for i in (1, 2, 10, 111, 2000)]
    assert keys == sorted(keys)


# --- key strategies ------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from loadtest.workload.key_specs import key_strategy  # noqa: E402

SPECS = [
    "single",
    "single:orders",
    "set:7",
    "hash-prefix:16",
    "guid",
    "append-only",
    "prepend-only",
    "timestamp:yyyyMMddHHmm",
    "timestamp:ssyyyyMMddHHmm",
    "template:{event}__{distance:3}",
]


@settings(max_examples=60, deadline=None)
@given(spec=st.sampled_from(SPECS), seed=st.integers(0, 2**31), count=st.integers(1, 500))
def test_every_generated_key_obeys_the_key_rules(spec, seed, count):
    strategy = key_strategy(spec, seed=seed)
    for i in range(0, count, max(1, count // 25)):
        pk, rk = strategy.seeded(i, count)
        validate_key(pk), validate_key(rk, "RowKey")
    for _ in range(20):
        validate_key(strategy.new_partition())
        pk, rk = strategy.existing(count)
        validate_key(pk), validate_key(rk, "RowKey")


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), draws=st.integers(2, 300))
def test_append_only_strictly_increases_and_prepend_only_strictly_decreases(seed, draws):
    up, down = key_strategy("append-only", seed=seed), key_strategy("prepend-only", seed=seed)
    ups = [up.seeded(i, 10)[0] for i in range(10)] + [up.new_partition() for _ in range(draws)]
    downs = [down.seeded(i, 10)[0] for i in range(10)] + [down.new_partition() for _ in range(draws)]
    assert all(a < b for a, b in zip(ups, ups[1:], strict=False))  # Python's str order is the service's
    assert all(a > b for a, b in zip(downs, downs[1:], strict=False))


def test_seeded_keys_are_the_same_on_every_process():
    a, b = key_strategy("guid", seed=5), key_strategy("guid", seed=5)
    assert [a.seeded(i, 9) for i in range(9)] == [b.seeded(i, 9) for i in range(9)]
    assert a.seeded(0, 9) != key_strategy("guid", seed=6).seeded(0, 9)


def test_seconds_first_timestamps_spread_where_minute_keys_pile_up():
    minute = key_strategy("timestamp:yyyyMMddHHmm")
    seconds_first = key_strategy("timestamp:ssyyyyMMddHHmm")
    assert len({minute.seeded(i, 120)[0] for i in range(120)}) == 2
    assert len({seconds_first.seeded(i, 120)[0] for i in range(120)}) == 120
    assert seconds_first.seeded(61, 120)[0].startswith("01")


def test_key_sets_spread_seeded_rows_over_their_keys():
    strategy = key_strategy("hash-prefix:16")
    assert sorted({strategy.seeded(i, 160)[0] for i in range(160)}) == [f"{i:03d}" for i in range(16)]
    assert strategy.rows_in(0, 170) == 11 and strategy.rows_in(15, 170) == 10


def test_templates_make_every_combination():
    keys = key_strategy("template:{event:2}__{distance:3}").keys()
    assert keys == [f"event{e}__distance{d}" for e in range(2) for d in range(3)]


def test_a_literal_percent_in_a_timestamp_format_stays_literal():
    assert key_strategy("timestamp:yyyy%MM").seeded(0, 1)[0] == "2026%01"
