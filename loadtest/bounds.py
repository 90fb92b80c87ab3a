"""What bounded the run's figures besides the design: a generator out of CPU, an emulator that saturated, a
target that was lost.

Pure questions of the results; ``verdict`` turns the answers into findings.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from statistics import mean, median
from typing import Any

from .results import Results, RunInfo
from .service_errors import UNANSWERED

__all__ = [
    "GENERATOR_CPU_PERCENT",
    "LOST_AFTER_S",
    "RAMP_SHARE",
    "SENT_SHARE",
    "Concurrency",
    "Ramp",
    "Slowdown",
    "busiest_cpu",
    "concurrency",
    "cpu_by_process",
    "cpu_read",
    "sent_share",
    "servers_bound",
    "servers_cpu",
    "emulator_slowed",
    "machine_bound",
    "generator_bound",
    "ramp_dominates",
    "saturation",
    "target_lost",
    "throttler",
]

GENERATOR_CPU_PERCENT = 90.0  # of one core: a Locust process (one greenlet loop) cannot use more

#: Consecutive seconds of nothing but unanswered operations, up to the run's end, that mean the target was lost.
LOST_AFTER_S = 2


def saturation(results: Results) -> str | None:
    """Why served load stopped growing with users while latency climbed, or ``None``.

    Compares the ramp's seconds at up to half the final users with the steady phase:
    in a closed loop, requests/s should grow with users; if users doubled or more but
    requests/s per user fell under 60 % and median latency rose 1.5x, the service was full.
    Seconds from a worker's loss on are left out (its users vanish: no ramp, no saturation).
    """
    # from a lost worker's last report on, users and requests no longer match: those seconds are no evidence
    losses = [lost.get("last_report_s") or lost["lost_at_s"] for lost in results.workers.get("lost", [])]
    until = min(losses, default=math.inf)
    users = {s["t"]: s["users"] for s in results.load if s.get("users") and s["t"] < until}
    if not users:
        return None
    per_second: dict[int, list[float]] = {}
    for t in (row for row in results.timeseries if row["t"] < until):
        entry = per_second.setdefault(t["t"], [0, 0.0])
        entry[0] += t["requests"]
        entry[1] += t["p50_ms"] * t["requests"]
    full = max(users.values())
    steady = [t for t in per_second if t >= results.run.steady_from_s and users.get(t) == full]
    ramp = [t for t in per_second if 0 < users.get(t, 0) <= full / 2]
    if not steady or not ramp or full < 2:
        return None

    def rate_latency(seconds: list[int]) -> tuple[float, float, float]:
        requests = sum(per_second[t][0] for t in seconds)
        latency = sum(per_second[t][1] for t in seconds) / max(requests, 1)
        return requests / len(seconds), latency, mean(users[t] for t in seconds)

    low_rate, low_latency, low_users = rate_latency(ramp)
    high_rate, high_latency, high_users = rate_latency(steady)
    if not low_rate or not low_latency:
        return None
    scaling = (high_rate / low_rate) / (high_users / low_users)
    if scaling < 0.6 and high_latency > 1.5 * low_latency:
        return (
            f"users grew {high_users / low_users:.1f}x but requests/s only {high_rate / low_rate:.1f}x "
            f"({low_rate:,.0f} -> {high_rate:,.0f}/s) while median latency rose {high_latency / low_latency:.1f}x "
            f"({low_latency:.1f} -> {high_latency:.1f} ms)"
        )
    return None


def target_lost(results: Results) -> tuple[int, int] | None:
    """(The second the target stopped answering, operations failed since) when the run ended with at least
    ``LOST_AFTER_S`` seconds in which every operation failed without an answer; else None."""
    seconds: dict[int, list[int]] = {}
    for row in results.timeseries:
        requests, unanswered = seconds.setdefault(row["t"], [0, 0])
        seconds[row["t"]] = [requests + row["requests"], unanswered + sum(row["errors"].get(code, 0) for code in UNANSWERED)]
    since, failed, streak = 0, 0, 0
    for t in sorted(seconds, reverse=True):
        requests, unanswered = seconds[t]
        if requests == 0:
            continue  # nobody sent anything that second (a ramp, a stop): neither lost nor alive
        if unanswered < requests:
            break
        since, failed, streak = t, failed + unanswered, streak + 1
    return (since, failed) if streak >= LOST_AFTER_S else None


#: EMULATOR_SLOWED: the last third of the steady phase served under this share of the first third's entities/s...
SLOWED_SHARE = 0.7
LATENCY_ROSE = 1.5  # ...while its median latency rose this much or more...
ROWS_GREW = 1.3  # ...and the table grew by this factor: Azurite's queries slow with the rows it filters


@dataclass(frozen=True)
class Slowdown:
    """An op class whose served rate fell with Azurite as the table grew: its rate, latency and rows, then and now."""

    op_class: str
    then: tuple[int, int]  # the steady phase's first third (seconds from the start, inclusive)
    now: tuple[int, int]  # and its last
    rate: tuple[float, float]  # served entities/s in each
    latency_ms: tuple[float, float]  # median of the per-second median latencies in each
    rows: tuple[int, int]  # the table's rows at the end of each: seeded + gained (acknowledged inserts less deletes)


def emulator_slowed(results: Results) -> list[Slowdown]:
    """Each op class whose served entities/s fell by 30 % or more from the first to the last third of the steady
    phase against Azurite while the generator kept up, its latency rose and the table grew (``SLOWED_SHARE``,
    ``LATENCY_ROSE``, ``ROWS_GREW``): the emulator slowing, not the design."""
    if not results.run.emulator or results.run.simulated or generator_bound(results):
        return []
    ends = [row["t"] for row in results.timeseries]
    steady = [t for t in range(math.ceil(results.run.steady_from_s), max(ends, default=0))]  # the last, partial second out
    if len(steady) < 6:
        return []
    third = len(steady) // 3
    then, now = (steady[0], steady[third - 1]), (steady[-third], steady[-1])
    gained: dict[int, int] = {}
    for row in results.timeseries:
        gained[row["t"]] = gained.get(row["t"], 0) + row.get("rows", 0)
    rows = tuple(results.run.seeded + sum(n for t, n in gained.items() if t <= end) for _, end in (then, now))
    if rows[1] < ROWS_GREW * max(rows[0], 1):
        return []
    slowed = []
    for op_class in sorted({row.get("op_class", "") for row in results.timeseries}):
        own = [row for row in results.timeseries if row.get("op_class", "") == op_class]
        (rate0, ms0), (rate1, ms1) = _pace(own, then), _pace(own, now)
        if rate0 and rate1 <= SLOWED_SHARE * rate0 and ms0 and ms1 >= LATENCY_ROSE * ms0:
            slowed.append(Slowdown(op_class=op_class, then=then, now=now, rate=(rate0, rate1), latency_ms=(ms0, ms1), rows=rows))
    return slowed


def _pace(rows: list[dict[str, Any]], span: tuple[int, int]) -> tuple[float, float]:
    """Served entities/s over the seconds of ``span`` (inclusive), and the median of their median latencies."""
    inside = [row for row in rows if span[0] <= row["t"] <= span[1]]
    latency = {row["t"]: row.get("p50_ms", 0.0) for row in inside if row["requests"]}  # one p50 per second and op class
    served = sum(row.get("entities", 0) for row in inside) / (span[1] - span[0] + 1)
    return served, median(latency.values()) if latency else 0.0


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


#: UNSENT: an open loop sent under this share of its schedule's entities.
SENT_SHARE = 0.98


@dataclass(frozen=True)
class Concurrency:
    """An open loop's operations in flight against what its schedule needed (Little's law: L = rate x mean hold)."""

    rate: float  # operations/s the schedule asked
    mean_hold_s: float  # mean time an operation held its lane: from its start to its end, retries and backoffs included
    cap: int  # operations in flight allowed at once, every process together (--max-in-flight per process)
    peak: int  # the most in flight in a second
    capped: int  # slots that found every lane busy and waited

    @property
    def needed(self) -> float:
        return self.rate * self.mean_hold_s


def concurrency(results: Results) -> Concurrency | None:
    """The open loop's operations in flight (``arrivals.in_flight``); None for a closed loop, a simulation, or results
    written before they were counted."""
    figures = results.arrivals.get("in_flight")
    if not figures:
        return None
    return Concurrency(
        rate=float(results.arrivals.get("rate", 0) or 0),
        mean_hold_s=figures["mean_hold_ms"] / 1000.0,
        cap=figures["cap"],
        peak=figures["peak"],
        capped=figures["capped"],
    )


def sent_share(results: Results) -> float | None:
    """An open loop's entities sent, of its schedule's demand (sent, dropped and still owed at the end); None for a
    closed loop."""
    if not results.open_loop:
        return None
    offered = sum(row.get("offered", 0) for row in results.timeseries)
    asked = offered + sum(row.get("unsent", 0) for row in results.timeseries)
    return offered / asked if asked else 1.0


def busiest_cpu(samples: Iterable[Mapping[str, Any]]) -> float:
    """The busiest load-generating process's mean CPU % over the samples (the master's or a worker's)."""
    return round(max((mean(cpu) for cpu in cpu_by_process(samples).values() if cpu), default=0.0), 1)


def generator_bound(results: Results) -> list[tuple[str, float, int, int]]:
    """Each load-generating process that ran out of CPU in the steady phase: (which, mean %, seconds at or above
    ``GENERATOR_CPU_PERCENT``, seconds read). Bound when its mean reached it or a third of its seconds did."""
    return _bound(cpu_by_process(_steady(results)))


#: Of the seconds the users ran, the share their ramp may take: past it the steady phase is too short to judge.
RAMP_SHARE = 0.5


@dataclass(frozen=True)
class Ramp:
    """A ramp that took most of the run: its seconds, the seconds the users ran (ramp included), the steady phase's."""

    ramp_s: float
    ran_s: float
    steady_s: int


def ramp_dominates(results: Results) -> Ramp | None:
    """The users' ramp took over ``RAMP_SHARE`` of the seconds they ran (or never finished), so the means and the peak
    window cover only what was left. None for a simulation (no ramp) and a ceiling search (each step ramps and is
    judged on its own seconds)."""
    run = results.run
    if run.simulated or results.ceiling or not results.partitions:
        return None
    steady = run.steady_seconds
    ran = run.steady_from_s + steady if steady else run.duration_s
    ramp = run.steady_from_s if steady else ran
    if ran <= 0 or ramp <= RAMP_SHARE * ran:
        return None
    return Ramp(ramp_s=ramp, ran_s=ran, steady_s=steady)


def throttler(run: RunInfo, reason: str = "partition") -> str:
    """What judged a throttled attempt for ``reason`` (a partition's or the account's rate), with its figure: the
    budget given to the throttling emulator or to a simulation's model, else the service's own target."""
    settings = run.settings
    account = reason == "account"
    if run.simulated or settings.get("emulate_throttling"):
        rate = float(settings.get("emulator_account_rate" if account else "emulator_partition_rate", 0) or 0)
        who = "the simulation's" if run.simulated else "the throttling emulator's"
        return f"{who} {rate:,.0f} entities/s {'account' if account else 'per-partition'} budget"
    if run.emulator:
        return "the emulator's budget (not given to this run)"
    target = run.account_target if account else run.partition_target
    return f"Azure's {target:,}/s {'account' if account else 'partition'} target"
