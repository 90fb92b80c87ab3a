"""The load generator's own CPU, read by each process every second.

Locust's monitor samples every 5 seconds and reads 0 % until its first sample: a 15-second run
recorded 0.0 % for every second while the process was busy, so a saturated generator went
unnoticed. This process's CPU time (user + system, all threads) over wall time is exact and cheap.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["CpuMeter"]


class CpuMeter:
    """Percent of one core this process used since the last reading (the first reading covers since creation)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, cpu: Callable[[], float] = time.process_time) -> None:
        self.clock, self.cpu = clock, cpu
        self._wall, self._used = clock(), cpu()

    def read(self) -> float:
        wall, used = self.clock(), self.cpu()
        elapsed, spent = wall - self._wall, used - self._used
        self._wall, self._used = wall, used
        return round(100.0 * spent / elapsed, 1) if elapsed > 0 else 0.0
