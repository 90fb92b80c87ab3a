"""One logged request, whichever of Azure's log forms it came from: the fields the tool reads, and a line that does not
parse, with why.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LogRecord", "Unreadable"]


@dataclass(slots=True)
class LogRecord:
    """A request as the service logged it (each form's fields, named once here)."""

    time: float  # when the request started, epoch seconds (UTC)
    operation: str  # OperationName: QueryEntity, InsertEntity, EntityGroupTransaction, ...
    status: int | None  # the HTTP status (None where logged as Unknown)
    status_text: str  # Success, ServerBusy, ThrottlingError, ResourceNotFound, ...
    uri: str  # the request's URI: an entity's address names its keys, a query's $filter its PartitionKey
    object_key: str = ""
    duration_ms: float | None = None  # end to end, as the service saw it
    server_latency_ms: float | None = None
    request_body: int | None = None  # bytes
    response_body: int | None = None
    client_request_id: str = ""  # x-ms-client-request-id: one per operation, kept by its retries
    request_id: str = ""  # the service's own (Storage Analytics' request id, Azure Monitor's correlation id)
    operation_count: int = 0
    response_type: str = ""  # the metrics' response type where logged: ServerBusyError, ClientAccount...ThrottlingError


class Unreadable(ValueError):
    """A line that is not a record of its form: ``reason`` counts it, ``line`` is an example (redacted when shown)."""

    def __init__(self, reason: str, line: str) -> None:
        super().__init__(reason)
        self.reason, self.line = reason, line
