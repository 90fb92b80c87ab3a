"""What bounded the figures besides the design, as measured: a load-generating process or a server out of CPU, an
emulator saturated or slowed as its table grew, a ramp that took most of the run (``bounds.cpu``, ``bounds.served_pace`` and
``bounds.run_span`` measure them)."""

from __future__ import annotations

from ..bounds.cpu import GENERATOR_CPU_PERCENT, generator_bound, servers_bound
from ..bounds.run_span import RAMP_SHARE, ramp_dominates
from ..bounds.served_pace import Slowdown, emulator_slowed, saturation
from ..counting.phases import peak_words
from ..results.finding_names import K
from ..results.form import Finding, Results
from ..results.wall_clock import RunClock
from .common import finding

__all__ = ["capacity"]


def capacity(results: Results) -> list[Finding]:
    """GENERATOR_BOUND, EMULATOR_BOUND, EMULATOR_SLOWED, RAMP_DOMINATES."""
    findings: list[Finding] = []
    for which, average, pegged, seconds in generator_bound(results):
        findings.append(
            finding(
                K.GENERATOR_BOUND,
                (
                    f"{which} used {average:.0f}% of a core on average in the steady phase, at or above "
                    f"{GENERATOR_CPU_PERCENT:.0f}% in {pegged} of {seconds} seconds: served figures are limited by the client"
                ),
            )
        )
    for which, average, pegged, seconds in servers_bound(results):
        findings.append(
            finding(
                K.EMULATOR_BOUND,
                (
                    f"{which} used {average:.0f}% of a core on average in the steady phase, at or above "
                    f"{GENERATOR_CPU_PERCENT:.0f}% in {pegged} of {seconds} seconds: served figures are its ceiling, not "
                    "the design's"
                ),
            )
        )
    if results.run.emulator:
        reason = None if any("servers_cpu" in s for s in results.load) else saturation(results)
        if reason:  # a target the tool did not start: its CPU unread, the saturation is seen in the figures alone
            findings.append(finding(K.EMULATOR_BOUND, f"the emulator saturated (its CPU was not read here): {reason}"))
        clock = results.clock
        findings += [_slowed(slowdown, clock) for slowdown in emulator_slowed(results)]
    findings += _ramp(results)
    return findings


def _ramp(results: Results) -> list[Finding]:
    """The users' ramp took over ``RAMP_SHARE`` of the run: what the means and peaks cover instead."""
    ramp = ramp_dominates(results)
    if ramp is None:
        return []
    users, average = f"{results.run.users:,} users" if results.run.users else "the users", peak_words(results.run.peak_window_s)
    if ramp.steady_s:
        said = (
            f"the users' ramp took {ramp.ramp_s:.0f} of the {ramp.ran_s:.0f} s they ran ({users}), over {RAMP_SHARE:.0%}: "
            f"the means cover the last {ramp.steady_s} s and the peaks are the highest {average}"
        )
    else:
        said = (
            f"the ramp never finished in the {ramp.ran_s:.0f} s the run lasted (no second had all {users} running): "
            f"the means cover the ramp and the peaks are the highest {average}"
        )
    return [finding(K.RAMP_DOMINATES, said)]


def _slowed(slow: Slowdown, clock: RunClock) -> Finding:
    (t0, t1), (t2, t3), (rate0, rate1), (ms0, ms1), (rows0, rows1) = slow.then, slow.now, slow.rate, slow.latency_ms, slow.rows
    latency = f"median latency rose from {ms0:,.1f} to {ms1:,.1f} ms"
    if slow.waited_on is not None:  # its own rose less: the users' other operations, which they wait on in turn
        other, (other0, other1) = slow.waited_on
        latency = (
            f"its median latency went from {ms0:,.1f} to {ms1:,.1f} ms and {other}'s, which the same users wait on in "
            f"turn, rose from {other0:,.1f} to {other1:,.1f} ms"
        )
    message = (
        f"{slow.op_class} served {rate0:,.0f} entities/s in the steady phase's first third ({clock.span(t0, t1 + 1)}) "
        f"and {rate1:,.0f}/s in its last ({clock.span(t2, t3 + 1)}), {1 - rate1 / rate0:.0%} less, while {latency} "
        f"and the generator kept up: the table grew from {rows0:,} to {rows1:,} rows, and Azurite's queries slow as it grows "
        "(it filters every row of the table for a query; Azure seeks on PartitionKey and RowKey). The served rates "
        "fell with the emulator, not the design: the demand offered, and the ratios against the targets in the first "
        "third, are still the design's"
    )
    slowed = finding(K.EMULATOR_SLOWED, message)
    slowed.op_class = slow.op_class
    return slowed
