"""PartitionKey designs (the key strategies) and the RowKeys of seeded entities. Their forms on the command line are
read by ``key_specs``; the keys' own rules, checked on the client (Azurite does not enforce Azure's), are
``entities.validate_key``."""

from __future__ import annotations

import random
import time
import uuid
from typing import Any

import numpy as np

from ..exit_codes import UsageError
from ..service.entities import validate_key
from .skew import Skew, parse_skew

__all__ = ["AppendOnly", "Guid", "HashPrefix", "KeySet", "KeyStrategy", "PrependOnly", "Single", "Timestamp", "row_key"]


def row_key(index: int) -> str:
    """Zero-padded so that lexical order (the service's) equals numeric order."""
    return f"{index:010d}"


# --- key strategies ---------------------------------------------------------------------------

_TIME_TOKENS = (("yyyy", "%Y"), ("MM", "%m"), ("dd", "%d"), ("HH", "%H"), ("mm", "%M"), ("ss", "%S"))
_SEED_EPOCH = 1_767_225_600  # 2026-01-01T00:00:00Z: seeded timestamp keys are that many seconds in


def _strftime(fmt: str) -> str:
    fmt = fmt.replace("%", "%%")  # the user's text is literal: only the tokens are formatted
    for token, code in _TIME_TOKENS:
        fmt = fmt.replace(token, code)
    return fmt


class KeyStrategy:
    """Which PartitionKey each operation addresses, and the keys of the seeded entities.

    The seeded entities are a pure function of (strategy, count, seed): the master seeds them,
    and every user (on any worker) can address them without being sent a list.
    """

    per_entity = False  # True: every new entity gets a PartitionKey of its own

    def __init__(
        self, spec: str, *, seed: int | str | None = None, skew: str = "uniform", stream: int | str = 0, rows: str = ""
    ) -> None:
        self.spec = spec
        self.rows = rows  # before every seeded RowKey: a run's own prefix in a reused table
        self.seed = seed  # fixes the seeded keys
        self.skew_spec = skew
        self.rng = random.Random(f"{seed}:{stream}")  # this user's own accesses, repeatable per stream
        self._skews: dict[int, Skew] = {}

    def row(self, index: int) -> str:
        """The RowKey of seeded row ``index`` under a PartitionKey."""
        return self.rows + row_key(index)

    # the key space
    def keys(self) -> list[str] | None:
        """The fixed set of PartitionKeys, or None when keys are made per entity."""
        return None

    def seeded(self, index: int, count: int) -> tuple[str, str]:
        """(PartitionKey, RowKey) of seeded entity ``index`` of ``count``."""
        keys = self.keys()
        assert keys is not None
        return keys[index % len(keys)], self.row(index // len(keys))

    def new_partition(self) -> str:
        """The PartitionKey a new entity (an insert, a batch) gets."""
        keys = self.keys()
        assert keys is not None
        return keys[self.skew(len(keys)).next()]

    def existing(self, count: int) -> tuple[str, str]:
        """A seeded entity, chosen by the access skew over the key set."""
        keys = self.keys()
        if keys is None:
            return self.seeded(self.skew(count).next(), count)
        k = self.skew(len(keys)).next()
        rows = max(1, -(-(count - k) // len(keys)))  # seeded rows under key k
        return keys[k], self.row(self.rng.randrange(rows))

    def rows_in(self, partition_index: int, count: int) -> int:
        keys = self.keys() or [None]
        return max(0, -(-(count - partition_index) // len(keys)))

    def seeded_rows(self, partition: str, count: int) -> int:
        """How many seeded rows (RowKeys 0 … n-1) ``partition`` holds; 0 where the run cannot tell cheaply."""
        keys = self.keys()
        if keys is None:
            return 0
        if not hasattr(self, "_index"):
            self._index = {key: i for i, key in enumerate(keys)}
        index = self._index.get(partition)
        return 0 if index is None else self.rows_in(index, count)

    # --- the demand per key: the same choices, as probabilities (the simulator's) ----------------

    #: How a per-entity strategy's new keys fall in key order: spread (random), last, first, or clock (a key a period).
    fresh = ""

    def access_shares(self, count: int) -> tuple[list[str], np.ndarray]:
        """(keys, probabilities) of the PartitionKey ``existing(count)`` addresses: the skew's own probabilities."""
        keys = self.keys()
        if keys is None:
            return _by_key([self.seeded(i, count)[0] for i in range(count)], self.skew(count).probabilities())
        return _by_key(keys, self.skew(len(keys)).probabilities())

    def write_shares(self, count: int) -> tuple[list[str], np.ndarray]:
        """(keys, probabilities) of ``existing(count)`` for a write (an upsert, an update): as for a read, unless the
        strategy draws each op class by its own weights (a traffic profile's)."""
        return self.access_shares(count)

    def new_shares(self) -> tuple[list[str], np.ndarray] | None:
        """(keys, probabilities) of ``new_partition``; None when each new entity gets a key of its own (``fresh``)."""
        keys = self.keys()
        return None if keys is None else _by_key(keys, self.skew(len(keys)).probabilities())

    def lives(self) -> tuple[dict[str, tuple[int, int]], int]:
        """Keys asked only for a while: each one's first and last second of a span of that many seconds (a traffic
        profile's); none here (every key all along)."""
        return {}, 0

    def scanned(self, partition: str, count: int, scan_size: int) -> tuple[int, int]:
        """(Rows seeded under ``partition``, at least one; rows a row range scan of up to ``scan_size`` reads there):
        the users' scans, the demand of one never sent, the simulator's."""
        rows = self.seeded_rows(partition, count) or 1
        return rows, min(scan_size, rows)

    def skew(self, n: int) -> Skew:
        if n not in self._skews:
            self._skews[n] = parse_skew(self.skew_spec, n, self.rng.randrange(2**32))
        return self._skews[n]


class Single(KeyStrategy):
    def __init__(self, spec: str, key: str, **kw: Any) -> None:
        super().__init__(spec, **kw)
        self._keys = [validate_key(key)]

    def keys(self) -> list[str]:
        return self._keys

    def access_shares(self, count: int) -> tuple[list[str], np.ndarray]:
        return self._keys, np.ones(1)  # the skew is over its rows

    def existing(self, count: int) -> tuple[str, str]:  # one key: the skew is over its rows
        return self._keys[0], self.row(self.skew(count).next())


class KeySet(KeyStrategy):
    """A fixed set: ``set:N`` (k0000…), ``hash-prefix:N`` (000…, the docs' 3-digit hash prefix), templates."""

    def __init__(self, spec: str, keys: list[str], **kw: Any) -> None:
        super().__init__(spec, **kw)
        self._keys = [validate_key(k, "generated PartitionKey") for k in keys]

    def keys(self) -> list[str]:
        return self._keys


class HashPrefix(KeySet):
    """New entities land on hash(id) % N: uniform over the N prefixes, whatever the skew of reads."""

    def new_partition(self) -> str:
        return self._keys[self.rng.randrange(len(self._keys))]

    def new_shares(self) -> tuple[list[str], np.ndarray]:
        return self._keys, np.full(len(self._keys), 1.0 / len(self._keys))


class PerEntity(KeyStrategy):
    per_entity = True

    def seeded(self, index: int, count: int) -> tuple[str, str]:
        return self.key_at(index), self.row(0)

    def key_at(self, index: int) -> str:
        raise NotImplementedError


class Guid(PerEntity):
    fresh = "spread"

    def key_at(self, index: int) -> str:
        return str(uuid.UUID(int=random.Random(f"{self.seed}:{index}").getrandbits(128), version=4))

    def new_partition(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))


class AppendOnly(PerEntity):
    """Increasing, zero-padded: seeded keys are 0…n-1, new ones follow the clock (ns), strictly up."""

    WIDTH = 20
    sign = 1
    fresh = "last"

    def __init__(self, spec: str, **kw: Any) -> None:
        super().__init__(spec, **kw)
        self._last = 0

    def _encode(self, value: int) -> str:
        return f"{value if self.sign > 0 else 10**self.WIDTH - 1 - value:0{self.WIDTH}d}"

    def key_at(self, index: int) -> str:
        return self._encode(index)

    def new_partition(self) -> str:
        self._last = max(self._last + 1, time.time_ns())
        return self._encode(self._last)


class PrependOnly(AppendOnly):
    """Decreasing: each new key sorts before every earlier one (the first range partition)."""

    sign = -1
    fresh = "first"


class Timestamp(PerEntity):
    """``timestamp:yyyyMMddHHmm`` (a minute's entities share one key) or seconds-first ``ssyyyyMMddHHmm``."""

    fresh = "clock"

    def __init__(self, spec: str, fmt: str, **kw: Any) -> None:
        super().__init__(spec, **kw)
        if not any(token in fmt for token, _ in _TIME_TOKENS):
            raise UsageError("timestamp:FORMAT needs yyyy, MM, dd, HH, mm or ss tokens, e.g. timestamp:ssyyyyMMddHHmm")
        validate_key(fmt, "the format")  # no forbidden characters; then its keys are checked as keys
        self.format = _strftime(fmt)
        try:
            validate_key(self.key_at(0), "a timestamp key")
        except ValueError:  # a character strftime cannot format
            raise UsageError("timestamp:FORMAT holds a character that cannot be formatted") from None

    def key_at(self, index: int) -> str:
        return time.strftime(self.format, time.gmtime(_SEED_EPOCH + index))

    def seeded(self, index: int, count: int) -> tuple[str, str]:
        return self.key_at(index), self.row(index)

    def new_partition(self) -> str:
        return self.key_for(time.time())

    def key_for(self, epoch: float) -> str:
        """The key of a new entity written at ``epoch`` (seconds): the period it falls in."""
        return time.strftime(self.format, time.gmtime(epoch))


def _by_key(keys: list[str], probabilities: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Probabilities per distinct key, keys sorted (indices that make the same key add up)."""
    unique, inverse = np.unique(np.asarray(keys, dtype=object), return_inverse=True)
    return list(unique), np.bincount(inverse, weights=probabilities, minlength=len(unique))
