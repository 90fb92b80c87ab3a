"""Value parsers for the edge: each takes (flag, raw value) and returns the value, or raises a
``UsageError`` that names the flag, the rule and the valid values. Declared once, used by every option.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from ..exit_codes import UsageError
from ..service.entities import MAX_PROPERTIES
from ..service.operations import MIX_OPERATIONS

__all__ = [
    "parse_timespan",
    "MAX_PROPERTY_NAME",
    "MAX_WEIGHT",
    "Parse",
    "mix",
    "non_negative",
    "number",
    "optional",
    "duration",
    "parse_duration",
    "parse_mix",
    "port",
    "positive",
    "property_names",
    "share",
    "show_mix",
    "switch",
    "text",
    "whole",
]


Parse = Callable[[str, Any], Any]


def text(flag: str, value: Any) -> str:
    return "" if value is None else str(value)


def texts(flag: str, value: Any) -> list[str]:
    """A positional argument given any number of times."""
    return [str(v) for v in value or ()]


def switch(flag: str, value: Any) -> bool:
    return value is True or str(value).lower() in ("true", "1", "yes", "on")


def whole(*, minimum: int = 0, maximum: int | None = None, unit: str = "") -> Parse:
    """A whole number in [minimum, maximum]."""
    bound = f"from {minimum} to {maximum}" if maximum is not None else f"at least {minimum}"

    def parse(flag: str, value: Any) -> int:
        digits = str(value).strip()
        if not re.fullmatch(r"[+-]?[0-9]{1,30}", digits):  # ASCII digits only, and no 4,300-digit int() error
            raise UsageError(f"{flag} {value!r}: must be a whole number {bound}{unit}")
        number = int(digits)
        if number < minimum or (maximum is not None and number > maximum):
            raise UsageError(f"{flag} {number}: must be {bound}{unit}")
        return number

    return parse


#: A TCP port (``--web-port``, ``loadtest emulator --port``).
port = whole(minimum=1, maximum=65535)


def number(rule: str, ok: Callable[[float], bool]) -> Parse:
    """A finite number for which ``ok`` holds; ``rule`` says which (and so the valid values)."""

    def parse(flag: str, value: Any) -> float:
        try:
            parsed = float(str(value).strip())
        except ValueError:
            parsed = math.nan
        if not math.isfinite(parsed) or not ok(parsed):
            raise UsageError(f"{flag} {value!r}: must be {rule}")
        return parsed

    return parse


positive = number("a positive number", lambda n: n > 0)
non_negative = number("a number, 0 or more", lambda n: n >= 0)
share = number("a share from 0 to 1", lambda n: 0 <= n <= 1)


def optional(parse: Parse) -> Parse:
    """Blank means "not given" (``None``): the default comes from elsewhere (a profile)."""
    return lambda flag, value: None if value in (None, "") else parse(flag, value)


#: Locust's time spans (``locust.util.timespan``), read here without importing Locust: importing it patches the
#: process with gevent, which ``loadtest report``, ``merge`` and ``emulator`` must not be (a test holds the two alike).
_TIMESPAN = re.compile(r"(?:(?P<hours>\d+?)h)?(?:(?P<minutes>\d+?)m)?(?:(?P<seconds>\d+?)s)?")


def parse_timespan(text: str) -> int:
    """Seconds of ``20``, ``20s``, ``3m``, ``2h``, ``1h20m``, ``3h30m10s``, as Locust reads them; ``ValueError`` else."""
    if re.fullmatch(r"\d+", text):
        return int(text)
    parts = _TIMESPAN.fullmatch(text) if text else None
    spans = {name: int(value) for name, value in parts.groupdict().items() if value} if parts else {}
    if not spans:
        raise ValueError(f"not a time span: {text!r}")
    return spans.get("hours", 0) * 3600 + spans.get("minutes", 0) * 60 + spans.get("seconds", 0)


def parse_duration(text: str, flag: str, *, maximum: int) -> int:
    """Seconds from Locust's forms (90, 90s, 2m, 1h30m); positive, at most ``maximum``."""
    value = str(text).strip()
    try:
        seconds = parse_timespan(value) if re.fullmatch(r"[0-9hms]{1,20}", value) else 0
    except (ValueError, OverflowError):
        seconds = 0
    if not 0 < seconds <= maximum:
        raise UsageError(
            f"{flag} {text!r}: must be a positive time span of at most {maximum // 3600}h; valid forms: 90, 90s, 2m, 1h30m"
        )
    return seconds


def duration(*, maximum: int, minimum: int = 1, why: str = "") -> Parse:
    """A time span in Locust's forms, from ``minimum`` to ``maximum`` seconds; ``why`` says why the minimum."""

    def parse(flag: str, value: Any) -> int:
        seconds = parse_duration(str(value), flag, maximum=maximum)
        if seconds < minimum:
            rule = why or f"must be at least {minimum} s"
            raise UsageError(f"{flag} {value!r}: {rule}; valid: {minimum}s, 10s, 1m…")
        return seconds

    return parse


MAX_WEIGHT = 1_000_000  # a mix's weights are relative: larger numbers add nothing


def parse_mix(text: str, names: tuple[str, ...] = MIX_OPERATIONS, flag: str = "--mix") -> dict[str, int]:
    """``read=60,upsert=25`` -> weights; unknown or repeated names and all-zero mixes are refused."""
    weights: dict[str, int] = {}
    valid = f"valid operations: {', '.join(names)}"
    for part in filter(None, (p.strip() for p in str(text).split(","))):
        name, sep, weight = (p.strip() for p in part.partition("="))
        if name not in names or name in weights:
            rule = f"{name!r} is given twice: give each operation once" if name in weights else f"unknown operation {name!r}"
            raise UsageError(f"{flag} {text!r}: {rule}; {valid}")
        if not sep or not re.fullmatch(r"[0-9]{1,7}", weight) or int(weight) > MAX_WEIGHT:
            raise UsageError(f"{flag} {text!r}: {part!r} needs a whole weight from 0 to {MAX_WEIGHT}, e.g. {name}=10")
        weights[name] = int(weight)
    if not any(weights.values()):
        raise UsageError(f"{flag} {text!r}: at least one operation needs a weight above 0, e.g. {names[0]}=100; {valid}")
    return {name: weight for name, weight in weights.items() if weight}


def mix(names: tuple[str, ...]) -> Parse:
    """A mix as text (``read=60,upsert=40``) or as a mapping (a TableUser's ``mix`` attribute)."""
    return lambda flag, value: parse_mix(value if isinstance(value, str) else show_mix(value), names, flag)


def show_mix(weights: dict[str, int]) -> str:
    return ",".join(f"{k}={v}" for k, v in weights.items())


#: ``--select``: Table property names follow C# identifiers' rules, up to 255 characters. The system properties
#: may be selected under their own names; another casing of them is refused as the typo it is.
MAX_PROPERTY_NAME = 255
SYSTEM_PROPERTIES = ("PartitionKey", "RowKey", "Timestamp")


def property_names(flag: str, value: Any) -> tuple[str, ...]:
    """``--select``'s comma list of property names."""
    names = tuple(p.strip() for p in str(value).split(",") if p.strip())
    valid = (
        f"valid: a comma list of at most {MAX_PROPERTIES} property names, each a C# identifier (a letter or _, then "
        f"letters, digits or _) of up to {MAX_PROPERTY_NAME} characters, e.g. n,p000,Timestamp"
    )
    for name in names:
        system = next((s for s in SYSTEM_PROPERTIES if s.lower() == name.lower()), name)
        if not name.isidentifier() or len(name) > MAX_PROPERTY_NAME or system != name:
            rule = f"is the system property {system}" if system != name else "is not a property name"
            raise UsageError(f"{flag} {value!r}: {name[:60]!r} {rule}; {valid}")
    if len(set(names)) < len(names) or len(names) > MAX_PROPERTIES:
        raise UsageError(f"{flag} {value!r}: a property is named twice, or more than an entity holds; {valid}")
    return names
