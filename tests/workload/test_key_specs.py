"""The ``--key-strategy`` and ``--row-key-strategy`` forms: each read whole, a bad one refused naming its flag, the
rule and the valid forms."""

import pytest

from loadtest.exit_codes import UsageError
from loadtest.service.entities import validate_key
from loadtest.workload.key_specs import ROW_KEY_STRATEGIES, STRATEGIES, key_strategy, row_key_maker

BAD_STRATEGIES = [
    ("nope", "unknown strategy"),
    ("set:0", "set:N takes N from 1 to 1000000"),
    ("set:x", "set:N takes N from 1 to 1000000"),
    ("set:" + "9" * 5000, "set:N takes N from 1 to 1000000"),
    ("hash-prefix:5000", "hash-prefix:N takes N from 1 to 1000"),
    ("guid:3", "guid takes no parameter"),
    ("timestamp:", "timestamp:FORMAT needs a format"),
    ("timestamp:abc", "needs yyyy, MM, dd, HH, mm or ss tokens"),
    ("timestamp:yyyy/MM", "contains '/'"),
    ("timestamp:yyyy\tMM", "contains '\\t'"),
    ("timestamp:yyyy\udcff", "not valid Unicode"),
    ("timestamp:" + "yyyy" * 130, "at most 1 KiB"),
    ("template:plain", "a template needs {name} or {name:N} fields"),
    ("template:", "a template needs {name} or {name:N} fields"),
    ("template:{a:0}", "each field takes N of at least 1"),  # once a ZeroDivisionError after the table was made
    ("template:{a:99999999}", "at most 100,000 keys"),  # once built 10^8 keys before counting them
    ("template:{a:" + "9" * 5000 + "}", "at most 100,000 keys"),
    ("template:{a:400}{b:400}", "at most 100,000 keys"),
    ("template:{a}{", "other braces are not allowed"),
    ("template:{a:x}", "other braces are not allowed"),
    ("template:{a}/x", "contains '/'"),
    ("template:{a:12}{1:11}", "makes one key twice"),
    ("single:a/b", "contains '/'"),
]


@pytest.mark.parametrize("spec,rule", BAD_STRATEGIES)
def test_bad_strategies_are_refused_naming_the_flag_the_rule_and_the_strategies(spec, rule):
    with pytest.raises(UsageError) as caught:
        key_strategy(spec)
    message = str(caught.value)
    assert message.startswith(f"--key-strategy {spec!r}: ") and rule in message, message
    assert message.endswith(f"; valid: {', '.join(STRATEGIES)}")


@pytest.mark.parametrize(
    "spec,rule",
    [
        ("timestamp:", "timestamp:FORMAT needs a format"),
        ("guid:3", "guid takes no parameter"),
        ("set:3", "unknown strategy"),
        ("timestamp:yyyy/MM", "contains '/'"),
        ("timestamp:" + "ss" * 254, "at most 1 KiB"),  # a 508-character key is one, but the RowKey adds its counter
    ],
)
def test_bad_row_key_strategies_name_their_own_flag(spec, rule):
    assert key_strategy("timestamp:" + "ss" * 254)  # as a PartitionKey the long format fits
    with pytest.raises(UsageError) as caught:
        row_key_maker(spec)
    message = str(caught.value)
    assert message.startswith(f"--row-key-strategy {spec!r}: ") and rule in message, message
    assert message.endswith(f"; valid: {', '.join(ROW_KEY_STRATEGIES)}")


@pytest.mark.parametrize("spec", ["sequential", "guid", "append-only", "prepend-only", "timestamp:yyyyMMddHHmmss"])
def test_row_key_strategies_make_valid_distinct_keys(spec):
    make = row_key_maker(spec, prefix="u1-", seed=3)
    keys = [make() for _ in range(50)]
    assert len(set(keys)) == 50 and all(validate_key(k, "RowKey") for k in keys)


@pytest.mark.parametrize("spec", ["template:{a:1}", "template:{é:2}-x", "template:{a:100000}", "set:1", "hash-prefix:1000"])
def test_templates_and_sets_at_their_bounds_are_accepted(spec):
    assert key_strategy(spec).keys()


def test_a_strategy_list_keeps_a_sharded_designs_own_commas():
    """The sweep's find: ``compare --strategies sharded:2:k0000000,k0000003:set:20,hash-prefix:2`` was cut at every
    comma, and its first piece refused."""
    from loadtest.workload.key_specs import strategy_list

    assert strategy_list("sharded:2:k0000000,k0000003:set:20,hash-prefix:2") == [
        "sharded:2:k0000000,k0000003:set:20",
        "hash-prefix:2",
    ]
    assert strategy_list(" single, guid ,,set:4") == ["single", "guid", "set:4"]
    assert strategy_list("hash-prefix:4,sharded:3:k1:set:4,guid") == ["hash-prefix:4", "sharded:3:k1:set:4", "guid"]
