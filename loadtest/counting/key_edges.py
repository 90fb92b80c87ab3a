"""Where each second's PartitionKeys fall against the keys of the seconds before: at or past the largest (the range
where appended keys land) or at or before the smallest (prepended), whatever the keys' format.

The docs' append-only / prepend-only anti-pattern: with range partitions the last (or first) range takes every new
key, one partition server however many keys ("even if you create small and many partitions"), so that range is
counted here as one: per second, what its keys were asked for and served, and how often its end moved to a new key.
Read a second at a time in time order, before untracked keys fold into the other partitions (``counts.RunCounts.compact``; a
simulation's seconds whole), so a key alive for one second is counted however many keys came and went. The range's
rules are the service's (``service.key_ends``); the results hold its figures (``results.key_order``) and the checklist
and the levels judge them.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..service.key_ends import KeyEnd
from ..service.operations import OpClass
from .buckets import GROUPS, Bucket, BucketKey

__all__ = ["ENDS", "KeyEdges"]

#: The two ends of the key order: where increasing keys land (append-only) and where decreasing ones do.
ENDS = ("append", "prepend")


class _End(KeyEnd):
    """One end, and per second what the keys in its range were asked for and served."""

    def __init__(self, sign: int) -> None:
        super().__init__(sign)
        self.puts = 0  # write requests to keys in the range
        self.seconds, self.asked, self.served, self.throttled = array("q"), array("d"), array("d"), array("d")

    def at(self, keys: Sequence[str], floor: str) -> slice:
        """The sorted ``keys`` in the range from ``floor``."""
        return slice(bisect_left(keys, floor), None) if self.sign > 0 else slice(0, bisect_right(keys, floor))


class KeyEdges:
    """The two ends of the key order, a second at a time (``add_second``), each end's series for the results."""

    def __init__(self) -> None:
        self.ends = {"append": _End(1), "prepend": _End(-1)}
        self.last: int | None = None
        self.puts = 0  # write requests to every key

    def add_second(
        self,
        second: int,
        keys: Sequence[str],
        asked: Sequence[float],
        served: Sequence[float],
        throttled: Sequence[float],
        puts: Sequence[float],
        *,
        fresh: str = "",
    ) -> None:
        """One second's keys, sorted (no group of keys among them), and per key the entities asked for and served, the
        throttled attempts and the write requests. ``fresh``: the end ("append", "prepend") where this second's writes
        each made a key past every one before, though its key is the same (a simulation's one key for them all)."""
        if not len(keys) or (self.last is not None and second <= self.last):
            return  # nothing, or a second read already (a late report: its keys' place against later ones is unknown)
        self.last = second
        asked, served, throttled, puts = (np.asarray(v, dtype=np.float64) for v in (asked, served, throttled, puts))
        self.puts += int(round(float(puts.sum())))
        for name, end in self.ends.items():
            floor = end.floor(second)
            if floor is not None:
                at = end.at(keys, floor)
                wanted, refused = float(asked[at].sum()), float(throttled[at].sum())
                if wanted or refused:
                    end.seconds.append(second)
                    end.asked.append(wanted)
                    end.served.append(float(served[at].sum()))
                    end.throttled.append(refused)
                end.puts += int(round(float(puts[at].sum())))
            end.see(keys[-1] if end.sign > 0 else keys[0], second, fresh=name == fresh)

    # --- a worker's or an engine's, added ---------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        return {
            "puts": self.puts,
            **{
                name: {
                    "moves": end.moves,
                    "puts": end.puts,
                    "key": end.key,
                    "landed": [end.first_landed, end.last_landed] if end.last_landed is not None else None,
                    "seconds": list(end.seconds),
                    "asked": list(end.asked),
                    "served": list(end.served),
                    "throttled": list(end.throttled),
                }
                for name, end in self.ends.items()
            },
        }

    def merge(self, data: Mapping[str, Any] | None) -> None:
        """Add an engine's (each engine ran the workload alone: its ends moved as this one's did, its seconds add)."""
        if not data:
            return
        self.puts += int(data.get("puts", 0))
        for name, end in self.ends.items():
            theirs = data.get(name) or {}
            end.moves = max(end.moves, int(theirs.get("moves", 0)))
            end.puts += int(theirs.get("puts", 0))
            if theirs.get("key") is not None and end.past(theirs["key"]):
                end.key = theirs["key"]
            if theirs.get("landed"):  # the earliest first and the latest last, in the end's own direction
                first, last = theirs["landed"]
                ours = [k for k in (end.first_landed, end.last_landed) if k is not None]
                earliest, latest = (min, max) if end.sign > 0 else (max, min)
                end.first_landed, end.last_landed = earliest([first, *ours]), latest([last, *ours])
            by_second: dict[int, list[float]] = {}
            for i, second in enumerate(end.seconds):
                by_second[second] = [end.asked[i], end.served[i], end.throttled[i]]
            for second, *figures in zip(
                theirs.get("seconds", ()),
                theirs.get("asked", ()),
                theirs.get("served", ()),
                theirs.get("throttled", ()),
                strict=False,
            ):
                mine = by_second.setdefault(int(second), [0.0, 0.0, 0.0])
                for j, value in enumerate(figures):
                    mine[j] += float(value)
            ordered = sorted(by_second.items())
            end.seconds = array("q", [s for s, _ in ordered])
            end.asked, end.served, end.throttled = (array("d", [v[j] for _, v in ordered]) for j in range(3))

    # --- for the results -----------------------------------------------------------------------------

    def series(self, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(seconds, asked, served, throttled) of one end's range, a second each where it had any."""
        end = self.ends[name]
        return (
            np.frombuffer(end.seconds, dtype=np.int64) if len(end.seconds) else np.zeros(0, np.int64),
            *(np.frombuffer(a, dtype=np.float64) if len(a) else np.zeros(0) for a in (end.asked, end.served, end.throttled)),
        )

    def add_buckets(self, buckets: Iterable[tuple[BucketKey, Bucket]]) -> dict[int, dict[str, list[float]]]:
        """Buckets of whole seconds (a second's every partition, groups of keys left out), each second in time order;
        returns what it read, per second and key: [asked, served, throttled, write requests]."""
        seconds: dict[int, dict[str, list[float]]] = {}
        for (second, partition, op_class), bucket in buckets:
            if partition in GROUPS:
                continue
            cell = seconds.setdefault(second, {}).setdefault(partition, [0.0, 0.0, 0.0, 0.0])
            cell[0] += bucket.offered + bucket.unsent
            cell[1] += bucket.entities
            cell[2] += bucket.throttled
            cell[3] += bucket.requests if op_class == OpClass.PUT else 0
        for second in sorted(seconds):
            cells = seconds[second]
            keys = sorted(cells)
            figures = np.array([cells[key] for key in keys]).T
            self.add_second(second, keys, *figures)
        return seconds
