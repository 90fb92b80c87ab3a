"""``template:TEXT`` PartitionKeys (the docs' composite keys, e.g. ``{event}__{distance:3}``): every combination
of the fields' values, made and checked whole when the option is parsed, counted before it is built."""

from __future__ import annotations

import math
import re
from itertools import product

from ..exit_codes import UsageError

__all__ = ["MAX_TEMPLATE_KEYS", "bucket_key", "template_keys"]

#: ``{name}`` or ``{name:N}`` (N values; ``{name}`` takes 10); ``{:N}`` the values alone, zero-padded to two digits or
#: more (``00`` … ``15``).
_FIELD = re.compile(r"\{(\w*)(?::([0-9]+))?\}")
MAX_TEMPLATE_KEYS = 100_000


def template_keys(template: str) -> list[str]:
    """``{event}__{distance:3}``: every combination of the fields' values (event0…event9 × distance0…distance2)."""
    parts = _FIELD.split(template)  # literal, name, N, literal, name, N, …, literal
    literals, names = parts[0::3], parts[1::3]
    sizes = [int(n or 10) if len(n or "") <= 7 else MAX_TEMPLATE_KEYS + 1 for n in parts[2::3]]
    if any(brace in literal for literal in literals for brace in "{}"):
        raise UsageError(
            "a field is {name}, {name:N} (a name of letters, digits or _) or {:N} (the values alone, zero-padded); "
            "other braces are not allowed"
        )
    if not names:
        raise UsageError("a template needs {name} or {name:N} fields, e.g. template:{event}__{distance:3}")
    if min(sizes) < 1 or math.prod(sizes) > MAX_TEMPLATE_KEYS:
        raise UsageError(f"each field takes N of at least 1, and the template makes at most {MAX_TEMPLATE_KEYS:,} keys")
    keys = []
    for values in product(*(range(n) for n in sizes)):
        fields = (
            f"{name}{value}" if name else f"{value:0{_width(size)}d}"
            for name, value, size in zip(names, values, sizes, strict=True)
        )
        keys.append("".join(literal + field for literal, field in zip(literals, [*fields, ""], strict=True)))
    if len(set(keys)) < len(keys):
        raise UsageError("the template makes one key twice (a field's digits run into the next): separate the fields")
    return keys


def bucket_key(key: str, bucket: int, buckets: int) -> str:
    """Write sharding's one rule, for every remedy and design that spreads a hot key: the bucket as a zero-padded prefix
    (``03-hot``, what ``template:{:N}-hot`` makes), as the docs advise: prefixed keys scatter across the key space at
    once, where suffixed ones (``hot-3``) stay adjacent, in one range partition, until the service splits the range."""
    return f"{bucket:0{_width(buckets)}d}-{key}"


def _width(values: int) -> int:
    """Digits of a zero-padded field of ``values`` values: at least two (``00``), as the docs' prefixes are."""
    return max(2, len(str(values - 1)))
