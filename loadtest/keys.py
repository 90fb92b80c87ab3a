"""PartitionKey and RowKey rules, checked on the client: Azurite does not enforce Azure's."""

from __future__ import annotations

import re

from .errors import UsageError

__all__ = ["MAX_KEY_BYTES", "validate_key", "row_key"]

#: Keys are strings of at most 1 KiB; the service stores them as UTF-16 (512 BMP characters).
MAX_KEY_BYTES = 1024
_FORBIDDEN = re.compile(r"[/\\#?\x00-\x1f\x7f-\x9f]")


def validate_key(key: str, what: str = "PartitionKey") -> str:
    """Return ``key`` if the service accepts it, else raise ``UsageError`` naming the rule."""
    if key is None:
        raise UsageError(f"{what} must be a string; empty is allowed, null is not")
    bad = _FORBIDDEN.search(key)
    if bad:
        raise UsageError(
            f"{what} {key[:40]!r} contains {bad.group()!r}: keys may not contain / \\ # ? or control characters"
        )
    size = len(key.encode("utf-16-le"))
    if size > MAX_KEY_BYTES:
        raise UsageError(f"{what} is {size} bytes in UTF-16: keys hold at most 1 KiB (512 characters)")
    return key


def row_key(index: int) -> str:
    """Zero-padded so that lexical order (the service's) equals numeric order."""
    return f"{index:010d}"
