"""Value parsers for the edge: each takes (flag, raw value) and returns the value, or raises a
``UsageError`` that names the flag, the rule and the valid values. Declared once, used by every option.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from locust.util.timespan import parse_timespan

from .errors import UsageError

__all__ = ["Parse", "non_negative", "optional", "parse_duration", "positive", "share", "switch", "text", "whole"]


Parse = Callable[[str, Any], Any]


def text(flag: str, value: Any) -> str:
    return "" if value is None else str(value)


def switch(flag: str, value: Any) -> bool:
    return value is True or str(value).lower() in ("true", "1", "yes", "on")


def whole(*, minimum: int = 0, maximum: int | None = None, unit: str = "") -> Parse:
    """A whole number in [minimum, maximum]."""

    def parse(flag: str, value: Any) -> int:
        try:
            number = int(str(value).strip())
        except ValueError:
            raise UsageError(f"{flag} {value!r}: must be a whole number") from None
        if number < minimum or (maximum is not None and number > maximum):
            bound = f"from {minimum} to {maximum}" if maximum is not None else f"at least {minimum}"
            raise UsageError(f"{flag} {number}: must be {bound}{unit}")
        return number

    return parse


def _number(rule: str, ok: Callable[[float], bool]) -> Parse:
    def parse(flag: str, value: Any) -> float:
        try:
            number = float(str(value).strip())
        except ValueError:
            number = math.nan
        if not math.isfinite(number) or not ok(number):
            raise UsageError(f"{flag} {value!r}: must be {rule}")
        return number

    return parse


positive = _number("a positive number", lambda n: n > 0)
non_negative = _number("a number, 0 or more", lambda n: n >= 0)
share = _number("a share from 0 to 1", lambda n: 0 <= n <= 1)


def optional(parse: Parse) -> Parse:
    """Blank means "not given" (``None``): the default comes from elsewhere (a profile)."""
    return lambda flag, value: None if value in (None, "") else parse(flag, value)


def parse_duration(text: str, flag: str = "--duration") -> int:
    """Seconds from Locust's forms (90, 90s, 2m, 1h30m); positive only."""
    try:
        seconds = parse_timespan(str(text).strip())
    except ValueError:
        seconds = 0
    if seconds <= 0:
        raise UsageError(f"{flag} {text!r}: must be a positive time span, e.g. 90, 90s, 2m, 1h30m")
    return seconds
