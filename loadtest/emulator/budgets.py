"""The partition layer's model: token buckets of entities/s per PartitionKey and per account, and the
partition layer of Calder et al. (SOSP 2011). One model, two clocks: the emulator asks it per request in wall-clock
time (``Budget.has``/``take``, ``PartitionLayer.admit``), the simulator per tick in virtual time over arrays of keys
(``available``/``passed``/``settle``, ``PartitionLayer.admit_tick``): the same bucket and the same load-balancing
rules, the tick form their fluid limit (a steady demand over the tick).

Azurite never throttles; ``throttle`` asks these budgets about each request. With ``server_rate``, the key space
starts as one RangePartition on one simulated partition server (``server_rate`` entities/s); a range over its
budget for ``lb_delay`` seconds is split where its load halves and the halves go to their own servers, both
offline for ``lb_offline`` seconds meanwhile (503s). One PartitionKey is never split, so a single hot key stays
throttled while spread keys recover. One key space for the account (the test uses one table).

The ranges at both ends of the key order (``KeyEnds``, unless ``per_key_only``): keys at or past the largest key
seen (at or before the smallest) share one budget at the per-partition rate, as the last (first) range partition
serves every new key of an increasing (decreasing) design however many keys it makes, the docs' append-only
anti-pattern. For a fixed key set the end is its largest (smallest) key alone, whose own budget it equals.

Not modelled: merges of cold ranges.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..service.key_ends import KeyEnd, ranges_words
from ..service.scale_targets import DEFAULT_PROFILE, PROFILES

__all__ = [
    "Budget",
    "Budgets",
    "KeyEnds",
    "PartitionLayer",
    "RangePartition",
    "Split",
    "available",
    "passed",
    "settle",
    "split_at",
]

Tokens = Any  # a float (the emulator's one bucket) or a numpy array (the simulator's buckets of many keys)


def available(tokens: Tokens, rate: Tokens, elapsed: float) -> Tokens:
    """What a bucket can give over ``elapsed`` seconds: its tokens and what flows in meanwhile."""
    return tokens + elapsed * rate


def passed(tokens: Tokens, wanted: Tokens) -> Tokens:
    """Of ``wanted`` entities, those a bucket with ``tokens`` to give lets through: all while it has tokens left (a
    request passes while tokens > 0 and is charged whole; over a tick, the fluid form)."""
    if isinstance(tokens, float) and isinstance(wanted, float):  # one request's bucket: builtins cost a third
        return min(max(tokens, 0.0), wanted)
    return np.minimum(np.maximum(tokens, 0.0), wanted)


def settle(tokens: Tokens, served: Tokens, rate: Tokens, burst: float) -> Tokens:
    """The tokens left after serving ``served``: never more than ``burst`` seconds' worth."""
    if isinstance(tokens, float) and isinstance(served, float):
        return min(rate * burst, tokens - served)
    return np.minimum(rate * burst, tokens - served)


def split_at(loads: Sequence[float]) -> int | None:
    """Where a range over budget is cut, given its keys' loads in key order: the index of the first key of the upper
    half (by load); None for one key (a PartitionKey, the unit of atomicity, is never split)."""
    if len(loads) < 2:
        return None
    loads = np.asarray(loads, dtype=float)
    seen = np.cumsum(loads[:-1])
    half = loads.sum() / 2 * (1 - 1e-9)  # sums of equal loads reach half exactly, whatever their rounding
    return min(int(np.searchsorted(seen, half)) + 1, len(loads) - 1)


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
    page_rows: int = 0  # rows a query's answer holds at most, then a continuation token (Azure's partition-server cuts)
    per_key_only: bool = False  # no range at the ends of the key order: each new key its own budget

    def to_args(self) -> list[str]:
        """The ``loadtest emulator`` flags that give these budgets to a child process (a switch alone when on)."""
        args = []
        for name, value in asdict(self).items():
            flag = f"--{name.replace('_', '-')}"
            args += ([flag] if value else []) if isinstance(value, bool) else [flag, f"{value:g}"]
        return args

    @property
    def model(self) -> str:
        """Which ranges the budgets model, in the words the what-ran notes use."""
        return ranges_words(per_key_only=self.per_key_only, server_rate=self.server_rate)


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
        self.tokens = settle(available(self.tokens, self.rate, now - self.updated), 0.0, self.rate, self.burst)
        self.updated = now

    def has(self, now: float) -> bool:
        self.refill(now)
        return self.tokens > 0

    def take(self, amount: float) -> None:
        self.tokens -= amount  # may go negative: a big scan is paid off before the next request

    def tick(self, wanted: float, now: float) -> float:
        """Of ``wanted`` entities over the tick ending at ``now``, what the bucket lets through (the fluid form), charged."""
        tokens = available(self.tokens, self.rate, now - self.updated)
        got = passed(tokens, wanted)
        self.tokens, self.updated = settle(tokens, got, self.rate, self.burst), now
        return got


class KeyEnds:
    """The ranges where new keys land at both ends of the key order, one budget each. The emulator asks ``admit`` and
    ``charge`` per request (keys); the simulator ``admit_tick`` per tick (sorted keys' indices): the same rules."""

    def __init__(self, rate: float, burst: float, *, now: float | None = None) -> None:
        start = time.monotonic() if now is None else now
        self.ends = (KeyEnd(1), KeyEnd(-1))
        self.budgets = (Budget(rate, burst, updated=start), Budget(rate, burst, updated=start))

    def admit(self, pk: str, now: float) -> bool:
        """False when a range ``pk`` falls in has no budget left (charge it with ``charge`` once admitted)."""
        return all(budget.has(now) for end, budget in zip(self.ends, self.budgets, strict=True) if end.holds(pk, now))

    def charge(self, pk: str, entities: float, now: float) -> None:
        for end, budget in zip(self.ends, self.budgets, strict=True):
            if end.holds(pk, now):
                budget.take(entities)
            end.see(pk, now)

    def admit_tick(self, wanted: np.ndarray, now: float, fresh: str = "") -> np.ndarray:
        """Of ``wanted`` entities per key (sorted keys; 0 where a key is not one's own: a replay's group) over the tick
        ending at ``now``, the share each key's end range lets through: its budget shared in proportion. ``fresh``: the
        end ("append", "prepend") whose extreme key stands for a new key each write."""
        share = np.ones(len(wanted))
        asked = np.flatnonzero(wanted > 0)
        for name, end, b in zip(("append", "prepend"), self.ends, self.budgets, strict=True):
            floor = end.floor(now)
            if floor is not None:
                at = slice(int(floor), None) if end.sign > 0 else slice(0, int(floor) + 1)
                want = float(wanted[at].sum())
                got = b.tick(want, now)
                if want:
                    share[at] *= got / want
            if len(asked):
                end.see(int(asked[-1] if end.sign > 0 else asked[0]), now, fresh=fresh == name)
        return share


@dataclass(frozen=True)
class Split:
    """A range cut in two and both halves moved: keys from ``low`` up to ``high`` ("" = the end), the upper half from
    ``key``, both offline from ``t`` to ``offline_until_t`` (the layer's clock)."""

    t: float
    key: str
    offline_until_t: float
    low: str = ""
    high: str = ""


@dataclass
class RangePartition:
    """Keys from ``low`` up to the next range's ``low``, served by one partition server."""

    low: str
    budget: Budget
    load: Counter[str] = field(default_factory=Counter)  # entities per key, since its last split (the emulator's)
    over_since: float | None = None
    last_refused: float = 0.0
    offline_until: float = 0.0


class PartitionLayer:
    """RangePartitions on simulated partition servers, split and moved when they stay over budget.

    The emulator asks ``admit``/``charge`` per request; the simulator ``admit_tick`` per tick over its keys. Both
    follow the same rules (``_refused``, ``_held``, ``_split``).
    """

    def __init__(self, server_rate: float, lb_delay: float, lb_offline: float, *, now: float | None = None) -> None:
        self.server_rate, self.lb_delay, self.lb_offline = server_rate, lb_delay, lb_offline
        start = time.monotonic() if now is None else now
        self.ranges = [RangePartition("", Budget(server_rate, updated=start))]
        self.splits: list[Split] = []

    # --- the rules ---------------------------------------------------------------------------

    def _refused(self, part: RangePartition, now: float) -> bool:
        """A range refused load: over budget since when; True once it has been over for the load-balancing delay."""
        part.last_refused = now
        if part.over_since is None:
            part.over_since = now
            return False
        return now - part.over_since >= self.lb_delay

    def _held(self, part: RangePartition, now: float) -> None:
        if part.over_since is not None and now - part.last_refused > 1.0:
            part.over_since = None  # a second without refusals: no longer over

    def _split(self, part: RangePartition, at: str | None, now: float) -> RangePartition | None:
        """Cut ``part`` at key ``at`` (``split_at``'s): both halves get a fresh server, offline meanwhile."""
        if at is None:
            part.over_since = now  # one PartitionKey: the unit of atomicity is never split
            return None
        new = RangePartition(at, Budget(self.server_rate, updated=now))
        part.budget, part.over_since = Budget(self.server_rate, updated=now), None
        part.offline_until = new.offline_until = now + self.lb_offline
        where = self.ranges.index(part) + 1
        high = self.ranges[where].low if where < len(self.ranges) else ""
        self.ranges.insert(where, new)
        self.splits.append(Split(t=now, key=str(at), offline_until_t=part.offline_until, low=str(part.low), high=str(high)))
        return new

    # --- per request (the emulator) ------------------------------------------------------------

    def find(self, pk: str) -> RangePartition:
        return self.ranges[bisect_right([r.low for r in self.ranges], pk) - 1]

    def admit(self, pk: str, entities: int, now: float) -> bool:
        part = self.find(pk)
        if now < part.offline_until:
            return False  # being moved to another server
        if not part.budget.has(now):
            if self._refused(part, now):
                keys = sorted(part.load)
                at = split_at([part.load[k] for k in keys])
                new = self._split(part, None if at is None else keys[at], now)
                if new is not None:
                    new.load = Counter({k: v for k, v in part.load.items() if k >= new.low})
                    part.load = Counter({k: v for k, v in part.load.items() if k < new.low})
            return False
        self._held(part, now)
        self.charge(pk, entities)
        return True

    def charge(self, pk: str, entities: int) -> None:
        part = self.find(pk)
        part.budget.take(entities)
        part.load[pk] += entities

    # --- per tick (the simulator) --------------------------------------------------------------

    def admit_tick(
        self, keys: Sequence[str] | np.ndarray, wanted: np.ndarray, load: np.ndarray, now: float, dt: float
    ) -> np.ndarray:
        """Of ``wanted`` entities per key (``keys`` sorted, best as a numpy array: it is searched every tick;
        ``wanted``: what the per-key and account budgets let by) over the tick ending at ``now``, what each range
        serves: its budget shared in proportion, nothing while offline. ``load`` (entities per key since its range's
        last split) is charged; each half keeps its keys' load at a split."""
        served = np.zeros_like(wanted)
        bounds = np.searchsorted(keys, [r.low for r in self.ranges])  # each range's first key
        for i, part in enumerate(list(self.ranges)):
            lo, hi = bounds[i], bounds[i + 1] if i + 1 < len(bounds) else len(keys)
            want = float(wanted[lo:hi].sum())
            if now - dt + 1e-9 < part.offline_until or hi <= lo:  # offline during (part of) the tick: being moved
                part.budget.updated = now
                continue
            got = part.budget.tick(want, now)
            share = got / want if want else 1.0
            served[lo:hi] = wanted[lo:hi] * share
            load[lo:hi] += served[lo:hi]
            if got < want * (1 - 1e-9):
                if self._refused(part, now):
                    at = split_at(load[lo:hi])
                    self._split(part, None if at is None else keys[lo + at], now)  # each half keeps its keys' load
            else:
                self._held(part, now)
        return served
