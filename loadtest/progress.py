"""Long work said as it goes, on stderr (stdout stays what scripts parse): a rich bar on a terminal, else a line every
``EVERY_S`` seconds (logs and CI: no bar characters, nothing at all for work done sooner). Seeding has its own.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["EVERY_S", "Progress"]

#: Seconds between two lines where no terminal shows a bar; work done sooner says nothing.
EVERY_S = 5.0


def _amount(value: float, unit: str) -> str:
    if unit == "bytes":
        for size, name in ((1 << 30, "GB"), (1 << 20, "MB"), (1 << 10, "kB")):
            if value >= size:
                return f"{value / size:,.1f} {name}"
        return f"{value:,.0f} bytes"
    if value == 1 and unit.endswith("s"):
        unit = unit[:-1]  # 1 shard, 1 simulated second
    return (f"{value:,.0f} {unit}" if value >= 10 or value == int(value) else f"{value:,.1f} {unit}").rstrip()


def _duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


class Progress:
    """``what`` (``traffic: reading``) done in ``unit`` out of ``total`` (None: not known ahead, no time left said);
    ``detail`` says more as it goes (``1,234,567 records``). Used as a context: ``advance`` as work is done."""

    def __init__(
        self,
        what: str,
        total: float | None,
        unit: str = "",
        *,
        detail: Callable[[], str] | None = None,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.what, self.total, self.unit, self.detail = what, total, unit, detail
        self.stream = sys.stderr if stream is None else stream
        self.clock, self.done = clock, 0.0
        self._bar, self._task = None, None
        self._began = self._said = 0.0

    def __enter__(self) -> Progress:
        self._began = self._said = self.clock()
        if self.stream.isatty() and not os.environ.get("CI"):
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

            self._bar = Progress(
                TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeRemainingColumn(),
                TextColumn("{task.fields[detail]}"), console=Console(file=self.stream), transient=True,
            )  # fmt: skip
            self._bar.start()
            self._task = self._bar.add_task(self.what, total=self.total, detail="")
        return self

    def advance(self, amount: float = 1) -> None:
        self.done += amount
        now = self.clock()
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, detail=self.detail() if self.detail else "")
        elif now - self._said >= EVERY_S:
            self._said = now
            print(self.line(now), file=self.stream, flush=True)

    def line(self, now: float) -> str:
        """What a log shows: done (of the total, its share), the detail, the rate, the time left where it is known."""
        spent = max(now - self._began, 1e-9)
        done = _amount(self.done, self.unit)
        if self.total:
            done = f"{done} of {_amount(self.total, self.unit)} ({min(self.done / self.total, 1):.0%})"
        parts = [f"{self.what}: {done}"]
        if self.detail:
            parts.append(self.detail())
        parts.append(f"{_amount(self.done / spent, self.unit)}/s")
        if self.total and self.done:
            parts.append(f"about {_duration(max(self.total - self.done, 0) * spent / self.done)} left")
        return ", ".join(parts)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
