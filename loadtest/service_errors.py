"""The service's error codes: one map of what each means, whichever client met it (like azure-data-tables'
``_error.py``), and which of them are the service's answer over its targets.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "CAUSES",
    "CONNECTION_ERROR",
    "THROTTLING_CODES",
    "TIMEOUT",
    "UNANSWERED",
    "ServiceError",
    "is_throttling",
    "service_code",
]

#: The error codes of the service's answers over its targets (503 ServerBusy, 500 OperationTimedOut, 504).
THROTTLING_CODES = frozenset({"ServerBusy", "OperationTimedOut", "GatewayTimeout"})
#: What a client calls a failure that never got an answer: refused or reset, or no answer within ``--timeout``.
CONNECTION_ERROR = "ConnectionError"
TIMEOUT = "Timeout"
UNANSWERED = (CONNECTION_ERROR, TIMEOUT)


#: What an error code says about a run, the ERRORS finding's remedy (codes not named: read the service's docs).
CAUSES = {
    "ResourceNotFound": "an entity read, updated or deleted was not there (never seeded, or deleted meanwhile)",
    "EntityAlreadyExists": "an insert met an existing entity (upsert, or give new entities their own RowKeys)",
    "UpdateConditionNotSatisfied": "another writer changed the entity after it was read (the design's conflict rate)",
    "TableNotFound": "the test table was gone (deleted during the run, or an in-memory Azurite restarted)",
    "AuthenticationFailed": "the service stopped accepting the credentials (an expired SAS or token, a rotated key)",
    "AuthorizationPermissionMismatch": "the credentials lack a permission this operation needs (SAS permissions, role)",
    CONNECTION_ERROR: "no answer: the connection was refused or reset (the target, or the network)",
    TIMEOUT: "no answer within --timeout (a stalled target, or a timeout too short for the load)",
}


def is_throttling(status: int, error_code: str | None) -> bool:
    """503, 504, and 500 only with OperationTimedOut: what the service answers over its targets."""
    return status in (503, 504) or (status == 500 and error_code == "OperationTimedOut")


def service_code(headers: Any, body: bytes | str) -> str | None:
    """The service's error code of an answer: ``x-ms-error-code``, else its ``odata.error`` JSON body."""
    code = headers.get("x-ms-error-code")
    if code:
        return code
    try:
        return json.loads(body)["odata.error"]["code"]
    except (ValueError, KeyError, TypeError):
        return None


class ServiceError(Exception):
    """A failed table operation, classified by the service's error code (kept on the error)."""

    def __init__(self, code: str, status: int | None, *, operation: int | None = None) -> None:
        where = f" (batch operation {operation})" if operation is not None else ""
        super().__init__(f"{status or '-'} {code}{where}")
        self.code, self.status = code, status
        self.operation = operation  # in a failed entity group transaction: the failing operation's index
