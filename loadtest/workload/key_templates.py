"""``template:TEXT`` PartitionKeys (the docs' composite keys, e.g. ``{event}__{distance:3}``): every combination
of the fields' values, made and checked whole when the option is parsed, counted before it is built."""

from __future__ import annotations

import math
import re
from itertools import product

from ..exit_codes import UsageError

__all__ = ["MAX_TEMPLATE_KEYS", "template_keys"]

#: ``{name}`` or ``{name:N}`` (N values; ``{name}`` takes 10).
_FIELD = re.compile(r"\{(\w+)(?::([0-9]+))?\}")
MAX_TEMPLATE_KEYS = 100_000


def template_keys(template: str) -> list[str]:
    """``{event}__{distance:3}``: every combination of the fields' values (event0…event9 × distance0…distance2)."""
    parts = _FIELD.split(template)  # literal, name, N, literal, name, N, …, literal
    literals, names = parts[0::3], parts[1::3]
    sizes = [int(n or 10) if len(n or "") <= 7 else MAX_TEMPLATE_KEYS + 1 for n in parts[2::3]]
    if any(brace in literal for literal in literals for brace in "{}"):
        raise UsageError("a field is {name} or {name:N} (a name of letters, digits or _); other braces are not allowed")
    if not names:
        raise UsageError("a template needs {name} or {name:N} fields, e.g. template:{event}__{distance:3}")
    if min(sizes) < 1 or math.prod(sizes) > MAX_TEMPLATE_KEYS:
        raise UsageError(f"each field takes N of at least 1, and the template makes at most {MAX_TEMPLATE_KEYS:,} keys")
    keys = []
    for values in product(*(range(n) for n in sizes)):
        fields = (f"{name}{value}" for name, value in zip(names, values, strict=True))
        keys.append("".join(literal + field for literal, field in zip(literals, [*fields, ""], strict=True)))
    if len(set(keys)) < len(keys):
        raise UsageError("the template makes one key twice (a field's digits run into the next): separate the fields")
    return keys
