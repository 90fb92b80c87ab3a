"""PartitionKey and RowKey rules, checked on the client: Azurite does not enforce Azure's."""

from __future__ import annotations

import random
import re
import time
import uuid
from collections.abc import Callable
from itertools import count
from typing import Any

from .errors import UsageError
from .skew import Skew, parse_skew

__all__ = [
    "MAX_KEY_BYTES",
    "ROW_KEY_STRATEGIES",
    "STRATEGIES",
    "KeyStrategy",
    "key_strategy",
    "row_key",
    "row_key_maker",
    "validate_key",
]

#: Keys are strings of at most 1 KiB; the service stores them as UTF-16 (512 BMP characters).
MAX_KEY_BYTES = 1024
_FORBIDDEN = re.compile(r"[/\\#?\x00-\x1f\x7f-\x9f]")


def validate_key(key: str, what: str = "PartitionKey") -> str:
    """Return ``key`` if the service accepts it, else raise ``UsageError`` naming the rule."""
    if key is None:
        raise UsageError(f"{what} must be a string; empty is allowed, null is not")
    bad = _FORBIDDEN.search(key)
    if bad:
        raise UsageError(f"{what} {key[:40]!r} contains {bad.group()!r}: keys may not contain / \\ # ? or control characters")
    size = len(key.encode("utf-16-le"))
    if size > MAX_KEY_BYTES:
        raise UsageError(f"{what} is {size} bytes in UTF-16: keys hold at most 1 KiB (512 characters)")
    return key


def row_key(index: int) -> str:
    """Zero-padded so that lexical order (the service's) equals numeric order."""
    return f"{index:010d}"


# --- key strategies ---------------------------------------------------------------------------

_TIME_TOKENS = (("yyyy", "%Y"), ("MM", "%m"), ("dd", "%d"), ("HH", "%H"), ("mm", "%M"), ("ss", "%S"))
_SEED_EPOCH = 1_767_225_600  # 2026-01-01T00:00:00Z: seeded timestamp keys are that many seconds in


def _strftime(fmt: str) -> str:
    for token, code in _TIME_TOKENS:
        fmt = fmt.replace(token, code)
    return fmt


class KeyStrategy:
    """Which PartitionKey each operation addresses, and the keys of the seeded entities.

    The seeded entities are a pure function of (strategy, count, seed): the master seeds them,
    and every user (on any worker) can address them without being sent a list.
    """

    per_entity = False  # True: every new entity gets a PartitionKey of its own

    def __init__(self, spec: str, *, seed: int | str | None = None, skew: str = "uniform", stream: int | str = 0) -> None:
        self.spec = spec
        self.seed = seed  # fixes the seeded keys
        self.skew_spec = skew
        self.rng = random.Random(f"{seed}:{stream}")  # this user's own accesses, repeatable per stream
        self._skews: dict[int, Skew] = {}

    # the key space
    def keys(self) -> list[str] | None:
        """The fixed set of PartitionKeys, or None when keys are made per entity."""
        return None

    def seeded(self, index: int, count: int) -> tuple[str, str]:
        """(PartitionKey, RowKey) of seeded entity ``index`` of ``count``."""
        keys = self.keys()
        assert keys is not None
        return keys[index % len(keys)], row_key(index // len(keys))

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
        return keys[k], row_key(self.rng.randrange(rows))

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

    def existing(self, count: int) -> tuple[str, str]:  # one key: the skew is over its rows
        return self._keys[0], row_key(self.skew(count).next())


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


class PerEntity(KeyStrategy):
    per_entity = True

    def seeded(self, index: int, count: int) -> tuple[str, str]:
        return self.key_at(index), row_key(0)

    def key_at(self, index: int) -> str:
        raise NotImplementedError


class Guid(PerEntity):
    def key_at(self, index: int) -> str:
        return str(uuid.UUID(int=random.Random(f"{self.seed}:{index}").getrandbits(128), version=4))

    def new_partition(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))


class AppendOnly(PerEntity):
    """Increasing, zero-padded: seeded keys are 0…n-1, new ones follow the clock (ns), strictly up."""

    WIDTH = 20
    sign = 1

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


class Timestamp(PerEntity):
    """``timestamp:yyyyMMddHHmm`` (a minute's entities share one key) or seconds-first ``ssyyyyMMddHHmm``."""

    def __init__(self, spec: str, fmt: str, **kw: Any) -> None:
        super().__init__(spec, **kw)
        if not any(token in fmt for token, _ in _TIME_TOKENS):
            raise UsageError(f"--key-strategy {spec!r}: the format needs yyyy, MM, dd, HH, mm or ss tokens")
        self.format = _strftime(fmt)

    def key_at(self, index: int) -> str:
        return time.strftime(self.format, time.gmtime(_SEED_EPOCH + index))

    def seeded(self, index: int, count: int) -> tuple[str, str]:
        return self.key_at(index), row_key(index)

    def new_partition(self) -> str:
        return time.strftime(self.format, time.gmtime())


def _template_keys(spec: str, template: str) -> list[str]:
    """``{event}__{distance}``: each ``{name}`` or ``{name:N}`` takes N values (default 10): name0…"""
    fields = re.findall(r"\{(\w+)(?::(\d+))?\}", template)
    if not fields:
        raise UsageError(
            f"--key-strategy {spec!r}: a template needs {{name}} or {{name:N}} fields, e.g. template:{{event}}__{{distance}}"
        )
    keys = [template]
    for name, n in fields:
        size = int(n or 10)
        keys = [k.replace(f"{{{name}{':' + n if n else ''}}}", f"{name}{i}", 1) for k in keys for i in range(size)]
        if len(keys) > 100_000:
            raise UsageError(f"--key-strategy {spec!r}: the template makes over 100,000 keys")
    return keys


STRATEGIES = (
    "single[:KEY]",
    "set:N",
    "hash-prefix:N",
    "guid",
    "append-only",
    "prepend-only",
    "timestamp:FORMAT",
    "template:TEXT",
)


def key_strategy(
    spec: str, *, default_key: str = "hot", seed: int | str | None = None, skew: str = "uniform", stream: int | str = 0
) -> KeyStrategy:
    """Parse ``--key-strategy``; raises ``UsageError`` naming the valid strategies."""
    name, _, param = spec.strip().partition(":")
    kw: dict[str, Any] = {"seed": seed, "skew": skew, "stream": stream}
    parse_skew(skew, 2)  # validate the skew at the edge
    if name == "single":
        return Single(spec, param or default_key, **kw)
    if name in ("set", "hash-prefix"):
        if not param.isdigit() or not 1 <= int(param) <= (1000 if name == "hash-prefix" else 1_000_000):
            bound = "1 to 1000" if name == "hash-prefix" else "1 to 1000000"
            raise UsageError(f"--key-strategy {spec!r}: {name}:N takes N from {bound}")
        if name == "set":
            return KeySet(spec, [f"k{i:07d}" for i in range(int(param))], **kw)
        return HashPrefix(spec, [f"{i:03d}" for i in range(int(param))], **kw)
    if name == "guid" and not param:
        return Guid(spec, **kw)
    if name == "append-only" and not param:
        return AppendOnly(spec, **kw)
    if name == "prepend-only" and not param:
        return PrependOnly(spec, **kw)
    if name == "timestamp" and param:
        return Timestamp(spec, param, **kw)
    if name == "template" and param:
        return KeySet(spec, _template_keys(spec, param), **kw)
    raise UsageError(f"--key-strategy {spec!r}: valid strategies: {', '.join(STRATEGIES)}")


ROW_KEY_STRATEGIES = ("sequential", "guid", "append-only", "prepend-only", "timestamp:FORMAT")


def row_key_maker(spec: str, *, prefix: str = "", seed: int | str | None = None) -> Callable[[], str]:
    """RowKeys for new entities, unique per maker: ``sequential`` (prefix + counter) or a key strategy's form."""
    counter = count(1)
    if spec == "sequential":
        return lambda: f"{prefix}{next(counter):010d}"
    name = spec.partition(":")[0]
    if name not in ("guid", "append-only", "prepend-only", "timestamp"):
        raise UsageError(f"--row-key-strategy {spec!r}: valid strategies: {', '.join(ROW_KEY_STRATEGIES)}")
    strategy = key_strategy(spec, seed=seed)
    if name == "timestamp":  # many entities a second: keep them apart, in time order
        return lambda: f"{strategy.new_partition()}-{prefix}{next(counter):010d}"
    return strategy.new_partition
