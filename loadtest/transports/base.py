"""What a user's table session needs from a transport, whichever library speaks HTTP underneath.

``--client`` picks the transport: ``fast`` is ``rest.RestTransport`` (the lean REST client on
geventhttpclient, the default), ``sdk`` is ``sdk.SdkTransport`` (azure-data-tables, the reference). Both raise
``error_codes.ServiceError`` classified by the service's error code, retry as the run's
``RetryStrategy`` says (per HTTP request, so a query's pages are not restarted), and report
every answer and every wait to the hooks, so that attempts, throttled attempts and backoff
are counted alike. Every attempt carries the operation's client request id, the key that joins
the run to the service's own logs (``StorageTableLogs.ClientRequestId``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib import import_module
from typing import Any, Protocol

from ..service.operations import Operation

__all__ = ["TRANSPORTS", "AttemptHooks", "Entity", "Transport", "transport_class"]

Entity = Mapping[str, Any]

#: ``--client``: each transport by the name the option gives it, with where it lives (imported only when used).
TRANSPORTS: dict[str, tuple[str, str]] = {
    "fast": ("loadtest.transports.rest", "RestTransport"),  # the lean REST transport, the default
    "sdk": ("loadtest.transports.sdk", "SdkTransport"),  # azure-data-tables, the reference
}


class AttemptHooks(Protocol):
    def on_attempt(self, status: int, error_code: str | None, message: str = "") -> None:
        """An answer came back (every attempt, every result page); ``message``: a throttled answer's, which tells its
        reason (``error_codes.throttle_reason``)."""

    def on_backoff(self, seconds: float) -> None:
        """A retry is about to happen after waiting ``seconds`` (0 for a connection error)."""


class Transport(Protocol):
    """One user's connection to one table. Entities come back as azure-data-tables' ``TableEntity``."""

    def set_request_id(self, value: str) -> None:
        """The ``x-ms-client-request-id`` every attempt of the next operation carries (its pages too)."""

    def get(self, pk: str, rk: str, select: list[str] | None = None) -> Any: ...

    def insert(self, entity: Entity) -> None: ...

    def upsert(self, entity: Entity, mode: str) -> None: ...

    def update(self, entity: Entity, mode: str, etag: str | None = None) -> None: ...

    def delete(self, pk: str, rk: str) -> None: ...

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
        """Matching entities, page after page: every row each page brought. With ``limit``, pages until that many
        rows or the end, each asking only for what remains (a page may come back short with a continuation token:
        Azure cuts pages at partition-server boundaries). With ``decode=False`` a transport may yield its rows
        undecoded (mappings with ``PartitionKey`` and ``RowKey``): the load only counts them."""

    def batch(self, operations: list[tuple[Operation, Entity]]) -> None: ...

    def close(self) -> None: ...


def transport_class(client: str) -> type[Transport]:
    module, name = TRANSPORTS[client]
    return getattr(import_module(module), name)
