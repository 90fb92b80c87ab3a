"""Entity payloads of a given size, and the service's entity rules checked before sending."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..exit_codes import UsageError

__all__ = [
    "MAX_KEY_BYTES",
    "MAX_PAGE_ENTITIES",
    "EntityShape",
    "batch_bytes",
    "check_batch",
    "entity_bytes",
    "validate_entity",
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
    try:
        size = len(key.encode("utf-16-le"))
    except UnicodeEncodeError:  # a lone surrogate (from undecodable bytes in argv): no UTF-16 string holds it
        raise UsageError(f"{what} {key[:40]!r} is not valid Unicode text: keys are UTF-16 strings") from None
    if size > MAX_KEY_BYTES:
        raise UsageError(f"{what} is {size} bytes in UTF-16: keys hold at most 1 KiB (512 characters)")
    return key


MAX_ENTITY_BYTES = 1024 * 1024
MAX_BATCH_OPERATIONS = 100
MAX_BATCH_BYTES = 4 * 1024 * 1024
MAX_PROPERTIES = 255  # including PartitionKey, RowKey and Timestamp
MAX_PAGE_ENTITIES = 1000  # a query's answer holds at most this many; a continuation token asks for the rest
FILTERED = "n"  # the property the tool adds to every entity: filtered scans select on it


def filtered_value(index: int) -> int:
    """Seeded entity ``index``'s ``n``: spread evenly over 0-99 within every partition, whatever the number of keys
    (``index % 100`` would give a partition of a 4-key set only every fourth value). The high bits of a
    multiplicative hash."""
    return ((index * 2654435761) & 0xFFFFFFFF) * 100 >> 32


#: The payload properties an entity can have: the service's 255, less the 3 system properties and ``n``.
MAX_PAYLOAD_PROPERTIES = MAX_PROPERTIES - 3 - 1
MAX_STRING_CHARS = 32 * 1024  # 64 KiB of UTF-16
_SYSTEM = ("PartitionKey", "RowKey")
_ROW_KEY_CHARS = 10  # the generated RowKeys' length, used to size the payload
_BATCH_PART_OVERHEAD = 512  # multipart headers per operation in a batch body


def _property_bytes(name: str, value: Any) -> int:
    """The docs' sizing: 8 bytes + 2 per name character + the value (strings: 4 + 2 per character)."""
    if isinstance(value, str):
        size = 4 + 2 * len(value)
    elif isinstance(value, (bytes, bytearray)):
        size = 4 + len(value)
    elif isinstance(value, bool):
        size = 1
    elif isinstance(value, (int, float)):
        size = 8
    else:
        size = 16
    return 8 + 2 * len(name) + size


def entity_bytes(entity: Mapping[str, Any]) -> int:
    """An entity's size as the service counts it: 4 + 2 per key character + each property."""
    keys = len(entity.get("PartitionKey", "")) + len(entity.get("RowKey", ""))
    props = sum(_property_bytes(k, v) for k, v in entity.items() if k not in _SYSTEM)
    return 4 + 2 * keys + props


def validate_entity(entity: Mapping[str, Any]) -> None:
    """Raise ``UsageError`` for an entity the service would refuse: keys, size, properties, strings."""
    validate_key(entity.get("PartitionKey"), "PartitionKey")
    validate_key(entity.get("RowKey"), "RowKey")
    count = len([k for k in entity if k not in _SYSTEM]) + 3
    if count > MAX_PROPERTIES:
        raise UsageError(f"an entity has {count} properties with the 3 system ones: at most {MAX_PROPERTIES} are allowed")
    for name, value in entity.items():
        if isinstance(value, str) and len(value) > MAX_STRING_CHARS:
            raise UsageError(
                f"string property {name!r} has {len(value)} characters: at most {MAX_STRING_CHARS} (64 KiB of UTF-16)"
            )
    size = entity_bytes(entity)
    if size > MAX_ENTITY_BYTES:
        raise UsageError(f"an entity of {size} bytes exceeds the 1 MiB ({MAX_ENTITY_BYTES} bytes) the service stores")


@dataclass(frozen=True)
class EntityShape:
    """A payload of ``size`` bytes spread over ``properties`` string properties, built once and reused."""

    MAX_BYTES = MAX_ENTITY_BYTES

    size: int = 1024
    properties: int = 1
    partition_key: str = "hot"
    payload: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    bytes: int = 0  # a seeded entity's size as the service counts it (``size``, or 1 byte more: strings count 2 a character)

    @classmethod
    def for_size(cls, size: int, *, partition_key: str = "hot", properties: int = 0) -> EntityShape:
        """The payload for entities of ``size`` bytes; ``properties`` 0 picks as few as fit 32 K characters.

        Refused (naming the flags) when the entity cannot have that size: below the smallest entity (keys,
        ``n`` and empty properties), or more properties than the service's 255 leave.
        """
        if properties > MAX_PAYLOAD_PROPERTIES:
            raise UsageError(
                f"--properties {properties}: at most {MAX_PAYLOAD_PROPERTIES}: an entity holds {MAX_PROPERTIES} properties, "
                f"PartitionKey, RowKey and Timestamp among them, and the tool adds {FILTERED!r} (filtered scans select on it)"
            )
        fixed = 4 + 2 * (len(partition_key) + _ROW_KEY_CHARS) + _property_bytes(FILTERED, 0)
        if properties == 0:
            properties = max(1, -(-(size - fixed) // (2 * MAX_STRING_CHARS)))
        per_property_overhead = 8 + 2 * len("p000") + 4
        smallest = fixed + properties * per_property_overhead
        if size < smallest:
            raise UsageError(
                f"--entity-size {size}: the smallest entity this run writes is {smallest} bytes (PartitionKey "
                f"{partition_key!r}, a {_ROW_KEY_CHARS}-character RowKey, {FILTERED!r} and {properties} empty string "
                f"propert{'y' if properties == 1 else 'ies'}); give at least {smallest}"
            )
        chars, extra = divmod(-(-(size - smallest) // 2), properties)
        if chars + (1 if extra else 0) > MAX_STRING_CHARS:
            needed = -(-(size - fixed) // (2 * MAX_STRING_CHARS + per_property_overhead))
            raise UsageError(
                f"--entity-size {size} over --properties {properties}: a string property holds at most {MAX_STRING_CHARS} "
                f"characters (64 KiB); give --properties {needed} or more, or 0 to choose"
            )
        payload = {f"p{i:03d}": "x" * (chars + (1 if i < extra else 0)) for i in range(properties)}
        sample = {"PartitionKey": partition_key, "RowKey": "0" * _ROW_KEY_CHARS, FILTERED: 0, **payload}
        validate_entity(sample)
        return cls(size=size, properties=properties, partition_key=partition_key, payload=payload, bytes=entity_bytes(sample))

    def entity(self, partition_key: str, row_key: str, n: int = 0) -> dict[str, Any]:
        """An entity with the payload and ``n`` (0-99), the property filtered scans select on."""
        return {"PartitionKey": partition_key, "RowKey": row_key, FILTERED: n, **self.payload}


def check_batch(operations: list[tuple[str, Mapping[str, Any]]]) -> None:
    """An entity group transaction the service would accept: 1-100 operations, one PartitionKey, <= 4 MiB."""
    if not 1 <= len(operations) <= MAX_BATCH_OPERATIONS:
        raise UsageError(f"a batch of {len(operations)} operations: an entity group transaction holds 1 to 100")
    keys = {entity["PartitionKey"] for _, entity in operations}
    if len(keys) != 1:
        raise UsageError(f"a batch spans {len(keys)} PartitionKeys: an entity group transaction takes one")
    rows = [entity["RowKey"] for _, entity in operations]
    if len(set(rows)) != len(rows):
        raise UsageError("a batch addresses one entity twice: each operation needs its own RowKey")
    size = sum(entity_bytes(entity) + _BATCH_PART_OVERHEAD for _, entity in operations)
    if size > MAX_BATCH_BYTES:
        raise UsageError(f"a batch of about {size / 2**20:.1f} MiB: an entity group transaction holds at most 4 MiB")


def batch_bytes(shape: EntityShape, operations: int) -> int:
    """A conservative estimate of an entity group transaction's body size."""
    return operations * (shape.size + _BATCH_PART_OVERHEAD)
