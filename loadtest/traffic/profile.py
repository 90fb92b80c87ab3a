"""The workload the logs describe, as a traffic profile (``--profile-out traffic.json``): each partition's demand per op
class (the heaviest by name, exactly; the rest as a distribution), the operation mix, the arrival rate over the span
(the day's shape) and the demand that names no partition. Small and versioned; ``simulate --traffic`` replays it.

Demand is what was asked: an operation's first attempt (its client request id's first record), with the entities it
asked for, whatever the service answered.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

from ..buckets import UNATTRIBUTED
from ..exit_codes import UsageError
from ..operations import OpClass

__all__ = ["FORMAT", "HEAVIEST", "MAX_KEYS", "VERSION", "ProfileCounts", "load_profile"]

FORMAT = "partition-stress traffic profile"
VERSION = 1
HEAVIEST = 1000  # partitions written by name; the rest as a distribution of their demand
MAX_KEYS = 500_000  # partitions counted apart while reading; beyond, the lightest half is folded into the distribution
BINS = 1440  # at most this many bins of the arrival rate over the span (a day in minutes)
BIN_SIZES = (1, 10, 60, 300, 600, 3600, 86_400)  # seconds a bin, the first that keeps the span in ``BINS``


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

    def add(self, second: int, operation: str, op_class: str, partition: str, entities: int, requests: int = 1) -> None:
        """Operations' first attempts (``requests`` of them, asking for ``entities`` together) in one second."""
        self.operations[(operation, op_class)] += requests
        self.operation_entities[(operation, op_class)] += entities
        self.seconds[second] += requests
        if partition == UNATTRIBUTED:
            asked = self.unattributed.setdefault(op_class, [0.0, 0.0])
        else:
            per_class = self.partitions.get(partition)
            if per_class is None:
                if len(self.partitions) >= MAX_KEYS:
                    self._fold()
                per_class = self.partitions[partition] = {}
            asked = per_class.setdefault(op_class, [0.0, 0.0])
        asked[0] += requests
        asked[1] += entities

    def _fold(self) -> None:
        """The lightest half of the partitions into the distribution (memory stays bounded at any key count)."""
        totals = sorted((sum(v[0] for v in c.values()), p) for p, c in self.partitions.items())
        for _, partition in totals[: len(totals) // 2]:
            self._into_tail(self.partitions.pop(partition))

    def _into_tail(self, per_class: dict[str, list[float]]) -> None:
        keys, place = self.folded.setdefault(_tail_bin(sum(v[0] for v in per_class.values())), ([0], {}))
        keys[0] += 1
        for op_class, (requests, entities) in per_class.items():
            into = place.setdefault(op_class, [0.0, 0.0])
            into[0] += requests
            into[1] += entities

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
            "partitions": [{"key": partition, "demand": _demand(per_class)} for partition, per_class in ranked[:HEAVIEST]],
            "tail": tail,
            "unattributed": _demand(self.unattributed),
        }

    def write(self, path: Path, **facts: Any) -> Path:
        path.write_text(json.dumps(self.profile(**facts), indent=1) + "\n", encoding="utf-8")
        return path


def _demand(per_class: dict[str, list[float]]) -> dict[str, dict[str, int]]:
    return {c: {"requests": int(r), "entities": int(e)} for c, (r, e) in sorted(per_class.items())}


def load_profile(path: str) -> dict[str, Any]:
    """A profile ``--traffic`` names, checked: one line naming the flag and the rule otherwise."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"--traffic {path}: no such file; write one with loadtest traffic LOGS --profile-out FILE") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UsageError(f"--traffic {path}: not a traffic profile ({type(e).__name__}: {str(e)[:120]})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UsageError(f"--traffic {path}: not a traffic profile (its 'format' must be {FORMAT!r})")
    if data.get("version") != VERSION:
        raise UsageError(f"--traffic {path}: profile version {data.get('version')!r}; this tool reads version {VERSION}")
    try:
        _check(data)
    except (KeyError, TypeError, ValueError, AttributeError, AssertionError) as e:
        raise UsageError(f"--traffic {path}: a traffic profile's field is missing or malformed ({e!r})") from None
    if data["requests"] <= 0:
        raise UsageError(f"--traffic {path}: the profile holds no demand (0 requests)")
    return data


def _check(data: dict[str, Any]) -> None:
    """Every field a replay reads, of its type (raises otherwise)."""
    assert int(data["span"]["start"]) >= 0 and int(data["span"]["seconds"]) > 0 and int(data["rate"]["bin_s"]) > 0
    assert all(int(n) >= 0 for n in data["rate"]["requests"]) and int(data["requests"]) >= 0
    rows = [*data["partitions"], *data["tail"], {"key": "", "demand": data["unattributed"]}]
    for row in rows:
        assert isinstance(row.get("key", ""), str) and int(row.get("keys", 1)) >= 1
        for op_class, asked in row["demand"].items():
            assert op_class in (OpClass.GET, OpClass.PUT) and int(asked["requests"]) >= 0 and int(asked["entities"]) >= 0
