"""Open-loop arrivals: when each user's next operation is due, whatever the service's pace.

Locust's users are a closed loop: a user sends its next operation when the last one answered,
so a slow service is sent less, and the waiting never shows in the latencies (coordinated
omission). With ``--arrival-rate`` each user keeps a schedule of intended start times instead
(constant gaps with a random phase, or Poisson arrivals). An operation that starts late is timed
from its intended start as well (the corrected latency), so waiting behind a slow service shows;
a slot overdue by more than ``DROP_AFTER_S`` (or one gap, if longer) when its user is free again
is dropped, and counted, like k6's dropped iterations, so a user never falls ever further behind.
"""

from __future__ import annotations

import random

__all__ = ["ARRIVALS", "DROP_AFTER_S", "Schedule"]

ARRIVALS = ("constant", "poisson")
DROP_AFTER_S = 1.0


class Schedule:
    """One user's intended start times at ``rate`` operations/s, from ``start``."""

    def __init__(self, rate: float, kind: str, rng: random.Random, start: float) -> None:
        if kind not in ARRIVALS:
            raise ValueError(f"arrivals: {kind!r}; valid: {', '.join(ARRIVALS)}")
        self.rate, self.kind, self.rng = rate, kind, rng
        self.gap = 1.0 / rate
        self.grace = max(self.gap, DROP_AFTER_S)  # how overdue a slot may be and still be sent
        self.next = start + rng.random() * self.gap  # a random phase: users do not fire together

    def _step(self) -> float:
        return self.gap if self.kind == "constant" else self.rng.expovariate(self.rate)

    def take(self, now: float) -> tuple[float, list[float]]:
        """The intended start of the next operation, and when each slot dropped before it was due (overdue beyond the
        grace): its demand still counts, in its own second."""
        dropped = []
        while self.next + self.grace < now:
            dropped.append(self.next)
            self.next += self._step()
        intended = self.next
        self.next += self._step()
        return intended, dropped

    def owed(self, now: float) -> list[float]:
        """When each slot due before ``now`` and not yet taken was due (the run ends: they were never sent)."""
        due = []
        while self.next < now:
            due.append(self.next)
            self.next += self._step()
        return due
