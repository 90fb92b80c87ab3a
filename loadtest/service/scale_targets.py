"""The service's scalability targets (entities/s, 1 KiB entities), by profile: today's docs and the 2011-2014 docs.

Declared once: ``--profile``, the targets' defaults and the throttling emulator's default budgets read them.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["DEFAULT_PROFILE", "NONE_GIVEN", "PROFILES", "Targets", "judged_against"]


class Targets(NamedTuple):
    partition: int  # entities/s one PartitionKey is served
    account: int  # entities/s the whole account is served


NONE_GIVEN = Targets(0, 0)
PROFILES: dict[str, Targets] = {"current": Targets(2000, 20000), "legacy": Targets(500, 5000)}
DEFAULT_PROFILE = "current"


def judged_against(profile: str, partition: int = 0, account: int = 0, *, emulated: Targets = NONE_GIVEN) -> Targets:
    """The targets a run is judged against: those given (0: not given), else the throttling emulator's budgets where
    they were given (``emulated``: a service scaled down to what the machine serves, whose partitions the run is judged
    by, as ``advise --verify`` scales both alike), else its profile's. The one place a target is defaulted: a run's
    settings and a traffic read both take it from here."""
    default = PROFILES[profile]
    return Targets(partition or emulated.partition or default.partition, account or emulated.account or default.account)
