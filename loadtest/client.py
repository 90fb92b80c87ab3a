"""Table operations, each timed and fired as one Locust request event with its entity count.

The client never calls a collector: it fires ``environment.events.request`` with the
partition, op class, entities (as the docs count them), attempts and error code in the
event's ``context``. The PartitionKey stays out of the request name (Locust's tables and
exporters assume few names).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from itertools import islice
from typing import Any

from azure.core import MatchConditions
from azure.core.pipeline import PipelineResponse
from azure.data.tables import TableClient, UpdateMode
from locust.event import EventHook

from .entities import check_batch
from .errors import ServiceError, is_throttling
from .operations import OPERATIONS, Operation
from .retry import DEFAULT_RETRY, RetryStrategy, StrategyRetryPolicy, parse_retry, with_retry
from .target import SDK_ERRORS, Target, error_code_of

__all__ = ["TableOperations"]

_MODES = {"merge": UpdateMode.MERGE, "replace": UpdateMode.REPLACE}
READ, SCAN, FILTER_SCAN = OPERATIONS["read"], OPERATIONS["scan"], OPERATIONS["filter-scan"]
PARTITION_SCAN, TABLE_SCAN = OPERATIONS["partition-scan"], OPERATIONS["table-scan"]
INSERT, UPSERT, REPLACE, DELETE = OPERATIONS["insert"], OPERATIONS["upsert"], OPERATIONS["replace"], OPERATIONS["delete"]
UPDATE, UPDATE_ETAG, BATCH = OPERATIONS["update"], OPERATIONS["update-etag"], OPERATIONS["batch"]


def _sdk_batch_op(op: Operation, entity: dict[str, Any]) -> tuple[Any, ...]:
    """A batch operation as the SDK's submit_transaction takes it: (its verb, the entity, its keyword arguments)."""
    return (op.action, entity, {"mode": _MODES[op.mode]}) if op.mode else (op.action, entity)


def _written(op: Operation, entity: dict[str, Any]) -> tuple[tuple[str, str, str], ...]:
    """What the integrity ledger records once the service acknowledges the write."""
    return ((op.name, entity["PartitionKey"], entity["RowKey"]),)


class TableOperations:
    """One user's table client: each method is one operation, timed, counted and fired.

    ``raw_response_hook`` fires once per HTTP response (retries and result pages included), so
    throttled answers are counted per attempt; the retry policy reports each retry, so attempts
    = 1 + retries, whatever the number of pages.
    """

    def __init__(
        self, *, target: Target, table: str, request_event: EventHook, retry: RetryStrategy | None = None, seed: str | None = None
    ) -> None:
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

    def _on_attempt(self, pipeline_response: PipelineResponse) -> None:
        if self._first_ms is None:
            self._first_ms = (time.perf_counter() - self._started) * 1000.0
        response = pipeline_response.http_response
        if response.status_code >= 500 and is_throttling(response.status_code, response.headers.get("x-ms-error-code")):
            self._throttled += 1

    def _run(
        self,
        op: Operation,
        partition: str,
        entities: int,
        call: Callable[[], Any],
        counted: Callable[[Any], dict[str, Any]] | None = None,
        **extra: Any,
    ) -> Any:
        """Time ``call``, fire one request event, and return its result (None on failure).

        ``counted`` turns the result into context fields known only afterwards (a scan's entities).
        """
        self._retries = self._throttled = 0
        self._backoff, self._first_ms = 0.0, None
        context = {"partition": partition, "op_class": op.op_class, "entities": entities, **extra}
        start = self._started = time.perf_counter()
        result = exception = None
        try:
            result = call()
            if counted is not None:
                context.update(counted(result))
        except SDK_ERRORS as err:
            code = error_code_of(err)
            if op is INSERT and code == "EntityAlreadyExists" and self._retries:
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
            request_type=op.name,
            name=op.request_name,
            response_time=elapsed_ms,
            response_length=context["entities"],
            exception=exception,
            context=context,
        )
        return result

    # --- the operations -------------------------------------------------------------------

    def read(self, pk: str, rk: str, select: list[str] | None = None) -> Any:
        return self._run(READ, pk, 1, lambda: self.client.get_entity(pk, rk, select=select))

    def insert(self, entity: dict[str, Any]) -> Any:
        return self._run(
            INSERT, entity["PartitionKey"], 1, lambda: self.client.create_entity(entity), written=_written(INSERT, entity)
        )

    def upsert(self, entity: dict[str, Any]) -> Any:
        call = lambda: self.client.upsert_entity(entity, mode=_MODES[UPSERT.mode])  # noqa: E731
        return self._run(UPSERT, entity["PartitionKey"], 1, call, written=_written(UPSERT, entity))

    def replace(self, entity: dict[str, Any]) -> Any:
        call = lambda: self.client.upsert_entity(entity, mode=_MODES[REPLACE.mode])  # noqa: E731
        return self._run(REPLACE, entity["PartitionKey"], 1, call, written=_written(REPLACE, entity))

    def update(self, entity: dict[str, Any], etag: str | None = None) -> Any:
        """Merge into an existing entity: unconditionally (If-Match *) or only if ``etag`` still matches."""
        op, kwargs = UPDATE, {}
        if etag is not None:
            op, kwargs = UPDATE_ETAG, {"etag": etag, "match_condition": MatchConditions.IfNotModified}
        call = lambda: self.client.update_entity(entity, mode=_MODES[op.mode], **kwargs)  # noqa: E731
        return self._run(op, entity["PartitionKey"], 1, call, written=_written(UPDATE, entity))

    def delete(self, pk: str, rk: str) -> Any:
        return self._run(DELETE, pk, 1, lambda: self.client.delete_entity(pk, rk) or True, written=((DELETE.name, pk, rk),))

    def batch(self, operations: list[tuple[str, dict[str, Any]]]) -> Any:
        """One entity group transaction, counted operation by operation (a batch of N = N entities).

        Checked before sending: at most 100 operations, one PartitionKey, at most 4 MiB.
        """
        check_batch(operations)
        counts = Counter(kind for kind, _ in operations)
        sdk_ops = [_sdk_batch_op(OPERATIONS[kind], entity) for kind, entity in operations]
        pk = operations[0][1]["PartitionKey"]
        written = tuple((kind, e["PartitionKey"], e["RowKey"]) for kind, e in operations)
        return self._run(
            BATCH, pk, len(operations), lambda: self.client.submit_transaction(sdk_ops), operations=dict(counts), written=written
        )

    def scan(
        self,
        pk: str,
        low: str,
        high: str,
        *,
        page_size: int = 1000,
        select: list[str] | None = None,
        where: str | None = None,
        known_rows: int | None = None,
    ) -> Any:
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

        return self._run(FILTER_SCAN if where else SCAN, pk, 0, call, counted)

    def scan_partitions(self, low: str, high: str, *, limit: int, select: list[str] | None = None) -> Any:
        """A partition range scan (PartitionKeys in [low, high)), or a full table scan when both are empty.

        Bounded to ``limit`` entities. Counted per PartitionKey it touched (context ``partitions``).
        """
        op = PARTITION_SCAN if low or high else TABLE_SCAN
        query = "PartitionKey ge @lo and PartitionKey lt @hi" if op is PARTITION_SCAN else None
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
            return {
                "entities": sum(touched.values()),
                "returned": sum(touched.values()),
                "partition": first,
                "partitions": dict(touched),
            }

        return self._run(op, low or "(table)", 0, call, counted)

    def close(self) -> None:
        self.client.close()
