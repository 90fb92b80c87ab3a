"""The workload as demand per PartitionKey: the mix's operations, the key strategy's and skew's own probabilities
(``KeyStrategy.access_shares``/``new_shares``) and the entities each operation asks for (``Operation.demand``).
Nothing here draws keys a second way: the probabilities are the ones the users sample.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..config import Settings
from ..keys import KeyStrategy
from ..operations import OPERATIONS, OpClass

__all__ = ["Demand", "Stream", "demand_of"]

#: Where a per-entity strategy's new keys sort: before every key (prepend-only) or after (append-only).
FIRST, LAST = "", "\uffff"


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


@dataclass(frozen=True, kw_only=True)
class Demand:
    keys: list[str]  # sorted, as the partition layer orders them
    streams: list[Stream]

    def expected(self, rate: float) -> np.ndarray:
        """Entities/s asked of each key (keyed streams), at ``rate`` operations/s."""
        per_key = np.zeros(len(self.keys))
        for s in self.streams:
            if s.keyed and s.clock is None:
                per_key += rate * s.share * s.probabilities * s.entities
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
    rows = _scan_rows(strategy, keys, count, settings.scan_size)
    total = sum(settings.mix.values())
    streams = []
    for name, weight in settings.mix.items():
        op = OPERATIONS[name]
        where, keyed, clock = reads, True, None
        if op.new_keys and new is not None:
            where = spread(*new)
        elif op.new_keys and strategy.fresh == "clock":
            clock = np.array([index[k] for k in clock_keys], dtype=np.int64)
            where = np.zeros(len(keys))
        elif op.new_keys:  # a key per entity: spread at random (guid), or all at one end of the key order
            keyed = False
            where = np.full(len(keys), 1.0 / len(keys)) if strategy.fresh == "spread" else spread(pseudo, np.ones(1))
        for op_class, n in op.demand(batch_size=settings.batch_size, scan_rows=settings.scan_size):
            # a row range scan reads what its partition holds, up to --scan-size; scans across keys read --scan-size
            entities = rows if op.reach == "range" else np.full(len(keys), float(n))
            streams.append(
                Stream(
                    op=name,
                    op_class=op_class,
                    share=weight / total,
                    probabilities=where,
                    entities=entities,
                    keyed=keyed,
                    clock=clock,
                )
            )
    return Demand(keys=keys, streams=streams)


def _scan_rows(strategy: KeyStrategy, keys: list[str], count: int, scan_size: int) -> np.ndarray:
    """The rows a row range scan at each key reads, as the users' scans ask (``KeyStrategy.scanned``)."""
    return np.array([float(strategy.scanned(key, count, scan_size)[1]) for key in keys])
