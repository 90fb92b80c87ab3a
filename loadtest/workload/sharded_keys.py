"""Write sharding as a key strategy a run sends: ``sharded:N:KEY[,KEY…]:BASE``, the design ``BASE`` (a fixed key set:
``set:20``, ``template:…``) with each named hot key written over ``N`` buckets, the bucket a prefix (``bucket_key``:
``03-k0000000``), as ``loadtest advise`` recommends it. An operation picks its logical key as ``BASE`` would (its own
skew), then, for a hot key, a bucket at random (the bucket follows from the RowKey, which spreads evenly); the seeded
rows are the design's own, so a read finds them and a scan reads what its bucket holds."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exit_codes import UsageError
from .key_templates import bucket_key
from .keys import KeyStrategy, _by_key

__all__ = ["MOST_BUCKETS", "ShardedKeys", "sharded_keys"]

MOST_BUCKETS = 1000


class ShardedKeys(KeyStrategy):
    """``BASE``'s keys with each of ``hot`` over ``buckets`` prefixed buckets."""

    def __init__(self, spec: str, base: KeyStrategy, hot: list[str], buckets: int, **kw: Any) -> None:
        super().__init__(spec, **kw)
        self.base, self.hot, self.buckets = base, frozenset(hot), buckets
        self._base_keys = base.keys() or []
        self._keys = [k for key in self._base_keys for k in self._spread(key)]
        self._index = {key: i for i, key in enumerate(self._keys)}

    def _spread(self, key: str) -> list[str]:
        return [bucket_key(key, j, self.buckets) for j in range(self.buckets)] if key in self.hot else [key]

    def keys(self) -> list[str]:
        return self._keys

    def _pick(self, key: str) -> str:
        return bucket_key(key, self.rng.randrange(self.buckets), self.buckets) if key in self.hot else key

    def existing(self, count: int) -> tuple[str, str]:
        key = self._pick(self._base_keys[self.skew(len(self._base_keys)).next()])
        return key, self.row(self.rng.randrange(self.rows_in(self._index[key], count) or 1))

    def new_partition(self) -> str:
        return self._pick(self._base_keys[self.skew(len(self._base_keys)).next()])

    def _shares(self) -> tuple[list[str], np.ndarray]:
        """The base design's shares, each hot key's split evenly over its buckets."""
        p = self.skew(len(self._base_keys)).probabilities()
        keys = [k for key in self._base_keys for k in self._spread(key)]
        shares = [
            share / len(self._spread(key)) for key, share in zip(self._base_keys, p, strict=True) for _ in self._spread(key)
        ]
        return _by_key(keys, np.asarray(shares))

    def access_shares(self, count: int) -> tuple[list[str], np.ndarray]:
        return self._shares()

    def new_shares(self) -> tuple[list[str], np.ndarray]:
        return self._shares()


def sharded_keys(spec: str, param: str, kw: dict[str, Any], parse: Any) -> ShardedKeys:
    """``sharded:N:KEY[,KEY…]:BASE`` read whole (``parse`` reads ``BASE`` as ``--key-strategy`` does)."""
    n, _, rest = param.partition(":")
    names, _, base_spec = rest.partition(":")
    if not n.isdigit() or not 2 <= int(n) <= MOST_BUCKETS:
        raise UsageError(f"sharded:N:KEYS:DESIGN takes N from 2 to {MOST_BUCKETS}")
    hot = [name for name in names.split(",") if name]
    if not hot or not base_spec:
        raise UsageError(
            "sharded:N:KEYS:DESIGN names the hot keys (comma-separated) and the design, e.g. sharded:8:k0000000:set:20"
        )
    base = parse(base_spec)
    keys = base.keys()
    if keys is None or isinstance(base, ShardedKeys):
        raise UsageError("sharded:N:KEYS:DESIGN shards a design of fixed keys (set:N, template:…, single:KEY)")
    missing = [name for name in hot if name not in set(keys)]
    if missing:
        raise UsageError(f"sharded:N:KEYS:DESIGN: {missing[0]!r} is not one of the design's keys")
    return ShardedKeys(spec, base, hot, int(n), **kw)
