"""Findings from the results, and the checks that turn ``--fail-on`` into an exit code.

Each finding carries the docs' remedy in one sentence. Each check's ``fails(results)``
returns a message or ``None``; all are collected and the run exits once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import checklist
from .bounds import (
    GENERATOR_CPU_PERCENT,
    RAMP_SHARE,
    SENT_SHARE,
    Slowdown,
    concurrency,
    cpu_read,
    emulator_slowed,
    generator_bound,
    machine_bound,
    ramp_dominates,
    saturation,
    sent_share,
    servers_bound,
    target_lost,
    throttler,
)
from .buckets import OTHER
from .ceiling.limits import LIMITS
from .exit_codes import EXIT_CHECK_FAILED, EXIT_OK, EXIT_RUN_FAILED
from .operations import OpClass
from .outages import Outage, outages
from .results import AccountRow, Finding, FindingKind, PartitionRow, Results, peak_words
from .service_errors import CAUSES, THROTTLING_CODES

__all__ = [
    "ACCOUNT_REMEDIES",
    "FindingCheck",
    "REMEDIES",
    "SIMULATED_REMEDIES",
    "assess",
    "checks_for",
    "exit_code",
    "level",
    "throttled_message",
]

WARM_RATIO = 0.8

K = FindingKind
REMEDIES: dict[FindingKind, str] = {
    K.HOT: "Spread the load over more PartitionKeys: finer keys, a 3-digit hash prefix or GUIDs, and no append-only "
    "or prepend-only keys (timestamps, counters), which always land on the last or first range partition.",
    K.WARM: "Leave headroom: above the target the service answers 503 ServerBusy and rebalancing takes minutes, "
    "so plan finer PartitionKeys before the load grows.",
    K.COOL: "No action needed: this partition stays under its scalability target at this load.",
    K.THROTTLED: "Retry 503 ServerBusy, 500 OperationTimedOut and 504 with exponential backoff (never 4xx), "
    "and spread the load over more PartitionKeys.",
    K.ERRORS: "Read the error codes; the docs: never retry a 4xx answer.",
    K.EMULATOR_BOUND: "The emulator, not the design, capped this figure (a lower bound): run against a real account "
    "(--connection-string or --account-url) to measure beyond Azurite's ceiling.",
    K.LOST_WRITES: "Acknowledged writes are missing from the table: check retries of non-idempotent operations and "
    "the client's handling of timeouts before trusting this design with data.",
    K.WORKER_LOST: "Rerun for complete figures: the lost worker's unreported seconds are missing, so entities/s "
    "after its last report are too low; check the worker's machine (memory, CPU, network).",
    K.GENERATOR_BOUND: "The load generator ran out of CPU: add Locust workers or machines before reading the figures "
    "as the service's.",
    K.TARGET_LOST: "Rerun once the target answers again: from that second on the figures count failures, not the "
    "service's throughput; check what stopped it (a killed or stalled emulator or Azurite, the network, the account's "
    "firewall).",
    K.INCOMPLETE: "The figures measured stand; rerun for what is missing, after fixing what failed.",
    K.OUTAGE: "Expect outages of a few seconds (Azure moves a partition between servers by load balancing, and it is "
    "offline meanwhile): retry timed-out and refused operations with exponential backoff, keep --timeout short enough "
    "to retry within one, and spread the load over finer PartitionKeys before a range needs moving.",
    K.EMULATOR_SLOWED: "Read the demand and the ratios, not this run's served rates, as the design's: Azurite filters "
    "the whole table for every query while Azure seeks on PartitionKey and RowKey, so a growing table slows only the "
    "emulator; start from a fresh Azurite per comparison, delete what the run inserts, or run against a real account.",
    K.UNSENT: "Give the schedule the concurrency it needs: raise --max-in-flight (operations in flight per Locust "
    "process; each holds a connection and a greenlet) to the figure named, or spread the load over more Locust workers "
    "(--workers) or engines; a generator out of CPU needs more processes, not more users.",
    K.UNSERVED: "Judge the design on its demand, not on what this run could serve: send it whole (more Locust "
    "workers or engines, a real account with --connection-string or --account-url), or answer it at any scale with "
    "`loadtest simulate` at the same --arrival-rate.",
    K.RAMP_DOMINATES: "Start the users in a small share of the run: raise -r (users started per second) or lengthen -t, "
    "so the steady phase holds most of it and the peaks are full-window averages.",
}
#: Where the account's targets stand (the scale-targets pages): what its findings' remedies add.
ACCOUNT_TARGETS = (
    "the Table scale-targets page keeps 20,000 entities/s per account (1 KiB entities), while standard accounts take "
    "40,000 requests/s in many regions (East US, West Europe, …) and 20,000 elsewhere: set --account-target to your "
    "account's"
)
SPREAD_ACCOUNTS = (
    "spread the load across more storage accounts (tables or key ranges sharded by a hash), since finer PartitionKeys "
    "cannot help: every partition counts against the account"
)
#: The remedies of the account's findings (its own row, or attempts throttled for the account's limit).
ACCOUNT_REMEDIES: dict[FindingKind, str] = {
    K.HOT: f"The account, not one partition, passed its target: {SPREAD_ACCOUNTS}; or check its target: {ACCOUNT_TARGETS}.",
    K.WARM: "Leave headroom on the account: over its target the service answers 503 ServerBusy to every partition "
    f"('Operations per second is over the account limit'), so plan more storage accounts before the load grows; "
    f"{ACCOUNT_TARGETS}.",
    K.THROTTLED: "Retry 503 ServerBusy, 500 OperationTimedOut and 504 with exponential backoff (never 4xx); the "
    f"account was over its limit, so {SPREAD_ACCOUNTS} ({ACCOUNT_TARGETS}).",
}
SIMULATION_ANSWER = (
    "This is the simulation's answer at this --arrival-rate: with the budgets given, the partition layer serves only "
    "this share of the demand, so the design as it stands cannot take it."
)
#: A simulation's remedies: it answers at any scale already, so what is left is the design's change.
SIMULATED_REMEDIES: dict[FindingKind, str] = {
    K.UNSERVED: f"{SIMULATION_ANSWER} Spread the load over finer PartitionKeys (a hash prefix or GUIDs) where a partition "
    "refused it, across more storage accounts where the account did (the throttled attempts say which), then simulate "
    "again.",
}
#: In an open loop, a partition served less than this share of its demand over the steady phase: UNSERVED.
SERVED_SHARE = 0.95
UNSERVED_LISTED = 3  # partition rows named one by one; the rest in one more finding
TASK_ERRORS = (
    "Fix the task code (Locust's log has each traceback): the operations a failing task never reached were never "
    "sent, so every figure lacks them."
)
#: Findings that mean the run itself failed (exit 1), whatever --fail-on says.
RUN_FAILURES = (K.TARGET_LOST, K.INCOMPLETE)
_ORDER = {K.COOL: 0, K.WARM: 1, K.HOT: 2}


def _ceiling_remedy(limit: str) -> str:
    """A ceiling search's remedy by what limited it (``LIMITS``): its finding's remedy, or its own words."""
    remedy = LIMITS[limit]
    return REMEDIES[remedy] if isinstance(remedy, FindingKind) else remedy


def level(ratio: float) -> FindingKind:
    """HOT above the target, WARM from 80 % of it, COOL below."""
    return K.HOT if ratio > 1.0 else K.WARM if ratio >= WARM_RATIO else K.COOL


def _finding(kind: FindingKind, message: str, row: PartitionRow | None = None, remedy: str = "") -> Finding:
    return Finding(
        kind=kind,
        partition=row.partition if row else None,
        op_class=row.op_class if row else None,
        message=message,
        remedy=remedy or REMEDIES[kind],
    )


def _causes(codes: dict[str, int]) -> str:
    """The ERRORS remedy: what each code present says about the run (errors.CAUSES), then the docs' rule."""
    known = [f"{code}: {CAUSES[code]}." for code in codes if code in CAUSES]
    return " ".join([*known, REMEDIES[K.ERRORS]])


def _ceiling(search: dict[str, Any], target: int) -> Finding:
    """The search's outcome in one finding: the ceiling (the last good step, its hottest partition against the
    partition ``target``) and what ended it (the judgement names the budget or target that throttled)."""
    ceiling, limit = search["ceiling"], search["limited_by"]
    if ceiling is None:
        return _finding(K.CEILING, f"no ceiling found: {search['reason']}", remedy=_ceiling_remedy(limit))
    hottest = ceiling["partitions"][0] if ceiling["partitions"] else None
    where = (
        f", the hottest partition {hottest['partition']!r} {hottest['entities_per_s']:,.0f}/s, "
        f"{hottest['entities_per_s'] / target:.0%} of the {target:,}/s partition target"
        if hottest
        else ""
    )
    said = f"limited by {limit} {search['reason']}" if limit else search["reason"]
    return _finding(
        K.CEILING,
        (
            f"sustained ceiling {ceiling['entities_per_s']:,.0f} entities/s ({ceiling['served_per_s']:,.0f} operations/s "
            f"served of {ceiling['offered_per_s']:,} offered{where}); {said}"
        ),
        remedy=_ceiling_remedy(limit),
    )


def _throttled_failures(row: PartitionRow) -> int:
    """Operations that failed with a throttling code (after their retries)."""
    return sum(n for code, n in row.errors.items() if code in THROTTLING_CODES)


def _reasons(results: Results, throttled_by: Mapping[str, int]) -> str:
    """The throttled attempts by reason, as the answers told them apart, each with the budget or target that judged
    it (``bounds.throttler``: the emulator's or a simulation's figure, else Azure's; none for older results)."""
    if not throttled_by:
        return ""
    words = {
        "partition": f"the partition over its target ({throttler(results.run, 'partition')})",
        "account": f"the account over its limit ({throttler(results.run, 'account')})",
        "timeout": "timed out",
    }
    by = sorted(throttled_by.items(), key=lambda kv: (-kv[1], kv[0]))
    return ": " + ", ".join(f"{n:,} {words.get(reason, reason)}" for reason, n in by)


def throttled_message(results: Results, rows: list[PartitionRow]) -> str:
    """A THROTTLED finding's words for one partition's rows: an op class's (the finding's), or several in one line
    (the console's), each op class's count named."""
    reasons: Counter[str] = Counter()
    for row in rows:
        reasons.update(row.throttled_by)
    each = f"{', '.join(f'{r.op_class} {r.throttled:,}' for r in rows)}; " if len(rows) > 1 else ""
    return (
        f"{' and '.join(r.op_class for r in rows)} on {rows[0].partition!r}: {sum(r.throttled for r in rows):,} throttled "
        f"attempts ({each}503 ServerBusy / 500 OperationTimedOut / 504){_reasons(results, reasons)}, "
        f"{sum(_throttled_failures(r) for r in rows):,} operations failed with them"
    )


def _not_the_budget(results: Results, scope: str) -> str:
    """Where a budget other than the target throttled the run (the throttling emulator's, a simulation's), that the
    level (HOT, WARM, COOL) judges the target, not the budget: both figures named."""
    settings = results.run.settings
    if not (results.run.simulated or settings.get("emulate_throttling")):
        return ""
    rate = float(settings.get(f"emulator_{scope}_rate", 0) or 0)
    target = results.run.account_target if scope == "account" else results.run.partition_target
    if not rate or rate == target:
        return ""
    return f"; this level is against the {target:,}/s {scope} target, THROTTLED against {throttler(results.run, scope)}"


def _throttled_remedy(row: PartitionRow) -> str:
    """THROTTLED's remedy for what refused the row: the account's where only its limit did, the partition's else (and
    the account's besides, where it refused some)."""
    if "account" not in row.throttled_by:
        return REMEDIES[K.THROTTLED]
    if set(row.throttled_by) == {"account"}:
        return ACCOUNT_REMEDIES[K.THROTTLED]
    return f"{REMEDIES[K.THROTTLED]} Where the account was over its limit: {SPREAD_ACCOUNTS}."


def _load(row: AccountRow, window: int, open_loop: bool, what: str = "partition", steady: bool = True) -> str:
    """A row's load against its target: served; in an open loop the demand, which the finding judges, then served.
    ``steady``: the run had a steady phase (else its means cover the ramp, and say so)."""
    phase = "in the steady phase" if steady else "over the ramp (the run had no steady phase)"
    average = peak_words(window)
    served = f"peak {row.peak_eps:,.0f} entities/s ({average}), {row.ratio:.0%} of the {row.target:,}/s {what} target"
    if not open_loop:
        return f"{served}; mean {row.mean_eps:,.0f}/s {phase}"
    return (
        f"demand peak {row.offered_peak_eps:,.0f} entities/s ({average}), {row.offered_ratio:.0%} of the "
        f"{row.target:,}/s {what} target, mean {row.offered_mean_eps:,.0f}/s; served peak {row.peak_eps:,.0f}/s "
        f"({row.ratio:.0%}), mean {row.mean_eps:,.0f}/s {phase}"
    )


def _unserved(results: Results) -> list[Finding]:
    """Open loop: the tracked partitions and op classes that served under ``SERVED_SHARE`` of their demand over the
    steady phase, with the cause the run measured: the least served ``UNSERVED_LISTED`` by name, the rest counted."""
    if not results.open_loop:
        return []
    unserved = sorted(
        (
            (row.mean_eps / row.offered_mean_eps, row)
            for row in results.rows()
            if row.partition != OTHER
            and row.op_class != OpClass.ALL
            and row.offered_mean_eps
            and row.mean_eps < SERVED_SHARE * row.offered_mean_eps
        ),
        key=lambda pair: pair[0],
    )
    findings = [
        _finding(
            K.UNSERVED,
            (
                f"{row.op_class} on {row.partition!r}: served {row.mean_eps:,.0f} of {row.offered_mean_eps:,.0f} "
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
            _finding(
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
    throttled_errors = _throttled_failures(row)
    if results.run.simulated:
        return (
            f"the partition layer throttled {row.throttled:,} attempts{_reasons(results, row.throttled_by)} "
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
    return [_finding(K.UNSENT, f"the run sent {sent:.0%} of its schedule's demand{most}: " + "; ".join(causes))]


OUTAGES_LISTED = 5  # outages named one by one; the rest in one more finding


def _outage_findings(results: Results) -> list[Finding]:
    """Outages of one cause in one finding (a split's partitions, those out while the whole target was), over their
    seconds together; the first ``OUTAGES_LISTED`` by name, the rest counted."""
    groups: dict[tuple, list[Outage]] = {}
    for outage in outages(results):
        groups.setdefault(outage.shared, []).append(outage)
    findings, spans = [], [(min(o.start for o in g), max(o.end for o in g)) for g in groups.values()]
    for (start, end), group in list(zip(spans, groups.values(), strict=True))[:OUTAGES_LISTED]:
        first = group[0]
        names = ", ".join(repr(o.partition) for o in group[:3]) + (f" and {len(group) - 3} more" if len(group) > 3 else "")
        who = f"partition {names}" if len(group) == 1 else f"{len(group)} partitions ({names})"
        longest = max(o.longest_ms for o in group) / 1000.0  # none when only refusals came back (or nothing was timed)
        message = (
            f"{who} completed nothing for {end - start + 1} s, from {start} s to {end + 1} s: "
            f"{sum(o.failed for o in group):,} attempts timed out, went unanswered or were refused meanwhile"
            + (f", the longest operation took {longest:.1f} s" if longest >= 0.1 else "")
            + f"; cause: {first.cause}"
        )
        partition = first.partition if len(group) == 1 else None
        findings.append(Finding(kind=K.OUTAGE, partition=partition, op_class=None, message=message, remedy=REMEDIES[K.OUTAGE]))
    if len(groups) > OUTAGES_LISTED:
        rest = spans[OUTAGES_LISTED:]
        findings.append(
            _finding(K.OUTAGE, f"{len(rest)} more outages from {rest[0][0]} s to {rest[-1][1] + 1} s: see the charts")
        )
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
    return [_finding(K.RAMP_DOMINATES, said)]


def _slowed(slow: Slowdown) -> Finding:
    (t0, t1), (t2, t3), (rate0, rate1), (ms0, ms1), (rows0, rows1) = slow.then, slow.now, slow.rate, slow.latency_ms, slow.rows
    message = (
        f"{slow.op_class} served {rate0:,.0f} entities/s in the steady phase's first third ({t0}-{t1 + 1} s) and "
        f"{rate1:,.0f}/s in its last ({t2}-{t3 + 1} s), {1 - rate1 / rate0:.0%} less, while median latency rose from "
        f"{ms0:,.1f} to {ms1:,.1f} ms and the generator kept up: the table grew from {rows0:,} to {rows1:,} rows, and "
        "Azurite filters the whole table for every query (Azure seeks on PartitionKey and RowKey). The served rates "
        "fell with the emulator, not the design: the demand offered, and the ratios against the targets in the first "
        "third, are still the design's"
    )
    return Finding(
        kind=K.EMULATOR_SLOWED, partition=None, op_class=slow.op_class, message=message, remedy=REMEDIES[K.EMULATOR_SLOWED]
    )


def assess(results: Results) -> Results:
    """Set each row's finding and the results' findings list; returns ``results``."""
    findings: list[Finding] = []
    worst: dict[str, int] = {}
    open_loop = results.open_loop
    for row in results.partitions:
        if row.partition == OTHER:
            row.finding = ""  # many partitions together: the per-partition target does not apply
            continue
        row.finding = level(row.judged(open_loop)[1])
        if row.op_class != OpClass.ALL:
            worst[row.partition] = max(worst.get(row.partition, 0), _ORDER[row.finding])
    window, steady = results.run.peak_window_s, results.run.steady_seconds > 0
    hottest = results.hottest()
    for row in results.partitions:
        if row.partition == OTHER:
            continue
        if row.op_class == OpClass.ALL and _ORDER[row.finding] <= worst.get(row.partition, 0):
            continue  # the total says nothing the op classes did not
        if row.finding == K.COOL and row.partition not in hottest:
            continue  # the hottest partition is COOL: so is every other, no need to list them
        what = "GET and PUT together" if row.op_class == OpClass.ALL else row.op_class
        load = _load(row, window, open_loop, steady=steady) + _not_the_budget(results, "partition")
        findings.append(_finding(row.finding, f"{what} on partition {row.partition!r}: {load}", row))

    account = results.account
    account.finding = level(account.judged(open_loop)[1])
    if account.finding != K.COOL:
        said = f"account: {_load(account, window, open_loop, 'account', steady)}{_not_the_budget(results, 'account')}"
        findings.append(_finding(account.finding, said, remedy=ACCOUNT_REMEDIES[account.finding]))
    findings += _unserved(results)
    findings += _unsent(results)

    for row in results.rows():
        if row.op_class == OpClass.ALL:
            continue
        throttled_errors = _throttled_failures(row)
        if row.throttled or throttled_errors:
            findings.append(_finding(K.THROTTLED, throttled_message(results, [row]), row, _throttled_remedy(row)))
        other = {code: n for code, n in row.errors.items() if code not in THROTTLING_CODES}
        if other:
            codes = ", ".join(f"{code} x{n:,}" for code, n in sorted(other.items(), key=lambda kv: -kv[1]))
            findings.append(
                _finding(
                    K.ERRORS,
                    (
                        f"{row.op_class} on {row.partition!r}: {sum(other.values()):,} of {row.requests:,} "
                        f"operations failed ({codes})"
                    ),
                    row,
                    _causes(other),
                )
            )

    task_errors = results.workload.get("task_errors", [])
    if task_errors:
        raised = ", ".join(f"{e['error']} x{e['count']:,}" for e in task_errors[:3])
        total = sum(e["count"] for e in task_errors)
        findings.append(_finding(K.ERRORS, f"the users' tasks raised {total:,} exceptions ({raised})", remedy=TASK_ERRORS))

    for which, average, pegged, seconds in generator_bound(results):
        findings.append(
            _finding(
                K.GENERATOR_BOUND,
                (
                    f"{which} used {average:.0f}% of a core on average in the steady phase, at or above "
                    f"{GENERATOR_CPU_PERCENT:.0f}% in {pegged} of {seconds} seconds: served figures are limited by the client"
                ),
            )
        )
    for which, average, pegged, seconds in servers_bound(results):
        findings.append(
            _finding(
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
            findings.append(_finding(K.EMULATOR_BOUND, f"the emulator saturated (its CPU was not read here): {reason}"))
        findings += [_slowed(slowdown) for slowdown in emulator_slowed(results)]
    findings += _ramp(results)
    for lost in results.workers.get("lost", []):
        since = lost.get("last_report_s")
        findings.append(
            _finding(
                K.WORKER_LOST,
                (
                    f"worker {lost['worker']} went missing at {lost['lost_at_s']} s"
                    + (
                        f" (last report at {since} s): seconds from {since} s on lack its share"
                        if since is not None
                        else ": it never reported, so the whole run lacks its share"
                    )
                ),
            )
        )
    findings += _outage_findings(results)
    lost = target_lost(results)
    if lost:
        since, failed = lost
        findings.append(
            _finding(
                K.TARGET_LOST,
                f"the target stopped answering at {since} s: every one of the {failed:,} operations from then to the end "
                "failed without an answer (refused, reset or timed out)",
            )
        )
    for step in results.incomplete:
        findings.append(_finding(K.INCOMPLETE, f"{step['step']} failed at {step['at_s']} s: {step['error']}"))
    integrity = results.integrity
    if integrity.get("lost"):
        findings.append(
            _finding(
                K.LOST_WRITES,
                (
                    f"{integrity['lost']:,} of {integrity['acknowledged_writes']:,} acknowledged writes are not in the table as "
                    f"acknowledged, e.g. {integrity['lost_examples'][:2]}"
                ),
            )
        )
    if results.ceiling:
        findings.append(_ceiling(results.ceiling, results.run.partition_target))
    findings += checklist.findings(results)
    results.findings = findings
    return results


@dataclass(frozen=True)
class FindingCheck:
    """Fails when a finding of ``kind`` occurred (``--fail-on kind``)."""

    kind: FindingKind

    def fails(self, results: Results) -> str | None:
        hits = [f for f in results.findings if f.kind == self.kind]
        if not hits:
            return None
        return f"--fail-on {self.kind.lower()}: {len(hits)} {self.kind} finding(s); first: {hits[0].message}"


def checks_for(fail_on: tuple[FindingKind, ...]) -> list[FindingCheck]:
    return [FindingCheck(FindingKind(kind.upper())) for kind in fail_on]


def exit_code(results: Results, checks: list[FindingCheck]) -> tuple[int, list[str]]:
    """Exit 1 when the run itself failed (its target lost, a step missing); else run every check, exit 3 if any
    failed, with all their messages."""
    messages = [m for m in (check.fails(results) for check in checks) if m]
    failures = [f.message for f in results.findings if f.kind in RUN_FAILURES]
    if failures:
        return EXIT_RUN_FAILED, failures + messages
    return (EXIT_CHECK_FAILED if messages else EXIT_OK), messages
