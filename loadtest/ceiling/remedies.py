"""What can limit a ceiling search, and the remedy for each: one table that the judgement, the verdict and the
report's headline all read.
"""

from __future__ import annotations

from typing import get_args

from ..results.ceiling_schema import Limit
from ..results.finding_names import FindingKind

__all__ = ["LIMITS"]

#: What can limit a search, in the order it is blamed (a step that throttled was the service's answer, whatever
#: else), each with its remedy: a finding's (``finding_kinds.KINDS``) or its own words. "": no step gave way.
LIMITS: dict[Limit, FindingKind | str] = {
    "throttling": FindingKind.HOT,
    "errors": FindingKind.ERRORS,
    "generator": FindingKind.GENERATOR_BOUND,
    "emulator": FindingKind.EMULATOR_BOUND,
    "machine": "The machine ran out of cores before the design gave way (the generator and the emulator share it): run "
    "the generator on another machine, or Locust workers on several, to search higher.",
    "concurrency": FindingKind.UNSENT,
    "latency": "The service slowed before it throttled: read the latency per step, and spread the load over more "
    "PartitionKeys, or raise --max-p99 if that latency is acceptable to the application.",
    "": "Search higher (--ceiling-max) to find where this design gives way.",
}

if set(LIMITS) != set(get_args(Limit)):  # a limit named in the results' form needs its remedy here
    raise ImportError(f"LIMITS has {sorted(LIMITS)}, the results' form names {sorted(get_args(Limit))}")
