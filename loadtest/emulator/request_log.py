"""The emulator's record of every request it relays, as Azure's diagnostic setting archives a storage account's table
logs (``insights-logs-storage*``: one JSON record a line, the documented fields), or, to a file named ``*.log`` as
Storage Analytics' classic ``$logs`` are, in that form (version 1.0: ``;``-separated, quoted fields HTML-encoded): the
ground truth ``loadtest traffic`` is checked against, a run's own counts beside what the records say.

Written as the answer goes back, throttled answers included with Azure's status (503 ServerBusy, 500
OperationTimedOut) and the metrics' response type that tells the partition's target from the account's limit. A SAS
signature in a request's URI is written redacted (``sig=***``), as the tool writes one nowhere.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import unquote

from ..redact import redact
from ..service.error_codes import service_message, throttle_reason
from ..service.log_forms import CLASSIC_FIELDS
from ..workload.table_uri import category_of, operation_name

__all__ = ["CLASSIC_SUFFIX", "RESPONSE_TYPES", "RequestLog", "answer_of", "classic_line", "log_time"]

#: A request log named so is written in the classic form, as ``$logs/table/…/NNNNNN.log`` are.
CLASSIC_SUFFIX = ".log"
#: How the classic form encodes a quoted field's characters: HTML entities, so no ``;``, quote or newline is bare.
_ENCODED = str.maketrans({"&": "&amp;", '"': "&quot;", ";": "&#59;", "\n": "&#10;", "\r": "&#13;"})

#: The metrics' response type of a throttled answer, by why it was refused (``service_errors.THROTTLE_REASONS``).
RESPONSE_TYPES = {
    "partition": "ServerBusyError",
    "account": "ClientAccountRequestThrottlingError",
    "timeout": "ServerTimeoutError",
}
_RESOURCE = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/partition-stress/providers/Microsoft.Storage"


def log_time(epoch: float) -> str:
    """A record's time as the logs write it: UTC, seven fractional digits, ``Z``."""
    moment = datetime.fromtimestamp(epoch, UTC)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond * 10:07d}Z"


def _headers(lines: list[bytes]) -> dict[str, str]:
    """A head's header lines by lower-case name."""
    named = (line.decode("latin-1").partition(":") for line in lines[1:])
    return {name.strip().lower(): value.strip() for name, _, value in named}


def answer_of(head: bytes, body: bytes) -> tuple[int, str | None, str | None]:
    """(status, the service's error code, why a throttled answer was refused) of an answer as sent."""
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ", 2)[1])
    code = _headers([line + b"\r\n" for line in lines if line]).get("x-ms-error-code") if status >= 400 else None
    throttled = status in (503, 504) or code == "OperationTimedOut"
    return status, code, throttle_reason(status, code, service_message(body)) if throttled else None


def _identity(authorization: str, query: str) -> dict[str, str]:
    if "sig=" in query:
        return {"type": "SAS"}
    scheme = authorization.split(" ", 1)[0]
    return {"type": {"SharedKey": "SharedKey", "SharedKeyLite": "SharedKey", "Bearer": "OAuth"}.get(scheme, "Anonymous")}


def _quoted(text: str) -> str:
    return '"' + text.translate(_ENCODED) + '"'


def _classic_status(status: int, code: str, identity: str) -> str:
    """Storage Analytics' status message for an answer (its documented names): a throttled one says by whose
    requests, not whether the partition's target or the account's limit refused it (the classic form cannot tell)."""
    if status == 503:
        return {"SAS": "SASThrottlingError", "Anonymous": "AnonymousThrottlingError"}.get(identity, "ThrottlingError")
    if status == 504 or code == "OperationTimedOut":
        return "ServerTimeoutError"
    if status < 400:
        return "Success"
    return "AuthorizationError" if status == 403 else "ClientOtherError" if status < 500 else "ServerOtherError"


def classic_line(record: dict[str, Any]) -> str:
    """A diagnostic record as the classic form's version 1.0 line says the same request: its request id the record's
    correlation id, the response's packet size its head and body together, the authentication and the status message
    as the form names them."""
    p, identity = record["properties"], record["identity"]["type"]
    values = {
        "version": "1.0",
        "request-start-time": record["time"],
        "operation-type": record["operationName"],
        "request-status": _classic_status(record["statusCode"], record["statusText"], identity),
        "http-status-code": str(record["statusCode"]),
        "end-to-end-latency-in-ms": str(record["durationMs"]),
        "server-latency-in-ms": str(p["serverLatencyMs"]),
        "authentication-type": {"SAS": "sas", "Anonymous": "anonymous"}.get(identity, "authenticated"),
        "requester-account-name": p["accountName"] if identity != "Anonymous" else "",
        "owner-account-name": p["accountName"],
        "service-type": "table",
        "request-url": _quoted(record["uri"]),
        "requested-object-key": _quoted(p["objectKey"]),
        "request-id-header": record["correlationId"],
        "operation-count": str(p["operationCount"]),
        "requester-ip-address": record["callerIpAddress"],
        "request-version-header": record["operationVersion"],
        "request-header-size": str(p["requestHeaderSize"]),
        "request-packet-size": str(p["requestBodySize"]),
        "response-header-size": str(p["responseHeaderSize"]),
        "response-packet-size": str(p["responseHeaderSize"] + p["responseBodySize"]),
        "request-content-length": str(p["requestBodySize"]),
        "user-agent-header": _quoted(p["userAgentHeader"]),
        "client-request-id": _quoted(p["clientRequestId"]) if p["clientRequestId"] else "",
    }
    return ";".join(values.get(name, "") for name in CLASSIC_FIELDS) + "\n"


class RequestLog:
    """Appends one record per relayed request to ``path``, in the diagnostic archive's form or (a ``*.log``) the
    classic form (line-buffered: each record on disk once its answer has gone, whenever the emulator is stopped)."""

    def __init__(self, path: Path, *, host: str, port: int) -> None:
        self.file: TextIO = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 -- open for the server's life
        self.origin = f"http://{host}:{port}"
        self.classic = Path(path).suffix.lower() == CLASSIC_SUFFIX

    def write(
        self,
        *,
        started: float,
        ended: float,
        server_ms: float,
        head: list[bytes],
        request_bytes: tuple[int, int],
        answer: tuple[bytes, bytes],
        caller: str,
    ) -> None:
        """One request: when it came and went, what it asked (its head's lines, its head's and body's sizes) and what
        it was answered (the answer's head and body as sent)."""
        method, target = head[0].decode("latin-1").split(" ", 2)[:2]
        headers = _headers(head)
        status, error_code, reason = answer_of(*answer)
        path, _, query = target.partition("?")
        decoded = unquote(path)
        operation = operation_name(method, decoded, if_match="if-match" in headers)
        account, _, rest = decoded.lstrip("/").partition("/")
        table = rest.split("(", 1)[0]
        status_text = "Success" if status < 400 else (error_code or f"HTTP{status}")
        record = {
            "time": log_time(started),
            "resourceId": f"{_RESOURCE}/storageAccounts/{account}/tableServices/default",
            "category": category_of(operation),
            "operationName": operation,
            "operationVersion": headers.get("x-ms-version", ""),
            "schemaVersion": "1.0",
            "statusCode": status,
            "statusText": status_text,
            "durationMs": round((ended - started) * 1000),
            "callerIpAddress": caller,
            "correlationId": str(uuid.uuid4()),
            "identity": _identity(headers.get("authorization", ""), query),
            "location": "loopback",
            "properties": {
                "accountName": account,
                "userAgentHeader": headers.get("user-agent", ""),
                "clientRequestId": headers.get("x-ms-client-request-id", ""),
                "serverLatencyMs": round(server_ms),
                "serviceType": "table",
                "operationCount": 0,
                "requestHeaderSize": request_bytes[0],
                "requestBodySize": request_bytes[1],
                "responseHeaderSize": len(answer[0]),
                "responseBodySize": len(answer[1]),
                "objectKey": f"/{account}/{table}" if table and table != "$batch" else f"/{account}",
                "metricResponseType": RESPONSE_TYPES.get(reason or "", "Success" if status < 400 else "ClientOtherError"),
            },
            "uri": redact(self.origin + target),
            "protocol": "HTTP",
        }
        self.file.write(classic_line(record) if self.classic else json.dumps(record, separators=(",", ":")) + "\n")

    def close(self) -> None:
        self.file.close()
