"""A traffic profile's counts as the records are read (``workload.traffic_profile`` is its form): each operation's demand by
partition and op class, the operation mix, the requests a second, the demand that names no partition; written as a
profile, or handed whole to a ``--jobs`` parent that adds its shards'.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

from ..counting.buckets import UNATTRIBUTED
from ..counting.phases import PEAK_WINDOW_S
from ..workload.traffic_profile import BIN_SIZES, BINS, FORMAT, VERSION

__all__ = ["HEAVIEST", "MAX_KEYS", "ProfileCounts"]

HEAVIEST = 1000  # partitions written by name; the rest as a distribution of their demand
MAX_KEYS = 500_000  # partitions counted apart while reading; beyond, the lightest half is folded into the distribution


def _tail_bin(requests: float) -> int:
    """A partition's place in the distribution: its requests' power of two (keys alike in demand, alike in the model)."""
    return int(math.log2(max(requests, 1.0)))


class ProfileCounts:
    """Each operation's demand as the records are read (``add``), written as a profile (``write``)."""

    def __init__(self) -> None:
        self.partitions: dict[str, dict[str, list[float]]] = {}  # partition -> op class -> [requests, entities]
        # tail bin -> ([keys], op class -> [requests, entities])
        self.folded: dict[int, tuple[list[int], dict[str, list[float]]]] = {}
        self.operations: Counter[tuple[str, str]] = Counter()  # (operation, op class) -> requests
        self.operation_entities: Counter[tuple[str, str]] = Counter()
        self.unattributed: dict[str, list[float]] = {}  # op class -> [requests, entities]
        self.seconds: Counter[int] = Counter()  # second -> requests
        self.alive: dict[str, list[int]] = {}  # partition -> [its first second, its last]

    def add(self, second: int, operation: str, op_class: str, partition: str, entities: int, requests: int = 1) -> None:
        """Operations' first attempts (``requests`` of them, asking for ``entities`` together) in one second."""
        self.operations[(operation, op_class)] += requests
        self.operation_entities[(operation, op_class)] += entities
        self.seconds[second] += requests
        if partition == UNATTRIBUTED:
            _add(self.unattributed, op_class, requests, entities)
            return
        _add(self._partition(partition), op_class, requests, entities)
        life = self.alive.get(partition)
        if life is None:
            self.alive[partition] = [second, second]
        else:
            life[0], life[1] = min(life[0], second), max(life[1], second)

    def _partition(self, partition: str) -> dict[str, list[float]]:
        """A partition's demand by op class (made if new; the lightest half folded first where ``MAX_KEYS`` are)."""
        per_class = self.partitions.get(partition)
        if per_class is None:
            if len(self.partitions) >= MAX_KEYS:
                self._fold()
            per_class = self.partitions[partition] = {}
        return per_class

    def _fold(self) -> None:
        """The lightest half of the partitions into the distribution (memory stays bounded at any key count)."""
        totals = sorted((sum(v[0] for v in c.values()), p) for p, c in self.partitions.items())
        for _, partition in totals[: len(totals) // 2]:
            self._into_tail(self.partitions.pop(partition))
            self.alive.pop(partition, None)

    def _into_tail(self, per_class: dict[str, list[float]]) -> None:
        keys, place = self.folded.setdefault(_tail_bin(sum(v[0] for v in per_class.values())), ([0], {}))
        keys[0] += 1
        for op_class, (requests, entities) in per_class.items():
            _add(place, op_class, requests, entities)

    def profile(self, *, first: float, last: float, hashed: bool, records: int, entity_bytes: int) -> dict[str, Any]:
        """The profile: demand over ``first``..``last`` (epoch seconds)."""
        start, stop = int(first), int(last) + 1
        span = stop - start
        ranked = sorted(self.partitions.items(), key=lambda item: (-sum(v[0] for v in item[1].values()), item[0]))
        for _, per_class in ranked[HEAVIEST:]:
            self._into_tail(per_class)
        requests = sum(self.operations.values())
        bin_s = next((size for size in BIN_SIZES if span / size <= BINS), BIN_SIZES[-1])
        per_bin = [0] * -(-span // bin_s)
        for second, n in self.seconds.items():
            per_bin[(second - start) // bin_s] += n
        tail = [
            {"requests_at_least": 2**place, "keys": keys, "demand": _demand(per_class)}
            for place, ([keys], per_class) in sorted(self.folded.items(), reverse=True)
        ]
        return {
            "format": FORMAT,
            "version": VERSION,
            "span": {"start": start, "seconds": span},
            "records": records,
            "requests": requests,
            "hashed_keys": hashed,
            "entity_bytes": entity_bytes,
            "rate": {"bin_s": bin_s, "requests": per_bin},
            "operations": [
                {
                    "operation": operation,
                    "op_class": op_class,
                    "requests": n,
                    "entities": self.operation_entities[(operation, op_class)],
                }
                for (operation, op_class), n in self.operations.most_common()
            ],
            "partitions": [
                {"key": partition, "demand": _demand(per_class), **self._life(partition, start, span)}
                for partition, per_class in ranked[:HEAVIEST]
            ],
            "tail": tail,
            "unattributed": _demand(self.unattributed),
        }

    def _life(self, partition: str, start: int, span: int) -> dict[str, list[int]]:
        """A key asked only for part of the span: its first and last second in it (``alive``), where that is shorter
        than the span by more than a peak window (a key asked all along has none)."""
        first, last = self.alive.get(partition, (start, start + span - 1))
        first, last = max(first - start, 0), min(last - start, span - 1)
        return {"alive": [first, last]} if last - first + 1 < span - PEAK_WINDOW_S else {}

    def state(self, *, first: float, last: float, records: int) -> dict[str, Any]:
        """Everything counted, exactly, as JSON: what a ``--jobs`` shard hands its parent, which adds the shards'
        (``add_state``) and writes the one profile of them all."""
        return {
            "partitions": self.partitions,
            "folded": [[place, keys[0], per_class] for place, (keys, per_class) in self.folded.items()],
            "operations": [[op, cls, n, self.operation_entities[(op, cls)]] for (op, cls), n in self.operations.items()],
            "unattributed": self.unattributed,
            "seconds": sorted(self.seconds.items()),
            "alive": self.alive,
            "first": first,
            "last": last,
            "records": records,
        }

    def add_state(self, state: dict[str, Any]) -> tuple[float, float, int]:
        """Another read's ``state`` added (a shard's, by its parent): (its first and last record's time, its
        records)."""
        for partition, per_class in state["partitions"].items():
            into = self._partition(partition)
            for op_class, (requests, entities) in per_class.items():
                _add(into, op_class, requests, entities)
        for place, keys, per_class in state["folded"]:
            held, into = self.folded.setdefault(int(place), ([0], {}))
            held[0] += keys
            for op_class, (requests, entities) in per_class.items():
                _add(into, op_class, requests, entities)
        for operation, op_class, n, entities in state["operations"]:
            self.operations[(operation, op_class)] += n
            self.operation_entities[(operation, op_class)] += entities
        for op_class, (requests, entities) in state["unattributed"].items():
            _add(self.unattributed, op_class, requests, entities)
        self.seconds.update({int(second): n for second, n in state["seconds"]})
        for partition, (first, last) in state.get("alive", {}).items():
            life = self.alive.setdefault(partition, [int(first), int(last)])
            life[0], life[1] = min(life[0], int(first)), max(life[1], int(last))
        return state["first"], state["last"], state["records"]

    def write(self, path: Path, **facts: Any) -> Path:
        path.write_text(json.dumps(self.profile(**facts), indent=1) + "\n", encoding="utf-8")
        return path


def _add(per_class: dict[str, list[float]], op_class: str, requests: float, entities: float) -> None:
    """Requests and the entities they asked for added to an op class's [requests, entities]."""
    asked = per_class.setdefault(op_class, [0.0, 0.0])
    asked[0] += requests
    asked[1] += entities


def _demand(per_class: dict[str, list[float]]) -> dict[str, dict[str, int]]:
    return {c: {"requests": int(r), "entities": int(e)} for c, (r, e) in sorted(per_class.items())}
