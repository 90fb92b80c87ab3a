"""A run's latency at any length: an HDR histogram per second and op class for the recent seconds, one per minute
before them.

Each histogram of the counts' range (1 µs to an hour, 2 digits) holds about 21 KB whatever it counted, so a day's
soak would hold some 3.6 GB of per-second ones. Seconds older than ``PER_SECOND_FOR_S`` (behind the newest second
counted) are rolled into their minute's histogram, kept in HdrHistogram's own compressed encoding (under 1 KB).
What each figure keeps: the run's percentiles per op class stay exact (histograms add without loss); the recent ten
minutes keep their seconds (a ceiling step, the live view, a short run whole); an older second's percentiles are its
minute's (timeseries.csv, a step judged after the run: a minute that any of its seconds touches counts whole).
"""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator

import numpy as np
from hdrh.codec import (
    V2_COMPRESSION_COOKIE_BASE,
    V2_ENCODING_COOKIE_BASE,
    V2_MAX_WORD_SIZE_IN_BYTES,
    HdrHistogramEncoder,
    HdrPayload,
    get_cookie_base,
    get_word_size_in_bytes_from_cookie,
)
from hdrh.histogram import HdrHistogram

__all__ = [
    "PER_SECOND_FOR_S",
    "ROLLUP_S",
    "LATENCY_MAX_US",
    "Latency",
    "add_into",
    "check_header",
    "max_ms",
    "ms_at",
    "new_histogram",
]

LATENCY_MAX_US = 3_600_000_000  # one hour
ROLLUP_S = 60  # an aged second's histogram goes into its minute's
PER_SECOND_FOR_S = 600  # seconds kept apart behind the newest one counted: ten minutes

Figures = tuple[float, float, float, float]  # p50, p95, p99 and max, ms


def new_histogram() -> HdrHistogram:
    return HdrHistogram(1, LATENCY_MAX_US, 2)


_EXTERNAL = struct.Struct(">II")  # HdrHistogram's V2 wire form: cookie, length of the zlib payload that follows
_PAYLOAD = struct.Struct(">IIIIQQd")  # the payload's header: cookie, length, offset, digits, lowest, highest, ratio


def check_header(encoded: str) -> None:
    """What ``add_into`` checks of a histogram before its counts, from its headers alone (the payload's first bytes
    inflated, no counts): a fifth of its cost, for a reader that checks every histogram of an engine before
    ``loadtest merge`` decodes them."""
    try:
        raw = base64.b64decode(encoded, validate=True)
        cookie, length = _EXTERNAL.unpack_from(raw)
        head = _PAYLOAD.unpack(zlib.decompressobj().decompress(raw[_EXTERNAL.size :], _PAYLOAD.size))
    except (ValueError, struct.error, zlib.error) as err:
        raise ValueError(f"not a histogram in HdrHistogram's encoding ({type(err).__name__})") from None
    inner, _, _, digits, lowest, highest, _ = head
    if get_cookie_base(cookie) != V2_COMPRESSION_COOKIE_BASE or length != len(raw) - _EXTERNAL.size:
        raise ValueError("not a histogram in HdrHistogram's encoding (its header)")
    words = get_word_size_in_bytes_from_cookie(inner)
    if get_cookie_base(inner) != V2_ENCODING_COOKIE_BASE or words != V2_MAX_WORD_SIZE_IN_BYTES:
        raise ValueError("not a histogram in HdrHistogram's encoding (its payload's header)")
    _in_range(lowest, digits, highest)


def _in_range(lowest: int, digits: int, highest: int) -> None:
    """A histogram whose counts line up with the metrics' own: 1 µs, 2 digits, up to an hour at most."""
    if (lowest, digits) != (1, 2) or highest > LATENCY_MAX_US:
        raise ValueError("a histogram of another range than 1 µs to an hour, 2 digits")


def _decoded(encoded: str) -> HdrPayload:
    """A histogram in HdrHistogram's encoding, its header read and checked against the metrics' own (1 µs to at most an
    hour, 2 digits: the counts line up with theirs) and its counts not yet decoded; a ``ValueError`` if it is not one."""
    try:
        payload = HdrHistogramEncoder.decode(encoded)
    except Exception as err:  # anything the library's decoding raises (base64, zlib, its cookies and lengths): not one
        raise ValueError(f"not a histogram in HdrHistogram's encoding ({type(err).__name__})") from None
    header = payload.payload
    _in_range(header.lowest_trackable_value, header.significant_figures, header.highest_trackable_value)
    return payload


def add_into(hist: HdrHistogram, encoded: str) -> None:
    """``hist.decode_and_add(encoded)`` at half its cost (what ``loadtest merge`` does for every second of every engine):
    the counts decoded once, straight into an array added to ``hist``'s own in place, no histogram made between."""
    payload = _decoded(encoded)
    try:
        found = payload.init_counts(hist.counts_len)
    except Exception as err:  # the counts' varints cut short or past the range
        raise ValueError(f"a histogram whose counts do not decode ({type(err).__name__})") from None
    if not found["total"]:
        return
    np.frombuffer(hist.counts, dtype=np.int64)[:] += np.frombuffer(payload.get_counts(), dtype=np.int64)  # V2: 64-bit
    hist.total_count += found["total"]
    top = hist.get_highest_equivalent_value(hist.get_value_from_index(found["max_nonzero_index"]))
    hist.max_value = max(hist.max_value, top)
    hist.min_value = min(hist.min_value, hist.get_value_from_index(found["min_nonzero_index"]))


def ms_at(hist: HdrHistogram, percentile: float) -> float:
    """A histogram's percentile in milliseconds (its values are microseconds); 0 when it is empty."""
    return round(hist.get_value_at_percentile(percentile) / 1000.0, 2) if hist.get_total_count() else 0.0


def max_ms(hist: HdrHistogram) -> float:
    return round(hist.get_max_value() / 1000.0, 2)


def _figures(hist: HdrHistogram) -> Figures:
    return ms_at(hist, 50), ms_at(hist, 95), ms_at(hist, 99), max_ms(hist)


def _minute(second: int) -> int:
    return second - second % ROLLUP_S


class Latency:
    """Histograms of microseconds by (second, op class) (``seconds``), the aged ones by (minute's first second, op
    class) in HdrHistogram's encoding (``minutes``)."""

    def __init__(self) -> None:
        self.seconds: dict[tuple[int, str], HdrHistogram] = {}
        self.minutes: dict[tuple[int, str], str] = {}

    def at(self, second: int, op_class: str) -> HdrHistogram:
        """The histogram of ``second`` (made if new; a second already rolled up joins its minute at the next roll)."""
        hist = self.seconds.get((second, op_class))
        if hist is None:
            hist = self.seconds[(second, op_class)] = new_histogram()
        return hist

    def add_encoded(self, second: int, op_class: str, encoded: str, *, minute: bool = False) -> None:
        """Add a histogram in HdrHistogram's encoding: one second's, or (``minute``) one minute's."""
        if minute:
            self._into_minute(second, op_class, [encoded])
        else:
            add_into(self.at(second, op_class), encoded)

    def _into_minute(self, minute: int, op_class: str, parts: Iterable[HdrHistogram | str]) -> None:
        into = new_histogram()
        if (minute, op_class) in self.minutes:
            add_into(into, self.minutes[(minute, op_class)])
        for part in parts:
            if isinstance(part, str):
                add_into(into, part)
            else:
                into.add(part)
        self.minutes[(minute, op_class)] = into.encode().decode("ascii")

    def roll_up(self, newest: int) -> None:
        """Roll the seconds more than ``PER_SECOND_FOR_S`` behind ``newest`` into their minutes (whole minutes only)."""
        before = _minute(newest - PER_SECOND_FOR_S)
        aged: dict[tuple[int, str], list[HdrHistogram]] = {}
        for key in [key for key in self.seconds if key[0] < before]:
            aged.setdefault((_minute(key[0]), key[1]), []).append(self.seconds.pop(key))
        for (minute, op_class), parts in aged.items():
            self._into_minute(minute, op_class, parts)

    def _decoded_minutes(self) -> Iterator[tuple[int, str, HdrHistogram]]:
        for (minute, op_class), encoded in self.minutes.items():
            hist = new_histogram()
            add_into(hist, encoded)
            yield minute, op_class, hist

    def by_op_class(self) -> dict[str, HdrHistogram]:
        """The whole run's histogram per op class (exact: histograms add without loss), the minutes decoded one at a
        time."""
        merged: dict[str, HdrHistogram] = {}
        for (_, op_class), hist in self.seconds.items():
            merged.setdefault(op_class, new_histogram()).add(hist)
        for _, op_class, hist in self._decoded_minutes():
            merged.setdefault(op_class, new_histogram()).add(hist)
        return merged

    def over(self, seconds: set[int]) -> HdrHistogram:
        """One histogram of ``seconds``: each one's own, and the minute of any rolled up (counted once, whole)."""
        merged = new_histogram()
        for (second, _), hist in self.seconds.items():
            if second in seconds:
                merged.add(hist)
        minutes = {_minute(second) for second in seconds}
        for (minute, _), encoded in self.minutes.items():
            if minute in minutes:  # only these decoded: a step judged during a long run reads its own seconds
                add_into(merged, encoded)
        return merged

    def figures(self) -> Callable[[int, str], Figures]:
        """p50, p95, p99 and max (ms) of a (second, op class): its own, its minute's where rolled up, else zeros."""
        own = {key: _figures(hist) for key, hist in self.seconds.items()}
        rolled = {(minute, op_class): _figures(hist) for minute, op_class, hist in self._decoded_minutes()}
        return lambda second, op_class: own.get((second, op_class)) or rolled.get((_minute(second), op_class), (0.0,) * 4)

    def encoded(self) -> tuple[list[list], list[list]]:
        """Every second kept apart and every minute, as [first second, op class, encoding] each."""
        return (
            [[second, op_class, hist.encode().decode("ascii")] for (second, op_class), hist in self.seconds.items()],
            [[minute, op_class, encoded] for (minute, op_class), encoded in self.minutes.items()],
        )

    def clear(self) -> None:
        self.seconds.clear()
        self.minutes.clear()
