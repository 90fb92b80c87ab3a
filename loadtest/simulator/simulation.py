"""The workload through the partition layer in virtual time: per tick, vectors over the keys, no requests.

Each tick (``step`` seconds) every stream's operations arrive at each key (the demand's expected share, or Poisson
counts), together with the retries due then. The per-key budgets, then the account's, then the range partitions
(``PartitionLayer.admit_tick``) let a share through, as the emulator does per request (``emulator.budgets``: the
same bucket, its fluid form). A scan across keys is admitted on its first key, as the emulator admits it; the rows it
reads past it are charged where they were, taken from those keys' budgets before their own operations' (at the share
of scans the last tick admitted: rows only flow forward in key order, so a steady demand settles). Throttled
operations re-enter after the retry strategy's mean wait, as their next retry; past the last they fail as ServerBusy
(or, for ``timeout_share`` of them, OperationTimedOut). Each second's counts land in the metrics' own buckets for the
``TRACKED`` keys with the most demand, the rest as ``OTHER``, so the summary, verdict and report are the ones a run
uses.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..counting.counts import HOT_SHARE, TOP_K, RunCounts
from ..emulator.budgets import Budgets, KeyEnds, PartitionLayer, Split, available, passed, settle
from ..progress import Progress
from ..service.operations import OpClass
from ..service.retry import RetryStrategy
from .demand import FIRST, LAST, Demand
from .second_rows import COUNTED, SecondRows

__all__ = ["TRACKED", "Simulation", "SimulatedCounts", "state_bytes"]

TRACKED = TOP_K  # keys counted apart, per second, as many as a run keeps apart; the rest add up in OTHER
#: Time-ordered keys counted apart besides, each hot in its own period (an hour of per-second keys): later ones fold.
CLOCK_TRACKED = 3600


class SimulatedCounts(RunCounts):
    """A run's metrics, filled by the simulation: the keys it tracked and how many it touched are known exactly."""

    def __init__(self, tracked: list[str], distinct: int) -> None:
        super().__init__()
        self._tracked, self._distinct = tracked, distinct

    def top_partitions(self, k: int = TRACKED) -> list[str]:
        return self._tracked[:k]

    def distinct_partitions(self) -> float:
        return float(self._distinct)


class Simulation:
    """``rate`` operations/s of ``demand`` for ``seconds``, through ``budgets``' partition layer, in ``step`` ticks."""

    def __init__(
        self,
        demand: Demand,
        budgets: Budgets,
        retry: RetryStrategy,
        *,
        rate: float,
        seconds: int,
        step: float,
        arrivals: str = "constant",
        seed: int = 1,
        start: int = 0,
        shape: np.ndarray | None = None,
        lives_from: int = 0,
    ) -> None:
        self.demand, self.budgets, self.retry = demand, budgets, retry
        self.rate, self.seconds, self.step, self.start = rate, seconds, step, start
        self.shape = np.ones(seconds) if shape is None else shape  # each second's rate / ``rate`` (a replay's day)
        self.lives_from = lives_from  # the second of the demand's span (``Demand.lives``) the simulation's first is
        self.ticks_per_second = round(1 / step)
        self.poisson = arrivals == "poisson"
        self.rng = np.random.default_rng(seed)
        self.layer = (
            PartitionLayer(budgets.server_rate, budgets.lb_delay, budgets.lb_offline, now=0.0) if budgets.server_rate else None
        )
        self.ends = None if budgets.per_key_only else KeyEnds(budgets.partition_rate, budgets.burst, now=0.0)
        self.splits: list[Split] = []
        expected = np.where(demand.key_counts == 1, demand.expected(rate), 0.0)  # a group of keys is never one key
        order = np.argsort(-expected, kind="stable")
        self.tracked = [int(i) for i in order[:TRACKED] if expected[i] > 0]
        apart = set(self.tracked)
        self.tracked += [i for i in self._clock_keys(rate) if i not in apart][:CLOCK_TRACKED]
        # the one key that stands for a new key a write past (before) every other: (its end, its index)
        pseudo = {LAST: ("append", len(demand.keys) - 1), FIRST: ("prepend", 0)}
        fresh = [
            pseudo[k] for k in (demand.keys[-1:] + demand.keys[:1]) if k in pseudo and not all(s.keyed for s in demand.streams)
        ]
        self.fresh = fresh[0] if fresh else None

    def run(self, progress: Progress | None = None) -> SimulatedCounts:
        """Every second's buckets, in a run's metrics (``progress`` told each simulated minute)."""
        keys, streams = self.demand.keys, self.demand.streams
        n_keys, n_streams, retries = len(keys), len(streams), self.retry.retries
        step, b, weights = self.step, self.budgets, self.demand.key_counts  # a replay's tail: a group counts its keys
        share = np.array([s.share for s in streams])[:, None]
        base = self.rate * step * share * np.array([s.probabilities for s in streams])  # operations per tick
        entities = np.array([s.entities for s in streams])
        keyed = np.array([s.keyed for s in streams])
        clocks = [(i, s.clock) for i, s in enumerate(streams) if s.clock is not None]
        spreads = [(i, s.spread) for i, s in enumerate(streams) if s.spread is not None]
        admitted = np.ones(n_keys)  # of each key's operations, the share the last tick admitted
        waits, delay = _delays(self.retry, step)
        horizon = max(delay, default=0) + 1
        queue = np.zeros((horizon, n_streams, retries + 1, n_keys))  # [tick, stream, attempt number, key]
        tokens, account = np.full(n_keys, b.partition_rate * b.burst), b.account_rate * b.burst
        load = np.zeros(n_keys)
        sorted_keys = np.asarray(keys)  # once: the layer finds its ranges' first keys in it every tick
        stacked = np.zeros((len(COUNTED), n_streams, n_keys))  # [counter, stream, key], this second's
        counts = {name: stacked[i] for i, name in enumerate(COUNTED)}  # each counter's view of it
        metrics = SimulatedCounts([keys[i] for i in self.tracked], self._distinct())
        op_classes = sorted({s.op_class for s in streams})
        mine = {c: np.array([s.op_class == c for s in streams]) for c in op_classes}
        rows = SecondRows(metrics, list(keys), self.tracked, op_classes, b.timeout_share)
        pseudo = np.zeros(n_keys, dtype=bool)  # the one key standing for a new key a write at an end, if any
        if self.fresh:
            pseudo[self.fresh[1]] = True
        for tick in range(self.seconds * self.ticks_per_second):
            now = (tick + 1) * step
            if self.demand.lives is not None and tick % self.ticks_per_second == 0:  # keys come and go: this second's
                second_of_span = self.lives_from + tick // self.ticks_per_second
                base = self.rate * step * share * np.array([self.demand.at(s.probabilities, second_of_span) for s in streams])
            ops = queue[tick % horizon].copy()
            queue[tick % horizon] = 0.0
            now_base = base * self.shape[min(int(now - 1e-9), self.seconds - 1)]
            new = self.rng.poisson(now_base) if self.poisson else now_base
            for i, clock in clocks:  # time-ordered keys: this second's key takes the writes
                new[i] = 0.0
                new[i, clock[min(int(now - 1e-9), len(clock) - 1)]] = self.rate * step * streams[i].share
            ops[:, 0] += new
            attempts = ops.sum(axis=1)
            wanted = attempts * entities
            keyed_wanted, fresh_wanted = wanted[keyed].sum(axis=0), wanted[~keyed].sum(axis=0)
            # rows that scans admitted elsewhere read here, past their first key: taken before this key's own
            spill = sum((sp.beyond(attempts[i] * admitted) for i, sp in spreads), np.zeros(n_keys))
            # the per-key budgets, then the account's, then the range partitions: as the emulator asks them
            per_key = available(tokens, b.partition_rate, step)
            through = passed(per_key - spill, keyed_wanted)
            total = float(((through + fresh_wanted + spill) * weights).sum())
            in_account = available(account, b.account_rate, step)
            account_share = float(passed(in_account, total)) / total if total else 1.0
            offered = (through + fresh_wanted + spill) * account_share
            # the ranges where new keys land, one budget each (a replay's groups are no range), then the range partitions
            # (a group's keys side by side in key order: one key of their load to the layer)
            # (new entities a key each count there only where their one key stands at an end: spread ones land anywhere)
            fresh = self.fresh[0] if self.fresh and fresh_wanted[self.fresh[1]] > 0 else ""
            keyed_part, fresh_part = (through + spill) * account_share, fresh_wanted * account_share
            at_end = np.where(weights == 1, keyed_part, 0.0) + np.where(pseudo, fresh_part, 0.0)
            ends = np.ones(n_keys) if self.ends is None else self.ends.admit_tick(at_end, now, fresh)
            past_ends = keyed_part * ends + fresh_part * np.where(pseudo, ends, 1.0)
            served = (
                past_ends
                if self.layer is None
                else self.layer.admit_tick(sorted_keys, past_ends * weights, load, now, step) / weights
            )
            range_share = np.divide(served, offered, out=np.ones(n_keys), where=offered > 0)
            keyed_served = through * account_share * range_share
            if self.layer is not None and len(self.layer.splits) > len(self.splits):
                self.splits += [
                    replace(split, t=round(split.t, 3), offline_until_t=round(split.offline_until_t, 3))
                    for split in self.layer.splits[len(self.splits) :]
                ]
            admitted = np.divide(keyed_served, keyed_wanted, out=np.ones(n_keys), where=keyed_wanted > 0)
            fraction = np.where(keyed[:, None], admitted, account_share * range_share)
            # the account's share of what was refused (the key's budget first, the account, then its range: as asked)
            by_key = np.where(keyed[:, None], np.divide(through, keyed_wanted, out=np.ones(n_keys), where=keyed_wanted > 0), 1.0)
            refused = 1.0 - fraction
            by_account = np.divide(by_key * (1.0 - account_share), refused, out=np.zeros_like(refused), where=refused > 1e-12)
            went = ops * fraction[:, None, :]
            throttled = ops - went
            read = {i: sp.beyond(went[i].sum(axis=0)) for i, sp in spreads}  # the admitted scans, past their first key
            spilled = sum(read.values(), np.zeros(n_keys))
            tokens = settle(per_key, keyed_served + spilled, b.partition_rate, b.burst)
            used = float(((keyed_served + fresh_wanted * account_share * range_share + spilled) * weights).sum())
            account = float(settle(in_account, used, b.account_rate, b.burst))
            for r in range(retries):  # throttled at attempt r: retry r + 1 after its wait
                queue[(tick + delay[r]) % horizon, :, r + 1] += throttled[:, r]
                counts["backoff_ms"] += throttled[:, r] * (waits[r] * 1000)
            failed = throttled[:, retries]
            done = went.sum(axis=1)
            counts["requests"] += done + failed
            counts["failures"] += failed
            counts["entities"] += done * entities
            counts["offered"] += new * entities
            for i, sp in spreads:
                counts["entities"][i] += read[i]
                counts["offered"][i] += sp.beyond(new[i])
            counts["attempts"] += attempts
            counts["throttled"] += throttled.sum(axis=1)
            counts["throttled_account"] += throttled.sum(axis=1) * by_account
            counts["scheduled"] += new
            if (tick + 1) % self.ticks_per_second == 0:
                second = self.start + (tick + 1) // self.ticks_per_second - 1
                for op_class in op_classes:  # its keyed streams' counts per key, and every stream's over every key
                    ours = stacked[:, mine[op_class]]
                    rows.add(second, op_class, ours[:, keyed[mine[op_class]]].sum(axis=1), (ours * weights).sum(axis=(1, 2)))
                rows.end_of_second()
                self._edges(metrics, second, stacked, sorted_keys, mine.get(OpClass.PUT))
                stacked.fill(0.0)
                if progress is not None and (second - self.start + 1) % 60 == 0:
                    progress.advance(60)
        rows.flush()
        metrics.started = metrics.steady_from = float(self.start)
        metrics.stopped = float(self.start + self.seconds)
        return metrics

    def _edges(
        self, metrics: SimulatedCounts, second: int, stacked: np.ndarray, keys: np.ndarray, puts: np.ndarray | None
    ) -> None:
        """The second's keys (each its own: a replay's groups left out) to the ends of the key order, as a run's counts
        read theirs (``counting.key_edges``); the one key standing for a new key per write moves its end each second."""
        at = {name: i for i, name in enumerate(COUNTED)}
        asked, throttled = stacked[at["offered"]].sum(axis=0), stacked[at["throttled"]].sum(axis=0)
        writes = stacked[at["requests"]][puts].sum(axis=0) if puts is not None and puts.any() else np.zeros(len(keys))
        which = np.flatnonzero(((asked > 0) | (throttled > 0)) & (self.demand.key_counts == 1))
        if not len(which):
            return
        fresh = ""
        if self.fresh and writes[self.fresh[1]] > 0:
            fresh = self.fresh[0]
        served = stacked[at["entities"]].sum(axis=0)
        metrics.edges.add_second(second, keys[which], asked[which], served[which], throttled[which], writes[which], fresh=fresh)

    def _clock_keys(self, rate: float) -> list[int]:
        """Time-ordered keys hot in their own period (``HOT_SHARE`` of the demand, as a run's counts keep keys that were
        hot in some second): counted apart though each is asked for a moment of the whole."""
        total = float((self.demand.expected(rate) * self.demand.key_counts).sum()) or 1.0
        keys: dict[int, None] = {}
        for s in self.demand.streams:
            if s.clock is not None and rate * s.share * float(np.mean(s.entities)) >= HOT_SHARE * total:
                keys.update(dict.fromkeys(int(i) for i in s.clock))
        return list(keys)

    def _distinct(self) -> int:
        """Keys the workload touched: every key with demand, and a key per new entity where each gets its own."""
        streams, weights = self.demand.streams, self.demand.key_counts
        keyed_keys = np.zeros(len(self.demand.keys), dtype=bool)
        for s in streams:
            if s.keyed:
                keyed_keys |= s.probabilities > 0
                if s.spread is not None:
                    keyed_keys |= s.spread.beyond(s.probabilities) > 0
                if s.clock is not None:
                    keyed_keys[np.unique(s.clock)] = True
        fresh = sum(self.rate * s.share * float(self.shape.sum()) for s in streams if not s.keyed)
        return int(weights[keyed_keys].sum() + fresh)


def _delays(retry: RetryStrategy, step: float) -> tuple[list[float], list[int]]:
    """The mean wait before each retry (seconds), and in ticks (at least one)."""
    waits = [retry.mean_backoff(r) for r in range(1, retry.retries + 1)]
    return waits, [max(1, round(w / step)) for w in waits]


def state_bytes(*, streams: int, keys: int, retry: RetryStrategy, step: float) -> int:
    """The memory a simulation's per-key vectors take: the retry queue, the counters and each tick's own arrays."""
    horizon = max(_delays(retry, step)[1], default=0) + 1
    return 8 * streams * keys * (horizon * (retry.retries + 1) + len(COUNTED) + 4 * (retry.retries + 1) + 8)
