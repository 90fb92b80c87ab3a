"""The form of results.json, declared once.

Every field of the form has a type: the dataclasses of ``form`` (the run, the partition and account rows, the
findings) and, for the sections kept as plain JSON objects, the ``TypedDict``s here (the workers, the latency and
key figures, the read-back, the workload, the open loop's arrivals, a simulation, a merge's engines, the range splits,
the user classes), ``series_schema``'s (the per-second rows: the timeseries, the load samples, the key ranges),
``ceiling_schema``'s (a ceiling search) and ``mergeable``'s (an engine's whole count). ``typed.reader.read``
checks a results.json against them, by its rules: a key marked ``NotRequired`` came later than its section, fields not
declared here are read past, a section left empty is the section's absence.
"""

# No ``from __future__ import annotations``: the TypedDicts' annotations are the types themselves, read at run time.

from typing import Annotated, Any, Literal, NotRequired, TypedDict

from ..outputs import SERIES_FILE
from ..service.operations import OpClass
from ..typed.reader import Check
from .series_schema import RunSecond

__all__ = [
    "Arrivals",
    "EPOCH_END",
    "EPOCH_WHAT",
    "EngineShare",
    "Epoch",
    "IncompleteStep",
    "Integrity",
    "KeyEnd",
    "KeyOrder",
    "Keys",
    "Latency",
    "Logs",
    "NameCounts",
    "RangeSplit",
    "Retry",
    "RunSettings",
    "SeriesFiles",
    "Simulation",
    "USER_SETTINGS",
    "UserClass",
    "Workers",
    "Workload",
]


#: The first second a ``datetime`` cannot hold: the year 10000.
EPOCH_END = 253_402_300_800
EPOCH_WHAT = "a time in seconds since 1970, before the year 10000"
#: Seconds since 1970, as ``time.time()`` gives them: a date a ``datetime`` can hold.
Epoch = Annotated[float, Check(lambda t: 0 <= t < EPOCH_END, EPOCH_WHAT)]


class SeriesFiles(TypedDict):
    """Where the per-second series is (``series`` beside the form's fields): its file beside results.json, its rows,
    and the spreadsheet's copy."""

    file: Literal[SERIES_FILE]
    rows: Annotated[int, Check(lambda rows: rows >= 0, "a count of rows")]
    csv: NotRequired[str]


# --- the sections kept as JSON objects ------------------------------------------------------------------------------


class LostWorker(TypedDict):
    worker: str
    lost_at_s: RunSecond
    last_report_s: RunSecond | None  # none: it never reported
    index: NotRequired[int | None]  # its users' RowKeys carry it


class Workers(TypedDict):
    """A distributed run's workers: those that reported, those lost."""

    reported: list[str]
    lost: list[LostWorker]


class Latency(TypedDict):
    """One op class's percentiles over the run, ms: end to end, the first attempt's, and an open loop's corrected."""

    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    first_attempt_p50_ms: NotRequired[float]
    first_attempt_p99_ms: NotRequired[float]
    corrected_p50_ms: NotRequired[float]
    corrected_p99_ms: NotRequired[float]
    corrected_max_ms: NotRequired[float]


class Keys(TypedDict):
    """How concentrated the load was."""

    distinct: int  # PartitionKeys touched (an HLL estimate)
    tracked: int  # counted apart (``partial`` of them not in every second: their rates at least, their totals whole)
    top: list[str]
    top1_share: float
    top10_share: float
    estimated_entities: int
    partial: NotRequired[int]  # of the tracked, those not counted apart in every second (``PartitionRow.partial``)


class Retry(TypedDict):
    strategy: str
    backoff_s: float
    attempts_per_operation: float


class Integrity(TypedDict):
    """Acknowledged writes read back after the run."""

    checked: bool
    acknowledged_writes: int
    lost: int
    lost_examples: list[tuple[str, str]]  # (PartitionKey, RowKey)
    unacknowledged: int
    succeeded_earlier: int
    by_lost_workers: NotRequired[int]


class IncompleteStep(TypedDict):
    """A step after the load that failed."""

    step: str
    error: str
    at_s: RunSecond


class NameCounts(TypedDict):
    """What one request name did (``request_evidence``): an engine's ``mergeable`` counts, and the workload's rows."""

    op: str
    op_class: OpClass
    reach: str
    requests: int
    failures: int
    returned: int
    scanned: int
    estimated: int
    unprojected: int
    after_read: int


class WorkloadName(NameCounts):
    name: str
    density: float | None  # rows returned / rows scanned (GET requests that scanned)


class TaskError(TypedDict):
    error: str
    count: int


class Workload(TypedDict):
    """The checklist's evidence: per request name, and over the run."""

    names: list[WorkloadName]
    single_writes: int
    batchable: int
    batchable_per_s: int
    task_errors: NotRequired[list[TaskError]]


class Arrivals(TypedDict):
    """An open loop's schedule: the rate asked, and operations offered, sent and served per second."""

    rate: float
    arrivals: str
    offered_per_s: float
    sent_per_s: float
    served_per_s: float
    scheduled: int
    late: int
    dropped: int
    in_flight: NotRequired["InFlight"]


class InFlight(TypedDict):
    """An open loop's operations in flight over the run: the most at once, the bound, the slots that waited for a lane,
    the mean time an operation held its lane, and what the schedule needed (Little's law)."""

    peak: int
    cap: int
    capped: int
    mean_hold_ms: float
    needed: float


class Replayed(TypedDict):
    """``simulate --traffic``: the traffic profile replayed, at which multiple, over which keys."""

    profile: str  # its path, as given
    scale: float
    unattributed: str  # spread (as the attributed demand of its op class) or apart (a key each)
    span: list[int]  # the logs' first and last second, epoch (UTC)
    start: int
    seconds: int
    logged_operations_per_s: float  # the logs' mean
    mean_operations_per_s: float  # replayed: the logs' mean x scale
    peak_operations_per_s: float
    partitions_named: int
    tail_partitions: int  # the profile's lighter partitions, replayed in groups alike in demand
    unattributed_share: float
    hashed_keys: bool
    split_hot: int  # ways each hot partition was spread (1: as logged)
    split_keys: list[str]  # the partitions spread, each over split_hot keys
    entity_bytes: int


class Simulation(TypedDict):
    """``loadtest simulate``: its model and what it leaves out."""

    model: str
    leaves_out: str
    step_s: float
    budgets: dict[str, Any]  # the emulator's budgets (``emulator.budgets.Budgets``)
    keys: int
    operations: int
    elapsed_s: float
    traffic: NotRequired[Replayed]  # simulate --traffic: the profile replayed


class Logs(TypedDict):
    """``loadtest traffic``: the records read, and what they could not tell (the partition of an insert or a batch,
    a query's or a batch's exact entities) or did not count."""

    sources: list[str]
    forms: dict[str, int]  # records read per log form
    span: list[str]  # the first and the last counted record's time, UTC
    client_request_id: str  # the prefix records were selected by ("" for all)
    hashed_keys: bool  # --hash-keys: every PartitionKey shown is a stable hash of the logged one
    records: int  # counted
    requests: int  # operations: client request ids, each counted at its first attempt
    unattributed: dict[str, int]  # requests whose records name no partition, by operation
    unattributed_share: float  # of the requests
    estimated_share: float  # of the entities served: estimated from sizes at ``entity_bytes`` an entity
    entity_bytes: int
    table_operations: dict[str, int]  # operations on tables or the service, not on entities: not counted
    passed: dict[str, int]  # records read and not counted, by why (outside the window, another client's)
    unreadable: dict[str, int]  # lines that are not a record of their form, by why
    unreadable_examples: dict[str, list[str]]  # up to three of each, redacted
    leaves_out: str
    error_status: NotRequired[
        dict[str, int]
    ]  # each failure's status text and its HTTP status (-1 unknown): 4xx are the application's


class EngineShare(TypedDict):
    """``loadtest merge``: one engine's part of the run, and what its own report said."""

    engine: str
    host: str
    started: str
    duration_s: float
    users: int
    requests: int
    attempts: int
    entities: int
    share: float
    hottest: str
    hottest_peak_eps: float
    hottest_finding: str
    findings: list[str]


class RangeSplit(TypedDict):
    """A range cut in two and both halves moved (seconds from the run's start)."""

    t: RunSecond
    key: str
    offline_until_t: RunSecond
    low: NotRequired[str]
    high: NotRequired[str]


class KeyEnd(TypedDict):
    """One end of the key order (``counting.key_edges``): the range where new keys past every earlier one land, as one
    range partition serves it."""

    moves: int  # seconds in which a key past every earlier one came (the key set's first seconds left out)
    puts: int  # write requests to keys at or past the end
    share: float  # of every write request
    key: str | None  # the end's key at the run's end
    landed: NotRequired[list[str]]  # the first and the last key that landed past the end (none: it never moved)
    peak_eps: float  # served, at the peak window
    offered_peak_eps: float  # asked for
    mean_eps: float
    offered_mean_eps: float
    throttled: int  # throttled attempts
    target: int
    ratio: float  # asked peak (open loop) or served peak / target: as a partition is judged


class KeyOrder(TypedDict):
    """The two ends of the key order: where increasing keys land (``append``) and decreasing ones (``prepend``)."""

    append: KeyEnd
    prepend: KeyEnd


#: The settings a ``TableUser`` subclass may set as class attributes (``None``: the run's), named as the options'
#: dests: what a class's ``design`` may hold.
USER_SETTINGS = ("partition_key", "key_strategy", "row_key_strategy", "skew", "mix", "batch_size", "batch_mix", "scan_size")


class UserClass(TypedDict):
    """A Locust user class that ran (``user_classes.describe``): its Locust figures, and the design it ran with (a
    table user's settings as the report shows them: its class attributes over the run's, those it set named)."""

    name: str
    weight: int
    fixed_count: int
    users: int
    table_user: bool
    own_tasks: bool
    design: dict[str, Any]
    from_class: list[str]


class RunSettings(TypedDict, total=False):
    """The run's settings as the report shows them; those read as numbers are declared (every number
    ``rows.RecordedSettings`` reads), the rest read past."""

    arrival_rate: float
    emulator_partition_rate: float
    emulator_account_rate: float
    emulator_server_rate: float
