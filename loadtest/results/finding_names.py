"""The finding kinds' names (what a finding's ``kind`` holds in results.json, and what ``--fail-on`` names), their
severities, and the form each kind is declared in (``Kind``).

Each is declared whole in ``finding_kinds.KINDS`` (its meaning, severity, remedy; the import fails without one). The
names stand alone, at the ground floor, so that the results' form and the edge take them without the declarations.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, StrEnum

__all__ = ["K", "S", "Act", "Cause", "FindingKind", "Kind", "Severity"]


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
    KEY_SKEW = "KEY_SKEW"


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


class Cause(StrEnum):
    """What a finding measured as the reason for itself."""

    OVER = "over"  # the partition's (or account's) own load passed its target
    NEAR = "near"  # its own load at 80 % of the target or more
    UNDER = "under"  # its own load under 80 % of the target
    THROTTLED = "throttled"  # the service (or the emulator at Azure's budgets) refused attempts: the partition's target
    ACCOUNT = "account"  # refused over the account's limit, or the account's total at those seconds
    NEIGHBOUR = "neighbour"  # refused while adjacent PartitionKeys (one range partition) were hot
    UNEXPLAINED = "unexplained"  # refused, and nothing in the data read explains it (other tables, other services)
    UNSENT = "unsent"  # the generator did not send the demand (lanes busy, out of CPU)
    CPU = "cpu"  # a process of the run, or the machine, out of CPU
    EMULATOR = "emulator"  # the emulator's pace or CPU bounded what it served
    PACE = "pace"  # the service answered slower than the schedule, nothing else measured
    FAILED = "failed"  # operations failed (error codes, exceptions), a worker or the target lost
    APPLICATION = "application"  # 4xx answers: the application's own business (not found, conflicts, conditions)
    PRACTICE = "practice"  # the docs' checklist: how the workload uses the service
    SKEW = "skew"  # one key took most of a spread design's load
    OUTCOME = "outcome"  # what a search found
    RUN = "run"  # how the run was set up (a ramp that took most of it)


class Act(StrEnum):
    """What a finding's remedy asks the user to do."""

    NONE = "none"  # nothing: under every target
    SPREAD = "spread"  # spread the partition over more PartitionKeys (sized where it can be)
    HEADROOM = "headroom"  # plan the spread before the load grows
    ACCOUNTS = "accounts"  # spread across storage accounts (or check the account's target)
    RETRY = "retry"  # retry with backoff, and the spread its cause asks for
    INVESTIGATE = "investigate"  # look at what the data read does not hold (neighbours, other tables, other services)
    GENERATORS = "generators"  # send the demand whole: more processes, workers, engines, lanes
    REAL_ACCOUNT = "real-account"  # measure beyond the emulator: a real account
    RERUN = "rerun"  # figures are missing: rerun after fixing what failed
    FIX = "fix"  # fix the application's (or the tasks') errors
    PRACTICE = "practice"  # the docs' checklist practice
    NOTE = "note"  # read the figures knowing what bounded them


@dataclass(frozen=True, kw_only=True)
class Kind:
    """One finding kind: ``means`` and ``remedy`` as the docs' tables give them (a detector may word a finding's own
    remedy from the figures it saw); ``account_remedy`` where the account, not a partition, is the scope;
    ``simulated_remedy`` for a simulation; ``practice``: the docs' checklist item it stands for; ``fail_on``:
    ``--fail-on`` takes it; ``fails_run``: the run itself failed (exit 1) whatever ``--fail-on`` says; ``bounds``: the
    figures are lower bounds because of it, in the headline's words; ``cause`` and ``act``: what its findings measured
    as their cause and what the remedy asks, unless a detector measured otherwise (``findings.remedies``)."""

    severity: Severity
    means: str
    remedy: str
    cause: Cause = Cause.PRACTICE
    act: Act = Act.PRACTICE
    account_remedy: str = ""
    simulated_remedy: str = ""
    practice: bool = False
    fail_on: bool = False
    fails_run: bool = False
    bounds: str = ""


#: The short names the declarations and the detectors write kinds and severities with.
K, S = FindingKind, Severity
