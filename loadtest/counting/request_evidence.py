"""What the workload did, per request name: the evidence for the docs' checklist (where keys fall in key order is the
counts', ``key_edges``).

A request listener beside the metrics, counting only. Per request name: its operation and reach
(point, range, partitions, table), rows returned against rows scanned (query density), reads
without ``$select``, and writes of an entity its client had just read. Per client, single writes
to one partition within one second (a batch would carry them). And what the users' own tasks raised
(their operations were never sent). A worker hands its counts over with ``drain``; the master adds
them with ``merge``. ``checklist`` turns them into findings.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..redact import redact
from ..service.operations import OPERATIONS, OpClass

if TYPE_CHECKING:  # a listener in a run; ``loadtest merge`` adds engines' profiles without Locust
    from locust.env import Environment

__all__ = ["BATCHABLE_PER_S", "RequestProfile"]

#: Single writes from one client to one partition in one second that one batch would have carried.
BATCHABLE_PER_S = 10
_NAME_COUNTERS = ("requests", "failures", "returned", "scanned", "estimated", "unprojected", "after_read")
_TOTALS = ("single_writes", "batchable")


class RequestProfile:
    """Counts, per request name and over the run, what the checklist asks about."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.names: dict[str, dict[str, Any]] = {}
        self.totals: Counter[str] = Counter()
        self.task_errors: Counter[str] = Counter()  # what the users' own tasks raised: its operations were never sent
        self._second = 0
        self._cells: Counter[tuple[str, str]] = Counter()  # (client, partition) -> single writes this second

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

    def on_test_start(self, **_: Any) -> None:
        self.names.clear()
        self.totals.clear()
        self.task_errors.clear()
        self._cells.clear()

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
        """Per request name (busiest first), with its query density; and the run's write totals."""
        names = []
        for name, counts in sorted(self.names.items(), key=lambda item: (-item[1]["requests"], item[0])):
            scanned = counts["scanned"]
            density = round(counts["returned"] / scanned, 4) if scanned and counts["op_class"] == OpClass.GET else None
            names.append({"name": name, **counts, "density": density})
        totals = {total: self.totals.get(total, 0) for total in _TOTALS}
        errors = [{"error": error, "count": n} for error, n in self.task_errors.most_common()]
        return {"names": names, **totals, "batchable_per_s": BATCHABLE_PER_S, "task_errors": errors}
