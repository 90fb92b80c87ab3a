import argparse

import pytest

from loadtest.config import Settings
from loadtest.errors import UsageError
from loadtest.options import add_options, namespace, parse_mix
from loadtest.parsers import parse_duration


def settings(**overrides):
    return Settings.from_options(namespace(**overrides))


def test_defaults_are_the_docs_targets():
    s = settings()
    assert (s.partition_target, s.account_target, s.partition_key) == (2000, 20000, "hot")
    assert s.shape.size == 1024


def test_legacy_profile_is_500_and_5000():
    s = settings(profile="legacy")
    assert (s.partition_target, s.account_target) == (500, 5000)
    assert settings(profile="legacy", partition_target="700").partition_target == 700


@pytest.mark.parametrize("text,seconds", [("90", 90), ("90s", 90), ("2m", 120), ("1h30m", 5400)])
def test_durations_accept_locusts_forms(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["0", "-5", "0s", "abc", ""])
def test_zero_negative_or_malformed_durations_are_refused(text):
    with pytest.raises(UsageError, match="positive time span"):
        parse_duration(text)


def test_mix_parses_weights_and_drops_zeros():
    assert parse_mix("read=60, upsert=40,scan=0") == {"read": 60, "upsert": 40}


@pytest.mark.parametrize(
    "text,rule",
    [
        ("read=60,fly=10", "unknown operation 'fly'; valid operations: read, scan, filter-scan, partition-scan"),
        ("read=0,upsert=0", "at least one operation needs a weight above 0"),
        ("read", "needs a whole, non-negative weight"),
        ("read=-1", "needs a whole, non-negative weight"),
    ],
)
def test_bad_mixes_are_refused_naming_the_rule(text, rule):
    with pytest.raises(UsageError, match=rule.replace("(", r"\(")):
        parse_mix(text)


@pytest.mark.parametrize(
    "overrides,rule",
    [
        ({"batch_size": "101"}, "from 1 to 100"),
        ({"batch_size": "0"}, "from 1 to 100"),
        ({"entity_size": "65536", "batch_size": "100"}, "exceeds the 4 MiB"),
        ({"entity_size": "0"}, "must be from 1"),
        ({"entity_size": str(2 * 1024 * 1024)}, "1 MiB"),
        ({"entity_size": "100000", "properties": "1"}, "at most 32768"),
        ({"properties": "300"}, "at most 255"),
        ({"seed_entities": "-1"}, "at least 1"),
        ({"partition_key": "a/b"}, "may not contain"),
        ({"partition_key": "k" * 600}, "at most 1 KiB"),
        ({"profile": "fast"}, "valid profiles: current, legacy"),
        ({"fail_on": "hot,lukewarm"}, "valid: never, hot, warm"),
        ({"reuse_table": True}, "needs --table"),
        ({"table": "bad-name"}, "3-63 letters and digits"),
        ({"connection_string": "x=y", "account_url": "https://a.table.core.windows.net"}, "give one"),
        ({"partition_target": "0"}, "at least 1"),
        ({"scan_size": "abc"}, "whole number"),
    ],
)
def test_bad_settings_are_refused_naming_the_rule(overrides, rule):
    with pytest.raises(UsageError, match=rule.replace("(", r"\(")):
        settings(**overrides)


def test_a_large_entity_batch_is_fine_when_the_mix_has_no_batch():
    assert settings(entity_size="65536", mix="read=1").shape.size == 65536


def test_public_settings_never_hold_the_connection_string():
    s = settings(connection_string="AccountName=a;AccountKey=c2VjcmV0")
    assert "c2VjcmV0" not in str(s.public()) and "c2VjcmV0" not in repr(s)


def test_options_register_with_argparse_and_parse_back():
    parser = argparse.ArgumentParser()
    add_options(parser)
    ns = parser.parse_args(["--partition-key", "orders", "--mix", "read=1", "--keep-table"])
    s = Settings.from_options(ns)
    assert (s.partition_key, s.mix, s.keep_table) == ("orders", {"read": 1}, True)


def test_the_same_seed_and_stream_repeat_their_keys_and_other_streams_differ():
    def draw(seed: str, stream: str) -> list[str]:
        keys = settings(key_strategy="hash-prefix:16", key_seed=seed).keys(stream=stream)
        return [keys.new_partition() for _ in range(20)]

    assert draw("7", "0.0") == draw("7", "0.0")
    assert draw("7", "0.0") != draw("7", "1.0")  # worker 1's first user
    assert draw("7", "0.0") != draw("7", "0.1")  # worker 0's second user
    assert draw("7", "0.0") != draw("8", "0.0")
