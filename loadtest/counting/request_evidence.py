"""What the workload did, per request name and in the order of its keys: the evidence for the docs' checklist.

A request listener beside the metrics, counting only. Per request name: its operation and reach
(point, range, partitions, table), rows returned against rows scanned (query density), reads
without ``$select``, and writes of an entity its client had just read. Per client, single writes
to one partition within one second (a batch would carry them). Where each written PartitionKey
falls against those written a while before: past every one (append-only) or before every one
(prepend-only). And what the users' own tasks raised (their operations were never sent). A worker
hands its counts over with ``drain``; the master adds them with ``merge``. ``checklist`` turns
them into findings.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..redact import redact
from ..service.operations import OPERATIONS, OpClass

if TYPE_CHECKING:  # a listener in a run; ``loadtest merge`` adds engines' profiles without Locust
    from locust.env import Environment

__all__ = ["BATCHABLE_PER_S", "EDGE_WINDOW", "RequestProfile"]

#: Single writes from one client to one partition in one second that one batch would have carried.
BATCHABLE_PER_S = 10
#: Keys written this many writes ago or earlier are "before": a new key past all of them is appended.
EDGE_WINDOW = 64
_NAME_COUNTERS = ("requests", "failures", "returned", "scanned", "estimated", "unprojected", "after_read")
_TOTALS = ("single_writes", "batchable", "ordered", "appended", "prepended")
#: Writes that may create an entity: where their keys fall says whether new entities append or prepend.
_CREATING = frozenset(name for name, op in OPERATIONS.items() if op.action in ("create", "upsert")) | {"batch"}


class RequestProfile:
    """Counts, per request name and over the run, what the checklist asks about."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.names: dict[str, dict[str, Any]] = {}
        self.totals: Counter[str] = Counter()
        self.task_errors: Counter[str] = Counter()  # what the users' own tasks raised: its operations were never sent
        self._second = 0
        self._cells: Counter[tuple[str, str]] = Counter()  # (client, partition) -> single writes this second
        self._recent: deque[str] = deque(maxlen=EDGE_WINDOW)  # the last keys written
        self._low: str | None = None  # the lowest and highest keys written before the recent ones
        self._high: str | None = None

    @classmethod
    def register(cls, environment: Environment, clock: Callable[[], float] = time.time) -> RequestProfile:
        profile = cls(clock)
        environment.events.request.add_listener(profile.on_request)
        environment.events.test_start.add_listener(profile.on_test_start)
        environment.events.test_stop.add_listener(profile.on_test_stop)  # before a worker's last drain (registered later)
        environment.events.user_error.add_listener(profile.on_user_error)
        return profile

    def on_request(
        self,
        request_type: str,
        name: str,
        response_time: float,
        response_length: int,
        exception: BaseException | None = None,
        context: dict[str, Any] | None = None,
        **_: Any,
    ) -> None:
        if not context or "partition" not in context:
            return  # not a table operation of ours
        counts = self.names.get(name)
        if counts is None:
            op = OPERATIONS.get(request_type)
            reach = op.reach if op else ""
            counts = self.names[name] = {"op": request_type, "op_class": str(context["op_class"]), "reach": reach}
            counts.update(dict.fromkeys(_NAME_COUNTERS, 0))
        counts["requests"] += 1
        if "reach" in context:
            counts["reach"] = context["reach"]  # a query's own: from its filter
        if exception is not None:
            counts["failures"] += 1
        elif context["op_class"] == OpClass.GET:
            entities = context["entities"]
            counts["returned"] += context.get("returned", entities)
            counts["scanned"] += entities
            if context.get("estimated"):
                counts["estimated"] += entities
        if context.get("select") is False:
            counts["unprojected"] += 1
        if context.get("after_read"):
            counts["after_read"] += 1
        client = context.get("client")
        if client is not None:
            self._single_write(client, context["partition"])
        if request_type in _CREATING:
            self.key_written(context["partition"])

    def on_user_error(self, user_instance: Any, exception: BaseException, tb: Any, **_: Any) -> None:
        self.task_errors[redact(f"{type(exception).__name__}: {exception}")[:300]] += 1

    def _single_write(self, client: str, partition: str) -> None:
        second = int(self.clock())
        if second != self._second:
            self._roll()
            self._second = second
        self._cells[(client, partition)] += 1
        self.totals["single_writes"] += 1

    def _roll(self) -> None:
        """Close the second: its cells of ``BATCHABLE_PER_S`` or more writes were batchable."""
        self.totals["batchable"] += sum(n for n in self._cells.values() if n >= BATCHABLE_PER_S)
        self._cells.clear()

    def key_written(self, key: str) -> None:
        """A write that may create an entity, under ``key``: where it falls against the keys written before the last
        ``EDGE_WINDOW`` (``loadtest traffic`` feeds the logged ones, in the order they were logged)."""
        recent = self._recent
        if len(recent) == EDGE_WINDOW:
            old = recent[0]
            self._low = old if self._low is None or old < self._low else self._low
            self._high = old if self._high is None or old > self._high else self._high
        if self._high is not None:
            self.totals["ordered"] += 1
            self.totals["appended"] += key > self._high
            self.totals["prepended"] += key < self._low  # type: ignore[operator]
        recent.append(key)

    def keys_written(self, keys: Sequence[str]) -> None:
        """Many writes' keys in the order they were written: what ``key_written`` says of each, as arrays (a logged
        day's millions of writes)."""
        if not keys:
            return
        every = [*self._recent, *keys]
        bounds = [k for k in (self._low, self._high) if k is not None]
        distinct = sorted({*every, *bounds})
        rank = {key: i for i, key in enumerate(distinct)}
        ranks = np.fromiter((rank[key] for key in every), dtype=np.float64, count=len(every))
        held, window = len(self._recent), EDGE_WINDOW
        # the j-th key arrives with every[held + j - window] leaving the window, when the window is full
        leaving = held + np.arange(len(keys)) - window
        gone = ranks[: max(0, int(leaving[-1]) + 1)]
        low = rank[self._low] if self._low is not None else np.inf
        high = rank[self._high] if self._high is not None else -np.inf
        lows, highs = np.full(len(keys), low), np.full(len(keys), high)
        if len(gone):
            out = leaving >= 0
            lows[out] = np.minimum(low, np.minimum.accumulate(gone))[leaving[out]]
            highs[out] = np.maximum(high, np.maximum.accumulate(gone))[leaving[out]]
        ordered, new = highs > -np.inf, ranks[held:]
        self.totals["ordered"] += int(ordered.sum())
        self.totals["appended"] += int((ordered & (new > highs)).sum())
        self.totals["prepended"] += int((ordered & (new < lows)).sum())
        if lows[-1] < np.inf:
            self._low, self._high = distinct[int(lows[-1])], distinct[int(highs[-1])]
        self._recent.extend(keys[-window:])

    def on_test_start(self, **_: Any) -> None:
        self.names.clear()
        self.totals.clear()
        self.task_errors.clear()
        self._cells.clear()
        self._recent.clear()
        self._low = self._high = None

    def on_test_stop(self, **_: Any) -> None:
        self._roll()

    # --- a worker's counts, to the master ---------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The counts in the form ``merge`` adds, nothing reset (an engine's results.json)."""
        names = {name: dict(counts) for name, counts in self.names.items()}
        return {"names": names, "totals": dict(self.totals), "task_errors": dict(self.task_errors)}

    def drain(self) -> dict[str, Any]:
        """Counts since the last drain, then start afresh (the current second's writes and the key order stay)."""
        drained = self.snapshot()
        self.names, self.totals, self.task_errors = {}, Counter(), Counter()
        return drained

    def merge(self, data: Mapping[str, Any] | None) -> None:
        if not data:
            return
        for name, theirs in data["names"].items():
            ours = self.names.setdefault(name, {**theirs, **dict.fromkeys(_NAME_COUNTERS, 0)})
            for counter in _NAME_COUNTERS:
                ours[counter] += theirs.get(counter, 0)
        self.totals.update(data["totals"])
        self.task_errors.update(data.get("task_errors", {}))

    # --- for the results ------------------------------------------------------------------

    def figures(self) -> dict[str, Any]:
        """Per request name (busiest first), with its query density; and the run's write and key-order totals."""
        names = []
        for name, counts in sorted(self.names.items(), key=lambda item: (-item[1]["requests"], item[0])):
            scanned = counts["scanned"]
            density = round(counts["returned"] / scanned, 4) if scanned and counts["op_class"] == OpClass.GET else None
            names.append({"name": name, **counts, "density": density})
        totals = {total: self.totals.get(total, 0) for total in _TOTALS}
        errors = [{"error": error, "count": n} for error, n in self.task_errors.most_common()]
        return {"names": names, **totals, "batchable_per_s": BATCHABLE_PER_S, "edge_window": EDGE_WINDOW, "task_errors": errors}
