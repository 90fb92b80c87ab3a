"""HdrHistogram's encoding read and added fast: what the library itself would make of it, and what is not one refused."""

from __future__ import annotations

import gc
import random
import weakref

import pytest
from hdrh.histogram import HdrHistogram

from loadtest.counting.histograms import add_into, check_header, ms_at, new_histogram


@pytest.mark.parametrize("seed", range(4))
def test_adding_an_encoded_histogram_in_place_is_hdrhistograms_own_decode_and_add(seed):
    """``add_into`` (the merge's way, at half the cost) leaves exactly what the library's ``decode_and_add`` does: the
    counts, total, min, max and percentiles; also for a histogram of a narrower range, an empty one, into one that holds
    counts already."""
    rng = random.Random(seed)
    ours, theirs = new_histogram(), new_histogram()
    for base in (ours, theirs):
        base.record_value(777)
    narrow = HdrHistogram(1, 1_000_000, 2)  # up to a second: its counts line up with the first of ours
    for hist in (new_histogram(), narrow):
        for _ in range(rng.randint(0, 500)):
            hist.record_value(rng.choice([rng.randint(1, 2000), rng.randint(1, 999_999)]))
        encoded = hist.encode().decode("ascii")
        add_into(ours, encoded)
        theirs.decode_and_add(encoded)
    assert list(ours.counts) == list(theirs.counts)
    assert (ours.get_total_count(), ours.get_min_value(), ours.get_max_value()) == (
        theirs.get_total_count(),
        theirs.get_min_value(),
        theirs.get_max_value(),
    )
    assert [ms_at(ours, p) for p in (50, 95, 99, 100)] == [ms_at(theirs, p) for p in (50, 95, 99, 100)]


@pytest.mark.parametrize(
    "encoded, said",
    [
        ("AAAA", "not a histogram in HdrHistogram's encoding"),
        (HdrHistogram(1, 10**12, 2).encode().decode("ascii"), "another range"),
        (HdrHistogram(1, 1000, 3).encode().decode("ascii"), "another range"),
    ],
)
def test_what_is_not_a_histogram_of_the_metrics_range_is_a_value_error(encoded, said):
    """Both from the headers alone (what results.json's check reads) and when its counts are added."""
    with pytest.raises(ValueError, match=said):
        check_header(encoded)
    with pytest.raises(ValueError, match=said):
        add_into(new_histogram(), encoded)


def test_the_headers_alone_pass_what_adds_and_refuse_a_cut_or_altered_one():
    hist = new_histogram()
    hist.record_value(1234)
    encoded = hist.encode().decode("ascii")
    check_header(encoded)
    check_header(HdrHistogram(1, 1_000_000, 2).encode().decode("ascii"))  # a narrower range: its counts line up
    for broken in (encoded[:12], "!" + encoded[1:], encoded[:-8] + "AAAAAAAA", "", "x" * 40):
        with pytest.raises(ValueError, match="not a histogram"):
            check_header(broken)


def test_counts_that_run_past_the_range_are_refused_and_leave_nothing_behind():
    """A histogram whose header is in range but whose counts run past it: a ValueError, and the next add is exact."""
    import base64
    import struct
    import zlib

    wide = HdrHistogram(1, 10**12, 2)
    wide.record_value(10**11)
    raw = base64.b64decode(wide.encode())
    payload = bytearray(zlib.decompress(raw[8:]))
    struct.pack_into(">Q", payload, 24, 3_600_000_000)  # the header's highest value, now the metrics' own
    packed = zlib.compress(bytes(payload))
    forged = base64.b64encode(raw[:4] + struct.pack(">I", len(packed)) + packed).decode("ascii")
    check_header(forged)  # its headers are fine
    into = new_histogram()
    with pytest.raises(ValueError, match="do not decode"):
        add_into(into, forged)
    good = new_histogram()
    for value in (5, 70, 900):
        good.record_value(value)
    add_into(into, good.encode().decode("ascii"))
    assert list(into.counts) == list(good.counts)


@pytest.mark.parametrize("seed", range(3))
def test_a_percentile_is_the_librarys_own_at_every_percentile(seed):
    """ms_at's cumulative sum and search against HdrHistogram's walk: the same value at 0, 100 and between, on a
    spread from a microsecond to the hour, a single value, and an empty histogram."""
    draw = random.Random(seed)
    spread, single = new_histogram(), new_histogram()
    for _ in range(5000):
        spread.record_value(min(3_600_000_000, max(1, int(draw.lognormvariate(8, 3)))))
    single.record_value(1234)
    for hist in (spread, single):
        for percentile in (0, 0.1, 1, 25, 50, 90, 95, 99, 99.9, 99.99, 100):
            expected = round(hist.get_value_at_percentile(percentile) / 1000.0, 2)
            assert ms_at(hist, percentile) == expected, (percentile, seed)
    assert ms_at(new_histogram(), 99) == 0.0


def test_a_dropped_histogram_is_freed_at_once_not_left_to_the_cyclic_collector():
    """The library's encoder refers back to its histogram; the metrics' histograms hold it weakly, so one dropped
    (each second's once packed) frees its 27 KB of counts then, and still encodes while it is held."""
    hist = new_histogram()
    hist.record_value(1234)
    assert add_into(again := new_histogram(), hist.encode().decode("ascii")) is None and again.get_total_count() == 1
    held = weakref.ref(hist)
    gc.disable()
    try:
        del hist
        assert held() is None
    finally:
        gc.enable()
