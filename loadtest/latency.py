"""A run's latency at any length: an HDR histogram per second and op class for the recent seconds, one per minute
before them.

Each histogram of the counts' range (1 µs to an hour, 2 digits) holds about 21 KB whatever it counted, so a day's
soak would hold some 3.6 GB of per-second ones, and ten minutes of them 50 MB for GET and PUT. A second's histogram is
live (added to in place) for ``LIVE_FOR_S`` behind the newest second counted, then kept in HdrHistogram's own
compressed encoding (some hundred bytes); seconds older than ``PER_SECOND_FOR_S`` are rolled into their minute's, kept
encoded too.
What each figure keeps: the run's percentiles per op class stay exact (histograms add without loss); the recent ten
minutes keep their seconds (a ceiling step, the live view, a short run whole); an older second's percentiles are its
minute's (timeseries.csv, a step judged after the run: a minute that any of its seconds touches counts whole).
"""

from __future__ import annotations

import binascii
import ctypes
import struct
import weakref
import zlib
from collections.abc import Callable, Iterable, Iterator

import numpy as np
from hdrh.codec import V2_COMPRESSION_COOKIE_BASE, V2_ENCODING_COOKIE_BASE
from hdrh.histogram import HdrHistogram
from pyhdrh import add_array as add_counts  # HdrHistogram's own C: the counts' varints decoded, arrays added
from pyhdrh import decode as decode_varints

__all__ = [
    "LIVE_FOR_S",
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
LIVE_FOR_S = 60  # seconds whose histograms stay live behind the newest one counted (a worker's report lands in them)
ADDING_MINUTES = 240  # minutes a merge keeps decoded as it adds engines into them (an hour of four op classes)

Figures = tuple[float, float, float, float]  # p50, p95, p99 and max, ms


def new_histogram() -> HdrHistogram:
    """A histogram of the metrics' range, freed as soon as it is dropped: the library's encoder refers back to its
    histogram, a cycle that left each dropped one (27 KB of counts) to the cyclic collector. A run packs four a second
    and drops them; in a 10-minute run some 1,200 lay in memory between collections, and the process grew with them."""
    hist = HdrHistogram(1, LATENCY_MAX_US, 2)
    hist.encoder.histogram = weakref.proxy(hist)
    return hist


_EXTERNAL = struct.Struct(">II")  # HdrHistogram's V2 wire form: cookie, length of the zlib payload that follows
_PAYLOAD = struct.Struct(">IIIIQQd")  # the payload's header: cookie, length, offset, digits, lowest, highest, ratio
_COOKIE_BASE = ~0xF0  # a cookie without its word size (the library's get_cookie_base)


def check_header(encoded: str) -> None:
    """What ``add_into`` checks of a histogram before its counts, from its headers alone (the payload's first bytes
    inflated, no counts): a fifth of its cost, for a reader that checks every histogram of an engine before
    ``loadtest merge`` decodes them."""
    _inflated(encoded, _PAYLOAD.size)


def _inflated(encoded: str, limit: int = 0) -> bytes:
    """A histogram's payload inflated (its first ``limit`` bytes only, if given), its headers checked against the
    metrics' own (V2 encoding of 64-bit counts, 1 µs to at most an hour, 2 digits: the counts line up with theirs); a
    ``ValueError`` if it is not one."""
    try:
        raw = binascii.a2b_base64(encoded, strict_mode=True)
        cookie, length = _EXTERNAL.unpack_from(raw)
        payload = raw[_EXTERNAL.size :]
        data = zlib.decompressobj().decompress(payload, limit) if limit else zlib.decompress(payload)
        inner, _, _, digits, lowest, highest, _ = _PAYLOAD.unpack_from(data)
    except (ValueError, struct.error, zlib.error) as err:
        raise ValueError(f"not a histogram in HdrHistogram's encoding ({type(err).__name__})") from None
    if cookie & _COOKIE_BASE != V2_COMPRESSION_COOKIE_BASE or length != len(raw) - _EXTERNAL.size:
        raise ValueError("not a histogram in HdrHistogram's encoding (its header)")
    if inner & _COOKIE_BASE != V2_ENCODING_COOKIE_BASE:  # V2's counts: zig-zag LEB128 words, up to 9 bytes each
        raise ValueError("not a histogram in HdrHistogram's encoding (its payload's header)")
    if (lowest, digits) != (1, 2) or highest > LATENCY_MAX_US:
        raise ValueError("a histogram of another range than 1 µs to an hour, 2 digits")
    return data


class _Scratch:
    """One zeroed counts array the varints are decoded into (the library's decoder sets counts, it does not add), then
    added into a histogram's own over the indexes it set, and zeroed there again: no array made per histogram."""

    def __init__(self) -> None:
        self.length, self.address = 0, 0
        self.buffer: ctypes.Array | None = None

    def add_into(self, counts: ctypes.Array, data: bytes) -> dict[str, int]:
        """Add the counts in ``data`` (an inflated payload) into ``counts``: what the decoder found."""
        length = len(counts)
        if length != self.length:
            self.buffer = (ctypes.c_int64 * length)()
            self.length, self.address = length, ctypes.addressof(self.buffer)
        try:
            found = decode_varints(data, _PAYLOAD.size, self.address, length, 8)
        except Exception as err:  # the counts' varints cut short or past the range
            ctypes.memset(self.address, 0, length * 8)
            raise ValueError(f"a histogram whose counts do not decode ({type(err).__name__})") from None
        if found["total"]:
            low, high = found["min_nonzero_index"], found["max_nonzero_index"] + 1
            add_counts(ctypes.addressof(counts) + low * 8, self.address + low * 8, high - low, 8)
            ctypes.memset(self.address + low * 8, 0, (high - low) * 8)
        return found


_SCRATCH = _Scratch()


def add_into(hist: HdrHistogram, encoded: str) -> None:
    """``hist.decode_and_add(encoded)`` at a fifth of its cost (what ``loadtest merge`` does for every second of every
    engine): the counts decoded once into a scratch array and added to ``hist``'s own in place over the indexes that
    hold any, no histogram or payload made between; its lowest and highest values looked up by index."""
    found = _SCRATCH.add_into(hist.counts, _inflated(encoded))
    if not found["total"]:
        return
    hist.total_count += found["total"]
    lowest, highest = _values(hist)
    hist.max_value = max(hist.max_value, highest[found["max_nonzero_index"]])
    hist.min_value = min(hist.min_value, lowest[found["min_nonzero_index"]])


_VALUES: dict[tuple[int, int, int], tuple[list[int], list[int]]] = {}


def _values(hist: HdrHistogram) -> tuple[list[int], list[int]]:
    """Each index's lowest value and highest equivalent value, for histograms of ``hist``'s layout (made once: the
    library's Python walk cost a third of an add)."""
    layout = (hist.lowest_trackable_value, hist.highest_trackable_value, hist.significant_figures)
    made = _VALUES.get(layout)
    if made is None:
        lowest = [hist.get_value_from_index(i) for i in range(hist.counts_len)]
        made = _VALUES[layout] = (lowest, [hist.get_highest_equivalent_value(v) for v in lowest])
    return made


def ms_at(hist: HdrHistogram, percentile: float) -> float:
    """A histogram's percentile in milliseconds (its values are microseconds); 0 when it is empty. The library's
    ``get_value_at_percentile``, its walk over the counts one index at a time in Python (some 0.3 ms a percentile, a
    run-hour's summary reads thousands) made one cumulative sum and a search."""
    if not hist.get_total_count():
        return 0.0
    target = hist.get_target_count_at_percentile(percentile)
    index = int(np.searchsorted(np.cumsum(np.ctypeslib.as_array(hist.counts)), target))  # the first reaching it
    if index >= hist.counts_len:
        return 0.0
    value = hist.get_value_from_index(index)
    value = hist.get_highest_equivalent_value(value) if percentile else hist.get_lowest_equivalent_value(value)
    return round(value / 1000.0, 2)


def max_ms(hist: HdrHistogram) -> float:
    return round(hist.get_max_value() / 1000.0, 2)


def _figures(hist: HdrHistogram) -> Figures:
    return ms_at(hist, 50), ms_at(hist, 95), ms_at(hist, 99), max_ms(hist)


def _minute(second: int) -> int:
    return second - second % ROLLUP_S


class Latency:
    """Histograms of microseconds by (second, op class): the newest seconds' live (``seconds``, which the request
    listener adds to), older ones encoded (``packed``), the aged ones by (minute's first second, op class), encoded
    (``minutes``). A report for a second already packed lands in a live one that joins its twin at the next roll."""

    def __init__(self) -> None:
        self.seconds: dict[tuple[int, str], HdrHistogram] = {}
        self.packed: dict[tuple[int, str], str] = {}
        self._minutes: dict[tuple[int, str], str] = {}
        self._adding: dict[tuple[int, str], HdrHistogram] = {}  # minutes being added to (a merge's), not yet encoded

    @property
    def minutes(self) -> dict[tuple[int, str], str]:
        """The aged minutes, encoded (any being added to encoded first)."""
        self._settle()
        return self._minutes

    def _settle(self) -> None:
        for key, hist in self._adding.items():
            if key in self._minutes:
                add_into(hist, self._minutes[key])
            self._minutes[key] = hist.encode().decode("ascii")
        self._adding.clear()

    def at(self, second: int, op_class: str) -> HdrHistogram:
        """The live histogram of ``second`` (made if new; one whose second is packed or rolled up joins it at the next
        roll)."""
        hist = self.seconds.get((second, op_class))
        if hist is None:
            hist = self.seconds[(second, op_class)] = new_histogram()
        return hist

    def add_encoded(self, second: int, op_class: str, encoded: str, *, minute: bool = False) -> None:
        """Add a histogram in HdrHistogram's encoding: one second's, or (``minute``) one minute's."""
        if minute:  # kept decoded while a merge adds engine after engine into it (a decode and encode each, else)
            hist = self._adding.get((second, op_class))
            if hist is None:
                if len(self._adding) >= ADDING_MINUTES:
                    self._settle()
                hist = self._adding[(second, op_class)] = new_histogram()
            add_into(hist, encoded)
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
        """Roll the seconds more than ``PER_SECOND_FOR_S`` behind ``newest`` into their minutes (whole minutes only),
        and pack the live ones more than ``LIVE_FOR_S`` behind it."""
        before = _minute(newest - PER_SECOND_FOR_S)
        aged: dict[tuple[int, str], list[HdrHistogram | str]] = {}
        for kept in (self.seconds, self.packed):
            for key in [key for key in kept if key[0] < before]:
                aged.setdefault((_minute(key[0]), key[1]), []).append(kept.pop(key))
        for (minute, op_class), parts in aged.items():
            self._into_minute(minute, op_class, parts)
        for key in [key for key in self.seconds if key[0] < newest - LIVE_FOR_S]:
            hist = self.seconds.pop(key)
            if key in self.packed:
                add_into(hist, self.packed[key])
            self.packed[key] = hist.encode().decode("ascii")

    def _kept(self) -> list[tuple[int, str]]:
        """Every (second, op class) kept apart, live or packed (or both: a late report beside its packed twin)."""
        return sorted(self.seconds.keys() | self.packed.keys())

    def _joined(self, key: tuple[int, str]) -> HdrHistogram:
        hist = self.seconds.get(key)
        return _sum(hist, self.packed[key]) if key in self.packed else hist

    def _each_second(self) -> Iterator[tuple[tuple[int, str], HdrHistogram]]:
        """Each second kept apart, its live and packed parts together, decoded one at a time."""
        for key in self._kept():
            yield key, self._joined(key)

    def _decoded_minutes(self) -> Iterator[tuple[int, str, HdrHistogram]]:
        for (minute, op_class), encoded in self.minutes.items():
            yield minute, op_class, _sum(None, encoded)

    def by_op_class(self) -> dict[str, HdrHistogram]:
        """The whole run's histogram per op class (exact: histograms add without loss), the packed seconds and the
        minutes decoded one at a time."""
        merged: dict[str, HdrHistogram] = {}
        for (_, op_class), hist in self._each_second():
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
        for (second, _), encoded in self.packed.items():
            if second in seconds:
                add_into(merged, encoded)
        minutes = {_minute(second) for second in seconds}
        for (minute, _), encoded in self.minutes.items():
            if minute in minutes:  # only these decoded: a step judged during a long run reads its own seconds
                add_into(merged, encoded)
        return merged

    def figures(self) -> Callable[[int, str], Figures]:
        """p50, p95, p99 and max (ms) of a (second, op class): its own, its minute's where rolled up, else zeros."""
        own = {key: _figures(hist) for key, hist in self._each_second()}
        rolled = {(minute, op_class): _figures(hist) for minute, op_class, hist in self._decoded_minutes()}
        return lambda second, op_class: own.get((second, op_class)) or rolled.get((_minute(second), op_class), (0.0,) * 4)

    def encoded(self) -> tuple[list[list], list[list]]:
        """Every second kept apart and every minute, as [first second, op class, encoding] each."""
        seconds = [  # a second only packed is given as it is, not decoded to be encoded again
            [*key, self.packed[key] if key not in self.seconds else self._joined(key).encode().decode("ascii")]
            for key in self._kept()
        ]
        return seconds, [[minute, op_class, encoded] for (minute, op_class), encoded in self.minutes.items()]

    def clear(self) -> None:
        self.seconds.clear()
        self.packed.clear()
        self._minutes.clear()
        self._adding.clear()


def _sum(hist: HdrHistogram | None, encoded: str) -> HdrHistogram:
    """A new histogram of ``hist``'s counts (if any) and ``encoded``'s."""
    into = new_histogram()
    if hist is not None:
        into.add(hist)
    add_into(into, encoded)
    return into
