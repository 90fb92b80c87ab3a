"""Who ran out of CPU in the steady phase: each load-generating process (the only one, the master, each worker or
merged engine), each server the tool started (the embedded Azurite, the throttling emulator), the machine's cores.
Pure questions of the per-second samples; the ``findings`` wing and the ceiling's judgement word the answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from statistics import mean
from typing import Any

from ..results.form import Results

__all__ = [
    "GENERATOR_CPU_PERCENT",
    "busiest_cpu",
    "cpu_by_process",
    "cpu_read",
    "generator_bound",
    "machine_bound",
    "servers_bound",
    "servers_cpu",
]


GENERATOR_CPU_PERCENT = 90.0  # of one core: a Locust process (one greenlet loop) cannot use more


def cpu_by_process(samples: Iterable[Mapping[str, Any]]) -> dict[str, list[float]]:
    """Each load-generating process's CPU % per second, from the per-second samples: "the load generator" alone,
    or "the master" and "worker N" in a distributed run."""
    samples = list(samples)
    distributed = any(sample.get("workers_cpu") for sample in samples)
    own = "the master" if distributed else "the load generator"
    series: dict[str, list[float]] = {own: []}
    for sample in samples:
        if sample.get("cpu") is not None:
            series[own].append(sample["cpu"])
        for worker, cpu in sample.get("workers_cpu", {}).items():  # merged engines name themselves
            series.setdefault(worker if str(worker).startswith("engine ") else f"worker {worker}", []).append(cpu)
    return series


def servers_cpu(samples: Iterable[Mapping[str, Any]]) -> dict[str, list[float]]:
    """Each server the tool started (the embedded Azurite, the throttling emulator): its CPU % per second."""
    series: dict[str, list[float]] = {}
    for sample in samples:
        for server, cpu in sample.get("servers_cpu", {}).items():
            series.setdefault(server, []).append(cpu)
    return series


def _bound(series: Mapping[str, list[float]]) -> list[tuple[str, float, int, int]]:
    """(which, mean %, seconds at or above ``GENERATOR_CPU_PERCENT``, seconds read) for each process out of CPU: its
    mean reached it, or a third of its seconds did."""
    bound = []
    for which, cpu in series.items():
        pegged = sum(c >= GENERATOR_CPU_PERCENT for c in cpu)
        if cpu and (mean(cpu) >= GENERATOR_CPU_PERCENT or pegged >= len(cpu) / 3):
            bound.append((which, round(mean(cpu), 1), pegged, len(cpu)))
    return bound


def _steady(results: Results) -> list[Mapping[str, Any]]:
    return [s for s in results.load if s["t"] >= results.run.steady_from_s]


def servers_bound(results: Results) -> list[tuple[str, float, int, int]]:
    """Each server the tool started that ran out of CPU in the steady phase, as ``generator_bound`` judges."""
    return _bound(servers_cpu(_steady(results)))


def machine_bound(results: Results) -> tuple[float, int, int] | None:
    """The machine's cores (every process on it, the run's and others') busy in the steady phase: (mean % of all
    cores, seconds at or above ``GENERATOR_CPU_PERCENT``, seconds read), as ``generator_bound`` judges; else None."""
    bound = _bound({"machine": [s["machine_cpu"] for s in _steady(results) if s.get("machine_cpu") is not None]})
    return bound[0][1:] if bound else None


def cpu_read(results: Results, *, machine: bool = True) -> str:
    """Every process's mean CPU in the steady phase, and the machine's, in words ("Azurite 35%, the load generator 22%
    of a core; the machine's cores 40% busy"), or "" when none was read."""
    steady = _steady(results)
    series = {which: cpu for which, cpu in {**servers_cpu(steady), **cpu_by_process(steady)}.items() if cpu}
    said = ", ".join(f"{which} {mean(cpu):.0f}%" for which, cpu in series.items()) + " of a core" if series else ""
    cores = [s["machine_cpu"] for s in steady if s.get("machine_cpu") is not None] if machine else []
    busy = f"the machine's cores {mean(cores):.0f}% busy" if cores else ""
    return "; ".join(part for part in (said, busy) if part)


def busiest_cpu(samples: Iterable[Mapping[str, Any]]) -> float:
    """The busiest load-generating process's mean CPU % over the samples (the master's or a worker's)."""
    return round(max((mean(cpu) for cpu in cpu_by_process(samples).values() if cpu), default=0.0), 1)


def generator_bound(results: Results) -> list[tuple[str, float, int, int]]:
    """Each load-generating process that ran out of CPU in the steady phase: (which, mean %, seconds at or above
    ``GENERATOR_CPU_PERCENT``, seconds read). Bound when its mean reached it or a third of its seconds did."""
    return _bound(cpu_by_process(_steady(results)))
