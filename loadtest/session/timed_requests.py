"""One table operation timed and fired as one Locust request event, with what only its answers tell.

The transport under it reports every answer (``on_attempt``: retries and result pages included), so throttled answers
are counted per attempt and by reason, and every retry (``on_backoff``), so attempts = 1 + retries, whatever the number
of pages. The event carries the first attempt's latency, the backoff, the error code, and in an open loop how late the
operation started: the figures the listeners count, never called directly.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from itertools import count
from typing import Any

from locust.event import EventHook

from ..service.error_codes import ServiceError, is_throttling, throttle_reason
from ..service.operations import OPERATIONS, Operation
from ..transports.base import Transport

__all__ = ["TimedRequests"]

#: What a retried write is answered when an earlier attempt of it had landed and that answer was lost: it succeeded
#: earlier (an insert meets its own entity; a delete finds its entity gone), counted so, never as a failure.
APPLIED_EARLIER = {OPERATIONS["insert"].name: "EntityAlreadyExists", OPERATIONS["delete"].name: "ResourceNotFound"}


class TimedRequests:
    """The timing and firing of a session's operations: the transport's hooks, and ``_run`` for each operation."""

    transport: Transport  # the session's, set once it is made (its hooks are this object)

    def __init__(
        self, *, request_event: EventHook, request_ids: str | None = None, client_id: str | None = None, names: str = ""
    ) -> None:
        """``request_ids``: the prefix of each operation's ``x-ms-client-request-id`` (``<run-id>-<stream>.``), followed
        by its sequence number; a random prefix if not given. ``client_id``: the application client it stands for (a user's
        sessions in flight are one client; default: ``request_ids``). ``names``: before each request name (a user class's,
        when several share a run)."""
        self._names = names
        self.intended: float | None = None  # open loop: when the next operation was due (epoch s), set by its user
        self.dropped = 0  # open loop: slots dropped before it
        self._fire = request_event.fire
        self._request_ids = request_ids or f"{secrets.token_hex(4)}-"
        self._client = client_id or self._request_ids
        self._sequence = count(1)
        self._retries = 0
        self._throttled_by: dict[str, int] = {}  # throttled attempts by reason (partition, account, timeout)
        self._backoff = 0.0
        self._started = 0.0
        self._first_ms: float | None = None

    def on_backoff(self, seconds: float) -> None:
        self._retries += 1
        self._backoff += seconds

    def on_attempt(self, status: int, error_code: str | None, message: str = "") -> None:
        if self._first_ms is None:
            self._first_ms = (time.perf_counter() - self._started) * 1000.0
        if status >= 500 and is_throttling(status, error_code):
            reason = throttle_reason(status, error_code, message)
            self._throttled_by[reason] = self._throttled_by.get(reason, 0) + 1

    def _run(
        self,
        op: Operation,
        partition: str,
        entities: int,
        call: Callable[[], Any],
        counted: Callable[[Any], dict[str, Any]] | None = None,
        name: str | None = None,
        **extra: Any,
    ) -> Any:
        """Time ``call``, fire one request event, and return its result (None on failure).

        ``counted`` turns the result into context fields known only afterwards (a scan's entities); ``name``
        replaces the operation's request name.
        """
        self._retries = 0
        if self._throttled_by:
            self._throttled_by = {}
        self._backoff, self._first_ms = 0.0, None
        self.transport.set_request_id(f"{self._request_ids}{next(self._sequence)}")
        context = {"partition": partition, "op_class": op.op_class, "entities": entities, **extra}
        intended, self.intended = self.intended, None
        if intended is not None:  # how late it starts: its corrected latency adds that to the service time
            context["late_ms"] = max(0.0, (time.time() - intended) * 1000.0)
            context["dropped"], self.dropped = self.dropped, 0
        start = self._started = time.perf_counter()
        result = exception = None
        try:
            result = call()
            if counted is not None:
                context.update(counted(result))
        except ServiceError as err:
            if self._retries and APPLIED_EARLIER.get(op.name) == err.code:
                context["succeeded_earlier"] = 1  # the first attempt had landed; its answer was lost
            else:
                context["error_code"] = err.code
                exception = err
        elapsed_ms = (time.perf_counter() - start) * 1000.0
        context["attempts"] = 1 + self._retries
        if self._throttled_by:  # the throttled attempts, by reason
            context["throttled"] = sum(self._throttled_by.values())
            context["throttled_by"] = self._throttled_by
        else:
            context["throttled"] = 0
        context["backoff_s"] = self._backoff
        # the first attempt's latency: the whole operation unless it was retried
        context["first_ms"] = elapsed_ms if not self._retries or self._first_ms is None else self._first_ms
        self._fire(
            request_type=op.name,
            name=f"{self._names}{name or op.request_name}" if self._names else name or op.request_name,
            response_time=elapsed_ms,
            response_length=context["entities"],
            exception=exception,
            context=context,
        )
        return result
