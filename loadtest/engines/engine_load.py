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
from ..results.mergeable import sample_columns

__all__ = ["PROCESSES_NAMED", "EngineLoad"]

PROCESSES_NAMED = 10


class EngineLoad:
    """The samples so far, each engine's columns as arrays (its seconds and their figures), added per second once they
    are all in: a Python step per second of every engine had been a fifth of what ``loadtest merge`` spent on each."""

    def __init__(self) -> None:
        self.users: list[tuple[np.ndarray, np.ndarray]] = []  # (seconds, users) of each engine
        self.machine: list[tuple[np.ndarray, np.ndarray]] = []  # (seconds, cores busy %) of each engine
        self.in_flight: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}  # figure -> (seconds, value) of each engine
        self.cpu: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # load generator -> (seconds, cpu %)
        self.servers: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # server -> (seconds, cpu %)

    def add(self, engine: str, given: Mapping[str, Any] | Iterable[Any]) -> None:
        """One engine's samples as its mergeable count holds them: columns (``SampleColumns``), or (wall-clock
        second, sample) pairs as results.json listed them before."""
        columns = given if isinstance(given, Mapping) else sample_columns({int(s): sample for s, sample in given})
        seconds = np.asarray(columns["second"], dtype=np.int64)
        self.users.append((seconds, np.asarray(columns["users"], dtype=np.int64)))
        _held(self.machine, seconds, columns["machine_cpu"])
        for name, values in columns["in_flight"].items():
            _held(self.in_flight.setdefault(name, []), seconds, values)
        _series(self.cpu, f"engine {engine}", seconds, columns["cpu"])
        for worker, values in columns["workers_cpu"].items():
            _series(self.cpu, f"engine {engine} worker {worker}", seconds, values)
        for server, values in columns["servers_cpu"].items():
            _series(self.servers, f"{server} (engine {engine})", seconds, values)

    def samples(self) -> dict[int, dict[str, Any]]:
        """Per second: users, operations in flight, the busiest machine's cores, and the busiest processes' CPU."""
        users = _per_second(self.users, np.add)
        out: dict[int, dict[str, Any]] = {second: {"users": count} for second, count in users.items()}
        for key, series in (("workers_cpu", self.cpu), ("servers_cpu", self.servers)):
            for name in _busiest(series):
                for second, pct in zip(series[name][0].tolist(), series[name][1].tolist(), strict=True):
                    out.setdefault(second, {"users": 0}).setdefault(key, {})[name] = pct
        for second, pct in _per_second(self.machine, np.maximum).items():
            out.setdefault(second, {"users": 0})["machine_cpu"] = pct
        for name, parts in self.in_flight.items():
            for second, value in _per_second(parts, np.add).items():
                out.setdefault(second, {"users": 0}).setdefault("in_flight", {})[name] = value
        return dict(sorted(out.items()))


def _held(into: list[tuple[np.ndarray, np.ndarray]], seconds: np.ndarray, values: list) -> None:
    """An engine's column without the seconds that had no value, its numbers' type kept (counts stay whole)."""
    held = _present(seconds, values)
    if held is not None:
        into.append(held)


def _present(seconds: np.ndarray, values: list) -> tuple[np.ndarray, np.ndarray] | None:
    """(seconds, values) where the column has a value (a whole column at once where it has one every second)."""
    column = np.asarray(values)
    if column.dtype.kind in "iuf":
        return (seconds, column) if len(column) else None
    held = [i for i, value in enumerate(values) if value is not None]
    if not held:
        return None
    kept = [values[i] for i in held]
    return seconds[held], np.asarray(kept, dtype=np.float64 if any(isinstance(v, float) for v in kept) else np.int64)


def _per_second(parts: list[tuple[np.ndarray, np.ndarray]], combine: np.ufunc) -> dict[int, Any]:
    """Every engine's (seconds, values) combined per second (``np.add``: summed; ``np.maximum``: the largest)."""
    if not parts:
        return {}
    seconds = np.concatenate([part[0] for part in parts])
    values = np.concatenate([part[1] for part in parts])
    unique, where = np.unique(seconds, return_inverse=True)
    combined = np.zeros(len(unique), dtype=values.dtype) if combine is np.add else np.full(len(unique), -np.inf)
    combine.at(combined, where, values)
    return dict(zip(unique.tolist(), combined.astype(values.dtype).tolist(), strict=True))


def _series(into: dict[str, tuple[np.ndarray, np.ndarray]], name: str, seconds: np.ndarray, values: list) -> None:
    """A process's CPU % over the seconds that sampled it."""
    held = _present(seconds, values)
    if held is not None:
        into[name] = (held[0], held[1].astype(np.float64))


def _busiest(series: dict[str, tuple[np.ndarray, np.ndarray]]) -> list[str]:
    """The ``PROCESSES_NAMED`` busiest processes, in the order they were met."""
    if len(series) <= PROCESSES_NAMED:
        return list(series)
    rank = {name: (int((v >= GENERATOR_CPU_PERCENT).sum()), float(v.mean())) for name, (_, v) in series.items()}
    chosen = set(sorted(rank, key=lambda name: rank[name], reverse=True)[:PROCESSES_NAMED])
    return [name for name in series if name in chosen]
