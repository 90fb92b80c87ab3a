"""The workload as demand per PartitionKey: the mix's operations, the key strategy's and skew's own probabilities
(``KeyStrategy.access_shares``/``new_shares``) and the entities each operation asks for (``Operation.demand``).
Nothing here draws keys a second way: the probabilities are the ones the users sample.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..options.settings import Settings
from ..service.operations import OPERATIONS, OpClass
from ..workload.keys import KeyStrategy

__all__ = ["Demand", "Spread", "Stream", "demand_of"]

#: Where a per-entity strategy's new keys sort: before every key (prepend-only) or after (append-only).
FIRST, LAST = "", "\uffff"


@dataclass(frozen=True)
class Spread:
    """Where scans across PartitionKeys read past their first key, in key order (the rows the service returns): from
    start key ``i``, every key before ``end[i]`` after ``i`` whole, and ``tail[i]`` rows of key ``end[i]``."""

    rows: np.ndarray  # seeded rows per key
    end: np.ndarray  # per start key: the key its scan stops in (i + 1, with no tail, where it stops in its first)
    tail: np.ndarray  # per start key: the rows it reads there

    @classmethod
    def of(cls, rows: np.ndarray, scan_size: int) -> Spread:
        """Scans of up to ``scan_size`` rows from each key, over keys holding ``rows``."""
        n = len(rows)
        before = np.concatenate(([0.0], np.cumsum(rows)))  # rows before each key
        stop = before[:-1] + scan_size  # where each start's scan stops, in rows
        last = np.minimum(np.searchsorted(before, stop, side="left") - 1, n - 1)  # the key holding its last row
        start = np.arange(n)
        spills = last > start
        end = np.where(spills, last, start + 1)
        tail = np.where(spills, np.minimum(stop, before[np.minimum(last + 1, n)]) - before[last], 0.0)
        return cls(rows=rows, end=end, tail=tail)

    def beyond(self, scans: np.ndarray) -> np.ndarray:
        """The rows ``scans`` (per start key) read past their first key, per key."""
        n = len(scans)
        covered = np.bincount(np.arange(1, n + 1), scans, minlength=n + 1) - np.bincount(self.end, scans, minlength=n + 1)
        return np.cumsum(covered)[:n] * self.rows + np.bincount(self.end, scans * self.tail, minlength=n + 1)[:n]


@dataclass(frozen=True, kw_only=True)
class Stream:
    """One operation's asks of one op class, spread over the keys."""

    op: str
    op_class: OpClass
    share: float  # of the mix's operations
    probabilities: np.ndarray  # over ``Demand.keys``; sums to 1 (a clock stream: replaced each second)
    entities: np.ndarray  # per operation, per key
    keyed: bool = True  # False: each operation a new key of its own (per-key budgets never bind; reported as OTHER)
    clock: np.ndarray | None = None  # timestamp writes: the key (index) a new entity gets in each virtual second
    spread: Spread | None = None  # scans across keys: ``entities`` are the rows of their first key, these the rest


@dataclass(frozen=True, kw_only=True)
class Demand:
    keys: list[str]  # sorted, as the partition layer orders them
    streams: list[Stream]
    #: keys each of ``keys`` stands for (a replay's tail: a group of keys alike in demand, each asked as it is); the
    #: streams' probabilities are per key, so that they sum to 1 weighted by these. None: one key each.
    weights: np.ndarray | None = None
    #: per key, the first and last second of ``span_s`` it was asked in (a traffic profile's keys that came and went:
    #: a minute's key of a day); None: every key all along. A key's demand falls in its own life, so while it lives its
    #: share of each stream is its share over the span times span / life, the live keys' shares made whole (``at``).
    lives: np.ndarray | None = None
    span_s: int = 0

    @property
    def key_counts(self) -> np.ndarray:
        return np.ones(len(self.keys)) if self.weights is None else self.weights

    def at(self, probabilities: np.ndarray, second: int) -> np.ndarray:
        """A stream's probabilities at ``second`` of the span: each live key's share, the dead keys' none."""
        if self.lives is None:
            return probabilities
        first, last = self.lives[:, 0], self.lives[:, 1]
        alive = (first <= second) & (second <= last)
        weighted = np.where(alive, probabilities * self.span_s / (last - first + 1), 0.0)
        total = float((weighted * self.key_counts).sum())
        return weighted / total if total else weighted

    def peak(self, probabilities: np.ndarray) -> np.ndarray:
        """Each key's share of a stream at its busiest second: the shares change only where a key is born or dies, so
        those seconds are the ones read."""
        if self.lives is None:
            return probabilities
        moments = np.unique(np.concatenate([self.lives[:, 0], self.lives[:, 1] + 1]))
        moments = moments[(moments >= 0) & (moments < self.span_s)]
        most = np.zeros_like(probabilities)
        for second in moments:
            np.maximum(most, self.at(probabilities, int(second)), out=most)
        return most

    def expected(self, rate: float) -> np.ndarray:
        """Entities/s asked of each key (keyed streams), at ``rate`` operations/s (a key that came and went: while it
        lived)."""
        per_key = np.zeros(len(self.keys))
        for s in self.streams:
            if s.keyed and s.clock is None:
                per_key += rate * s.share * self.peak(s.probabilities) * s.entities
                if s.spread is not None:
                    per_key += s.spread.beyond(rate * s.share * s.probabilities)
            elif s.keyed:  # a timestamp key takes a whole period's writes
                per_key += rate * s.share * np.bincount(s.clock, minlength=len(self.keys)) / len(s.clock) * s.entities
        return per_key


def demand_of(settings: Settings, *, start: float, seconds: int) -> Demand:
    """The run's demand per key: ``settings``' mix over its key strategy and skew (``start``: the virtual clock's
    epoch, for time-ordered keys; ``seconds``: how long)."""
    strategy = settings.keys()
    count = settings.seed_entities
    read_keys, read_p = strategy.access_shares(count)
    new = strategy.new_shares()
    writes_new = any(OPERATIONS[name].new_keys for name in settings.mix)
    clock_keys = [strategy.key_for(start + t) for t in range(seconds)] if writes_new and strategy.fresh == "clock" else []
    pseudo = {"first": [FIRST], "last": [LAST]}.get(strategy.fresh, []) if writes_new and new is None else []
    keys = sorted({*read_keys, *(new[0] if new else ()), *clock_keys, *pseudo})
    index = {key: i for i, key in enumerate(keys)}

    def spread(names: list[str], probabilities: np.ndarray) -> np.ndarray:
        out = np.zeros(len(keys))
        out[[index[k] for k in names]] = probabilities
        return out

    reads = spread(read_keys, read_p)
    writes = spread(*strategy.write_shares(count))
    rows = _scan_rows(strategy, keys, count, settings.scan_size)
    across = None
    if any(OPERATIONS[name].reach in ("partitions", "table") for name in settings.mix):
        held = np.array([0.0 if key in pseudo else float(strategy.scanned(key, count, 1)[0]) for key in keys])
        across = Spread.of(held, settings.scan_size)
    total = sum(settings.mix.values())
    streams = []
    for name, weight in settings.mix.items():
        op = OPERATIONS[name]
        where, keyed, clock = (writes if op.op_class == OpClass.PUT else reads), True, None
        if op.new_keys and new is not None:
            where = spread(*new)
        elif op.new_keys and strategy.fresh == "clock":
            clock = np.array([index[k] for k in clock_keys], dtype=np.int64)
            where = np.zeros(len(keys))
        elif op.new_keys:  # a key per entity: spread at random (guid), or all at one end of the key order
            keyed = False
            where = np.full(len(keys), 1.0 / len(keys)) if strategy.fresh == "spread" else spread(pseudo, np.ones(1))
        elif op.reach == "table":  # from the table's first row
            where = spread([min(read_keys)], np.ones(1))
        for op_class, n in op.demand(batch_size=settings.batch_size, scan_rows=settings.scan_size):
            # a scan reads what its first partition holds, up to --scan-size; one across keys reads on into the next
            entities = rows if op.asks == "scan" else np.full(len(keys), float(n))
            streams.append(
                Stream(
                    op=name,
                    op_class=op_class,
                    share=weight / total,
                    probabilities=where,
                    entities=entities,
                    keyed=keyed,
                    clock=clock,
                    spread=across if op.reach in ("partitions", "table") else None,
                )
            )
    lived, span = strategy.lives()
    lives = np.array([lived.get(key, (0, span - 1)) for key in keys], dtype=float) if lived else None
    return Demand(keys=keys, streams=streams, lives=lives, span_s=span if lived else 0)


def _scan_rows(strategy: KeyStrategy, keys: list[str], count: int, scan_size: int) -> np.ndarray:
    """The rows a row range scan at each key reads, as the users' scans ask (``KeyStrategy.scanned``)."""
    return np.array([float(strategy.scanned(key, count, scan_size)[1]) for key in keys])
