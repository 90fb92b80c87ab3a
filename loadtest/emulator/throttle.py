"""The throttling emulator's decisions on requests: what each one costs as the docs count it, and Azure's own
answer when the budgets refuse it.

The relay (``relay``) hands each request's line and body here, and each query's answer. A request's entities
are counted as the docs count them (a batch = its operations; a query = the rows it scans in each partition it reads,
charged when the answer comes back: ``queries``) against the budgets (``budgets``). Over budget it answers as Azure
does: 503 with ``x-ms-error-code: ServerBusy`` and the JSON ``odata.error`` body, its message Azure's for a partition
over its target or for the account over its operations per second (a configurable share as 500 OperationTimedOut),
so azure-data-tables raises what it raises against Azure.

Not modelled: errors inside batch responses (a throttled batch is refused whole, before it reaches Azurite).
"""

from __future__ import annotations

import json
import random
import re
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from urllib.parse import unquote

from ..service.error_codes import ACCOUNT_LIMITS, PARTITION_BUSY
from ..workload.table_uri import entity_keys
from .budgets import Budget, Budgets, KeyEnds, PartitionLayer
from .queries import Query, is_query, query_of

__all__ = ["Throttle", "charge_of"]

_BATCH_OP = re.compile(rb"^(GET|POST|PUT|MERGE|PATCH|DELETE) (\S+) HTTP/1\.1", re.M)
_BODY_PK = re.compile(rb'"PartitionKey"\s*:\s*"((?:[^"\\]|\\.)*)"')
_TIMED_OUT = "Operation could not be completed within the specified time."


def charge_of(method: str, path: str, query: str, body: bytes) -> tuple[str | None, int]:
    """(PartitionKey, entities) a request costs before it runs; queries are charged on their answer."""
    path = unquote(path)
    if "$batch" in path:
        operations = _BATCH_OP.findall(body)
        keys = _BODY_PK.findall(body)
        pk = keys[0].decode() if keys else None
        if pk is None:
            for _, url in operations:
                keys = entity_keys(unquote(url.decode()))
                if keys:
                    pk = keys[0]
                    break
        return pk, len(operations)
    point = entity_keys(path)
    if point:
        return point[0], 1
    if method == "POST" and not path.rstrip("/").endswith("Tables"):
        found = _BODY_PK.search(body)
        return (found.group(1).decode() if found else None), 1
    if method == "GET":
        return query_of(query).partition, 0
    return None, 0


class Throttle:
    """The budgets' decisions on requests: refuse one as Azure does over budget, or let it through and charge it.

    The wire (``emulator_wire``) hands it each request's line and body, and each query's answer.
    """

    def __init__(self, budgets: Budgets, *, seed: int | None = None, splits_file: Path | None = None) -> None:
        b = budgets
        self.layer = PartitionLayer(b.server_rate, b.lb_delay, b.lb_offline) if b.server_rate else None
        self.splits_file, self._recorded = splits_file, 0
        self._epoch = time.time() - time.monotonic()  # the layer's clock to wall-clock seconds (the run's buckets')
        self.partition_rate, self.burst, self.account = b.partition_rate, b.burst, Budget(b.account_rate, b.burst)
        self.partitions: dict[str, Budget] = {}
        self.ends = None if b.per_key_only else KeyEnds(b.partition_rate, b.burst)
        self.timeout_share, self.page_rows = b.timeout_share, b.page_rows
        self.rng = random.Random(seed)

    def refusal(self, method: str, path: str, query: str, body: bytes) -> tuple[bytes | None, Query | None]:
        """(Azure's whole over-budget answer, or None to let the request through; a query's reading, to charge its
        answer: ``charge``)."""
        if method == "GET" and is_query(path):
            read = query_of(query, self.page_rows)
            over = self._over(read.start, 0)  # charged on its answer: the rows it read
            return (self._busy(over), None) if over else (None, read)
        pk, entities = charge_of(method, path, query, body)
        over = (entities or method == "GET") and self._over(pk, entities)
        return (self._busy(over) if over else None), None

    def late_refusal(self, read: Query, rows: list[dict] | None) -> bytes | None:
        """A query that named no partition to start at (a table scan) is admitted on the first row it read."""
        if read.start is not None or not rows or "PartitionKey" not in rows[0]:
            return None
        over = self._over(rows[0]["PartitionKey"], 0)
        return self._busy(over) if over else None

    def charge(self, scanned: Counter[str | None]) -> None:
        """A query's answer: the rows it scanned, each partition's to its budget (and its range's), all to the account."""
        self.account.take(sum(scanned.values()))
        for pk, entities in scanned.items():
            if pk is not None:
                self.partitions.setdefault(pk, Budget(self.partition_rate, self.burst)).take(entities)
                if self.ends is not None:
                    self.ends.charge(pk, entities, time.monotonic())
                if self.layer is not None:
                    self.layer.charge(pk, entities)

    def _over(self, pk: str | None, entities: int) -> str:
        """Which budget refuses the request ("account", "partition"), or "" to let it through (and charge it)."""
        now = time.monotonic()
        partition = self.partitions.setdefault(pk, Budget(self.partition_rate, self.burst)) if pk is not None else None
        if not self.account.has(now):
            return "account"
        if partition is not None and not partition.has(now):
            return "partition"
        if self.ends is not None and pk is not None and not self.ends.admit(pk, now):
            return "partition"  # the range where new keys land: one range partition's target
        if self.layer is not None and pk is not None and not self.layer.admit(pk, entities, now):
            if len(self.layer.splits) > self._recorded:
                self._record_splits()
            return "partition"  # its range's server: the partition layer's own over-target answer
        self.account.take(entities)
        if partition is not None:
            partition.take(entities)
            if self.ends is not None:
                self.ends.charge(pk, entities, now)
        return ""

    def _record_splits(self) -> None:
        """Each new split as a JSON line in ``splits_file`` (wall-clock seconds): the run that started the emulator
        names the outages it caused."""
        assert self.layer is not None
        new, self._recorded = self.layer.splits[self._recorded :], len(self.layer.splits)
        if self.splits_file is None:
            return
        lines = "".join(
            json.dumps({**asdict(split), "t": split.t + self._epoch, "offline_until_t": split.offline_until_t + self._epoch})
            + "\n"
            for split in new
        )
        with open(self.splits_file, "a", encoding="utf-8") as file:
            file.write(lines)

    def _busy(self, reason: str) -> bytes:
        """503 ServerBusy worded for the budget that refused (a partition's, or the account's operations per second),
        or, for ``timeout_share`` of them, 500 OperationTimedOut: as the service words them."""
        if self.rng.random() < self.timeout_share:
            code, status, message = "OperationTimedOut", "500 Internal Server Error", _TIMED_OUT
        else:
            code, status = "ServerBusy", "503 Service Unavailable"
            message = ACCOUNT_LIMITS[0] if reason == "account" else PARTITION_BUSY
        body = json.dumps({"odata.error": {"code": code, "message": {"lang": "en-US", "value": message}}}).encode()
        head = (
            f"HTTP/1.1 {status}\r\nContent-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n"
            f"x-ms-error-code: {code}\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        return head.encode() + body
