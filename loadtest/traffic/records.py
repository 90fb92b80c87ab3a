"""One logged request, whichever of Azure's log forms it came from: the fields the tool reads, and a line that does not
parse, with why; the bounds of what a record may say, declared once for every form and both readers (a line at a time,
a block at a time).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LONGEST_LINE", "MOST", "STATUS_MOST", "LogRecord", "Unreadable", "logged_number", "logged_status"]

#: No record's line is longer (a diagnostic record is some 2 KB): a longer one is no record, never held whole.
LONGEST_LINE = 1 << 20
#: The most a duration (ms), a size (bytes) or a count of operations may say: far above any request's, and exact in
#: int64 and float64 alike. A record saying more, less than 0, or not a finite number is not one.
MOST = 2**53
#: An HTTP status has three digits.
STATUS_MOST = 999


def logged_number(value: float, most: float = MOST) -> float:
    """``value`` where a record may say it (a finite number from 0 to ``most``); ValueError else."""
    if not 0 <= value <= most:  # NaN is not, and a whole number of any size compares
        raise ValueError(f"not a number from 0 to {most}")
    return value


def logged_status(value: float) -> int:
    """An HTTP status as a record logs it (a whole number, 0 to ``STATUS_MOST``); ValueError else."""
    return int(logged_number(value, STATUS_MOST))


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
