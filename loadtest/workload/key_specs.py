"""The ``--key-strategy`` and ``--row-key-strategy`` forms, read whole into a key strategy or a RowKey maker: a spec
refused here names its flag, the rule and the valid forms, before anything is made."""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import count
from typing import Any

from ..exit_codes import UsageError
from ..service.entities import validate_key
from .key_templates import template_keys
from .keys import AppendOnly, Guid, HashPrefix, KeySet, KeyStrategy, PrependOnly, Single, Timestamp

__all__ = ["ROW_KEY_STRATEGIES", "STRATEGIES", "key_strategy", "row_key_maker", "strategy_list"]

STRATEGIES = tuple(
    "single[:KEY] set:N hash-prefix:N guid append-only prepend-only timestamp:FORMAT template:TEXT traffic:PROFILE "
    "sharded:N:KEYS:DESIGN".split()
)
ROW_KEY_STRATEGIES = ("sequential", "guid", "append-only", "prepend-only", "timestamp:FORMAT")
_PER_ENTITY = ("guid", "append-only", "prepend-only", "timestamp")


def strategy_list(text: str) -> list[str]:
    """A comma list of key strategies (``compare --strategies``), where a ``sharded:N:KEY,KEY:DESIGN`` keeps its own
    commas: a piece after a sharded spec that has not reached its design yet is one of its keys."""
    specs: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if specs and specs[-1].startswith("sharded:") and specs[-1].count(":") < 3:
            specs[-1] += f",{piece}"
        elif piece:
            specs.append(piece)
    return specs


def key_strategy(
    spec: str,
    *,
    default_key: str = "hot",
    seed: int | str | None = None,
    skew: str = "uniform",
    stream: int | str = 0,
    rows: str = "",
) -> KeyStrategy:
    """Parse ``--key-strategy`` whole (every key it makes is checked): an error names the flag and the strategies.
    ``rows``: a prefix before every seeded RowKey (a run's own, in a reused table)."""
    try:
        return _strategy(str(spec), default_key, {"seed": seed, "skew": skew, "stream": stream, "rows": rows})
    except UsageError as err:
        raise UsageError(f"--key-strategy {spec!r}: {err}; valid: {', '.join(STRATEGIES)}") from None


def _strategy(spec: str, default_key: str, kw: dict[str, Any]) -> KeyStrategy:
    name, _, param = spec.strip().partition(":")
    if name == "single":
        return Single(spec, param or default_key, **kw)
    if name in ("set", "hash-prefix"):
        most = 1000 if name == "hash-prefix" else 1_000_000
        if not re.fullmatch(r"[0-9]{1,7}", param) or not 1 <= int(param) <= most:
            raise UsageError(f"{name}:N takes N from 1 to {most}")
        if name == "set":
            return KeySet(spec, [f"k{i:07d}" for i in range(int(param))], **kw)
        return HashPrefix(spec, [f"{i:03d}" for i in range(int(param))], **kw)
    if name == "template":
        return KeySet(spec, template_keys(param), **kw)
    if name == "sharded":  # a fixed design with its hot keys written over buckets (loadtest advise's write sharding)
        from .sharded_keys import sharded_keys

        return sharded_keys(spec, param, kw, lambda inner: _strategy(inner, default_key, kw))
    if name == "traffic":  # a traffic profile's partitions (loadtest run --traffic)
        from .traffic_keys import profiled_keys

        return profiled_keys(spec, param, kw)
    if name in _PER_ENTITY:
        return _per_entity(spec, name, param, kw)
    raise UsageError("unknown strategy")


def _per_entity(spec: str, name: str, param: str, kw: dict[str, Any]) -> KeyStrategy:
    """A key per entity: the forms ``--key-strategy`` and ``--row-key-strategy`` share."""
    if name == "timestamp":
        if not param:
            raise UsageError("timestamp:FORMAT needs a format, e.g. timestamp:ssyyyyMMddHHmm")
        return Timestamp(spec, param, **kw)
    if param:
        raise UsageError(f"{name} takes no parameter")
    return {"guid": Guid, "append-only": AppendOnly, "prepend-only": PrependOnly}[name](spec, **kw)


def row_key_maker(spec: str, *, prefix: str = "", rows: str = "", seed: int | str | None = None) -> Callable[[], str]:
    """RowKeys for new entities, unique per maker: ``sequential`` (prefix + counter) or a key strategy's form.

    ``prefix`` keeps one maker's keys apart from another's; ``rows`` (a run's own prefix in a reused
    table) goes first, so every RowKey the run writes starts with it.
    """
    counter = count(1)
    name, _, param = str(spec).strip().partition(":")
    if name == "sequential" and not param:
        return lambda: f"{rows}{prefix}{next(counter):010d}"
    try:
        if name not in _PER_ENTITY:
            raise UsageError("unknown strategy")
        strategy = _per_entity(spec, name, param, {"seed": seed})
        if isinstance(strategy, Timestamp):  # many entities a second: keep them apart, in time order
            validate_key(f"{rows}{strategy.key_at(0)}-{prefix}{0:010d}", "a RowKey it makes")
            return lambda: f"{rows}{strategy.new_partition()}-{prefix}{next(counter):010d}"
    except UsageError as err:
        raise UsageError(f"--row-key-strategy {spec!r}: {err}; valid: {', '.join(ROW_KEY_STRATEGIES)}") from None
    return (lambda: rows + strategy.new_partition()) if rows else strategy.new_partition
