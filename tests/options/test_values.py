"""The generic value parsers of the edge."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from locust.util.timespan import parse_timespan as locusts

from loadtest.exit_codes import UsageError
from loadtest.limits import MAX_DURATION_S
from loadtest.options.values import parse_duration, parse_mix, parse_timespan

SPANS = st.one_of(
    st.integers(min_value=0, max_value=10**6).map(str),
    st.tuples(*(st.one_of(st.none(), st.integers(0, 999)) for _ in range(3))).map(
        lambda hms: "".join(f"{n}{unit}" for n, unit in zip(hms, "hms", strict=True) if n is not None)
    ),
    st.text(alphabet="0123456789hms ", max_size=8),
)


def _read(parse, text):
    try:
        return parse(text)
    except ValueError:
        return "refused"


@given(SPANS)
def test_time_spans_are_read_as_locust_reads_them_without_importing_it(text):
    assert _read(parse_timespan, text) == _read(locusts, text)


@pytest.mark.parametrize("text,seconds", [("90", 90), ("90s", 90), ("2m", 120), ("1h30m", 5400)])
def test_durations_accept_locusts_forms(text, seconds):
    assert parse_duration(text, "--duration", maximum=MAX_DURATION_S) == seconds


@pytest.mark.parametrize("text", ["0", "-5", "0s", "abc", ""])
def test_zero_negative_or_malformed_durations_are_refused(text):
    with pytest.raises(UsageError, match="positive time span"):
        parse_duration(text, "--duration", maximum=MAX_DURATION_S)


def test_mix_parses_weights_and_drops_zeros():
    assert parse_mix("read=60, upsert=40,scan=0") == {"read": 60, "upsert": 40}


@pytest.mark.parametrize(
    "text,rule",
    [
        ("read=60,fly=10", "unknown operation 'fly'; valid operations: read, scan, filter-scan, partition-scan"),
        ("read=0,upsert=0", "at least one operation needs a weight above 0"),
        ("read", "needs a whole weight from 0 to 1000000"),
        ("read=-1", "needs a whole weight from 0 to 1000000"),
        ("read=99999999", "needs a whole weight from 0 to 1000000"),
        ("read=60,read=40", "'read' is given twice: give each operation once; valid operations: read, scan"),
    ],
)
def test_bad_mixes_are_refused_naming_the_rule(text, rule):
    with pytest.raises(UsageError, match=re.escape(rule)):
        parse_mix(text)
