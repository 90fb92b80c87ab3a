"""Every finding kind declared once: what it means, how much it weighs, its remedy by scope, whether ``--fail-on``
takes it and whether it fails the run. The console's order, the pages' badges, ``--fail-on``'s valid values, the
headline's bounds, the checklist's practices and the docs' tables all read this one table.

Only the kinds' names and the form of a declaration are imported (``finding_names``), and the checklist's kinds
(``checklist_kinds``): the results' form, the detectors (the ``findings`` wing) and the edge (``--fail-on``) all stand
above it. A new kind is its name there, its declaration here (or with the checklist's) and its detector in the wing.
"""

from __future__ import annotations

from .checklist_kinds import CHECKLIST_KINDS
from .finding_names import Act as A
from .finding_names import Cause as C
from .finding_names import FindingKind, K, Kind, S, Severity

__all__ = [
    "BOUNDS",
    "CHECKLIST",
    "FAIL_ON",
    "KINDS",
    "RUN_FAILURES",
    "SEVERITY",
]


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
SIMULATION_ANSWER = (
    "This is the simulation's answer at this --arrival-rate: with the budgets given, the partition layer serves only "
    "this share of the demand, so the design as it stands cannot take it."
)
_RETRY = "Retry 503 ServerBusy, 500 OperationTimedOut and 504 with exponential backoff (never 4xx)"

KINDS: dict[FindingKind, Kind] = {
    K.HOT: Kind(
        severity=S.OVER,
        cause=C.OVER,
        act=A.SPREAD,
        means="the peak (an open loop's: its demand) passed the per-partition (or account) target",
        remedy="Spread the load over more PartitionKeys: finer keys, a 3-digit hash prefix or GUIDs, and no append-only "
        "or prepend-only keys (timestamps, counters), which always land on the last or first range partition.",
        account_remedy=f"The account, not one partition, passed its target: {SPREAD_ACCOUNTS}; or check its target: "
        f"{ACCOUNT_TARGETS}.",
        fail_on=True,
    ),
    K.WARM: Kind(
        severity=S.NEAR,
        cause=C.NEAR,
        act=A.HEADROOM,
        means="at 80 % of the target or more",
        remedy="Leave headroom: above the target the service answers 503 ServerBusy and rebalancing takes minutes, "
        "so plan finer PartitionKeys before the load grows.",
        account_remedy="Leave headroom on the account: over its target the service answers 503 ServerBusy to every "
        "partition ('Operations per second is over the account limit'), so plan more storage accounts before the load "
        f"grows; {ACCOUNT_TARGETS}.",
        fail_on=True,
    ),
    K.COOL: Kind(
        severity=S.CLEAR,
        cause=C.UNDER,
        act=A.NONE,
        means="below 80 % of the target",
        remedy="No action needed: this partition stays under its scalability target at this load.",
    ),
    K.THROTTLED: Kind(
        severity=S.OVER,
        cause=C.THROTTLED,
        act=A.RETRY,
        means="503 ServerBusy, 500 OperationTimedOut or 504 answers, by reason (the partition over its target, the "
        "account over its limit, timed out), each named with what judged it (the throttling emulator's or a "
        "simulation's budget, or Azure's target); the console prints one line per partition",
        remedy=f"{_RETRY}, and spread the load over more PartitionKeys.",
        account_remedy=f"{_RETRY}; the account was over its limit, so {SPREAD_ACCOUNTS} ({ACCOUNT_TARGETS}).",
        fail_on=True,
    ),
    K.ERRORS: Kind(
        severity=S.FAILED,
        cause=C.FAILED,
        act=A.FIX,
        means="other failures, by the service's error code; or exceptions raised by the users' own tasks (each error "
        "and its count)",
        remedy="Read the error codes; the docs: never retry a 4xx answer.",
        fail_on=True,
    ),
    K.EMULATOR_BOUND: Kind(
        severity=S.BOUND,
        cause=C.EMULATOR,
        act=A.REAL_ACCOUNT,
        means="a server the run measured (the embedded Azurite, the throttling emulator, or an emulator on the "
        "loopback port given) used 90 % of a core in the steady phase, named with its figure (an emulator whose CPU "
        "could not be read: served load stopped growing with users while latency climbed)",
        remedy="The emulator, not the design, capped this figure (a lower bound): run against a real account "
        "(--connection-string or --account-url) to measure beyond Azurite's ceiling.",
        fail_on=True,
        bounds="the emulator's own capacity",
    ),
    K.GENERATOR_BOUND: Kind(
        severity=S.BOUND,
        cause=C.CPU,
        act=A.GENERATORS,
        means="a load-generating process (the only one, the master, or a worker it names) used 90 % of a core in the "
        "steady phase; each process reads its own CPU every second",
        remedy="The load generator ran out of CPU: add Locust workers or machines before reading the figures as the service's.",
        bounds="the load generator's CPU",
    ),
    K.TARGET_LOST: Kind(
        severity=S.FAILED,
        cause=C.FAILED,
        act=A.RERUN,
        means="the target stopped answering: every operation from then to the end failed without an answer",
        remedy="Rerun once the target answers again: from that second on the figures count failures, not the "
        "service's throughput; check what stopped it (a killed or stalled emulator or Azurite, the network, the "
        "account's firewall).",
        fails_run=True,
        bounds="a target that stopped answering",
    ),
    K.WORKER_LOST: Kind(
        severity=S.FAILED,
        cause=C.FAILED,
        act=A.RERUN,
        means="a Locust worker stopped reporting mid-run",
        remedy="Rerun for complete figures: the lost worker's unreported seconds are missing, so entities/s after its "
        "last report are too low; check the worker's machine (memory, CPU, network).",
        bounds="a lost Locust worker",
    ),
    K.INCOMPLETE: Kind(
        severity=S.FAILED,
        cause=C.FAILED,
        act=A.RERUN,
        means="a step after the load (the read-back, an output, the upload) failed",
        remedy="The figures measured stand; rerun for what is missing, after fixing what failed.",
        fails_run=True,
        bounds="a step after the load that failed",
    ),
    K.EMULATOR_SLOWED: Kind(
        severity=S.BOUND,
        cause=C.EMULATOR,
        act=A.NOTE,
        means="against Azurite, an op class served 30 % less in the last third of the steady phase than in the first, "
        "while its median latency (in a closed loop, or that of another op class its users run in turn) rose 1.5× or "
        "more, the generator kept up and the table grew 1.3× or more",
        remedy="Read the demand and the ratios, not this run's served rates, as the design's: Azurite filters every row "
        "of the table for a query while Azure seeks on PartitionKey and RowKey, so a growing table slows the emulator; "
        "start from a fresh Azurite per comparison, delete what the run inserts, or run against a real account.",
        fail_on=True,
    ),
    K.OUTAGE: Kind(
        severity=S.OVER,
        cause=C.FAILED,
        act=A.RETRY,
        means="a partition (or the whole target) answered nothing for 2 s or more while its operations waited, timed "
        "out or went unanswered, after it had been served (seconds it was throttled in were answered: THROTTLED's, "
        "unless the partition layer had its range offline, moving it); the seconds, the attempts meanwhile, the "
        "longest wait and the cause the run knows",
        remedy="Expect outages of a few seconds (Azure moves a partition between servers by load balancing, and it is "
        "offline meanwhile): retry timed-out and refused operations with exponential backoff, keep --timeout short "
        "enough to retry within one, and spread the load over finer PartitionKeys before a range needs moving.",
        fail_on=True,
    ),
    K.UNSENT: Kind(
        severity=S.BOUND,
        cause=C.UNSENT,
        act=A.GENERATORS,
        means="an open loop sent under 98 % of its schedule's demand: every lane busy (the concurrency the schedule "
        "needed, by Little's law, against --max-in-flight), a load-generating process out of CPU, or the machine's "
        "cores busy",
        remedy="Give the schedule the concurrency it needs: raise --max-in-flight (operations in flight per Locust "
        "process; each holds a connection and a greenlet) to the figure named, or spread the load over more Locust "
        "workers (--workers) or engines; a generator out of CPU needs more processes, not more users.",
        fail_on=True,
        bounds="the share of its schedule the generator could send",
    ),
    K.RAMP_DOMINATES: Kind(
        severity=S.BOUND,
        cause=C.RUN,
        act=A.RERUN,
        means="the users' ramp took over half the seconds they ran (or never finished): the means and the peak window "
        "cover only what was left",
        remedy="Start the users in a small share of the run: raise -r (users started per second) or lengthen -t, so "
        "the steady phase holds most of it and the peaks are full-window averages.",
        fail_on=True,
        bounds="a ramp that took most of the run",
    ),
    K.KEY_SKEW: Kind(
        severity=S.ADVICE,
        cause=C.SKEW,
        act=A.SPREAD,
        means="the key design spreads the load over several PartitionKeys, but one took a quarter of it or more (and "
        "three times an even share): the whole table reaches the partition target that many times sooner",
        remedy="Spread the hot values themselves: prefix each hot key with a few buckets (write sharding: hash(RowKey) % "
        "N + '-' + key, read across the N; a prefix, as the docs advise, not a suffix: suffixed keys stay adjacent in "
        "one range partition until the service splits it), or choose a key whose values carry the load evenly.",
        fail_on=True,
    ),
    K.UNSERVED: Kind(
        severity=S.OVER,
        cause=C.THROTTLED,
        act=A.SPREAD,
        means="an open loop (or a simulation) served under 95 % of a partition's demand in the steady phase; the "
        "cause measured (throttling, errors, demand never sent, a process or the machine out of CPU, the service's "
        "pace)",
        remedy="Follow the cause measured: where throttling refused the demand, the design cannot take it at this peak, "
        "so spread the partition over more PartitionKeys (the finding sizes the split), or the account over more "
        "storage accounts where its limit refused it; where the generator did not send it (UNSENT, a process out of "
        "CPU), send it whole with more Locust workers or engines; where the emulator's pace held it, measure on a real "
        "account (--connection-string or --account-url) or answer it at any scale with `loadtest simulate` at the same "
        "--arrival-rate.",
        simulated_remedy=f"{SIMULATION_ANSWER} Spread the load over finer PartitionKeys (a hash prefix or GUIDs) where a "
        "partition refused it, across more storage accounts where the account did (the throttled attempts say which), "
        "then simulate again.",
    ),
    K.LOST_WRITES: Kind(
        severity=S.FAILED,
        cause=C.FAILED,
        act=A.FIX,
        means="acknowledged writes missing from the table on read-back",
        remedy="Acknowledged writes are missing from the table: check retries of non-idempotent operations and the "
        "client's handling of timeouts before trusting this design with data.",
    ),
    K.CEILING: Kind(
        severity=S.OUTCOME,
        cause=C.OUTCOME,
        act=A.NOTE,
        means="loadtest ceiling's outcome: the sustained ceiling against the partition target, and what limited it",
        remedy="The limit's remedy (throttling: the design's; the generator, the emulator, the machine: measure beyond them).",
    ),
    **CHECKLIST_KINDS,  # the docs' performance checklist's, declared in ``checklist_kinds``
}
if set(KINDS) != set(FindingKind):  # a new kind is declared here, whole, or the import fails
    raise ImportError(f"finding kinds without a declaration: {sorted(set(FindingKind) - set(KINDS))}")

#: Derived from ``KINDS``: each kind's weight; ``--fail-on``'s kinds; the run's own failures; the checklist's
#: practices (kind -> the docs' remedy); what bounds the figures, in the headline's words.
SEVERITY: dict[FindingKind, Severity] = {kind: k.severity for kind, k in KINDS.items()}
FAIL_ON: tuple[FindingKind, ...] = tuple(kind for kind, k in KINDS.items() if k.fail_on)
RUN_FAILURES: tuple[FindingKind, ...] = tuple(kind for kind, k in KINDS.items() if k.fails_run)
CHECKLIST: dict[FindingKind, str] = {kind: k.remedy for kind, k in KINDS.items() if k.practice}
BOUNDS: dict[FindingKind, str] = {kind: k.bounds for kind, k in KINDS.items() if k.bounds}
