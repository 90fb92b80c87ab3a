"""The ranges where new keys land, at both ends of the key order, as the service serves them.

With range partitions the last range takes every key past the largest written before it (the first, every key before
the smallest): an increasing (decreasing) key design sends every new key to one partition server, "even if you create
small and many partitions" (the docs' append-only / prepend-only anti-pattern). The range holds the keys that landed
there until the Partition Manager splits it, a few minutes under load; a fixed key set's end is its largest (smallest)
key alone. Declared once: the throttling emulator budgets the range (``emulator.budgets``), the counts count it
(``counting.key_edges``), both by these rules, keys compared as keys or as indices of sorted keys.
"""

from __future__ import annotations

from collections import deque
from typing import Any

__all__ = ["END_HOLD_S", "SETTLE_S", "KeyEnd", "ranges_words"]

#: Seconds a key that landed past the end stays in the range: until load balancing would split it ("a few minutes").
END_HOLD_S = 180.0
#: Seconds from the first key seen in which a new extreme key is the key set being discovered (or seeded), not new keys
#: landing at the end: those keys never join the range (the end key itself always is in it).
SETTLE_S = 10.0


class KeyEnd:
    """One end of the key order: +1 the largest keys (append), -1 the smallest (prepend)."""

    def __init__(self, sign: int) -> None:
        self.sign = sign
        self.key: Any = None  # the extreme key so far
        self.start: float | None = None  # when the first key was seen
        self.landed: deque[tuple[float, Any]] = deque()  # keys that moved the end after SETTLE_S, with when
        self.moves = 0  # how many
        #: the first key that moved the end (settling or not) and the last that landed: the keys that came in at the end
        self.first_landed: Any = None
        self.last_landed: Any = None

    def floor(self, now: float) -> Any:
        """The range's boundary: the oldest key that landed past the end within ``END_HOLD_S``, else the end key."""
        landed = self.landed
        while landed and now - landed[0][0] > END_HOLD_S:
            landed.popleft()
        return landed[0][1] if landed else self.key

    def holds(self, key: Any, now: float) -> bool:
        """``key`` is in the range where new keys land."""
        floor = self.floor(now)
        return floor is not None and (key >= floor if self.sign > 0 else key <= floor)

    def past(self, key: Any) -> bool:
        return self.key is None or (key > self.key if self.sign > 0 else key < self.key)

    def see(self, key: Any, now: float, *, fresh: bool = False) -> None:
        """A key written (or read) at ``now``; ``fresh``: it stands for a new key past the end, though it is the same one
        (a simulation's one key for every new entity)."""
        if self.start is None:
            self.start = now
        if not (self.past(key) or fresh):
            return
        first = self.key is None
        self.key = key if self.past(key) else self.key
        if first:
            return
        self.first_landed = self.key if self.first_landed is None else self.first_landed
        if now - self.start >= SETTLE_S:
            self.landed.append((now, self.key))
            self.moves += 1
            self.last_landed = self.key


def ranges_words(*, per_key_only: bool, server_rate: float = 0.0) -> str:
    """Which ranges a model of the partition layer (the emulator's, a simulation's) budgets, as the what-ran notes say."""
    ends = (
        "per-key budgets only (each new key of an increasing or decreasing design a fresh budget of its own)"
        if per_key_only
        else "the range where new keys land at each end of the key order as one partition with one per-partition budget"
    )
    return ends + (f"; range partitions on servers of {server_rate:,.0f} entities/s, split under load" if server_rate else "")
