"""When the served pace, not the design, gave way: an emulator saturated (served load stopped growing with users
while latency climbed), or Azurite slowed as its table grew. Pure questions of the results; ``findings.capacity``
words the answers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import mean, median

import pandas as pd

from ..results.form import Results
from .cpu import generator_bound

__all__ = [
    "LATENCY_ROSE",
    "ROWS_GREW",
    "SLOWED_SHARE",
    "Slowdown",
    "emulator_slowed",
    "saturation",
]


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
    frame = results.timeseries[results.timeseries["t"] < until]
    summed = frame.assign(weighted=frame["p50_ms"] * frame["requests"]).groupby("t")[["requests", "weighted"]].sum()
    per_second = {
        t: [n, w] for t, n, w in zip(summed.index.tolist(), summed["requests"].tolist(), summed["weighted"].tolist(), strict=True)
    }
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
    #: a closed loop's users wait on each of their operations in turn: the op class whose latency rose (by
    #: ``LATENCY_ROSE``) where this one's own rose less, and its latencies then and now; None where its own rose
    waited_on: tuple[str, tuple[float, float]] | None = None


def emulator_slowed(results: Results) -> list[Slowdown]:
    """Each op class whose served entities/s fell by 30 % or more from the first to the last third of the steady
    phase against Azurite while the generator kept up, its latency rose and the table grew (``SLOWED_SHARE``,
    ``LATENCY_ROSE``, ``ROWS_GREW``): the emulator slowing, not the design. In a closed loop the latency that rose may
    be another op class's: a user's scans wait behind its batches (measured: scans x0.54 with their own latency x1.36,
    the batches' slower still)."""
    if not results.run.emulator or results.run.simulated or generator_bound(results):
        return []
    frame = results.timeseries
    end = int(frame["t"].max()) if len(frame) else 0
    steady = list(range(math.ceil(results.run.steady_from_s), end))  # the last, partial second out
    if len(steady) < 6:
        return []
    third = len(steady) // 3
    then, now = (steady[0], steady[third - 1]), (steady[-third], steady[-1])
    rows = tuple(results.run.seeded + int(frame.loc[frame["t"] <= end, "rows"].sum()) for _, end in (then, now))
    if rows[1] < ROWS_GREW * max(rows[0], 1):
        return []
    paces = {}
    for op_class in sorted(frame["op_class"].unique()):
        own = frame[frame["op_class"] == op_class]
        paces[op_class] = (_pace(own, then), _pace(own, now))
    rose = {op: (ms0, ms1) for op, ((_, ms0), (_, ms1)) in paces.items() if ms0 and ms1 >= LATENCY_ROSE * ms0}
    slowed = []
    for op_class, ((rate0, ms0), (rate1, ms1)) in paces.items():
        if not rate0 or rate1 > SLOWED_SHARE * rate0:
            continue
        if op_class in rose:
            waited_on = None
        elif rose and not results.open_loop:  # the op class whose latency rose most, which its users waited on
            other = max(rose, key=lambda op: rose[op][1] / rose[op][0])
            waited_on = (other, rose[other])
        else:
            continue
        slowed.append(
            Slowdown(
                op_class=op_class, then=then, now=now, rate=(rate0, rate1), latency_ms=(ms0, ms1), rows=rows, waited_on=waited_on
            )
        )
    return slowed


def _pace(rows: pd.DataFrame, span: tuple[int, int]) -> tuple[float, float]:
    """Served entities/s over the seconds of ``span`` (inclusive), and the median of their median latencies."""
    inside = rows[rows["t"].between(*span)]
    latency = inside[inside["requests"] > 0].groupby("t")["p50_ms"].last()  # one p50 per second and op class
    served = int(inside["entities"].sum()) / (span[1] - span[0] + 1)
    return served, median(latency.tolist()) if len(latency) else 0.0
