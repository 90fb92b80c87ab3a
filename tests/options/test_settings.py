"""``Settings``: every option parsed, then the rules that span options, whichever way a run starts."""

import argparse
import re

import pytest

from loadtest.account.connection_string import CONNECTION_STRING_ENV
from loadtest.exit_codes import UsageError
from loadtest.options.option import add_options
from loadtest.options.settings import Settings, namespace
from loadtest.options.stress import OPTIONS

CONNECTION_STRING = "AccountName=a;AccountKey=c2VjcmV0;EndpointSuffix=core.windows.net"


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


@pytest.mark.parametrize(
    "overrides,rule",
    [
        ({"batch_size": "101"}, "from 1 to 100"),
        ({"batch_size": "0"}, "from 1 to 100"),
        ({"entity_size": "65536", "batch_size": "100"}, "exceeds the 4 MiB"),
        ({"entity_size": "0"}, "must be from 1"),
        ({"entity_size": str(2 * 1024 * 1024)}, "1 MiB"),
        ({"entity_size": "100000", "properties": "1"}, "at most 32768"),
        ({"properties": "300"}, "--properties 300: at most"),
        ({"seed_entities": "-1"}, "from 1 to 1000000"),
        ({"partition_key": "a/b"}, "may not contain"),
        ({"partition_key": "k" * 600}, "at most 1 KiB"),
        ({"profile": "fast"}, "valid profiles: current, legacy"),
        ({"fail_on": "hot,lukewarm"}, "valid: never, hot, warm"),
        ({"reuse_table": True}, "needs --table"),
        ({"table": "bad-name"}, "3-63 letters and digits"),
        ({"connection_string": CONNECTION_STRING, "account_url": "https://a.table.core.windows.net"}, "give one"),
        ({"connection_string": "AccountName=a;AccountKey=c2VjcmV0"}, "--connection-string: it names no table endpoint"),
        ({"account_url": "https://[::1/x"}, "--account-url 'https://[::1/x': must be an http(s) URL"),
        ({"skew": "zipfian:5"}, "--skew 'zipfian:5': the zipfian constant (theta) must be between 0 and 1"),
        ({"key_strategy": "template:{a:0}"}, "--key-strategy 'template:{a:0}': each field takes N of at least 1"),
        ({"row_key_strategy": "timestamp:"}, "--row-key-strategy 'timestamp:': timestamp:FORMAT needs a format"),
        ({"row_key_strategy": "timestamp:" + "ss" * 250}, "at most 1 KiB"),  # fits alone, not with a user's RowKey prefix
        ({"select": "a b,c"}, "--select 'a b,c': 'a b' is not a property name"),
        ({"timeout": "3601"}, "--timeout '3601': must be a positive number of seconds, at most 3600"),
        ({"retry": "fixed:inf,1"}, "--retry 'fixed:inf,1': valid forms"),
        ({"retry": "exponential:nan,1,2,3"}, "--retry 'exponential:nan,1,2,3': valid forms"),
        ({"partition_target": "0"}, "at least 1"),
        ({"scan_size": "abc"}, "whole number"),
        ({"rate": "1e-300"}, "--rate '1e-300': must be 0 (a closed loop) or operations/s of at least 1.65e-06 (an operation"),
        ({"arrival_rate": "1e-300"}, "--arrival-rate '1e-300': must be operations/s, 0 or more and at most 10,000,000 (0: off"),
    ],
)
def test_bad_settings_are_refused_naming_the_rule(overrides, rule):
    with pytest.raises(UsageError, match=re.escape(rule)):
        settings(**overrides)


def test_a_bad_connection_string_in_the_environment_is_named_as_the_variable(monkeypatch):
    monkeypatch.setenv(CONNECTION_STRING_ENV, "UseDevelopmentStorage=true;AccountKey=c2VjcmV0")
    with pytest.raises(
        UsageError, match=r"^\$AZURE_STORAGE_CONNECTION_STRING: UseDevelopmentStorage=true stands alone"
    ) as caught:
        settings()
    assert "c2VjcmV0" not in str(caught.value)


@pytest.mark.parametrize("select", ["n", "PartitionKey,RowKey,Timestamp", "_x,é,p000", "x" * 255])
def test_select_takes_property_names_and_the_system_properties(select):
    assert settings(select=select).select == tuple(select.split(","))


def test_a_large_entity_batch_is_fine_when_the_mix_has_no_batch():
    assert settings(entity_size="65536", mix="read=1").shape.size == 65536


def test_public_settings_never_hold_the_connection_string():
    s = settings(connection_string=CONNECTION_STRING)
    assert "c2VjcmV0" not in str(s.public()) and "c2VjcmV0" not in repr(s)


def test_options_register_with_argparse_and_parse_back():
    parser = argparse.ArgumentParser()
    add_options(parser, OPTIONS)
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
