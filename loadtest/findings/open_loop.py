"""An open loop's demand: UNSERVED (a partition served under ``SERVED_SHARE`` of it, and why, as measured) and
UNSENT (the generator sent under ``bounds.schedule.SENT_SHARE`` of its schedule, and why)."""

from __future__ import annotations

from collections import Counter

from ..bounds.cpu import cpu_read, generator_bound, machine_bound, servers_bound
from ..bounds.schedule import SENT_SHARE, concurrency, sent_share
from ..bounds.throttlers import judged_by
from ..counting.buckets import GROUPS, named
from ..results.finding_kinds import SIMULATION_ANSWER
from ..results.finding_names import Act, Cause, K
from ..results.form import Finding, PartitionRow, Results
from ..service.error_codes import THROTTLING_CODES
from ..service.operations import OpClass
from .common import REMEDIES, finding
from .remedies import spread_brief
from .throttling import explained, reasons, throttled_failures

__all__ = ["SERVED_SHARE", "demand"]

#: In an open loop, a partition served less than this share of its demand over the steady phase: UNSERVED.
SERVED_SHARE = 0.95
UNSERVED_LISTED = 3  # partition rows named one by one; the rest in one more finding


def demand(results: Results) -> list[Finding]:
    """UNSERVED, then UNSENT."""
    return _unserved(results) + _unsent(results)


def _unserved(results: Results) -> list[Finding]:
    """Open loop: the tracked partitions that served under ``SERVED_SHARE`` of their demand (GET and PUT together)
    over the steady phase, each with the cause the run measured and the remedy that cause asks for: the least served
    ``UNSERVED_LISTED`` by name, the rest counted."""
    if not results.open_loop:
        return []
    unserved = []
    for partition in {r.partition for r in results.partitions if r.partition not in GROUPS}:
        head = results.headline(partition)
        if head.offered_mean_eps and head.mean_eps < SERVED_SHARE * head.offered_mean_eps:
            unserved.append((head.mean_eps / head.offered_mean_eps, partition))
    unserved.sort()
    findings = []
    for share, partition in unserved[:UNSERVED_LISTED]:
        rows = [r for r in results.partitions if r.partition == partition]
        head = results.headline(partition)
        cause, words, remedy, act = _unserved_cause(results, partition, rows)
        parts = [r for r in rows if r.op_class != OpClass.ALL and r.offered_mean_eps]
        each = f" ({', '.join(f'{r.op_class} {r.mean_eps / r.offered_mean_eps:.0%}' for r in parts)})" if len(parts) > 1 else ""
        message = (
            f"partition {named(partition)} served {head.mean_eps:,.0f} of the {head.offered_mean_eps:,.0f} entities/s "
            f"asked of it on average in the steady phase, {share:.0%}{each}: {words}"
        )
        findings.append(finding(K.UNSERVED, message, remedy=remedy, partition=partition, cause=cause, act=act))
    if len(unserved) > UNSERVED_LISTED:  # the least served are listed; the rest are counted
        rest = unserved[UNSERVED_LISTED:]
        first = findings[-1]
        findings.append(
            finding(
                K.UNSERVED,
                f"{len(rest)} more partitions served under {SERVED_SHARE:.0%} of their demand (from {rest[0][0]:.0%} "
                f"to {rest[-1][0]:.0%}): see the partitions table",
                remedy=first.remedy,
                cause=Cause(first.cause),
                act=Act(first.act),
            )
        )
    return findings


def _unserved_cause(results: Results, partition: str, rows: list[PartitionRow]) -> tuple[Cause, str, str, Act]:
    """What kept a partition's demand from being served, as the run measured it, and the remedy that follows: refused
    by throttling (the design's answer: spread it, sized; the account's limit: more accounts; a cool key: what the
    records show); never sent or a process out of CPU (send it whole); the emulator out of CPU or the service's pace
    (a real account); other failures (fix them)."""
    single = [r for r in rows if r.op_class != OpClass.ALL]
    throttled = sum(r.throttled for r in single)
    refused = sum(throttled_failures(r) for r in single)
    by_reason: Counter[str] = Counter()
    for row in single:
        by_reason.update(row.throttled_by)
    also = _other_causes(results, single)
    if throttled or refused or results.run.simulated:  # a simulation's only answer to demand is its partition layer's
        why = explained(results, partition, by_reason)
        judged = (
            "the simulated partition layer"
            if results.run.simulated
            else "the throttling emulator"
            if results.run.recorded.emulate_throttling
            else "the service"
        )
        words = (
            f"{judged} refused it: {throttled:,} attempts throttled ({reasons(results, by_reason) or 'by their answers'}), "
            f"{refused:,} operations failed after their retries"
        )
        words += f"; also measured: {'; '.join(also)}" if also else ""
        if why.cause != Cause.THROTTLED:
            return why.cause, f"{words}. {why.words}", why.remedy, why.act
        head = results.headline(partition)
        peak = head.judged(results.open_loop)[0]
        lead = (
            SIMULATION_ANSWER
            if results.run.simulated
            else (
                "Throttling refused this demand at the partition's budget: the design as it stands cannot take this "
                "peak, and more load generators would not change that."
            )
        )
        return (
            Cause.THROTTLED,
            words,
            f"{lead} {spread_brief(partition, peak, judged_by(results.run), served=head.mean_eps / head.offered_mean_eps)}.",
            Act.SPREAD,
        )
    generators = (
        "Send the demand whole before judging the design on it: more Locust processes (--workers) or engines, "
        "or more operations in flight (--max-in-flight); the UNSENT and GENERATOR_BOUND findings name what ran out."
    )
    if generator_bound(results) or machine_bound(results):  # a load-generating process, or the machine, out of CPU
        return Cause.CPU, "; ".join(also), generators, Act.GENERATORS
    if servers_bound(results):  # the emulator out of CPU: its pace, whatever else the generator could send
        return (
            Cause.EMULATOR,
            "; ".join(also),
            "The emulator's own pace, not the design, held it: measure on a real account (--connection-string or "
            "--account-url), or answer the same demand at any scale with `loadtest simulate` at this --arrival-rate.",
            Act.REAL_ACCOUNT,
        )
    sent = sent_share(results)
    if sent is not None and sent < SENT_SHARE:
        return Cause.UNSENT, "; ".join(also), generators, Act.GENERATORS
    failed = sum(n for r in single for code, n in r.errors.items() if code not in THROTTLING_CODES)
    if failed:
        return Cause.FAILED, "; ".join(also), REMEDIES[K.ERRORS], Act.FIX
    latency = results.latency.get(str(single[0].op_class) if single else "", {})
    pace = f" (p50 {latency['p50_ms']:,.0f} ms, p99 {latency['p99_ms']:,.0f} ms)" if latency else ""
    cpu = cpu_read(results)
    words = f"the service answered slower than the schedule{pace}" + (
        f", no process of the run out of CPU ({cpu})" if cpu else ""
    )
    return (
        Cause.PACE,
        words,
        "The service's pace held it, not the generator: measure on a real account (--connection-string or "
        "--account-url), or answer the same demand at any scale with `loadtest simulate` at this --arrival-rate.",
        Act.REAL_ACCOUNT,
    )


def _other_causes(results: Results, rows: list[PartitionRow]) -> list[str]:
    """Besides throttling, what else the run measured against serving the demand: other failures, demand never
    sent, a process or the machine out of CPU (each with its figure)."""
    causes = []
    failed = {code: n for r in rows for code, n in r.errors.items() if code not in THROTTLING_CODES}
    if failed:
        causes.append(f"{sum(failed.values()):,} operations failed otherwise ({', '.join(sorted(failed))})")
    sent = sent_share(results)
    if sent is not None and sent < SENT_SHARE:
        causes.append(f"the run sent {sent:.0%} of its schedule (UNSENT)")
    return causes + _out_of_cpu(results, servers=True)


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
