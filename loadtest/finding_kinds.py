"""Every finding kind declared once: what it means, how much it weighs, its remedy by scope, whether ``--fail-on``
takes it and whether it fails the run. The console's order, the pages' badges, ``--fail-on``'s valid values, the
headline's bounds, the checklist's practices and the docs' tables all read this one table.

Nothing is imported here: the results' form, the detectors (the ``findings`` wing) and the edge (``--fail-on``) all
stand above it. A new kind is its declaration here and its detector in the wing.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, StrEnum

__all__ = [
    "BOUNDS",
    "CHECKLIST",
    "FAIL_ON",
    "KINDS",
    "RUN_FAILURES",
    "SEVERITY",
    "FindingKind",
    "Kind",
    "Severity",
]


class FindingKind(StrEnum):
    HOT = "HOT"
    WARM = "WARM"
    COOL = "COOL"
    THROTTLED = "THROTTLED"
    ERRORS = "ERRORS"
    EMULATOR_BOUND = "EMULATOR_BOUND"
    GENERATOR_BOUND = "GENERATOR_BOUND"
    WORKER_LOST = "WORKER_LOST"
    LOST_WRITES = "LOST_WRITES"
    TARGET_LOST = "TARGET_LOST"
    INCOMPLETE = "INCOMPLETE"
    UNSERVED = "UNSERVED"
    UNSENT = "UNSENT"
    OUTAGE = "OUTAGE"
    EMULATOR_SLOWED = "EMULATOR_SLOWED"
    CEILING = "CEILING"
    SCANS = "SCANS"
    LOW_QUERY_DENSITY = "LOW_QUERY_DENSITY"
    NO_PROJECTION = "NO_PROJECTION"
    UNBATCHED_WRITES = "UNBATCHED_WRITES"
    READ_BEFORE_WRITE = "READ_BEFORE_WRITE"
    APPEND_ONLY = "APPEND_ONLY"
    PREPEND_ONLY = "PREPEND_ONLY"
    RAMP_DOMINATES = "RAMP_DOMINATES"


class Severity(IntEnum):
    """How much a finding weighs, heaviest first: the console lists findings in this order, and every page gives each
    severity its badge colour (``report.badges``)."""

    FAILED = 0  # the run, its data or its operations failed: figures are missing or wrong
    OVER = 1  # a target passed, or the service refused or could not serve the load
    BOUND = 2  # something other than the design bounded the figures (the emulator, the generator, the ramp)
    NEAR = 3  # near a target
    OUTCOME = 4  # what a search found
    ADVICE = 5  # the docs' performance checklist: the design could do better
    CLEAR = 6  # under every target


@dataclass(frozen=True, kw_only=True)
class Kind:
    """One finding kind: ``means`` and ``remedy`` as the docs' tables give them (a detector may word a finding's own
    remedy from the figures it saw); ``account_remedy`` where the account, not a partition, is the scope;
    ``simulated_remedy`` for a simulation; ``practice``: the docs' checklist item it stands for; ``fail_on``:
    ``--fail-on`` takes it; ``fails_run``: the run itself failed (exit 1) whatever ``--fail-on`` says; ``bounds``: the
    figures are lower bounds because of it, in the headline's words."""

    severity: Severity
    means: str
    remedy: str
    account_remedy: str = ""
    simulated_remedy: str = ""
    practice: bool = False
    fail_on: bool = False
    fails_run: bool = False
    bounds: str = ""


K, S = FindingKind, Severity
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
        means="the peak (an open loop's: its demand) passed the per-partition (or account) target",
        remedy="Spread the load over more PartitionKeys: finer keys, a 3-digit hash prefix or GUIDs, and no append-only "
        "or prepend-only keys (timestamps, counters), which always land on the last or first range partition.",
        account_remedy=f"The account, not one partition, passed its target: {SPREAD_ACCOUNTS}; or check its target: "
        f"{ACCOUNT_TARGETS}.",
        fail_on=True,
    ),
    K.WARM: Kind(
        severity=S.NEAR,
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
        means="below 80 % of the target",
        remedy="No action needed: this partition stays under its scalability target at this load.",
    ),
    K.THROTTLED: Kind(
        severity=S.OVER,
        means="503 ServerBusy, 500 OperationTimedOut or 504 answers, by reason (the partition over its target, the "
        "account over its limit, timed out), each named with what judged it (the throttling emulator's or a "
        "simulation's budget, or Azure's target); the console prints one line per partition",
        remedy=f"{_RETRY}, and spread the load over more PartitionKeys.",
        account_remedy=f"{_RETRY}; the account was over its limit, so {SPREAD_ACCOUNTS} ({ACCOUNT_TARGETS}).",
        fail_on=True,
    ),
    K.ERRORS: Kind(
        severity=S.FAILED,
        means="other failures, by the service's error code; or exceptions raised by the users' own tasks (each error "
        "and its count)",
        remedy="Read the error codes; the docs: never retry a 4xx answer.",
        fail_on=True,
    ),
    K.EMULATOR_BOUND: Kind(
        severity=S.BOUND,
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
        means="a load-generating process (the only one, the master, or a worker it names) used 90 % of a core in the "
        "steady phase; each process reads its own CPU every second",
        remedy="The load generator ran out of CPU: add Locust workers or machines before reading the figures as the service's.",
        bounds="the load generator's CPU",
    ),
    K.TARGET_LOST: Kind(
        severity=S.FAILED,
        means="the target stopped answering: every operation from then to the end failed without an answer",
        remedy="Rerun once the target answers again: from that second on the figures count failures, not the "
        "service's throughput; check what stopped it (a killed or stalled emulator or Azurite, the network, the "
        "account's firewall).",
        fails_run=True,
        bounds="a target that stopped answering",
    ),
    K.WORKER_LOST: Kind(
        severity=S.FAILED,
        means="a Locust worker stopped reporting mid-run",
        remedy="Rerun for complete figures: the lost worker's unreported seconds are missing, so entities/s after its "
        "last report are too low; check the worker's machine (memory, CPU, network).",
        bounds="a lost Locust worker",
    ),
    K.INCOMPLETE: Kind(
        severity=S.FAILED,
        means="a step after the load (the read-back, an output, the upload) failed",
        remedy="The figures measured stand; rerun for what is missing, after fixing what failed.",
        fails_run=True,
        bounds="a step after the load that failed",
    ),
    K.EMULATOR_SLOWED: Kind(
        severity=S.BOUND,
        means="against Azurite, an op class served 30 % less in the last third of the steady phase than in the first, "
        "while its median latency rose 1.5× or more, the generator kept up and the table grew 1.3× or more",
        remedy="Read the demand and the ratios, not this run's served rates, as the design's: Azurite filters the whole "
        "table for every query while Azure seeks on PartitionKey and RowKey, so a growing table slows only the "
        "emulator; start from a fresh Azurite per comparison, delete what the run inserts, or run against a real "
        "account.",
        fail_on=True,
    ),
    K.OUTAGE: Kind(
        severity=S.OVER,
        means="a partition (or the whole target) completed nothing for 2 s or more while its operations waited, timed "
        "out or were refused, after it had been served; the seconds, the attempts meanwhile, the longest wait and the "
        "cause the run knows",
        remedy="Expect outages of a few seconds (Azure moves a partition between servers by load balancing, and it is "
        "offline meanwhile): retry timed-out and refused operations with exponential backoff, keep --timeout short "
        "enough to retry within one, and spread the load over finer PartitionKeys before a range needs moving.",
        fail_on=True,
    ),
    K.UNSENT: Kind(
        severity=S.BOUND,
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
        means="the users' ramp took over half the seconds they ran (or never finished): the means and the peak window "
        "cover only what was left",
        remedy="Start the users in a small share of the run: raise -r (users started per second) or lengthen -t, so "
        "the steady phase holds most of it and the peaks are full-window averages.",
        fail_on=True,
        bounds="a ramp that took most of the run",
    ),
    K.UNSERVED: Kind(
        severity=S.OVER,
        means="an open loop (or a simulation) served under 95 % of a partition's demand in the steady phase; the "
        "cause measured (throttling, errors, demand never sent, a process or the machine out of CPU, the service's "
        "pace)",
        remedy="Judge the design on its demand, not on what this run could serve: send it whole (more Locust workers or "
        "engines, a real account with --connection-string or --account-url), or answer it at any scale with "
        "`loadtest simulate` at the same --arrival-rate.",
        simulated_remedy=f"{SIMULATION_ANSWER} Spread the load over finer PartitionKeys (a hash prefix or GUIDs) where a "
        "partition refused it, across more storage accounts where the account did (the throttled attempts say which), "
        "then simulate again.",
    ),
    K.LOST_WRITES: Kind(
        severity=S.FAILED,
        means="acknowledged writes missing from the table on read-back",
        remedy="Acknowledged writes are missing from the table: check retries of non-idempotent operations and the "
        "client's handling of timeouts before trusting this design with data.",
    ),
    K.CEILING: Kind(
        severity=S.OUTCOME,
        means="loadtest ceiling's outcome: the sustained ceiling against the partition target, and what limited it",
        remedy="The limit's remedy (throttling: the design's; the generator, the emulator, the machine: measure beyond them).",
    ),
    # the docs' performance checklist (checklist.py), each kind the practice it stands for
    K.SCANS: Kind(
        severity=S.ADVICE,
        means='more than 10 % of GET requests were partition range or full table scans ("point queries mostly, table '
        'queries sparingly")',
        remedy="Use point queries (PartitionKey and RowKey) for most reads and table or partition range queries "
        "sparingly: denormalize or keep an index entity so that the application reads what it needs by key.",
        practice=True,
        fail_on=True,
    ),
    K.LOW_QUERY_DENSITY: Kind(
        severity=S.ADVICE,
        means="a request name returned under 10 % of the entities it scanned",
        remedy="Make the query scan what it returns: put what it filters on into the PartitionKey or RowKey (or an index "
        "entity), so the key conditions select the rows instead of a property filter.",
        practice=True,
        fail_on=True,
    ),
    K.NO_PROJECTION: Kind(
        severity=S.ADVICE,
        means="half of the GET requests or more read whole entities (no $select) of 512 bytes or more",
        remedy="Ask only for the properties the application uses ($select, select= in azure-data-tables): the service "
        "sends less and the client parses less.",
        practice=True,
        fail_on=True,
    ),
    K.UNBATCHED_WRITES: Kind(
        severity=S.ADVICE,
        means="half of the single writes or more went from one client to one partition in a second that took 10 or "
        "more (one batch would carry them); closed loop only: in an open loop a user is a lane the schedule fills",
        remedy="Send writes to one partition together as an entity group transaction (up to 100 operations, 4 MiB, one "
        "PartitionKey): one request instead of many.",
        practice=True,
        fail_on=True,
    ),
    K.READ_BEFORE_WRITE: Kind(
        severity=S.ADVICE,
        means="10 % or more of inserts and unconditional updates wrote an entity the same client had just read",
        remedy="Write with an upsert (insert-or-merge, insert-or-replace) instead of reading first to decide between "
        "insert and update: one request instead of two.",
        practice=True,
        fail_on=True,
    ),
    K.APPEND_ONLY: Kind(
        severity=S.ADVICE,
        means="half or more of the writes that may create an entity used a PartitionKey after every key written more "
        "than 64 writes earlier",
        remedy="Avoid increasing keys (timestamps, counters): they always land on the last range partition. Prefix them "
        "with a hash, or put the seconds first (ssyyyyMMdd…).",
        practice=True,
        fail_on=True,
    ),
    K.PREPEND_ONLY: Kind(
        severity=S.ADVICE,
        means="half or more of the writes that may create an entity used a PartitionKey before every key written more "
        "than 64 writes earlier",
        remedy="Avoid decreasing keys (reverse timestamps): they always land on the first range partition. Prefix them "
        "with a hash, or put the seconds first.",
        practice=True,
        fail_on=True,
    ),
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
