"""The lean Table service REST client (``--client fast``, the default): the load's own transport.

Locust's answer to an expensive client is FastHttpUser on geventhttpclient; this is the same
for Tables. One keep-alive connection per user (Nagle off), a fixed service version, JSON,
``Prefer: return-no-content`` on inserts, the request signed once per attempt, and nothing
else on the way: no pipeline of policies. Entities are (de)serialised by azure-data-tables' own
converters, so every property type reads back exactly as the SDK writes it, and the reverse.
"""

from __future__ import annotations

import json
import random
import re
import socket
import uuid
from collections.abc import Iterator, Mapping
from datetime import UTC
from http.client import HTTPException
from typing import Any
from urllib.parse import quote, urlparse

import gevent
from azure.data.tables._deserialize import TablesEntityDatetime, _convert_to_entity, _from_entity_datetime
from azure.data.tables._entity import TableEntity
from azure.data.tables._serialize import _add_entity_properties, _parameter_filter_substitution
from geventhttpclient import HTTPClient

from ..account.endpoint import Target
from ..service.error_codes import CONNECTION_ERROR, TIMEOUT, ServiceError, is_throttling, service_code, service_message
from ..service.operations import Operation
from ..service.retry import RetryStrategy
from .auth import Auth, auth_for
from .base import AttemptHooks, Entity

__all__ = ["RestTransport", "body_of", "entity_of"]

SERVICE_VERSION = "2019-02-02"
JSON = "application/json"
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_.~-]*")
_FAILED_PART = re.compile(rb"^HTTP/1\.1 ([45]\d\d)", re.M)
_BATCH_METHOD = {
    ("create", ""): "POST",
    ("upsert", "merge"): "MERGE",
    ("upsert", "replace"): "PUT",
    ("update", "merge"): "MERGE",
    ("update", "replace"): "PUT",
    ("delete", ""): "DELETE",
}


def entity_of(row: dict[str, Any]) -> TableEntity:
    """azure-data-tables' own conversion of a JSON row, without its strptime of ``Timestamp`` (most of its cost)."""
    stamp = row.pop("Timestamp", None)
    entity = _convert_to_entity(row)
    if stamp:
        metadata = entity.metadata
        if not metadata.get("etag"):
            metadata["etag"] = f"W/\"datetime'{quote(stamp)}'\""
        metadata["timestamp"] = _timestamp(stamp)
    return entity


def _timestamp(text: str) -> TablesEntityDatetime:
    """``2026-11-22T11:36:01.1234567Z`` as the SDK reads it (microseconds; the service's own text kept)."""
    try:
        fraction = text[20:-1] if text[19] == "." else ""
        stamp = TablesEntityDatetime(
            int(text[0:4]),
            int(text[5:7]),
            int(text[8:10]),
            int(text[11:13]),
            int(text[14:16]),
            int(text[17:19]),
            int(fraction[:6].ljust(6, "0")) if fraction else 0,
            tzinfo=UTC,
        )
    except (ValueError, IndexError):
        return _from_entity_datetime(text)
    stamp._service_value = text
    return stamp


def body_of(entity: Entity) -> bytes:
    """An entity as JSON. Strings, booleans and 32-bit integers need no type annotation (the service infers
    them, and reads them back as the SDK wrote them): the load's entities go straight to the encoder; any
    other value takes azure-data-tables' own conversion."""
    for value in entity.values():
        kind = type(value)
        if not (kind is str or kind is bool or (kind is int and -(2**31) <= value < 2**31)):
            return json.dumps(_add_entity_properties(entity)).encode()
    return json.dumps(entity).encode()


def _key(value: str) -> str:
    """A key in an entity's URL: single quotes doubled, then percent-encoded (most keys need neither)."""
    return value if _PLAIN_KEY.fullmatch(value) else quote(value.replace("'", "''"), safe="")


class RestTransport:
    """``base.Transport`` over one geventhttpclient connection."""

    def __init__(self, *, target: Target, table: str, retry: RetryStrategy, seed: str | None, hooks: AttemptHooks) -> None:
        url = urlparse(target.endpoint)
        self.endpoint, self.table, self.hooks = target.endpoint, table, hooks
        self.root = url.path.rstrip("/")  # /devstoreaccount1 on Azurite, empty on Azure
        self.base = f"{self.root}/{table}"
        self.auth: Auth = auth_for(target)
        self.retry, self.rng = retry, random.Random(seed)
        self.http = HTTPClient(
            url.hostname,
            url.port,
            ssl=url.scheme == "https",
            concurrency=1,
            connection_timeout=target.connect_timeout,
            network_timeout=target.timeout,  # per read: no answer within --timeout is a Timeout
        )
        # geventhttpclient's hook for socket options is its pool's after_connect (HTTPClient builds the pool itself)
        self.http._connection_pool.after_connect = _nagle_off
        self.headers = {
            "x-ms-version": SERVICE_VERSION,
            "DataServiceVersion": "3.0",
            "Accept": f"{JSON};odata=minimalmetadata",
        }  # x-ms-client-request-id once set_request_id is called (not when seeding)

    def set_request_id(self, value: str) -> None:
        self.headers["x-ms-client-request-id"] = value

    # --- one HTTP request, signed, sent, retried as the strategy says ---------------------------

    def _send(
        self,
        method: str,
        path: str,
        query: str = "",
        body: bytes = b"",
        headers: Mapping[str, str] | None = None,
        content_type: str = "",
    ) -> tuple[Any, bytes]:
        """The answer (its headers) and its body; a ServiceError for a failure left after the retries."""
        retries = 0
        while True:
            sent = {**self.headers, **(headers or {})}
            if content_type:
                sent["Content-Type"] = content_type
            sent.update(self.auth.headers(method, path, content_type))
            uri = path + self.auth.query(query)
            try:
                response = self.http.request(method, uri, body=body, headers=sent)
                answer = response.read()
                response.release()
            except (OSError, HTTPException) as err:  # no answer; geventhttpclient dropped the connection
                if retries < self.retry.retries:  # retried at once (a timeout has waited long enough)
                    retries += 1
                    self.hooks.on_backoff(0.0)
                    continue
                raise ServiceError(TIMEOUT if isinstance(err, TimeoutError) else CONNECTION_ERROR, None) from err
            status = response.status_code
            code = (service_code(response, answer) or f"HTTP{status}") if status >= 400 else None
            if code is None:
                self.hooks.on_attempt(status, code)
                return response, answer
            throttled = is_throttling(status, code)
            self.hooks.on_attempt(status, code, service_message(answer) if throttled else "")  # its reason is in the words
            if throttled and retries < self.retry.retries:
                retries += 1
                wait = self.retry.backoff(retries, self.rng)
                self.hooks.on_backoff(wait)
                gevent.sleep(wait)
                continue
            raise ServiceError(code, status)

    def _entity(self, pk: str, rk: str) -> str:
        return f"{self.table}(PartitionKey='{_key(pk)}',RowKey='{_key(rk)}')"

    def _entity_path(self, pk: str, rk: str) -> str:
        return f"{self.root}/{self._entity(pk, rk)}"

    def _write(self, method: str, entity: Entity, if_match: str | None) -> None:
        headers = {"If-Match": if_match} if if_match else None
        body = body_of(entity)
        self._send(
            method, self._entity_path(entity["PartitionKey"], entity["RowKey"]), body=body, headers=headers, content_type=JSON
        )

    # --- the operations ---------------------------------------------------------------------

    def get(self, pk: str, rk: str, select: list[str] | None = None) -> Any:
        query = "$select=" + quote(",".join(select), safe=",") if select else ""
        response, body = self._send("GET", self._entity_path(pk, rk), query)
        entity = entity_of(json.loads(body))
        if not entity.metadata.get("etag"):
            entity.metadata["etag"] = response.get("ETag")
        return entity

    def insert(self, entity: Entity) -> None:
        body = body_of(entity)
        self._send("POST", self.base, body=body, headers={"Prefer": "return-no-content"}, content_type=JSON)

    def upsert(self, entity: Entity, mode: str) -> None:
        self._write("MERGE" if mode == "merge" else "PUT", entity, None)  # no If-Match: insert or merge/replace

    def update(self, entity: Entity, mode: str, etag: str | None = None) -> None:
        self._write("MERGE" if mode == "merge" else "PUT", entity, etag or "*")

    def delete(self, pk: str, rk: str) -> None:
        self._send("DELETE", self._entity_path(pk, rk), headers={"If-Match": "*"})

    def query(
        self,
        where: str | None,
        parameters: Mapping[str, Any] | None,
        *,
        select: list[str] | None,
        page_size: int,
        limit: int | None = None,
        decode: bool = True,
    ) -> Iterator[Any]:
        """Every matching entity, page by page, following continuation tokens, up to ``limit`` rows if given, each
        page asking for what remains (undecoded rows if not ``decode``)."""
        params = []
        if where:
            params.append("$filter=" + quote(_parameter_filter_substitution(parameters, where), safe=""))
        if select:
            params.append("$select=" + quote(",".join(select), safe=","))
        fixed, continuation, left = "".join(f"&{param}" for param in params), "", limit
        while True:
            top = page_size if left is None or left >= page_size else left
            response, body = self._send("GET", f"{self.base}()", f"$top={top}{fixed}{continuation}")
            rows = json.loads(body)["value"]
            yield from map(entity_of, rows) if decode else rows
            next_pk = response.get("x-ms-continuation-NextPartitionKey")
            if left is not None:
                left -= len(rows)
            if not next_pk or (left is not None and left <= 0):
                return
            continuation = f"&NextPartitionKey={quote(next_pk, safe='')}"
            next_rk = response.get("x-ms-continuation-NextRowKey")
            continuation += f"&NextRowKey={quote(next_rk, safe='')}" if next_rk else ""

    def batch(self, operations: list[tuple[Operation, Entity]]) -> None:
        """One entity group transaction: a multipart/mixed changeset; a failure names the failing operation."""
        batch, changeset = f"batch_{uuid.uuid4()}", f"changeset_{uuid.uuid4()}"
        parts = [f"--{batch}\r\nContent-Type: multipart/mixed; boundary={changeset}\r\n\r\n".encode()]
        for op, entity in operations:
            method = _BATCH_METHOD[(op.action, op.mode)]
            target = self.table if op.action == "create" else self._entity(entity["PartitionKey"], entity["RowKey"])
            url = f"{self.endpoint}/{target}"
            head = f"{method} {url} HTTP/1.1\r\nAccept: {JSON};odata=minimalmetadata\r\nDataServiceVersion: 3.0\r\n"
            if op.action in ("update", "delete"):
                head += "If-Match: *\r\n"
            body = b""
            if op.action != "delete":
                body = body_of(entity)
                head += f"Content-Type: {JSON}\r\nPrefer: return-no-content\r\n"
            parts.append(
                f"--{changeset}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n{head}\r\n".encode()
                + body
                + b"\r\n"
            )
        parts.append(f"--{changeset}--\r\n\r\n--{batch}--\r\n".encode())
        _, answer = self._send(
            "POST", f"{self.root}/$batch", body=b"".join(parts), content_type=f"multipart/mixed; boundary={batch}"
        )
        _check_batch_answer(answer)

    def close(self) -> None:
        self.http.close()


def _check_batch_answer(answer: bytes) -> None:
    """Raise for the failing operation of a changeset answer (the service answers it alone, with its index)."""
    failed = _FAILED_PART.search(answer)
    if failed:
        status = int(failed.group(1))
        start = answer.find(b"{", failed.end())
        body = answer[start : answer.find(b"\r\n", start)] if start >= 0 else b""
        code, index = _failure(status, body)
        raise ServiceError(code, status, operation=index)


def _failure(status: int, body: bytes) -> tuple[str, int | None]:
    """A failed changeset part: its error code, and the failing operation's index ("2:The specified entity…")."""
    code = service_code({}, body) or f"HTTP{status}"
    try:
        message = str(json.loads(body)["odata.error"]["message"]["value"])
    except (ValueError, KeyError, TypeError):
        return code, None
    index, sep, _ = message.partition(":")
    return code, int(index) if sep and index.isdigit() else None


def _nagle_off(sock: socket.socket) -> None:
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
