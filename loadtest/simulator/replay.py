"""A traffic profile (``loadtest traffic --profile-out``) as the simulation's demand: each partition's share of each op
class's operations as the logs counted them, the tail's partitions as groups of keys alike in demand (one key of the
model a group, weighted by how many it stands for), and the arrival rate over the span as a shape per second.

Demand that named no partition (inserts, batches) is spread as the attributed demand of its op class is (``spread``:
it lands on the same keys, the cautious reading), or kept apart (``apart``: each operation a key of its own, which
never runs a partition hot).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..service.operations import OpClass
from .demand import Demand, Stream

__all__ = ["Replay", "replay"]

#: A tail group's key: after every logged key in key order (the tail's own keys are not known).
TAIL_KEY = "\uffff(tail: {keys:,} keys of {least:,}+ requests)"


@dataclass(frozen=True, kw_only=True)
class Replay:
    """The profile's demand, its mean rate (operations/s over the span) and its shape (each second's rate / mean)."""

    demand: Demand
    mean_rate: float
    shape: np.ndarray
    peak_rate: float  # the busiest bin's operations/s


def replay(profile: dict[str, Any], *, unattributed: str, split_hot: int = 1, over: float = 0.0, scale: float = 1.0) -> Replay:
    """The demand ``profile`` describes (``load_profile``'s, checked). ``split_hot``: the docs' remedy, each named
    partition whose entities/s at the profile's peak times ``scale`` are over ``over`` spread over that many keys
    (``key-00``, ``key-01``, …), its demand shared evenly."""
    span = int(profile["span"]["seconds"])
    lived = {row["key"]: tuple(row["alive"]) for row in profile["partitions"] if "alive" in row}
    rows = [(row["key"], 1, row["demand"]) for row in profile["partitions"]]
    if split_hot > 1:
        rows, lived = _split(rows, profile, split_hot, over / scale, lived)
    rows += [
        (TAIL_KEY.format(keys=row["keys"], least=row["requests_at_least"]), row["keys"], row["demand"]) for row in profile["tail"]
    ]
    rows.sort(key=lambda row: row[0])
    keys = [key for key, _, _ in rows]
    weights = np.array([float(n) for _, n, _ in rows])
    lives = np.array([lived.get(key, (0, span - 1)) for key in keys], dtype=float) if lived else None
    total = float(profile["requests"])
    streams: list[Stream] = []
    everything = np.zeros(len(keys))  # every attributed request per key (unattributed demand of a class none has)
    per_class: dict[OpClass, tuple[np.ndarray, np.ndarray]] = {}
    for op_class in (OpClass.GET, OpClass.PUT):
        asked = np.array([float(d.get(op_class, {}).get("requests", 0)) for _, _, d in rows])
        entities = np.array([float(d.get(op_class, {}).get("entities", 0)) for _, _, d in rows])
        everything += asked
        per_class[op_class] = (asked, entities)
    for op_class, (asked, entities) in per_class.items():
        if asked.sum() > 0:  # requests per key of a group: its requests / its keys
            streams.append(
                Stream(
                    op=f"logged {op_class}",
                    op_class=op_class,
                    share=float(asked.sum()) / total,
                    probabilities=(asked / weights) / asked.sum(),
                    entities=np.divide(entities, asked, out=np.ones(len(keys)), where=asked > 0),
                )
            )
        lost = profile["unattributed"].get(op_class)
        if lost and lost["requests"]:
            where = asked if asked.sum() > 0 else everything
            spread = unattributed == "spread" and where.sum() > 0
            streams.append(
                Stream(
                    op=f"unattributed {op_class}",
                    op_class=op_class,
                    share=lost["requests"] / total,
                    probabilities=(where / weights) / where.sum() if spread else np.full(len(keys), 1 / weights.sum()),
                    entities=np.full(len(keys), lost["entities"] / lost["requests"]),
                    keyed=spread,
                )
            )
    per_second = _per_second(profile)
    mean = total / len(per_second)
    return Replay(
        demand=Demand(keys=keys, streams=streams, weights=weights, lives=lives, span_s=span if lived else 0),
        mean_rate=mean,
        shape=per_second / mean,
        peak_rate=float(per_second.max()),
    )


def _per_second(profile: dict[str, Any]) -> np.ndarray:
    """The profile's requests each second of its span (a bin's spread evenly over its seconds)."""
    span, bin_s = int(profile["span"]["seconds"]), int(profile["rate"]["bin_s"])
    bins = np.asarray(profile["rate"]["requests"], dtype=float)
    lengths = np.minimum(bin_s, span - bin_s * np.arange(len(bins)))  # the last bin may be cut short by the span's end
    return np.repeat(bins / lengths, lengths)


def _split(
    rows: list[tuple[str, int, dict]], profile: dict[str, Any], ways: int, over: float, lived: dict[str, tuple]
) -> tuple[list[tuple[str, int, dict]], dict[str, tuple]]:
    """Each row whose entities/s at the profile's peak are over ``over`` as ``ways`` rows of a share each (living as
    the key did)."""
    per_second = _per_second(profile)
    peak_factor = float(per_second.max()) / (float(per_second.sum()) / len(per_second))
    out = []
    for key, weight, demand in rows:
        seconds = lived[key][1] - lived[key][0] + 1 if key in lived else len(per_second)  # its demand within its life
        entities = sum(d["entities"] for d in demand.values()) / seconds * peak_factor
        if entities <= over:
            out.append((key, weight, demand))
            continue
        share = {c: {"requests": d["requests"] / ways, "entities": d["entities"] / ways} for c, d in demand.items()}
        out += [(f"{key}-{i:02}", weight, share) for i in range(ways)]
        lived |= {f"{key}-{i:02}": lived[key] for i in range(ways) if key in lived}
    return out, lived
