"""Latency histograms in HdrHistogram's own form, read and added fast: what every reader of the metrics' counts needs
(a run's listener, the summary, ``loadtest merge`` over hundreds of engines) without the library's Python walks.

A histogram spans 1 µs to an hour at 2 digits (``LATENCY_MAX_US``), so any two add index by index; an encoded one is
checked against that range before its counts are trusted (an engine's file may be anything).
"""

from __future__ import annotations

import binascii
import ctypes
import struct
import weakref
import zlib

import numpy as np
from hdrh.codec import V2_COMPRESSION_COOKIE_BASE, V2_ENCODING_COOKIE_BASE
from hdrh.histogram import HdrHistogram
from pyhdrh import add_array as add_counts  # HdrHistogram's own C: the counts' varints decoded, arrays added
from pyhdrh import decode as decode_varints

__all__ = ["LATENCY_MAX_US", "add_into", "check_header", "max_ms", "ms_at", "new_histogram"]

LATENCY_MAX_US = 3_600_000_000  # one hour


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
