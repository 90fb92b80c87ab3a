"""The service's error codes: one map of what each means, whichever client met it (like azure-data-tables'
``_error.py``), and which of them are the service's answer over its targets.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "BUSY",
    "CAUSES",
    "CLASS_REMEDIES",
    "CONNECTION_ERROR",
    "THROTTLING_CODES",
    "TIMEOUT",
    "PARTITION_BUSY",
    "THROTTLE_REASONS",
    "UNANSWERED",
    "ServiceError",
    "error_class",
    "is_throttling",
    "logged_throttling",
    "service_code",
    "service_message",
    "throttle_reason",
]

#: The error codes of the service's answers over its targets (503 ServerBusy, 500 OperationTimedOut, 504).
THROTTLING_CODES = frozenset({"ServerBusy", "OperationTimedOut", "GatewayTimeout"})
#: Why the service throttled an attempt, told apart as Azure words its answers: a partition over its target (503
#: ServerBusy, the service's general message), the account over one of its limits (503 ServerBusy, "... is over the
#: account limit."), or the operation timed out (500 OperationTimedOut, 504).
THROTTLE_REASONS = ("partition", "account", "timeout")
PARTITION_BUSY = "The server is currently unable to receive requests. Please retry your request."
ACCOUNT_LIMITS = (  # the Storage service's common REST error codes: ServerBusy's messages for the account's limits
    "Operations per second is over the account limit.",
    "Ingress is over the account limit.",
    "Egress is over the account limit.",
)
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


#: The service's 4xx codes a run meets without their status at hand (a log record carries its own).
APPLICATION_CODES = frozenset(
    {
        "ResourceNotFound",
        "EntityAlreadyExists",
        "UpdateConditionNotSatisfied",
        "TableNotFound",
        "TableAlreadyExists",
        "AuthenticationFailed",
        "AuthorizationPermissionMismatch",
        "AuthorizationFailure",
        "InvalidInput",
        "OutOfRangeInput",
        "PropertyValueTooLarge",
        "EntityTooLarge",
        "InvalidDuplicateRow",
        "ConditionNotMet",
    }
)
#: The service's own 5xx codes (its answers over its targets aside: ``THROTTLING_CODES``), for a run's errors and
#: Storage Analytics' status texts.
SERVICE_CODES = frozenset(
    {"InternalError", "ServiceUnavailable", *(f"{who}ServerOtherError" for who in ("", "SAS", "Anonymous"))}
)
#: Failures of the client's path, not answers of the service: a client's no answer, and Storage Analytics' status
#: texts for a request the network or the client cut short (its status, when logged, is the service's last word).
NETWORK_CODES = frozenset(
    {
        *UNANSWERED,
        *(f"{who}{what}" for who in ("", "SAS", "Anonymous") for what in ("NetworkError", "ClientTimeoutError")),
    }
)
#: What to do about each class of failure (``error_class``): the ERRORS finding's remedy, after each code's cause.
CLASS_REMEDIES = {
    "application": "A 4xx answer is the application's own: fix the request or the data; the docs: never retry a 4xx answer.",
    "service": (
        "A 5xx answer is the service's: retry it with exponential backoff (the SDK's default policy retries 500, 503 "
        "and 504); if it persists, check the account's resource health."
    ),
    "network": (
        "No answer is the client's path (its network, its timeouts, its machine): retry with backoff, and check the "
        "network between the client and the account and the client's timeout."
    ),
    "": "Read the error codes in the service's docs; the docs: never retry a 4xx answer.",
}


def error_class(code: str, status: int | None = None) -> str:
    """A failure's class (``CLASS_REMEDIES``' keys): the network's, the application's (4xx), the service's (5xx), or
    "" where neither its code nor its status tells."""
    if code in NETWORK_CODES:
        return "network"
    if status is None and code.startswith("HTTP") and code[4:].isdigit():  # the SDK's code for an answer without one
        status = int(code[4:])
    if (status is not None and 400 <= status < 500) or (status is None and code in APPLICATION_CODES):
        return "application"
    if (status is not None and 500 <= status < 600) or (status is None and code in SERVICE_CODES):
        return "service"
    return ""


def is_throttling(status: int, error_code: str | None) -> bool:
    """503, 504, and 500 only with OperationTimedOut: what the service answers over its targets."""
    return status in (503, 504) or (status == 500 and error_code == "OperationTimedOut")


def throttle_reason(status: int, error_code: str | None, message: str = "") -> str:
    """Why a throttled attempt was refused (one of ``THROTTLE_REASONS``), from its status, error code and message."""
    if status == 504 or error_code in ("OperationTimedOut", "GatewayTimeout"):
        return "timeout"
    return "account" if "over the account limit" in message else "partition"


#: A logged throttled answer's reason where its record's metrics response type tells it (Azure Monitor's newer
#: records); ``BUSY`` where the record says only 503 ServerBusy.
LOGGED_REASONS = {
    "ServerBusyError": "partition",
    "ClientAccountRequestThrottlingError": "account",
    "ClientAccountBandwidthThrottlingError": "account",
    "ServerTimeoutError": "timeout",
}
BUSY = "busy"
#: The logs' status texts of answers over the targets: Storage Analytics' (ThrottlingError, SASThrottlingError, ...;
#: ServerTimeoutError for a 500) and the service's error codes (ServerBusy, OperationTimedOut).
_LOGGED_TIMEOUTS = ("ServerTimeoutError", "AnonymousServerTimeoutError", "SASServerTimeoutError", "OperationTimedOut")


def logged_throttling(status: int | None, status_text: str, response_type: str = "") -> str | None:
    """Why a logged request was throttled (``THROTTLE_REASONS``, or ``BUSY`` where the record does not tell the
    partition's target from the account's limit), or None if it was not: the logs' view of ``throttle_reason``."""
    timed_out = status == 504 or (status == 500 and status_text in _LOGGED_TIMEOUTS)
    if not (timed_out or status == 503 or "ThrottlingError" in status_text or status_text == "ServerBusy"):
        return None
    if response_type in LOGGED_REASONS:
        return LOGGED_REASONS[response_type]
    return "timeout" if timed_out else BUSY


def service_message(body: bytes | str) -> str:
    """The message of an ``odata.error`` JSON body ("" when there is none)."""
    try:
        message = json.loads(body)["odata.error"]["message"]
    except (ValueError, KeyError, TypeError):
        return ""
    return str(message.get("value", "") if isinstance(message, dict) else message)


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
