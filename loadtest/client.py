"""Table operations, each timed and fired as one Locust request event with its entity count.

The client never calls a collector: it fires ``environment.events.request`` with the
partition, op class, entities (as the docs count them), attempts and error code in the
event's ``context``. The PartitionKey stays out of the request name (Locust's tables and
exporters assume few names).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from typing import Any

from azure.core.exceptions import HttpResponseError, ServiceRequestError, ServiceResponseError
from azure.data.tables import TableClient, UpdateMode

from .backend import Target
from .config import OP_CLASS

__all__ = ["ServiceError", "TableOperations", "THROTTLING_CODES", "error_code_of", "NAMES"]

#: Low-cardinality request names, one per operation.
NAMES = {
    "read": "GET point read",
    "scan": "GET row range scan",
    "insert": "PUT insert",
    "upsert": "PUT upsert merge",
    "replace": "PUT upsert replace",
    "update": "PUT update merge",
    "delete": "PUT delete",
    "batch": "PUT batch upsert",
}
#: The service's answers when a partition or account is over its target.
THROTTLING_CODES = frozenset({"ServerBusy", "OperationTimedOut", "GatewayTimeout"})


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


class ServiceError(Exception):
    """A failed table operation, classified by the service's error code (kept on the error)."""

    def __init__(self, code: str, status: int | None) -> None:
        super().__init__(f"{status or '-'} {code}")
        self.code = code
        self.status = status


def _is_throttled(status: int, error_code: str | None) -> bool:
    return status in (503, 504) or (status == 500 and error_code == "OperationTimedOut")


class TableOperations:
    """One user's table client: each method is one operation, timed, counted and fired.

    ``raw_response_hook`` fires once per attempt (retries included), so attempts and
    throttled answers are counted per attempt, not per call.
    """

    def __init__(self, *, target: Target, table: str, partition_key: str, request_event: Any, retries: int = 3) -> None:
        self.partition_key = partition_key
        self._fire = request_event.fire
        self._attempts = 0
        self._throttled = 0
        self.client: TableClient = target.table(table, retries=retries, raw_response_hook=self._on_attempt)

    def _on_attempt(self, pipeline_response: Any) -> None:
        self._attempts += 1
        response = pipeline_response.http_response
        if response.status_code >= 500 and _is_throttled(response.status_code, response.headers.get("x-ms-error-code")):
            self._throttled += 1

    def _run(self, op: str, entities: int, call: Callable[[], Any], counted: Callable[[Any], int] | None = None) -> Any:
        """Time ``call``, fire one request event, and return its result (None on failure)."""
        self._attempts = self._throttled = 0
        start = time.perf_counter()
        result = exception = None
        code = None
        try:
            result = call()
            if counted is not None:
                entities = counted(result)
        except (HttpResponseError, ServiceRequestError, ServiceResponseError) as err:
            code = error_code_of(err)
            exception = ServiceError(code, getattr(err, "status_code", None))
            exception.__cause__ = err
        elapsed_ms = (time.perf_counter() - start) * 1000.0
        self._fire(
            request_type=op,
            name=NAMES[op],
            response_time=elapsed_ms,
            response_length=entities,
            exception=exception,
            context={
                "partition": self.partition_key,
                "op_class": OP_CLASS[op],
                "entities": entities,
                "attempts": max(self._attempts, 1),
                "throttled": self._throttled,
                "error_code": code,
            },
        )
        return result

    # --- the operations -------------------------------------------------------------------

    def read(self, row_key: str) -> Any:
        return self._run("read", 1, lambda: self.client.get_entity(self.partition_key, row_key))

    def insert(self, entity: dict[str, Any]) -> Any:
        return self._run("insert", 1, lambda: self.client.create_entity(entity))

    def upsert(self, entity: dict[str, Any]) -> Any:
        return self._run("upsert", 1, lambda: self.client.upsert_entity(entity, mode=UpdateMode.MERGE))

    def replace(self, entity: dict[str, Any]) -> Any:
        return self._run("replace", 1, lambda: self.client.upsert_entity(entity, mode=UpdateMode.REPLACE))

    def update(self, entity: dict[str, Any]) -> Any:
        return self._run("update", 1, lambda: self.client.update_entity(entity, mode=UpdateMode.MERGE))

    def delete(self, row_key: str) -> Any:
        return self._run("delete", 1, lambda: self.client.delete_entity(self.partition_key, row_key))

    def batch(self, entities: Iterable[dict[str, Any]]) -> Any:
        """One entity group transaction of upserts: counted as its number of operations."""
        operations = [("upsert", entity) for entity in entities]
        return self._run("batch", len(operations), lambda: self.client.submit_transaction(operations))

    def scan(self, low: str, high: str, page_size: int = 1000) -> Any:
        """A row range scan inside the partition, following continuation tokens to the end.

        A RowKey range is a seek, so the service scans what it returns: entities = returned.
        """
        query = "PartitionKey eq @pk and RowKey ge @lo and RowKey lt @hi"
        parameters = {"pk": self.partition_key, "lo": low, "hi": high}

        def call() -> int:
            rows = self.client.query_entities(query, parameters=parameters, results_per_page=min(page_size, 1000))
            return sum(1 for _ in rows)

        return self._run("scan", 0, call, counted=lambda returned: returned)

    def close(self) -> None:
        self.client.close()
