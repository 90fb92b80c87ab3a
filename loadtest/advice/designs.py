"""The key designs the Azure docs name for a hot partition, each sized by one number N, as the simulator's demand at
the workload's peak x growth: what each asks of its hottest partition, of the range where ordered new keys land, and
of the account (``Load``), and the demand a simulation runs (``Design.demand``).

Write sharding and a hash prefix are computed from the current design's demand (a hot key's asks shared evenly over
its buckets: the bucket follows from the RowKey, which spreads evenly); finer keys, seconds-first timestamps and GUIDs
are the tool's own key strategies, whose demand ``demand_of`` computes as a run would draw it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..findings.remedies import HEADROOM
from ..options.rules import DESIGN_FAMILIES
from ..service.operations import OPERATIONS
from ..simulator.demand import Demand, Stream, demand_of
from ..workload.key_templates import bucket_key
from .workload import Workload

__all__ = ["FAMILIES", "Design", "Family", "Load", "current_design", "families_for", "load_of"]

FAMILIES = DESIGN_FAMILIES  # in the order they are tried and shown (the cheapest kinds of change first)
SECONDS_FIRST = "timestamp:ssyyyyMMddHHmm"  # the docs' form: a minute's seconds spread over 60 keys in key order
MOST = {"shard": 1000, "hash-prefix": 1000, "finer": 100_000, "accounts": 1000}  # the largest N searched
MOST_SHARDED = 200  # hot keys a sharded design names in its one key strategy (``sharded:N:KEYS:DESIGN``)


@dataclass(frozen=True)
class Load:
    """Entities/s a design asks at peak x growth: per key, of the current key of time-ordered keys, of the range at
    the end of the key order where ordered new keys land, and of the account."""

    keys: list[str]
    per_key: np.ndarray
    clock_eps: float
    range_eps: float
    account_eps: float
    scanned_eps: float = 0.0  # of the account's, the rows scans read

    def hottest(self) -> tuple[str, float, str]:
        """(The hottest partition or range, its entities/s, what it is: "key", "current key" or "range")."""
        i = int(np.argmax(self.per_key)) if len(self.per_key) else 0
        best = (self.keys[i], float(self.per_key[i]), "key") if len(self.per_key) else ("", 0.0, "key")
        if self.clock_eps > best[1]:
            best = ("(the current period's key)", self.clock_eps, "current key")
        if self.range_eps > best[1]:
            best = ("(the range where new keys land)", self.range_eps, "range")
        return best

    def ratio(self, target: float) -> float:
        return self.hottest()[1] / target


def load_of(demand: Demand, rate: float, ordered: str) -> Load:
    """``demand`` at ``rate`` operations/s. ``ordered``: where new per-entity keys sort ("last", "first"; "clock":
    a key per period), so the range there takes every insert. A key that came and went is judged while it lived; the
    account on the whole (its keys' shares add up to the whole at every second)."""
    weights = demand.key_counts
    per_key, clock, fresh, scanned, keyed = np.zeros(len(demand.keys)), 0.0, 0.0, 0.0, 0.0
    for s in demand.streams:
        ops = rate * s.share
        if s.clock is not None:
            clock += ops * float(np.mean(s.entities))
        elif not s.keyed:
            fresh += ops * float((s.probabilities * weights * s.entities).sum())
        else:
            asked = ops * s.probabilities * s.entities
            if s.spread is not None:
                asked = asked + s.spread.beyond(ops * s.probabilities)
            per_key += asked if demand.lives is None else ops * demand.peak(s.probabilities) * s.entities
            keyed += float((asked * weights).sum())
            scanned += float((asked * weights).sum()) if OPERATIONS[s.op].asks == "scan" or s.spread is not None else 0.0
    account = keyed + clock + fresh
    range_eps = fresh if ordered in ("last", "first") else clock
    return Load(keys=demand.keys, per_key=per_key, clock_eps=clock, range_eps=range_eps, account_eps=account, scanned_eps=scanned)


@dataclass(frozen=True)
class Design:
    """One family at one N: its name, what it asks, the demand a simulation runs, the workload options a real run is
    given for it (None: no key strategy of a run sends it), and the keys it spreads."""

    family: str
    n: int
    label: str
    load: Load
    demand: Demand | None
    run_options: dict[str, str] | None
    spread_keys: list[str] = field(default_factory=list)

    def fits(self, target: float, account_target: float) -> bool:
        return self.load.ratio(target) < HEADROOM and self.load.account_eps < account_target


@dataclass(frozen=True)
class Family:
    """A family of designs: ``make(n)`` for N from ``least`` to ``most`` (one value: a design with no N to size)."""

    name: str
    least: int
    most: int
    make: Callable[[int], Design]
    why_not: str = ""  # set when the family cannot change this workload (then ``make`` is never called)


def families_for(workload: Workload, current: Design, wanted: tuple[str, ...]) -> list[Family]:
    """Each wanted family for ``workload`` (``current``: its design as it is): the ones that cannot help it carry why."""
    settings = workload.settings
    strategy = settings.keys()
    fixed = strategy.keys() is not None
    base = current.demand
    assert base is not None
    target = float(settings.partition_target)
    hot = [i for i, eps in enumerate(current.load.per_key) if eps >= HEADROOM * target and base.key_counts[i] == 1]
    out = []
    for name in wanted:
        if name == "shard":
            why = "" if fixed else "each entity has a key of its own: there is no hot value to shard"
            why = why or ("" if hot else "no key takes 80 % of its target: nothing to shard")
            out.append(Family(name, 2, MOST[name], lambda n: _shard(workload, current, hot, n), why))
        elif name == "hash-prefix":
            out.append(Family(name, 2, MOST[name], lambda n: _hash_prefix(workload, n)))
        elif name == "finer":
            spec = settings.key_strategy
            m = int(spec.partition(":")[2]) if spec.startswith("set:") else 0
            why = "" if m else "the design is not a set of values (set:N) to make finer"
            out.append(Family(name, m + 1, MOST[name], lambda n: _strategy(workload, "finer", n, f"set:{n}"), why))
        elif name == "seconds-first":
            why = "" if strategy.fresh in ("last", "first", "clock") else "its keys are not time-ordered"
            why = why or ("" if settings.key_strategy != SECONDS_FIRST else "the design is seconds-first already")
            out.append(Family(name, 60, 60, lambda n: _strategy(workload, "seconds-first", n, SECONDS_FIRST), why))
        elif name == "guid":
            why = "" if settings.key_strategy != "guid" else "the design is GUIDs already"
            out.append(Family(name, 1, 1, lambda n: _strategy(workload, "guid", n, "guid"), why))
        elif name == "accounts":
            over = current.load.account_eps >= settings.account_target
            why = "" if over else "the account stays under its target"
            out.append(Family(name, 2, MOST[name], lambda n: _accounts(current, n), why))
    return out


def current_design(workload: Workload, seconds: int = 60) -> Design:
    """The workload's design as it is."""
    settings = workload.settings
    demand = demand_of(settings, start=0, seconds=seconds)
    load = load_of(demand, workload.rate, settings.keys().fresh)
    return Design("current", 0, f"as it is ({settings.key_strategy})", load, demand, {})


def _strategy(workload: Workload, family: str, n: int, spec: str) -> Design:
    """A design that is one of the tool's key strategies: its demand as a run and ``simulate`` would draw it."""
    settings = workload.with_key(spec)
    demand = demand_of(settings, start=0, seconds=60)
    load = load_of(demand, workload.rate, settings.keys().fresh)
    label = {
        "finer": f"finer keys: {n:,} values (set:{n})",
        "seconds-first": f"seconds-first time keys ({SECONDS_FIRST})",
        "guid": "GUID keys (a key per entity)",
        "hash-prefix": f"hash prefix: {n} prefixes over the whole key space (hash-prefix:{n})",
    }[family]
    return Design(family, n, label, load, demand, {"key_strategy": spec})


def _shard(workload: Workload, current: Design, hot: list[int], n: int) -> Design:
    """The hot keys each written over ``n`` buckets (``00-key`` ... by a hash of the RowKey: ``bucket_key``), the rest
    as they are. Where a run can send it (``sharded:N:KEYS:DESIGN``, a single key's ``template:{:N}-KEY``), its demand is
    that strategy's, as ``simulate`` and the run draw it; a traffic profile's is the profile's, its keys' shares split;
    a design sharded already has its buckets' shares split again, in the simulation alone."""
    base = current.demand
    assert base is not None
    names = [base.keys[i] for i in hot]
    spec, run = workload.settings.key_strategy, None
    if spec.startswith("single") and len(names) == 1 and not set("{}") & set(names[0]):  # a template a run can send
        run = {"key_strategy": f"template:{{:{n}}}-{names[0]}", "skew": "uniform"}
    elif spec.startswith("traffic:"):
        run = {"key_strategy": "traffic-sharded"}  # the profile rewritten with the buckets (verify writes it)
    elif not spec.startswith("sharded:") and len(names) <= MOST_SHARDED and not any(set(",:") & set(name) for name in names):
        run = {"key_strategy": f"sharded:{n}:{','.join(names)}:{spec}"}
    if run is not None and run["key_strategy"] != "traffic-sharded":
        settings = workload.with_key(**run)
        demand = demand_of(settings, start=0, seconds=60)
    else:
        source: list[tuple[str, int, float]] = []  # (new key, old key's index, its share of the old key)
        chosen = set(hot)
        for i, key in enumerate(base.keys):
            source += [(bucket_key(key, j, n), i, 1 / n) for j in range(n)] if i in chosen else [(key, i, 1.0)]
        demand = _remapped(base, sorted(source))
    load = load_of(demand, workload.rate, workload.settings.keys().fresh)
    shown = ", ".join(repr(k) for k in names[:3]) + (f" and {len(names) - 3:,} more" if len(names) > 3 else "")
    label = f"write sharding: {shown} over {n} buckets each"
    return Design("shard", n, label, load, demand, run, names)


def _remapped(base: Demand, source: list[tuple[str, int, float]]) -> Demand:
    """``base`` over new keys, each the share ``frac`` of an old key's operations (entities per operation kept)."""
    index = np.array([i for _, i, _ in source])
    frac = np.array([f for _, _, f in source])
    streams = [
        Stream(
            op=s.op,
            op_class=s.op_class,
            share=s.share,
            probabilities=s.probabilities[index] * frac,
            entities=s.entities[index],
            keyed=s.keyed,
        )
        for s in base.streams
    ]
    weights = None if base.weights is None else base.weights[index]
    lives = None if base.lives is None else base.lives[index]
    return Demand(keys=[k for k, _, _ in source], streams=streams, weights=weights, lives=lives, span_s=base.span_s)


def _hash_prefix(workload: Workload, n: int) -> Design:
    """Every entity's PartitionKey a hash of its RowKey over ``n`` prefixes (000 ...): the tool's ``hash-prefix:N`` under
    the workload's own access skew, its demand as a run, ``simulate`` and ``compare`` draw it (a scan reads the rows its
    prefix holds, as seeded under the design)."""
    return _strategy(workload, "hash-prefix", n, f"hash-prefix:{n}")


def _accounts(current: Design, n: int) -> Design:
    """The workload over ``n`` storage accounts (an entity's account from a hash of its PartitionKey): each account
    takes 1/n of the load; a partition stays in one account, so its own load is unchanged."""
    load = current.load
    shared = Load(load.keys, load.per_key, load.clock_eps, load.range_eps, load.account_eps / n, load.scanned_eps / n)
    return Design("accounts", n, f"{n} storage accounts (the key design as it is in each)", shared, current.demand, None)
