"""Engines' per-second samples added into one run's: users and operations in flight summed, the busiest machine's
cores, and each process's CPU (an engine's, its workers', its servers') kept as one array a process while the engines
are read, so that 400 engines of an hour hold some 12 MB, not a dict a second for each.

The merged samples name at most ``PROCESSES_NAMED`` load generators and as many servers, the busiest: those with the
most seconds at or above ``GENERATOR_CPU_PERCENT``, then the highest mean (the ones the CPU findings would name first).
A run of few engines names every one, as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..bounds.cpu import GENERATOR_CPU_PERCENT

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

    def add(self, engine: str, given: Iterable[Any]) -> None:
        """One engine's samples, (wall-clock second, sample) pairs, as its mergeable count lists them."""
        given = [(int(second), sample) for second, sample in given]
        users = self.users
        for second, sample in given:
            users[second] = users.get(second, 0) + (sample.get("users") or 0)
        _series(self.cpu, f"engine {engine}", [(s, x["cpu"]) for s, x in given if x.get("cpu") is not None])
        workers: dict[str, list] = {}
        servers: dict[str, list] = {}
        for second, sample in given:
            for worker, pct in (sample.get("workers_cpu") or {}).items():
                workers.setdefault(f"engine {engine} worker {worker}", []).append((second, pct))
            for server, pct in (sample.get("servers_cpu") or {}).items():
                servers.setdefault(f"{server} (engine {engine})", []).append((second, pct))
            if sample.get("machine_cpu") is not None:
                self.machine[second] = max(self.machine.get(second, 0.0), sample["machine_cpu"])
            if sample.get("in_flight"):
                flight = self.in_flight.setdefault(second, {})
                for name, value in sample["in_flight"].items():
                    flight[name] = flight.get(name, 0) + value
        for name, pairs in workers.items():
            _series(self.cpu, name, pairs)
        for name, pairs in servers.items():
            _series(self.servers, name, pairs)

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


def _series(into: dict[str, tuple[np.ndarray, np.ndarray]], name: str, pairs: list[tuple[int, float]]) -> None:
    if pairs:
        seconds, values = zip(*pairs, strict=True)
        into[name] = (np.asarray(seconds, dtype=np.int64), np.asarray(values, dtype=np.float64))


def _busiest(series: dict[str, tuple[np.ndarray, np.ndarray]]) -> list[str]:
    """The ``PROCESSES_NAMED`` busiest processes, in the order they were met."""
    if len(series) <= PROCESSES_NAMED:
        return list(series)
    rank = {name: (int((v >= GENERATOR_CPU_PERCENT).sum()), float(v.mean())) for name, (_, v) in series.items()}
    chosen = set(sorted(rank, key=lambda name: rank[name], reverse=True)[:PROCESSES_NAMED])
    return [name for name in series if name in chosen]
