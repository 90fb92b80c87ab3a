"""Engines' per-second samples added into one run's: users and operations in flight summed, the busiest machine's
cores, and each process's CPU (an engine's, its workers', its servers') kept as one array a process while the engines
are read, so that 400 engines of an hour hold some 12 MB, not a dict a second for each.

The merged samples name at most ``PROCESSES_NAMED`` load generators and as many servers, the busiest: those with the
most seconds at or above ``GENERATOR_CPU_PERCENT``, then the highest mean (the ones the CPU findings would name first).
A run of few engines names every one, as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..bounds.cpu import GENERATOR_CPU_PERCENT
from ..mergeable import sample_columns

__all__ = ["PROCESSES_NAMED", "EngineLoad"]

PROCESSES_NAMED = 10


class EngineLoad:
    """The samples so far: the sums and maxima per second, and each process's CPU per second."""

    def __init__(self) -> None:
        self.users: dict[int, int] = {}
        self.machine: dict[int, float] = {}
        self.in_flight: dict[int, dict[str, float]] = {}
        self.cpu: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # load generator -> (seconds, cpu %)
        self.servers: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # server -> (seconds, cpu %)

    def add(self, engine: str, given: Mapping[str, Any] | Iterable[Any]) -> None:
        """One engine's samples as its mergeable count holds them: columns (``SampleColumns``), or (wall-clock
        second, sample) pairs as results.json listed them before."""
        columns = given if isinstance(given, Mapping) else sample_columns({int(s): sample for s, sample in given})
        seconds = [int(second) for second in columns["second"]]
        users, machine = self.users, self.machine
        for second, count in zip(seconds, columns["users"], strict=True):
            users[second] = users.get(second, 0) + count
        for second, pct in zip(seconds, columns["machine_cpu"], strict=True):
            if pct is not None:
                machine[second] = max(machine.get(second, 0.0), pct)
        for name, values in columns["in_flight"].items():
            for second, value in zip(seconds, values, strict=True):
                if value is not None:
                    flight = self.in_flight.setdefault(second, {})
                    flight[name] = flight.get(name, 0) + value
        _series(self.cpu, f"engine {engine}", seconds, columns["cpu"])
        for worker, values in columns["workers_cpu"].items():
            _series(self.cpu, f"engine {engine} worker {worker}", seconds, values)
        for server, values in columns["servers_cpu"].items():
            _series(self.servers, f"{server} (engine {engine})", seconds, values)

    def samples(self) -> dict[int, dict[str, Any]]:
        """Per second: users, operations in flight, the busiest machine's cores, and the busiest processes' CPU."""
        out: dict[int, dict[str, Any]] = {second: {"users": users} for second, users in sorted(self.users.items())}
        for key, series in (("workers_cpu", self.cpu), ("servers_cpu", self.servers)):
            for name in _busiest(series):
                for second, pct in zip(*series[name], strict=True):
                    out.setdefault(int(second), {"users": 0}).setdefault(key, {})[name] = float(pct)
        for second, pct in self.machine.items():
            out.setdefault(second, {"users": 0})["machine_cpu"] = pct
        for second, flight in self.in_flight.items():
            out.setdefault(second, {"users": 0})["in_flight"] = flight
        return dict(sorted(out.items()))


def _series(into: dict[str, tuple[np.ndarray, np.ndarray]], name: str, seconds: list[int], values: list) -> None:
    """A process's CPU % over the seconds that sampled it."""
    held = [(second, value) for second, value in zip(seconds, values, strict=True) if value is not None]
    if held:
        pairs = np.array(held, dtype=np.float64)
        into[name] = (pairs[:, 0].astype(np.int64), pairs[:, 1])


def _busiest(series: dict[str, tuple[np.ndarray, np.ndarray]]) -> list[str]:
    """The ``PROCESSES_NAMED`` busiest processes, in the order they were met."""
    if len(series) <= PROCESSES_NAMED:
        return list(series)
    rank = {name: (int((v >= GENERATOR_CPU_PERCENT).sum()), float(v.mean())) for name, (_, v) in series.items()}
    chosen = set(sorted(rank, key=lambda name: rank[name], reverse=True)[:PROCESSES_NAMED])
    return [name for name in series if name in chosen]
