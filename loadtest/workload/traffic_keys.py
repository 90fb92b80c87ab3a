"""A traffic profile's partitions as a key strategy (``--key-strategy traffic:PROFILE``, what ``loadtest run --traffic``
sets): the keys production logged, each drawn with its share of its op class's requests, so a real run's users ask
of each partition what production asked of it (at the run's own rate).

The named partitions keep their keys (hashed, if the profile was written with ``--hash-keys``); a tail group of N keys
alike in demand becomes N keys of its own (``~tail<requests>-<n>``: production's are not in the profile), each with
the group's share over N. Which op class draws next is set by the operation about to run (``aim``): reads draw by
the partitions' GET requests, writes by their PUT requests. Demand that named no partition (inserts, batches) lands
as the attributed demand of its op class (``spread``) or, ``apart``, on a key of its own per entity, which never runs a
partition hot.
"""

from __future__ import annotations

import bisect
import uuid
from functools import lru_cache
from itertools import accumulate
from pathlib import Path
from typing import Any

import numpy as np

from ..exit_codes import UsageError
from ..limits import MAX_SEED_ENTITIES
from ..service.entities import validate_key
from ..service.operations import OpClass
from .keys import KeyStrategy, _by_key
from .traffic_profile import load_profile, traffic_flag

__all__ = ["ProfiledKeys", "UNATTRIBUTED_MODES", "profiled_keys"]

UNATTRIBUTED_MODES = ("spread", "apart")
TAIL_KEY = "~tail{least}-{n:06d}"  # after every logged key of letters and digits in key order, as the tail's place


Layout = tuple[list[str], dict[OpClass, list[float]], dict[str, tuple[int, int]], int]


def _layout(path: str) -> Layout:
    """The profile's keys (the named ones, then each tail group's), each one's requests per op class, and the lives of
    those asked only for a while within the span's seconds: read once a process for each version of the file (its
    place, size and time), shared by every user."""
    try:
        found = Path(path).stat()
        version: tuple[str, int, int] = (str(Path(path).resolve()), found.st_size, found.st_mtime_ns)
    except (OSError, ValueError):  # no such file (load_profile says so), a NUL in the name
        version = (path, 0, 0)
    return _read_layout(path, version)


@lru_cache(maxsize=8)
def _read_layout(path: str, version: tuple[str, int, int]) -> Layout:
    """``_layout``, read: a run seeds an entity under each key (``MAX_SEED_ENTITIES`` at most), so a profile with more
    is refused before a key is made."""
    try:
        profile = load_profile(path)
    except UsageError as err:  # load_profile's line names --traffic; here the key strategy
        raise UsageError(str(err).removeprefix(f"{traffic_flag(path)}: ")) from None
    count = len(profile["partitions"]) + sum(group["keys"] for group in profile["tail"])
    if count > MAX_SEED_ENTITIES:
        raise UsageError(
            f"the profile's {count:,} partitions (named and in its tail) are over the {MAX_SEED_ENTITIES:,} a run seeds, "
            "an entity under each; simulate --traffic replays any number (its tail in groups)"
        )
    keys: list[str] = []
    asked: dict[OpClass, list[float]] = {OpClass.GET: [], OpClass.PUT: []}
    lives: dict[str, tuple[int, int]] = {}
    for row in profile["partitions"]:
        keys.append(validate_key(row["key"], "a profile's PartitionKey"))
        for op_class, per_key in asked.items():
            per_key.append(float(row["demand"].get(op_class, {}).get("requests", 0)))
        if "alive" in row:
            lives[row["key"]] = (int(row["alive"][0]), int(row["alive"][1]))
    for group in profile["tail"]:
        n = int(group["keys"])
        keys += [TAIL_KEY.format(least=group["requests_at_least"], n=i) for i in range(n)]
        for op_class, per_key in asked.items():
            per_key += [float(group["demand"].get(op_class, {}).get("requests", 0)) / n] * n
    return keys, asked, lives, int(profile["span"]["seconds"])


class ProfiledKeys(KeyStrategy):
    """``traffic:PROFILE[:spread|:apart]``: the profile's partitions, drawn by their share of each op class."""

    def __init__(self, spec: str, path: str, unattributed: str, **kw: Any) -> None:
        super().__init__(spec, **kw)
        self._keys, asked, self._lives, self._span = _layout(path)
        everything = [get + put for get, put in zip(asked[OpClass.GET], asked[OpClass.PUT], strict=True)]
        # an op class none of the logged partitions had: its operations draw by all their requests
        self._weights = {c: (w if sum(w) else everything) for c, w in asked.items()}
        self._cum = {c: list(accumulate(w)) for c, w in self._weights.items()}
        self.apart = unattributed == "apart"
        self._drawing = self._cum[OpClass.GET]

    def keys(self) -> list[str]:
        return self._keys

    def lives(self) -> tuple[dict[str, tuple[int, int]], int]:
        """The profile's keys asked only for a while (a minute's key of a day), and its span's seconds."""
        return self._lives, self._span

    def aim(self, op_class: str) -> None:
        """The op class of the operation about to run: its keys are drawn by that op class's requests."""
        self._drawing = self._cum[OpClass.PUT if op_class == OpClass.PUT else OpClass.GET]

    def _draw(self) -> int:
        cum = self._drawing
        return min(bisect.bisect(cum, self.rng.random() * cum[-1]), len(cum) - 1)

    def existing(self, count: int) -> tuple[str, str]:
        k = self._draw()
        return self._keys[k], self.row(self.rng.randrange(self.rows_in(k, count) or 1))

    def new_partition(self) -> str:
        if self.apart:  # each new entity a key of its own, as an insert's unknown partition may be
            return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        return self._keys[self._draw()]

    def access_shares(self, count: int) -> tuple[list[str], np.ndarray]:
        weights = np.asarray(self._weights[OpClass.GET])
        return _by_key(self._keys, weights / weights.sum())

    def write_shares(self, count: int) -> tuple[list[str], np.ndarray]:
        weights = np.asarray(self._weights[OpClass.PUT])  # a write aims PUT (``aim``): drawn by the PUT requests
        return _by_key(self._keys, weights / weights.sum())

    def new_shares(self) -> tuple[list[str], np.ndarray] | None:
        if self.apart:
            return None
        weights = np.asarray(self._weights[OpClass.PUT])
        return _by_key(self._keys, weights / weights.sum())

    @property
    def fresh(self) -> str:  # type: ignore[override]
        return "spread" if self.apart else ""


def profiled_keys(spec: str, param: str, kw: dict[str, Any]) -> ProfiledKeys:
    """``traffic:PROFILE``, ``traffic:PROFILE:spread`` or ``traffic:PROFILE:apart``."""
    path, mode = param, "spread"
    head, _, tail = param.rpartition(":")
    if head and tail in UNATTRIBUTED_MODES:
        path, mode = head, tail
    if not path:
        raise UsageError("traffic:PROFILE names a traffic profile (loadtest traffic LOGS --profile-out FILE)")
    return ProfiledKeys(spec, path, mode, **kw)
