"""An open loop's demand: UNSERVED (a partition served under ``SERVED_SHARE`` of it, and why, as measured) and
UNSENT (the generator sent under ``schedule_sent.SENT_SHARE`` of its schedule, and why)."""

from __future__ import annotations

from ..bounds.cpu import cpu_read, generator_bound, machine_bound, servers_bound
from ..bounds.schedule import SENT_SHARE, concurrency, sent_share
from ..buckets import GROUPS, named
from ..finding_kinds import SIMULATION_ANSWER, SPREAD_ACCOUNTS
from ..finding_names import K
from ..operations import OpClass
from ..results import Finding, PartitionRow, Results
from ..service_errors import THROTTLING_CODES
from .common import SIMULATED_REMEDIES, finding
from .throttling import reasons, throttled_failures

__all__ = ["SERVED_SHARE", "demand"]

#: In an open loop, a partition served less than this share of its demand over the steady phase: UNSERVED.
SERVED_SHARE = 0.95
UNSERVED_LISTED = 3  # partition rows named one by one; the rest in one more finding


def demand(results: Results) -> list[Finding]:
    """UNSERVED, then UNSENT."""
    return _unserved(results) + _unsent(results)


def _unserved(results: Results) -> list[Finding]:
    """Open loop: the tracked partitions and op classes that served under ``SERVED_SHARE`` of their demand over the
    steady phase, with the cause the run measured: the least served ``UNSERVED_LISTED`` by name, the rest counted."""
    if not results.open_loop:
        return []
    unserved = sorted(
        (
            (row.mean_eps / row.offered_mean_eps, row)
            for row in results.rows()
            if row.partition not in GROUPS
            and row.op_class != OpClass.ALL
            and row.offered_mean_eps
            and row.mean_eps < SERVED_SHARE * row.offered_mean_eps
        ),
        key=lambda pair: pair[0],
    )
    findings = [
        finding(
            K.UNSERVED,
            (
                f"{row.op_class} on {named(row.partition)}: served {row.mean_eps:,.0f} of {row.offered_mean_eps:,.0f} "
                f"entities/s of demand ({share:.0%}) in the steady phase; {_unserved_cause(results, row)}"
            ),
            row,
            _simulated_unserved_remedy(row) if results.run.simulated else "",
        )
        for share, row in unserved[:UNSERVED_LISTED]
    ]
    if len(unserved) > UNSERVED_LISTED:  # the least served are listed; the rest are counted
        rest = unserved[UNSERVED_LISTED:]
        findings.append(
            finding(
                K.UNSERVED,
                f"{len(rest)} more partition rows served under {SERVED_SHARE:.0%} of their demand (from {rest[0][0]:.0%} "
                f"to {rest[-1][0]:.0%}): see the partitions table",
                remedy=SIMULATED_REMEDIES[K.UNSERVED] if results.run.simulated else "",
            )
        )
    return findings


def _simulated_unserved_remedy(row: PartitionRow) -> str:
    """A simulation's UNSERVED remedy for what refused the row: the account's budget alone, or a partition's too."""
    if set(row.throttled_by) == {"account"}:
        return f"{SIMULATION_ANSWER} The account's budget refused it, so {SPREAD_ACCOUNTS}; then simulate again."
    return SIMULATED_REMEDIES[K.UNSERVED]


def _unserved_cause(results: Results, row: PartitionRow) -> str:
    """What kept demand from being served, as the run measured it: throttled answers, errors, demand never sent, a
    process out of CPU (each named with its figure); else the service's pace, with every process's CPU read."""
    throttled_errors = throttled_failures(row)
    if results.run.simulated:
        return (
            f"the partition layer throttled {row.throttled:,} attempts{reasons(results, row.throttled_by)} "
            f"({throttled_errors:,} operations failed with them)"
        )
    causes = []
    if row.throttled or throttled_errors:
        causes.append(f"throttled: {row.throttled:,} attempts answered 503/500 timeout, {throttled_errors:,} operations failed")
    failed = sum(n for code, n in row.errors.items() if code not in THROTTLING_CODES)
    if failed:
        causes.append(f"{failed:,} operations failed ({', '.join(sorted(c for c in row.errors if c not in THROTTLING_CODES))})")
    sent = sent_share(results)
    if sent is not None and sent < SENT_SHARE:
        causes.append(f"the run sent {sent:.0%} of its schedule (UNSENT)")
    causes += _out_of_cpu(results, servers=True)
    if causes:
        return "; ".join(causes)
    latency = results.latency.get(str(row.op_class), {})
    pace = f" (p50 {latency['p50_ms']:,.0f} ms, p99 {latency['p99_ms']:,.0f} ms)" if latency else ""
    cpu = cpu_read(results)
    return f"the service answered slower than the schedule{pace}" + (f", no process of the run out of CPU ({cpu})" if cpu else "")


def _out_of_cpu(results: Results, *, servers: bool) -> list[str]:
    """Each process of the run out of CPU in the steady phase (the servers the tool started too, if ``servers``), and
    the machine's cores when all were busy (other processes' share named): measured, in words."""
    said = [
        f"{which} ran out of CPU ({average:.0f}% of a core in the steady phase)"
        for which, average, _, _ in [*(servers_bound(results) if servers else []), *generator_bound(results)]
    ]
    machine = machine_bound(results)
    if machine:
        said.append(f"the machine's cores were busy ({machine[0]:.0f}% of all of them: {cpu_read(results, machine=False)})")
    return said


def _unsent(results: Results) -> list[Finding]:
    """Open loop: the generator sent under ``SENT_SHARE`` of its schedule; why, as measured: every lane busy (the
    concurrency the schedule needed, by Little's law, against what it had) or a process out of CPU."""
    sent, c = sent_share(results), concurrency(results)
    if sent is None or sent >= SENT_SHARE:
        return []
    causes = []
    if c is not None and c.capped:
        causes.append(
            f"{c.capped:,} slots found all {c.cap:,} operations in flight it allowed busy (--max-in-flight, per process): "
            f"the schedule needed about {c.needed:,.0f} in flight ({c.rate:,.0f} operations/s x {c.mean_hold_s:,.3f} s "
            "each operation held its lane, retries and backoffs included: Little's law)"
        )
    causes += _out_of_cpu(results, servers=False)
    if not causes:
        cpu = cpu_read(results)
        causes.append(f"its users started their slots late ({cpu})" if cpu else "its users started their slots late")
    most = f" (at most {c.peak:,} operations in flight)" if c is not None else ""
    return [finding(K.UNSENT, f"the run sent {sent:.0%} of its schedule's demand{most}: " + "; ".join(causes))]
