"""The docs' retry strategies: none, fixed, exponential backoff (both transports follow them).

The docs: retry 503 ServerBusy, 500 OperationTimedOut, 504 and connection errors (these at
once); never 4xx, 501 or 505 (``error_codes.is_throttling``). Exponential backoff follows their
formula: ``y = Rand(0.8z, 1.2z) * (2^x - 1)``, then ``y = min(zmin + y, zmax)``, x the retry number.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..exit_codes import UsageError

__all__ = ["DEFAULT_RETRY", "RETRY_FORMS", "RetryStrategy", "parse_retry"]

RETRY_FORMS = "none, fixed:N,DELAY or exponential:N,z,zmin,zmax (seconds)"
MAX_RETRY_VALUE = 3600  # retries, and seconds of any wait (an hour): beyond, a number is a mistake
DEFAULT_RETRY = "exponential:3,0.2,0.05,2"  # the docs' formula, with waits sized for a load test


@dataclass(frozen=True)
class RetryStrategy:
    kind: str  # none | fixed | exponential
    retries: int = 0
    delay: float = 0.0  # fixed: seconds between attempts; exponential: z
    minimum: float = 0.0  # zmin
    maximum: float = 0.0  # zmax

    def backoff(self, retry: int, rng: random.Random) -> float:
        """Seconds to wait before retry number ``retry`` (1 for the first retry)."""
        if self.kind == "fixed":
            return self.delay
        if self.kind == "exponential":
            y = rng.uniform(0.8 * self.delay, 1.2 * self.delay) * (2**retry - 1)
            return min(self.minimum + y, self.maximum)
        return 0.0

    def mean_backoff(self, retry: int) -> float:
        """The expected wait before retry number ``retry``: the simulator's (Rand(0.8z, 1.2z) averages z)."""
        if self.kind == "exponential":
            return min(self.minimum + self.delay * (2**retry - 1), self.maximum)
        return self.backoff(retry, random.Random(0))

    def spec(self) -> str:
        if self.kind == "fixed":
            return f"fixed:{self.retries},{self.delay:g}"
        if self.kind == "exponential":
            return f"exponential:{self.retries},{self.delay:g},{self.minimum:g},{self.maximum:g}"
        return "none"


def parse_retry(spec: str) -> RetryStrategy:
    """``none``, ``fixed:N,DELAY``, ``exponential:N,z,zmin,zmax``; raises ``UsageError`` naming the forms."""
    name, _, params = spec.strip().partition(":")
    try:
        values = [float(p) for p in params.split(",")] if params else []
    except ValueError:
        values = [-1.0]
    if not all(0 <= v <= MAX_RETRY_VALUE for v in values):  # also nan and inf
        values = [-1.0]
    if name == "none" and not values:
        return RetryStrategy("none")
    if name == "fixed" and len(values) == 2 and values[0] == int(values[0]) and min(values) >= 0:
        return RetryStrategy("fixed", int(values[0]), values[1])
    if name == "exponential" and len(values) == 4 and values[0] == int(values[0]) and min(values) >= 0:
        retries, z, zmin, zmax = values
        if zmin <= zmax:
            return RetryStrategy("exponential", int(retries), z, zmin, zmax)
    raise UsageError(f"--retry {spec!r}: valid forms: {RETRY_FORMS}, with zmin <= zmax, every number 0 to {MAX_RETRY_VALUE}")
