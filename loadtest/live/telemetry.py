"""Per-partition metrics over OpenTelemetry, beside Locust's own request metrics (``--otel``), so that one collector
sees every engine's partitions live (Grafana, Azure Monitor, Prometheus through the OpenTelemetry Collector).

Observable instruments, read when the SDK exports (``OTEL_METRIC_EXPORT_INTERVAL``): nothing is added on the
per-request path. They read the counts the run keeps anyway (``counts.RunCounts``): while the test runs, the seconds
already folded (``RunCounts.final_totals``, some 5 s behind), so that each cumulative figure only grows; once it has
stopped, its results' partition rows, the figures results.json holds. Attributes: the partition (at most
``MAX_PARTITIONS`` of them, the heaviest as first seen, and "other partitions" for the rest, so the label set stays
bounded under a guid workload), the op class, the run's id, engine and test. A master exports the merged view (its
workers export nothing of their own); each engine of a shared run exports its share under its own engine name.

Where the run's final top keys fold a partition exported live into "other partitions" (a key that was heavy early
and cool after), its own series stops growing and the other partitions' takes the rest.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from locust.env import Environment
from locust.runners import WorkerRunner

from ..counting.buckets import GROUPS, OTHER, UNATTRIBUTED
from ..counting.counts import TOP_K
from ..redact import redact
from ..service.operations import OpClass
from .partitions_tab import NOW_WINDOW_S

if TYPE_CHECKING:
    from ..running.stress_run import StressRun

__all__ = ["INSTRUMENTS", "MAX_PARTITIONS", "METER", "OTHER_LABEL", "PartitionTelemetry", "register"]

log = logging.getLogger("loadtest")

METER = "partition-stress"
MAX_PARTITIONS = TOP_K  # the partitions given a label of their own; the rest are "other partitions"
OTHER_LABEL = "other partitions"
#: name -> (unit, description, the figure of a partition and op class it counts)
INSTRUMENTS: dict[str, tuple[str, str, str]] = {
    "partition_stress.entities": ("{entity}", "Entities served (operations that succeeded)", "entities"),
    "partition_stress.entities.offered": ("{entity}", "Entities of every operation sent, failed ones included", "offered"),
    "partition_stress.requests": ("{request}", "Operations completed, succeeded or failed", "requests"),
    "partition_stress.attempts": ("{attempt}", "Attempts sent to the service, retries included", "attempts"),
}
THROTTLED = "partition_stress.throttled"  # throttled attempts, by reason (partition, account, timeout)
RATIO = "partition_stress.target_ratio"  # a partition's entities/s over its target


@dataclass
class Figures:
    """One partition's and op class's counts, as exported."""

    entities: int = 0
    offered: int = 0
    requests: int = 0
    attempts: int = 0
    throttled_by: Counter[str] = field(default_factory=Counter)

    def add(self, other: Any) -> None:
        for name in ("entities", "offered", "requests", "attempts"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.throttled_by.update(other.throttled_by)


class PartitionTelemetry:
    """What the instruments read: the run's counts per partition label and op class, at the moment of an export."""

    def __init__(self, run: StressRun) -> None:
        self.run = run
        self.labels: list[str] = []  # partitions with a label of their own, as first seen (heaviest first)

    def _label(self, partition: str) -> str:
        """The partition's label: its own (redacted: every collector and dashboard shows it) while labels last."""
        if partition == OTHER or partition in GROUPS:
            return OTHER_LABEL if partition == OTHER else "unattributed" if partition == UNATTRIBUTED else partition
        if partition not in self.labels:
            if len(self.labels) >= MAX_PARTITIONS:
                return OTHER_LABEL
            self.labels.append(partition)
        return redact(partition)

    def figures(self) -> dict[tuple[str, str], Figures]:
        """(label, op class) -> figures: the stopped test's results rows, else the seconds folded so far."""
        results, metrics = self.run.results, self.run.metrics
        rows: Iterable[tuple[str, str, Any]]
        if results is not None and metrics.stopped:
            rows = [(r.partition, str(r.op_class), r) for r in results.partitions if r.op_class != OpClass.ALL]
        else:
            totals = metrics.final_totals()
            ranked = sorted(totals, key=lambda key: -totals[key].entities)  # the heaviest labelled first
            rows = [(partition, op_class, totals[(partition, op_class)]) for partition, op_class in ranked]
        out: dict[tuple[str, str], Figures] = {}
        for partition, op_class, counts in rows:
            out.setdefault((self._label(partition), op_class), Figures()).add(counts)
        return out

    def ratios(self) -> dict[str, float]:
        """Label -> the partition's ratio to its target: results.json's (its peak 10-s entities/s, GET and PUT
        together) once the test stopped, else its last complete seconds' entities/s (``partitions_tab.NOW_WINDOW_S``)."""
        results, metrics, target = self.run.results, self.run.metrics, self.run.settings.partition_target
        if results is not None and metrics.stopped:
            rows = sorted(results.partitions, key=lambda r: r.op_class != OpClass.ALL)  # a partition's ALL row first
            ratios: dict[str, float] = {}
            for row in rows:
                label = self._label(row.partition)
                if row.partition in self.labels:
                    ratios.setdefault(label, row.ratio)
            return ratios
        last = int(metrics.clock()) - 1
        recent = Counter()
        for (second, partition, _), bucket in list(metrics.buckets.items()):
            if last - NOW_WINDOW_S < second <= last:
                recent[partition] += bucket.entities
        labelled = {partition: self._label(partition) for partition in recent}  # labels given as first seen
        return {label: recent[p] / NOW_WINDOW_S / target for p, label in labelled.items() if p in self.labels}

    def attributes(self) -> dict[str, str | int]:
        settings = self.run.settings
        return {"run.id": self.run.run_id, "engine": settings.engine, "test": self.run.tests}


def register(environment: Environment, run: StressRun) -> PartitionTelemetry | None:
    """The instruments on OpenTelemetry's meter when Locust runs with ``--otel`` and its SDK set up the exporters;
    none on a worker (the master exports the merged view)."""
    if not getattr(environment.parsed_options, "otel", False) or isinstance(environment.runner, WorkerRunner):
        return None
    try:
        import opentelemetry.metrics as metrics
    except ImportError:  # Locust has said so: --otel needs `pip install partition-stress[otel]`
        return None
    telemetry = PartitionTelemetry(run)
    meter = metrics.get_meter(METER)

    def observe(read: Callable[[Figures, dict], Iterable[tuple[float, dict]]]) -> Callable[[Any], list[Any]]:
        def callback(_options: Any) -> list[Any]:
            common = telemetry.attributes()
            observed = []
            for (partition, op_class), figures in telemetry.figures().items():
                attributes = {**common, "partition": partition, "op_class": op_class}
                observed += [metrics.Observation(value, attrs) for value, attrs in read(figures, attributes)]
            return observed

        return callback

    for name, (unit, description, figure) in INSTRUMENTS.items():
        read = lambda f, a, figure=figure: [(getattr(f, figure), a)]  # noqa: E731
        meter.create_observable_counter(name, callbacks=[observe(read)], unit=unit, description=description)
    meter.create_observable_counter(
        THROTTLED,
        callbacks=[observe(lambda f, a: [(n, {**a, "reason": reason}) for reason, n in sorted(f.throttled_by.items())])],
        unit="{attempt}",
        description="Throttled attempts (503 ServerBusy, 500 OperationTimedOut), by reason",
    )

    def ratios(_options: Any) -> list[Any]:
        common = telemetry.attributes()
        return [metrics.Observation(r, {**common, "partition": p}) for p, r in sorted(telemetry.ratios().items())]

    meter.create_observable_gauge(
        RATIO,
        callbacks=[ratios],
        unit="1",
        description="A partition's entities/s over its target: of its last seconds while the test runs, its peak 10-s "
        "average (results.json's ratio) once it stopped",
    )
    log.info("OpenTelemetry: partition metrics on meter %r (%s)", METER, ", ".join([*INSTRUMENTS, THROTTLED, RATIO]))
    return telemetry
