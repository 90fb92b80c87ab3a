"""Table operations, each timed and fired as one Locust request event with its entity count.

The client never calls a collector: it fires ``environment.events.request`` with the
partition, op class, entities (as the docs count them), attempts and error code in the
event's ``context``. The PartitionKey stays out of the request name (Locust's tables and
exporters assume few names).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from itertools import islice
from typing import Any

from azure.core import MatchConditions
from azure.core.exceptions import HttpResponseError, ServiceRequestError, ServiceResponseError
from azure.data.tables import TableClient, UpdateMode

from .backend import Target
from .config import DEFAULT_RETRY, OP_CLASS
from .entities import check_batch
from .retry import RetryStrategy, StrategyRetryPolicy, is_throttling, parse_retry, with_retry

#: Batch operations as the SDK's submit_transaction takes them: (its name, its keyword arguments).
_SDK_BATCH_OP: dict[str, tuple[str, dict[str, Any]]] = {
    "insert": ("create", {}),
    "upsert": ("upsert", {"mode": UpdateMode.MERGE}),
    "replace": ("upsert", {"mode": UpdateMode.REPLACE}),
    "update": ("update", {"mode": UpdateMode.MERGE}),
    "delete": ("delete", {}),
}

__all__ = ["ServiceError", "TableOperations", "error_code_of", "NAMES"]

#: Low-cardinality request names, one per operation.
NAMES = {
    "read": "GET point read",
    "scan": "GET row range scan",
    "filter-scan": "GET filtered row range scan",
    "partition-scan": "GET partition range scan",
    "table-scan": "GET full table scan",
    "update-etag": "PUT update merge If-Match etag",
    "insert": "PUT insert",
    "upsert": "PUT upsert merge",
    "replace": "PUT upsert replace",
    "update": "PUT update merge",
    "delete": "PUT delete",
    "batch": "PUT batch upsert",
}


def error_code_of(err: BaseException) -> str:
    """The service's error code (``ServerBusy``, ``ResourceNotFound``…), else a name for the failure."""
    code = getattr(err, "error_code", None)
    code = getattr(code, "value", code) or _code_in_response(getattr(err, "response", None))
    if code:
        return str(code)
    if isinstance(err, (ServiceRequestError, ServiceResponseError)):
        return "ConnectionError"
    status = getattr(err, "status_code", None)
    return f"HTTP{status}" if status else type(err).__name__


def _code_in_response(response: Any) -> str | None:
    """The code from ``x-ms-error-code`` or the OData error body (the SDK leaves some errors without it)."""
    if response is None:
        return None
    code = response.headers.get("x-ms-error-code")
    if code:
        return code
    try:
        return json.loads(response.text())["odata.error"]["code"]
    except (ValueError, KeyError, TypeError):
        return None


def _written(kind: str, entity: dict[str, Any]) -> tuple[tuple[str, str, str], ...]:
    """What the integrity ledger records once the service acknowledges the write."""
    return ((kind, entity["PartitionKey"], entity["RowKey"]),)


class ServiceError(Exception):
    """A failed table operation, classified by the service's error code (kept on the error)."""

    def __init__(self, code: str, status: int | None) -> None:
        super().__init__(f"{status or '-'} {code}")
        self.code = code
        self.status = status



class TableOperations:
    """One user's table client: each method is one operation, timed, counted and fired.

    ``raw_response_hook`` fires once per HTTP response (retries and result pages included), so
    throttled answers are counted per attempt; the retry policy reports each retry, so attempts
    = 1 + retries, whatever the number of pages.
    """

    def __init__(self, *, target: Target, table: str, request_event: Any, retry: RetryStrategy | None = None,
                 seed: Any = None) -> None:  # fmt: skip
        self._fire = request_event.fire
        self._retries = self._throttled = 0
        self._backoff = 0.0
        self._started = 0.0
        self._first_ms: float | None = None
        policy = StrategyRetryPolicy(retry or parse_retry(DEFAULT_RETRY), seed=seed, on_backoff=self._on_backoff)
        self.client: TableClient = with_retry(lambda **kw: target.table(table, **kw), policy, raw_response_hook=self._on_attempt)

    def _on_backoff(self, seconds: float) -> None:
        self._retries += 1
        self._backoff += seconds

    def _on_attempt(self, pipeline_response: Any) -> None:
        if self._first_ms is None:
            self._first_ms = (time.perf_counter() - self._started) * 1000.0
        response = pipeline_response.http_response
        if response.status_code >= 500 and is_throttling(response.status_code, response.headers.get("x-ms-error-code")):
            self._throttled += 1

    def _run(self, op: str, partition: str, entities: int, call: Callable[[], Any],
             counted: Callable[[Any], dict[str, Any]] | None = None, **extra: Any) -> Any:  # fmt: skip
        """Time ``call``, fire one request event, and return its result (None on failure).

        ``counted`` turns the result into context fields known only afterwards (a scan's entities).
        """
        self._retries = self._throttled = 0
        self._backoff, self._first_ms = 0.0, None
        context = {"partition": partition, "op_class": OP_CLASS[op], "entities": entities, **extra}
        start = self._started = time.perf_counter()
        result = exception = None
        try:
            result = call()
            if counted is not None:
                context.update(counted(result))
        except (HttpResponseError, ServiceRequestError, ServiceResponseError) as err:
            code = error_code_of(err)
            if op == "insert" and code == "EntityAlreadyExists" and self._retries:
                context["succeeded_earlier"] = 1  # the first attempt had landed; its answer was lost
            else:
                context["error_code"] = code
                exception = ServiceError(code, getattr(err, "status_code", None))
                exception.__cause__ = err
        elapsed_ms = (time.perf_counter() - start) * 1000.0
        context["attempts"] = 1 + self._retries
        context["throttled"] = self._throttled
        context["backoff_s"] = self._backoff
        # the first attempt's latency: the whole operation unless it was retried
        context["first_ms"] = elapsed_ms if not self._retries or self._first_ms is None else self._first_ms
        self._fire(
            request_type=op, name=NAMES[op], response_time=elapsed_ms, response_length=context["entities"],
            exception=exception, context=context,
        )  # fmt: skip
        return result

    # --- the operations -------------------------------------------------------------------

    def read(self, pk: str, rk: str, select: list[str] | None = None) -> Any:
        return self._run("read", pk, 1, lambda: self.client.get_entity(pk, rk, select=select))

    def insert(self, entity: dict[str, Any]) -> Any:
        return self._run("insert", entity["PartitionKey"], 1, lambda: self.client.create_entity(entity),
                         written=_written("insert", entity))  # fmt: skip

    def upsert(self, entity: dict[str, Any]) -> Any:
        call = lambda: self.client.upsert_entity(entity, mode=UpdateMode.MERGE)  # noqa: E731
        return self._run("upsert", entity["PartitionKey"], 1, call, written=_written("upsert", entity))

    def replace(self, entity: dict[str, Any]) -> Any:
        call = lambda: self.client.upsert_entity(entity, mode=UpdateMode.REPLACE)  # noqa: E731
        return self._run("replace", entity["PartitionKey"], 1, call, written=_written("replace", entity))

    def update(self, entity: dict[str, Any], etag: str | None = None) -> Any:
        """Merge into an existing entity: unconditionally (If-Match *) or only if ``etag`` still matches."""
        op, kwargs = "update", {}
        if etag is not None:
            op, kwargs = "update-etag", {"etag": etag, "match_condition": MatchConditions.IfNotModified}
        call = lambda: self.client.update_entity(entity, mode=UpdateMode.MERGE, **kwargs)  # noqa: E731
        return self._run(op, entity["PartitionKey"], 1, call, written=_written("update", entity))

    def delete(self, pk: str, rk: str) -> Any:
        return self._run("delete", pk, 1, lambda: self.client.delete_entity(pk, rk) or True, written=(("delete", pk, rk),))

    def batch(self, operations: list[tuple[str, dict[str, Any]]]) -> Any:
        """One entity group transaction, counted operation by operation (a batch of N = N entities).

        Checked before sending: at most 100 operations, one PartitionKey, at most 4 MiB.
        """
        check_batch(operations)
        counts = Counter(kind for kind, _ in operations)
        sdk_ops = [(_SDK_BATCH_OP[kind][0], entity, _SDK_BATCH_OP[kind][1]) for kind, entity in operations]
        pk = operations[0][1]["PartitionKey"]
        written = tuple((kind, e["PartitionKey"], e["RowKey"]) for kind, e in operations)
        return self._run("batch", pk, len(operations), lambda: self.client.submit_transaction(sdk_ops),
                         operations=dict(counts), written=written)  # fmt: skip

    def scan(self, pk: str, low: str, high: str, *, page_size: int = 1000, select: list[str] | None = None,
             where: str | None = None, known_rows: int | None = None) -> Any:  # fmt: skip
        """A row range scan inside one partition, following continuation tokens to the end.

        A RowKey range is a seek: the service scans what it returns. With a property filter
        (``where``) it scans the whole range and returns the matches: then the entities counted
        are the rows the run knows the range holds (``known_rows``), marked as an estimate.
        """
        query = "PartitionKey eq @pk and RowKey ge @lo and RowKey lt @hi" + (f" and ({where})" if where else "")
        parameters = {"pk": pk, "lo": low, "hi": high}

        def call() -> int:
            rows = self.client.query_entities(query, parameters=parameters, results_per_page=min(page_size, 1000), select=select)
            return sum(1 for _ in rows)

        def counted(returned: int) -> dict[str, Any]:
            if where and known_rows is not None:
                return {"entities": max(known_rows, returned), "returned": returned, "estimated": True}
            return {"entities": returned, "returned": returned}

        return self._run("filter-scan" if where else "scan", pk, 0, call, counted)

    def scan_partitions(self, low: str, high: str, *, limit: int, select: list[str] | None = None) -> Any:
        """A partition range scan (PartitionKeys in [low, high)), or a full table scan when both are empty.

        Bounded to ``limit`` entities. Counted per PartitionKey it touched (context ``partitions``).
        """
        op = "partition-scan" if low or high else "table-scan"
        query = "PartitionKey ge @lo and PartitionKey lt @hi" if op == "partition-scan" else None
        parameters = {"lo": low, "hi": high} if query else None

        def call() -> Counter[str]:
            if query:
                rows = self.client.query_entities(query, parameters=parameters, results_per_page=min(limit, 1000), select=select)
            else:
                rows = self.client.list_entities(results_per_page=min(limit, 1000), select=select)
            touched: Counter[str] = Counter()
            for row in islice(rows, limit):
                touched[row["PartitionKey"]] += 1
            return touched

        def counted(touched: Counter[str]) -> dict[str, Any]:
            first = min(touched) if touched else low or "(table)"
            return {"entities": sum(touched.values()), "returned": sum(touched.values()), "partition": first,
                    "partitions": dict(touched)}  # fmt: skip

        return self._run(op, low or "(table)", 0, call, counted)

    def close(self) -> None:
        self.client.close()
