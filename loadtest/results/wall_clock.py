"""A run's seconds as findings and charts say them: seconds since the start, and for a long run the wall-clock time in
UTC beside them (the time Azure's metrics and logs are in, where a user looks next).

A short run's start is on its page, and seconds since it read more easily; past ``UTC_FROM_S`` nobody adds 3,612 s to
a start in their head.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pandas as pd

__all__ = ["UTC_FROM_S", "RunClock", "clock_form", "first_epoch", "time_form", "unit_of"]

UTC_FROM_S = 600  # a run this long or longer says the wall-clock time beside its seconds


def first_epoch(frame: pd.DataFrame) -> float | None:
    """The wall-clock second (epoch) of second 0 of a timeseries frame, if its rows carry their epoch."""
    if frame.empty or "second" not in frame or "t" not in frame:
        return None
    row = frame.iloc[0]
    return float(row["second"] - row["t"])


def clock_form(span_s: float) -> str:
    """How a time of a run this long reads: to the second within an hour, to the minute within a day, then dated."""
    return "%H:%M:%S" if span_s <= 3600 else "%H:%M" if span_s <= 86_400 else "%m-%d %H:%M"


def unit_of(size: int) -> str:
    """Seconds in words: ``60`` a minute, ``7200`` 2 hours, ``90`` 90 s."""
    unit = next(((size // n, name) for n, name in ((86_400, "day"), (3_600, "hour"), (60, "minute")) if size % n == 0), None)
    return f"{unit[0]} {unit[1]}s" if unit and unit[0] > 1 else (unit[1] if unit else f"{size} s")


def time_form(span_s: float) -> str:
    """A second of a run this long on the UTC clock: ``14:02:12``, dated past a day."""
    return "%H:%M:%S" if span_s <= 86_400 else "%Y-%m-%d %H:%M:%S"


@dataclass(frozen=True)
class RunClock:
    """Second 0's epoch (none: unknown) and the run's length."""

    first: float | None
    span_s: float

    @classmethod
    def of(cls, timeseries: pd.DataFrame, span_s: float) -> RunClock:
        return cls(first_epoch(timeseries), span_s)

    @property
    def long(self) -> bool:
        return self.first is not None and self.span_s >= UTC_FROM_S

    def utc(self, t: float) -> str:
        assert self.first is not None
        try:  # a span past a day: dated, or its seconds of different days read alike
            return datetime.fromtimestamp(self.first + t, UTC).strftime(time_form(self.span_s))
        except (ValueError, OverflowError, OSError):  # a clock read from a file, near the last date a datetime holds
            return "after 9999"

    def at(self, t: float, form: str = "{:,}") -> str:
        """``412 s``; a long run's ``3,612 s (14:02:12 UTC)``."""
        said = f"{form.format(t)} s"
        return f"{said} ({self.utc(t)} UTC)" if self.long else said

    def span(self, start: float, end: float, form: str = "{:,}") -> str:
        """``from 412 s to 418 s``; a long run's ``from 3,612 s to 3,618 s (14:02:12 to 14:02:18 UTC)``."""
        said = f"from {form.format(start)} s to {form.format(end)} s"
        return f"{said} ({self.utc(start)} to {self.utc(end)} UTC)" if self.long else said
