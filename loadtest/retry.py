"""The docs' retry strategies as an azure-core retry policy: none, fixed, exponential backoff.

The docs: retry 503 ServerBusy, 500 OperationTimedOut, 504 and connection errors (these at
once); never 4xx, 501 or 505. Exponential backoff follows their formula:
``y = Rand(0.8z, 1.2z) * (2^x - 1)``, then ``y = min(zmin + y, zmax)``, x the retry number.

The SDK silently ignores ``retry_policy=``; ``with_retry`` swaps this policy into the
client's ``policies`` list, the extension point it honours.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from azure.core.pipeline.policies import RetryPolicy
from azure.data.tables._policies import TablesRetryPolicy  # the SDK's retry policy for Tables

from .errors import UsageError, is_throttling

__all__ = ["DEFAULT_RETRY", "RETRY_FORMS", "RetryStrategy", "StrategyRetryPolicy", "parse_retry", "with_retry"]

RETRY_FORMS = "none, fixed:N,DELAY or exponential:N,z,zmin,zmax (seconds)"
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
    if name == "none" and not values:
        return RetryStrategy("none")
    if name == "fixed" and len(values) == 2 and values[0] == int(values[0]) and min(values) >= 0:
        return RetryStrategy("fixed", int(values[0]), values[1])
    if name == "exponential" and len(values) == 4 and values[0] == int(values[0]) and min(values) >= 0:
        retries, z, zmin, zmax = values
        if zmin <= zmax:
            return RetryStrategy("exponential", int(retries), z, zmin, zmax)
    raise UsageError(f"--retry {spec!r}: valid forms: {RETRY_FORMS}, with zmin <= zmax")


class StrategyRetryPolicy(TablesRetryPolicy):
    """Retries what the docs say to retry, waiting as the strategy says; reports each wait.

    It extends the SDK's own Tables retry policy, which also carries the pipeline's location
    context (primary/secondary) that the Tables paging code reads back.
    """

    def __init__(
        self, strategy: RetryStrategy, *, seed: str | None = None, on_backoff: Callable[[float], None] | None = None
    ) -> None:
        retries = strategy.retries
        super().__init__(retry_total=retries, retry_connect=retries, retry_read=0, retry_status=retries, retry_backoff_factor=0)
        self.strategy = strategy
        self.rng = random.Random(seed)
        self.on_backoff = on_backoff

    def is_retry(self, settings: dict[str, Any], response: Any) -> bool:
        if not settings["total"]:
            return False
        http = response.http_response
        return is_throttling(http.status_code, http.headers.get("x-ms-error-code"))

    def sleep(self, settings: dict[str, Any], transport: Any, response: Any = None) -> None:
        """Called before every retry: report it (``on_backoff``) and wait as the strategy says."""
        # a connection error (no response) is retried at once
        seconds = 0.0 if response is None else self.strategy.backoff(len(settings["history"]), self.rng)
        if self.on_backoff is not None:
            self.on_backoff(seconds)
        if seconds > 0:
            transport.sleep(seconds)


def with_retry(make_client: Callable[..., Any], policy: RetryPolicy, **kwargs: Any) -> Any:
    """A client whose pipeline carries ``policy`` in place of the SDK's retry policy."""
    base = make_client(**kwargs)
    policies = [policy if isinstance(p, RetryPolicy) else p for p in base._policies]  # the SDK's own list
    base.close()
    return make_client(policies=policies, **kwargs)
