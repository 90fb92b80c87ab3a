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

from collections.abc import Callable, Iterable, Iterator

from hdrh.histogram import HdrHistogram

from .histograms import add_into, max_ms, ms_at, new_histogram

__all__ = ["LIVE_FOR_S", "PER_SECOND_FOR_S", "ROLLUP_S", "Latency", "minute_of"]

ROLLUP_S = 60  # an aged second's histogram goes into its minute's
PER_SECOND_FOR_S = 600  # seconds kept apart behind the newest one counted: ten minutes
LIVE_FOR_S = 60  # seconds whose histograms stay live behind the newest one counted (a worker's report lands in them)
ADDING_MINUTES = 240  # minutes a merge keeps decoded as it adds engines into them (an hour of four op classes)

Figures = tuple[float, float, float, float]  # p50, p95, p99 and max, ms


def _figures(hist: HdrHistogram) -> Figures:
    return ms_at(hist, 50), ms_at(hist, 95), ms_at(hist, 99), max_ms(hist)


def minute_of(second: int) -> int:
    """The first second of ``second``'s minute: the key its histogram is rolled up under."""
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

    def at_minute(self, second: int, op_class: str) -> HdrHistogram:
        """The histogram of ``second``'s minute, to add to as it is: what a second more than ``PER_SECOND_FOR_S``
        behind the newest counted would be rolled into anyway (records read long after they were made, a merge's
        engines); kept decoded while it is added to (a decode and encode each time, else)."""
        key = (minute_of(second), op_class)
        hist = self._adding.get(key)
        if hist is None:
            if len(self._adding) >= ADDING_MINUTES:
                self._settle()
            hist = self._adding[key] = new_histogram()
        return hist

    def add_encoded(self, second: int, op_class: str, encoded: str, *, minute: bool = False) -> None:
        """Add a histogram in HdrHistogram's encoding: one second's, or (``minute``) one minute's."""
        add_into(self.at_minute(second, op_class) if minute else self.at(second, op_class), encoded)

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
        before = minute_of(newest - PER_SECOND_FOR_S)
        aged: dict[tuple[int, str], list[HdrHistogram | str]] = {}
        for kept in (self.seconds, self.packed):
            for key in [key for key in kept if key[0] < before]:
                aged.setdefault((minute_of(key[0]), key[1]), []).append(kept.pop(key))
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
        minutes = {minute_of(second) for second in seconds}
        for (minute, _), encoded in self.minutes.items():
            if minute in minutes:  # only these decoded: a step judged during a long run reads its own seconds
                add_into(merged, encoded)
        return merged

    def figures(self) -> Callable[[int, str], Figures]:
        """p50, p95, p99 and max (ms) of a (second, op class): its own, its minute's where rolled up, else zeros."""
        own = {key: _figures(hist) for key, hist in self._each_second()}
        minutes, read = self.minutes, {}  # a minute decoded when first asked of (a long span's series asks of few)

        def of(second: int, op_class: str) -> Figures:
            key = (minute_of(second), op_class)
            if key not in read:
                read[key] = _figures(_sum(None, minutes[key])) if key in minutes else (0.0,) * 4
            return read[key]

        return lambda second, op_class: own.get((second, op_class)) or of(second, op_class)

    def bin_figures(self, start_of: Callable[[int], int]) -> dict[tuple[int, str], Figures]:
        """p50, p95, p99 and max (ms) of each bin and op class: its minutes' histograms added (``start_of``: a
        minute's bin's first second), each decoded once. The seconds kept apart are not read: roll them up first."""
        groups: dict[tuple[int, str], list[str]] = {}
        for (minute, op_class), encoded in sorted(self.minutes.items()):
            groups.setdefault((start_of(minute), op_class), []).append(encoded)
        out = {}
        for key, parts in groups.items():
            into = new_histogram()
            for part in parts:
                add_into(into, part)
            out[key] = _figures(into)
        return out

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
