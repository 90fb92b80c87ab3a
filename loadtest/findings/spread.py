"""KEY_SKEW: a key design that spreads the load over several PartitionKeys, while the access skew puts most of it on
one. The hottest key's share sets the table's headroom: it reaches the partition target when the table serves the
target over that share, however many keys there are."""

from __future__ import annotations

from ..counting.buckets import GROUPS
from ..results.finding_names import K
from ..results.form import Finding, Results
from ..service.operations import OpClass
from .common import finding

__all__ = ["MIN_KEYS", "SKEW_SHARE", "SKEW_TIMES_EVEN", "spread"]

MIN_KEYS = 4  # fewer keys: a design that never meant to spread
SKEW_SHARE = 0.25  # the hottest key's share of the load, at least
SKEW_TIMES_EVEN = 3.0  # and at least this many times an even share


def spread(results: Results) -> list[Finding]:
    """The hottest PartitionKey's share of the table's load: its mean entities/s (GET and PUT) against the account's,
    in the steady phase; an open loop's on its demand."""
    keys = int(results.keys.get("distinct", 0) or 0)
    demand = results.open_loop and results.account.offered_mean_eps > 0  # the design's question: what was asked
    per_key: dict[str, float] = {}
    for row in results.partitions:  # GET and PUT added (a partition's ALL row exists only where it had both)
        if row.op_class != OpClass.ALL and row.partition not in GROUPS:
            per_key[row.partition] = per_key.get(row.partition, 0.0) + (row.offered_mean_eps if demand else row.mean_eps)
    everything = results.account.offered_mean_eps if demand else results.account.mean_eps
    if keys < MIN_KEYS or not per_key or everything <= 0:
        return []
    hottest = max(per_key, key=lambda key: (per_key[key], key))
    share = per_key[hottest] / everything
    if share < max(SKEW_SHARE, SKEW_TIMES_EVEN / keys):
        return []
    target, account = results.run.partition_target, results.run.account_target
    even = (
        f"an even spread would reach the account's {account:,}/s target first"
        if target * keys > account
        else f"an even spread would take {target * keys:,}/s"
    )
    what = "demand" if demand else "load"
    message = (
        f"partition {hottest!r} took {share:.0%} of the table's {what} over about {keys:,} PartitionKeys "
        f"touched (an even share: {1 / keys:.0%}): it reaches the {target:,}/s partition target when the table takes "
        f"{target / share:,.0f} entities/s in all, where {even}"
    )
    return [finding(K.KEY_SKEW, message, partition=hottest)]
