"""The throttling emulator's model: token buckets of entities/s per PartitionKey and per account, and the
partition layer of Calder et al. (SOSP 2011).

Azurite never throttles; ``throttle`` asks these budgets about each request. With ``server_rate``, the key space
starts as one RangePartition on one simulated partition server (``server_rate`` entities/s); a range over its
budget for ``lb_delay`` seconds is split where its load halves and the halves go to their own servers, both
offline for ``lb_offline`` seconds meanwhile (503s). One PartitionKey is never split, so a single hot key stays
throttled while spread keys recover. One key space for the account (the test uses one table).

Not modelled: merges of cold ranges.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections import Counter
from dataclasses import asdict, dataclass, field

from ..profiles import DEFAULT_PROFILE, PROFILES

__all__ = ["Budget", "Budgets", "PartitionLayer", "RangePartition"]


@dataclass(frozen=True, kw_only=True)
class Budgets:
    """The emulator's settings. Each default is declared here once: ``loadtest emulator --partition-rate``
    and ``loadtest run --emulator-partition-rate`` both read it (the docs' targets, Azure's load balancing).
    """

    partition_rate: float = PROFILES[DEFAULT_PROFILE].partition  # entities/s per PartitionKey
    account_rate: float = PROFILES[DEFAULT_PROFILE].account  # entities/s per account
    timeout_share: float = 0.0  # of throttled answers, given as 500 OperationTimedOut
    burst: float = 1.0  # seconds of budget a bucket holds: how long a burst above the budget goes unthrottled
    server_rate: float = 0  # entities/s per simulated partition server; 0 = no range model
    lb_delay: float = 180.0  # seconds over budget before a range is split and moved ("a few minutes")
    lb_offline: float = 5.0  # seconds a moved range is offline ("a few seconds")

    def to_args(self) -> list[str]:
        """The ``loadtest emulator`` flags that give these budgets to a child process."""
        return [arg for name, value in asdict(self).items() for arg in (f"--{name.replace('_', '-')}", f"{value:g}")]


@dataclass
class Budget:
    """A token bucket: ``rate`` entities/s, holding at most ``burst`` seconds' worth."""

    rate: float
    burst: float = 1.0
    tokens: float = field(init=False)
    updated: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.tokens = self.rate * self.burst

    def refill(self, now: float) -> None:
        self.tokens = min(self.rate * self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now

    def has(self, now: float) -> bool:
        self.refill(now)
        return self.tokens > 0

    def take(self, amount: float) -> None:
        self.tokens -= amount  # may go negative: a big scan is paid off before the next request


@dataclass
class RangePartition:
    """Keys from ``low`` up to the next range's ``low``, served by one partition server."""

    low: str
    budget: Budget
    load: Counter[str] = field(default_factory=Counter)  # entities per key, since its last split
    over_since: float | None = None
    last_refused: float = 0.0
    offline_until: float = 0.0


class PartitionLayer:
    """RangePartitions on simulated partition servers, split and moved when they stay over budget."""

    def __init__(self, server_rate: float, lb_delay: float, lb_offline: float) -> None:
        self.server_rate, self.lb_delay, self.lb_offline = server_rate, lb_delay, lb_offline
        self.ranges = [RangePartition("", Budget(server_rate))]
        self.splits: list[tuple[float, str]] = []  # (monotonic time, key where a range was cut)

    def find(self, pk: str) -> RangePartition:
        return self.ranges[bisect_right([r.low for r in self.ranges], pk) - 1]

    def admit(self, pk: str, entities: int, now: float) -> bool:
        part = self.find(pk)
        if now < part.offline_until:
            return False  # being moved to another server
        if not part.budget.has(now):
            part.last_refused = now
            if part.over_since is None:
                part.over_since = now
            elif now - part.over_since >= self.lb_delay:
                self._split(part, now)
            return False
        if part.over_since is not None and now - part.last_refused > 1.0:
            part.over_since = None  # a second without refusals: no longer over
        self.charge(pk, entities)
        return True

    def charge(self, pk: str, entities: int) -> None:
        part = self.find(pk)
        part.budget.take(entities)
        part.load[pk] += entities

    def _split(self, part: RangePartition, now: float) -> None:
        keys = sorted(part.load)
        if len(keys) < 2:
            part.over_since = now  # one PartitionKey: the unit of atomicity is never split
            return
        half, seen, at = sum(part.load.values()) / 2, 0, keys[-1]
        for i, key in enumerate(keys[:-1]):
            seen += part.load[key]
            if seen >= half:
                at = keys[i + 1]
                break
        new = RangePartition(at, Budget(self.server_rate, updated=now), Counter({k: v for k, v in part.load.items() if k >= at}))
        part.load = Counter({k: v for k, v in part.load.items() if k < at})
        part.budget, part.over_since = Budget(self.server_rate, updated=now), None
        part.offline_until = new.offline_until = now + self.lb_offline
        self.ranges.insert(self.ranges.index(part) + 1, new)
        self.splits.append((now, at))
