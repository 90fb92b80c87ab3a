"""The generic value parsers of the edge."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from locust.util.timespan import parse_timespan as locusts

from loadtest.parsers import parse_timespan

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
