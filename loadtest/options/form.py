"""The web UI's start form over the stress test's options: their groups, what the form cannot change, and the
shorter help a field's label shows whole.
"""

from __future__ import annotations

from ..service.retry import RETRY_FORMS
from ..service.scale_targets import PROFILES
from .emulator import EMULATOR_OPTIONS
from .stress import CEILING_OPTIONS

__all__ = ["FORM_FIXED", "FORM_GROUPS", "FORM_HELP"]

#: The web UI's start form, as a user thinks: target and key design, workload, load shape, then what applies only
#: sometimes (the ceiling search's steps with its shape; the emulator's budgets with --emulate-throttling), outputs last.
FORM_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("target and key design", ("partition_key", "key_strategy", "row_key_strategy", "skew", "key_seed", "seed_entities")),
    ("targets", ("profile", "partition_target", "account_target")),
    ("workload", ("mix", "batch_mix", "batch_size", "scan_size", "select", "entity_size", "properties", "retry")),
    ("the service's answers", ("timeout", "client")),
    ("load shape", ("rate", "arrival_rate", "arrivals", "max_in_flight")),
    ("ceiling search", tuple(opt.dest for opt in CEILING_OPTIONS)),
    ("throttling emulator", tuple("emulator_" + opt.dest for opt in EMULATOR_OPTIONS)),
    ("outputs and checks", ("fail_on", "out", "overwrite", "no_report", "junit", "upload", "keep_table", "skip_verify")),
)
#: What the process started with and the form cannot change (the target, the table, the emulator): never a field,
#: except the emulator's budgets, shown while it runs; changing one there is refused.
FORM_FIXED = ("connection_string", "account_url", "table", "reuse_table", "run_id", "engine", "emulate_throttling", "request_log")
FORM_FIXED += tuple("emulator_" + opt.dest for opt in EMULATOR_OPTIONS)
#: The form's help where an option's own is longer than a field's label shows whole (the full help: the options page).
FORM_HELP = {
    "key_strategy": "PartitionKey design: single, set:N, hash-prefix:N, guid, timestamp:FORMAT, template:TEXT…",
    "row_key_strategy": "RowKeys of new entities: sequential, guid, append-only, prepend-only, timestamp:FORMAT",
    "skew": "how accesses spread over the keys: uniform, zipfian[:theta], hotspot:80,20",
    "profile": "scalability targets: "
    + " or ".join(f"{name} ({t.partition}/{t.account} entities/s)" for name, t in PROFILES.items()),
    "mix": "operations and their weights, name=weight pairs: read=60,upsert=20,scan=5…",
    "batch_mix": "operations inside a batch, name=weight pairs: upsert=100",
    "retry": f"retry strategy: {RETRY_FORMS}",
    "timeout": "seconds an attempt waits for the service's answer",
    "client": "fast (the lean REST transport) or sdk (azure-data-tables, as an application sees it)",
    "rate": "operations/s per user, a fixed offered load (0 = closed loop)",
    "arrival_rate": "open loop: operations/s for the whole run, spread over the users (0 = off)",
    "max_in_flight": "open loop: operations in flight at once per Locust process",
    "max_p99": "a step is good while its corrected p99 stays at or under this many ms",
    "fail_on": "exit 3 when any of these findings occurs: never, or e.g. hot,throttled",
    "out": "folder for the report and results (default reports/<run-id>)",
    "junit": "also write the verdict as JUnit XML to this file, for CI",
    "upload": "blob container that receives the outputs (for loadtest merge --from-container)",
    "emulator_burst": "the emulator's seconds of budget each token bucket holds",
    "emulator_server_rate": "the emulator's partition servers' entities/s (0 = per-key and account budgets only)",
    "emulator_page_rows": "the emulator's rows a query's page holds at most (0 = as the table service pages)",
    "emulator_per_key_only": "the emulator's budgets per key only (no range at the ends of the key order)",
    "emulator_timeout_share": "the emulator's share of throttled answers given as 500 OperationTimedOut",
    "emulator_lb_delay": "the emulator's seconds a range stays over budget before it is split",
}
