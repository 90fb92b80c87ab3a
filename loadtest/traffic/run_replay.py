"""``loadtest run --traffic PROFILE --scale N``: a traffic profile as a real run's workload options, which the run then
validates and reports as any other (``--key-strategy traffic:PROFILE``, ``--mix``, ``--arrival-rate``…), so what ran is
what its report says, and a ``locust -f`` user can give the same options.

- The keys: the profile's partitions, each drawn with its share of its op class's requests (``profiled_keys``).
- The mix: the logged operations' requests, as the tool's operations: a point query a point read, a query a row range
  scan of the logged entities per query, an insert-or-merge an upsert, an insert-or-replace a replace, an update or a
  merge an update, a delete a delete, a batch a batch of the logged entities per batch.
- The rate: an open loop at the profile's busiest bin's operations/s times ``--scale`` (or ``--arrival-rate``): a
  real run holds one rate; the profile's shape over its span is the simulation's (``loadtest simulate --traffic``).
- The seeding: at least an entity under every key the run may read, so a point read finds one.
- The time: ``-t``, by default the profile's span.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from ..exit_codes import UsageError
from ..limits import MAX_DURATION_S, MAX_SIMULATED_RATE, MAX_USER_ARRIVAL_RATE, MIN_RATE, MIN_RATE_SAID
from ..options.commands import REPLAY_OPTIONS, RUN_OPTIONS
from ..options.option import Option
from ..results.schema import USER_SETTINGS
from ..workload.traffic_keys import ProfiledKeys
from ..workload.traffic_profile import load_profile, traffic_flag

__all__ = ["LOGGED_MIX", "REPLAYED", "replay_path", "replayed"]

#: The tool's operation for each logged entity operation (the op class is the same: reads GET, writes PUT).
LOGGED_MIX = {
    "QueryEntity": "read",
    "QueryEntities": "scan",
    "InsertEntity": "insert",
    "InsertOrMergeEntity": "upsert",
    "InsertOrReplaceEntity": "replace",
    "UpdateEntity": "update",
    "MergeEntity": "update",
    "DeleteEntity": "delete",
    "EntityGroupTransaction": "batch",
}
#: The workload's options, which a replayed profile stands for (refused beside --traffic).
REPLAYED = (*USER_SETTINGS, "seed_entities")
USERS = next(opt for opt in RUN_OPTIONS if opt.dest == "users")
MIX_RESOLUTION = 10_000  # the mix's weights: the operations' shares to one in ten thousand (any logged one at least 1)


def _per_request(profile: dict[str, Any], operation: str, most: int) -> int | None:
    """The logged entities per request of ``operation`` (a batch's operations, a query's rows), 1 to ``most``."""
    rows = [row for row in profile["operations"] if row["operation"] == operation and row["requests"]]
    if not rows:
        return None
    return max(1, min(most, round(sum(r["entities"] for r in rows) / sum(r["requests"] for r in rows))))


def replay_path(ns: argparse.Namespace, own: tuple[Option, ...]) -> str:
    """The profile ``--traffic`` names ("" if none), its company checked for ``loadtest run`` and ``simulate`` alike:
    ``own``, a replay's options, only beside it; the workload's options and ``--scale`` with ``--arrival-rate`` never."""
    path = REPLAY_OPTIONS[0].value(ns)
    if not path:
        alone = [opt.flag for opt in own if getattr(ns, opt.dest, None) not in (None, "")]
        if alone:
            raise UsageError(f"{', '.join(alone)}: only with --traffic FILE (a profile to replay)")
        return ""
    given = [f"--{dest.replace('_', '-')}" for dest in REPLAYED if getattr(ns, dest, None) not in (None, "")]
    if given:
        raise UsageError(
            f"{', '.join(given)}: with --traffic the profile's partitions and mix are the workload; drop "
            f"{'them' if len(given) > 1 else 'it'} or --traffic"
        )
    if getattr(ns, "arrival_rate", None) not in (None, "") and getattr(ns, "scale", None) not in (None, ""):
        raise UsageError("--scale and --arrival-rate: give one (--arrival-rate sets the replay's peak operations/s)")
    return str(path)


def replayed(ns: argparse.Namespace) -> None:
    """With ``--traffic``, set the workload options of ``ns`` (a run's, before they are validated) from the profile;
    a ``UsageError`` naming the flag where the profile or another option cannot be replayed."""
    path = replay_path(ns, REPLAY_OPTIONS[1:])
    if not path:
        return
    if getattr(ns, "rate", None) not in (None, "", 0):
        raise UsageError("--rate: with --traffic the run is an open loop at the profile's rate; give --scale or --arrival-rate")
    _, scale_option, unattributed_option = REPLAY_OPTIONS
    scale, unattributed = scale_option.value(ns), unattributed_option.value(ns)
    profile = load_profile(path)
    mix: dict[str, float] = {}
    for row in profile["operations"]:
        name = LOGGED_MIX.get(row["operation"])
        if name is not None and row["requests"]:
            mix[name] = mix.get(name, 0.0) + row["requests"]
    if not mix:
        raise UsageError(f"{traffic_flag(path)}: the profile logged no entity operation a run can replay")
    total = sum(mix.values())
    ns.mix = ",".join(f"{name}={max(1, round(MIX_RESOLUTION * n / total))}" for name, n in mix.items())
    if (size := _per_request(profile, "EntityGroupTransaction", 100)) is not None:
        ns.batch_size = size
    if (rows := _per_request(profile, "QueryEntities", 1000)) is not None:
        ns.scan_size = rows
    ns.key_strategy = f"traffic:{path}:{unattributed}"
    try:
        keys = len(ProfiledKeys(ns.key_strategy, path, unattributed).keys())  # at least one: load_profile's rule
    except UsageError as err:  # the profile's keys (one a service refuses, more than a run seeds)
        raise UsageError(f"{traffic_flag(path)}: {err}") from None
    ns.seed_entities = str(keys)  # an entity under every key a read may draw
    bins = profile["rate"]
    peak = max(bins["requests"]) / bins["bin_s"]
    if getattr(ns, "arrival_rate", None) in (None, ""):
        if not MIN_RATE <= peak * scale <= MAX_SIMULATED_RATE:
            raise UsageError(
                f"--scale {scale:g}: the profile's peak of {peak:,.6g} operations/s becomes {peak * scale:,.6g}/s; a run "
                f"offers from {MIN_RATE_SAID} to {MAX_SIMULATED_RATE:,}: give a scale between"
            )
        ns.arrival_rate = repr(peak * scale)  # every digit: a low peak is no 0.000 (a closed loop)
    if getattr(ns, "duration", None) in (None, ""):
        ns.duration = f"{min(int(profile['span']['seconds']), MAX_DURATION_S)}s"
    need = math.ceil(float(ns.arrival_rate) / MAX_USER_ARRIVAL_RATE)
    users = getattr(ns, "users", None)
    if users in (None, ""):  # enough users for the rate: each starts at most MAX_USER_ARRIVAL_RATE a second
        ns.users = str(max(USERS.default, need))
    elif int(users) < need:
        raise UsageError(
            f"-u {users}: {traffic_flag(path)} replayed at {float(ns.arrival_rate):,.1f} operations/s (its busiest "
            f"{bins['bin_s']} s at {peak:,.1f}/s) needs -u {need} or more (a user starts at most "
            f"{MAX_USER_ARRIVAL_RATE:,} operations a second)"
        )
