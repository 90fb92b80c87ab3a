"""Table operations, each timed and fired as one Locust request event with its entity count.

The client never calls a collector: it fires ``environment.events.request`` with the
partition, op class, entities (as the docs count them), attempts and error code in the
event's ``context`` (``timed_requests``). The PartitionKey stays out of the request name (Locust's tables and
exporters assume few names). Underneath, a transport (``--client``) speaks HTTP.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from locust.event import EventHook

from ..account.endpoint import Target
from ..service.entities import MAX_PAGE_ENTITIES, check_batch
from ..service.operations import OPERATIONS, Operation
from ..service.retry import DEFAULT_RETRY, RetryStrategy, parse_retry
from ..transports.base import transport_class
from ..workload.keys import KeyStrategy
from ..workload.query_reach import reach_of
from .timed_requests import TimedRequests

__all__ = ["TableSession"]

READ, SCAN, FILTER_SCAN = OPERATIONS["read"], OPERATIONS["scan"], OPERATIONS["filter-scan"]
PARTITION_SCAN, TABLE_SCAN = OPERATIONS["partition-scan"], OPERATIONS["table-scan"]
INSERT, UPSERT, REPLACE, DELETE = OPERATIONS["insert"], OPERATIONS["upsert"], OPERATIONS["replace"], OPERATIONS["delete"]
UPDATE, UPDATE_ETAG, BATCH = OPERATIONS["update"], OPERATIONS["update-etag"], OPERATIONS["batch"]
QUERY = OPERATIONS["query"]


def _with_partition_key(select: list[str] | None) -> list[str] | None:
    """A projection that keeps each row's PartitionKey: rows across partitions are counted where they were."""
    return select if not select or "PartitionKey" in select else [*select, "PartitionKey"]


def _written(op: Operation, pk: str, rk: str) -> tuple[tuple[str, str, str], ...]:
    """What the integrity ledger records once the service acknowledges the write."""
    return ((op.name, pk, rk),)


class TableSession(TimedRequests):
    """One user's table client: each method is one operation, sent through the transport, timed, counted and fired."""

    def __init__(
        self,
        *,
        target: Target,
        table: str,
        request_event: EventHook,
        retry: RetryStrategy | None = None,
        seed: str | None = None,
        client: str = "fast",
        request_ids: str | None = None,
        client_id: str | None = None,
        names: str = "",
        keys: KeyStrategy | None = None,
        seeded: int = 0,
    ) -> None:
        """``request_ids``, ``client_id``, ``names``: as ``TimedRequests`` takes them. ``keys`` and ``seeded``: what the
        run seeded, for the rows a query scans."""
        super().__init__(request_event=request_event, request_ids=request_ids, client_id=client_id, names=names)
        self._keys, self._seeded = keys, seeded
        self._last_read: tuple[str, str] | None = None  # a write of the entity just read: an upsert would do
        strategy = retry or parse_retry(DEFAULT_RETRY)
        self.transport = transport_class(client)(target=target, table=table, retry=strategy, seed=seed, hooks=self)

    def _write(self, op: Operation, entity: dict[str, Any], call: Callable[[], None]) -> Any:
        pk, rk = entity["PartitionKey"], entity["RowKey"]
        extra = {"client": self._client}  # one client's writes to one partition in one second: a batch would carry them
        if self._last_read == (pk, rk) and op in (INSERT, UPDATE):
            extra["after_read"] = True
        self._last_read = None
        if op is INSERT:
            extra["rows"] = 1  # the table grows by it (upserts and updates address seeded rows)
        return self._run(op, pk, 1, lambda: call() or True, written=_written(op, pk, rk), **extra)

    # --- the operations -------------------------------------------------------------------

    def read(self, pk: str, rk: str, select: list[str] | None = None) -> Any:
        """The entity (azure-data-tables' ``TableEntity``, its ETag in ``.metadata``), or None on failure."""
        self._last_read = (pk, rk)
        return self._run(READ, pk, 1, lambda: self.transport.get(pk, rk, select), select=bool(select))

    def insert(self, entity: dict[str, Any]) -> Any:
        return self._write(INSERT, entity, lambda: self.transport.insert(entity))

    def upsert(self, entity: dict[str, Any]) -> Any:
        return self._write(UPSERT, entity, lambda: self.transport.upsert(entity, UPSERT.mode))

    def replace(self, entity: dict[str, Any]) -> Any:
        return self._write(REPLACE, entity, lambda: self.transport.upsert(entity, REPLACE.mode))

    def update(self, entity: dict[str, Any], etag: str | None = None) -> Any:
        """Merge into an existing entity: unconditionally (If-Match *) or only if ``etag`` still matches."""
        op = UPDATE if etag is None else UPDATE_ETAG
        return self._write(op, entity, lambda: self.transport.update(entity, op.mode, etag))

    def delete(self, pk: str, rk: str) -> Any:
        self._last_read = None
        call = lambda: self.transport.delete(pk, rk) or True
        return self._run(DELETE, pk, 1, call, written=_written(DELETE, pk, rk), client=self._client, rows=-1)

    def batch(self, operations: list[tuple[str, dict[str, Any]]], *, new_rows: int | None = None) -> Any:
        """One entity group transaction, counted operation by operation (a batch of N = N entities).

        Checked before sending: at most 100 operations, one PartitionKey, at most 4 MiB. ``new_rows``: the entities it
        adds to the table, less those it deletes (default: its inserts less its deletes; an upsert's row may be new).
        """
        check_batch(operations)
        counts = Counter(kind for kind, _ in operations)
        pk = operations[0][1]["PartitionKey"]
        written = tuple((kind, e["PartitionKey"], e["RowKey"]) for kind, e in operations)
        ops = [(OPERATIONS[kind], entity) for kind, entity in operations]
        rows = counts["insert"] - counts["delete"] if new_rows is None else new_rows
        call = lambda: self.transport.batch(ops) or True
        return self._run(BATCH, pk, len(operations), call, operations=dict(counts), written=written, rows=rows)

    def scan(
        self,
        pk: str,
        low: str,
        high: str,
        *,
        page_size: int = MAX_PAGE_ENTITIES,
        select: list[str] | None = None,
        where: str | None = None,
        known_rows: int | None = None,
        asked: int = 0,
    ) -> Any:
        """A row range scan inside one partition, following continuation tokens to the end.

        A RowKey range is a seek: the service scans what it returns. With a property filter
        (``where``) it scans the whole range and returns the matches: then the entities counted
        are the rows the run knows the range holds (``known_rows``), marked as an estimate. A scan
        refused before it read (throttled) is demand for the rows it asked (``asked``, else
        ``known_rows``): an answered one counts what it read.
        """
        query = "PartitionKey eq @pk and RowKey ge @lo and RowKey lt @hi" + (f" and ({where})" if where else "")
        parameters = {"pk": pk, "lo": low, "hi": high}

        def call() -> int:
            rows = self.transport.query(
                query, parameters, select=select, page_size=min(page_size, MAX_PAGE_ENTITIES), decode=False
            )
            return sum(1 for _ in rows)

        def counted(returned: int) -> dict[str, Any]:
            if where and known_rows is not None:
                return {"entities": max(known_rows, returned), "returned": returned, "estimated": True}
            return {"entities": returned, "returned": returned}

        return self._run(FILTER_SCAN if where else SCAN, pk, asked or known_rows or 0, call, counted, select=bool(select))

    def scan_partitions(self, low: str, high: str, *, limit: int, select: list[str] | None = None) -> Any:
        """A partition range scan (PartitionKeys in [low, high)), or a full table scan when both are empty.

        It reads ``limit`` rows, or to the end: pages until then, each asking for what remains (a page cut short
        continues). Counted per PartitionKey it read (context ``partitions``): every row of every page.
        """
        op = PARTITION_SCAN if low or high else TABLE_SCAN
        query = "PartitionKey ge @lo and PartitionKey lt @hi" if op is PARTITION_SCAN else None
        parameters = {"lo": low, "hi": high} if query else None
        projected, select = bool(select), _with_partition_key(select)
        page = min(limit, MAX_PAGE_ENTITIES)

        def call() -> Counter[str]:
            rows = self.transport.query(query, parameters, select=select, page_size=page, limit=limit, decode=False)
            return Counter(row["PartitionKey"] for row in rows)

        def counted(touched: Counter[str]) -> dict[str, Any]:
            first = min(touched) if touched else low or "(table)"
            entities = sum(touched.values())
            return {"entities": entities, "returned": entities, "partition": first, "partitions": dict(touched)}

        return self._run(op, low or "(table)", 0, call, counted, select=projected)  # refused: which keys it would read, unknown

    def query(
        self,
        filter: str | None,
        *,
        parameters: dict[str, Any] | None = None,
        select: list[str] | None = None,
        top: int | None = None,
        name: str | None = None,
    ) -> list[Any] | None:
        """The application's own query: the entities matching the OData ``filter`` (``@name`` values from
        ``parameters``, as azure-data-tables' ``query_entities`` takes them), at most ``top``; None on failure.

        ``name`` is Locust's request name (default ``GET query``): give each of your queries its own, and the report
        shows each one's query density. Entities are counted as the docs count them, as rows scanned: the service
        seeks on the filter's key conditions and scans every row inside them. Without other conditions it scans what
        it returns; with a property condition the count is the rows the run seeded inside the key range (``returned``
        keeps what came back), marked as estimated. A query cut short by ``top`` counts what it returned.
        """
        reach = reach_of(filter, parameters)  # a filter it cannot read fails here, before anything is sent
        if top is not None and top < 1:
            raise ValueError(f"query: top must be at least 1, not {top}")
        projected = bool(select)
        if reach.partition is None:
            select = _with_partition_key(select)

        def call() -> list[Any]:
            page = min(top or MAX_PAGE_ENTITIES, MAX_PAGE_ENTITIES)
            return list(self.transport.query(filter, parameters, select=select, page_size=page, limit=top))

        def counted(found: list[Any]) -> dict[str, Any]:
            one = reach.partition
            touched = Counter({one: len(found)}) if one is not None else Counter(row["PartitionKey"] for row in found)
            return reach.counted(touched, self._keys, self._seeded, cut_short=bool(top) and len(found) >= top)

        return self._run(QUERY, reach.partition or "(table)", 0, call, counted, name, select=projected)

    def close(self) -> None:
        self.transport.close()
