"""A throttling emulator in front of Azurite: token buckets of entities/s per PartitionKey and per account.

Azurite never throttles. This HTTP proxy (``emulator_wire``, loopback only) counts each
request's entities as the docs count them (a batch = its operations; a query = the entities
it returns, charged when the answer comes back) against a token bucket per PartitionKey and
one for the account. Over budget it answers as Azure does: 503 with ``x-ms-error-code:
ServerBusy`` and the JSON ``odata.error`` body (a configurable share as 500
OperationTimedOut), so azure-data-tables raises what it raises against Azure. All else passes
through to Azurite untouched (SharedKey signatures do not cover the host, so they hold).

With ``server_rate``, the partition layer of Calder et al. (SOSP 2011) is modelled too: the
key space starts as one RangePartition on one simulated partition server (``server_rate``
entities/s); a range over its budget for ``lb_delay`` seconds is split where its load halves
and the halves go to their own servers, both offline for ``lb_offline`` seconds meanwhile
(503s). One PartitionKey is never split, so a single hot key stays throttled while spread
keys recover. One key space for the account (the test uses one table).

Not modelled: merges of cold ranges, and errors inside batch responses (a throttled batch is
refused whole, before it reaches Azurite).
"""

from __future__ import annotations

import json
import random
import re
import time
from bisect import bisect_right
from collections import Counter
from dataclasses import asdict, dataclass, field
from urllib.parse import unquote

__all__ = ["Budget", "Budgets", "PartitionLayer", "RangePartition", "Throttle", "charge_of"]

_POINT = re.compile(r"\(PartitionKey='((?:[^']|'')*)',\s*RowKey='((?:[^']|'')*)'\)")
_FILTER_PK = re.compile(r"PartitionKey\s+eq\s+'((?:[^']|'')*)'")
_BATCH_OP = re.compile(rb"^(GET|POST|PUT|MERGE|PATCH|DELETE) (\S+) HTTP/1\.1", re.M)
_BODY_PK = re.compile(rb'"PartitionKey"\s*:\s*"((?:[^"\\]|\\.)*)"')
_TIMED_OUT = "Operation could not be completed within the specified time."


@dataclass(frozen=True, kw_only=True)
class Budgets:
    """The emulator's settings. Each default is declared here once: ``loadtest emulator --partition-rate``
    and ``loadtest run --emulator-partition-rate`` both read it (the docs' targets, Azure's load balancing).
    """

    partition_rate: float = 2000  # entities/s per PartitionKey
    account_rate: float = 20000  # entities/s per account
    timeout_share: float = 0.0  # of throttled answers, given as 500 OperationTimedOut
    burst: float = 1.0  # seconds of budget a bucket holds: how long a burst above the budget goes unthrottled
    server_rate: float = 0  # entities/s per simulated partition server; 0 = no range model
    lb_delay: float = 180.0  # seconds over budget before a range is split and moved ("a few minutes")
    lb_offline: float = 5.0  # seconds a moved range is offline ("a few seconds")

    def to_args(self) -> list[str]:
        """The ``loadtest emulator`` flags that give these budgets to a child process."""
        return [arg for name, value in asdict(self).items() for arg in (f"--{name.replace('_', '-')}", f"{value:g}")]


@dataclass
class Budget:
    """A token bucket: ``rate`` entities/s, holding at most ``burst`` seconds' worth."""

    rate: float
    burst: float = 1.0
    tokens: float = field(init=False)
    updated: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.tokens = self.rate * self.burst

    def refill(self, now: float) -> None:
        self.tokens = min(self.rate * self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now

    def has(self, now: float) -> bool:
        self.refill(now)
        return self.tokens > 0

    def take(self, amount: float) -> None:
        self.tokens -= amount  # may go negative: a big scan is paid off before the next request


def charge_of(method: str, path: str, query: str, body: bytes) -> tuple[str | None, int]:
    """(PartitionKey, entities) a request costs before it runs; queries are charged on their answer."""
    path = unquote(path)
    if "$batch" in path:
        operations = _BATCH_OP.findall(body)
        keys = _BODY_PK.findall(body)
        pk = keys[0].decode() if keys else None
        if pk is None:
            for _, url in operations:
                found = _POINT.search(unquote(url.decode()))
                if found:
                    pk = found.group(1).replace("''", "'")
                    break
        return pk, len(operations)
    point = _POINT.search(path)
    if point:
        return point.group(1).replace("''", "'"), 1
    if method == "POST" and not path.rstrip("/").endswith("Tables"):
        found = _BODY_PK.search(body)
        return (found.group(1).decode() if found else None), 1
    if method == "GET":
        found = _FILTER_PK.search(unquote(query))
        return (found.group(1).replace("''", "'") if found else None), 0
    return None, 0


@dataclass
class RangePartition:
    """Keys from ``low`` up to the next range's ``low``, served by one partition server."""

    low: str
    budget: Budget
    load: Counter[str] = field(default_factory=Counter)  # entities per key, since its last split
    over_since: float | None = None
    last_refused: float = 0.0
    offline_until: float = 0.0


class PartitionLayer:
    """RangePartitions on simulated partition servers, split and moved when they stay over budget."""

    def __init__(self, server_rate: float, lb_delay: float, lb_offline: float) -> None:
        self.server_rate, self.lb_delay, self.lb_offline = server_rate, lb_delay, lb_offline
        self.ranges = [RangePartition("", Budget(server_rate))]
        self.splits: list[tuple[float, str]] = []  # (monotonic time, key where a range was cut)

    def find(self, pk: str) -> RangePartition:
        return self.ranges[bisect_right([r.low for r in self.ranges], pk) - 1]

    def admit(self, pk: str, entities: int, now: float) -> bool:
        part = self.find(pk)
        if now < part.offline_until:
            return False  # being moved to another server
        if not part.budget.has(now):
            part.last_refused = now
            if part.over_since is None:
                part.over_since = now
            elif now - part.over_since >= self.lb_delay:
                self._split(part, now)
            return False
        if part.over_since is not None and now - part.last_refused > 1.0:
            part.over_since = None  # a second without refusals: no longer over
        self.charge(pk, entities)
        return True

    def charge(self, pk: str, entities: int) -> None:
        part = self.find(pk)
        part.budget.take(entities)
        part.load[pk] += entities

    def _split(self, part: RangePartition, now: float) -> None:
        keys = sorted(part.load)
        if len(keys) < 2:
            part.over_since = now  # one PartitionKey: the unit of atomicity is never split
            return
        half, seen, at = sum(part.load.values()) / 2, 0, keys[-1]
        for i, key in enumerate(keys[:-1]):
            seen += part.load[key]
            if seen >= half:
                at = keys[i + 1]
                break
        new = RangePartition(at, Budget(self.server_rate, updated=now), Counter({k: v for k, v in part.load.items() if k >= at}))
        part.load = Counter({k: v for k, v in part.load.items() if k < at})
        part.budget, part.over_since = Budget(self.server_rate, updated=now), None
        part.offline_until = new.offline_until = now + self.lb_offline
        self.ranges.insert(self.ranges.index(part) + 1, new)
        self.splits.append((now, at))


class Throttle:
    """The budgets' decisions on requests: refuse one as Azure does over budget, or let it through and charge it.

    The wire (``emulator_wire``) hands it each request's line and body, and each query's answer.
    """

    def __init__(self, budgets: Budgets, *, seed: int | None = None) -> None:
        b = budgets
        self.layer = PartitionLayer(b.server_rate, b.lb_delay, b.lb_offline) if b.server_rate else None
        self.partition_rate, self.burst, self.account = b.partition_rate, b.burst, Budget(b.account_rate, b.burst)
        self.partitions: dict[str, Budget] = {}
        self.timeout_share = b.timeout_share
        self.rng = random.Random(seed)

    def refusal(self, method: str, path: str, query: str, body: bytes) -> tuple[bytes | None, str | None]:
        """(Azure's whole over-budget answer, or None to let the request through; the PartitionKey of a query,
        to charge its answer)."""
        pk, entities = charge_of(method, path, query, body)
        if (entities or method == "GET") and self._over(pk, entities):
            return self._busy(), None
        return None, pk if method == "GET" and entities == 0 else None

    def answered(self, pk: str, status: int, body: bytes) -> None:
        """A query's answer: charged the entities it returned (what it scanned)."""
        if status == 200:
            try:
                self._charge(pk, len(json.loads(body).get("value", [])))
            except (ValueError, AttributeError):
                pass

    def _over(self, pk: str | None, entities: int) -> bool:
        now = time.monotonic()
        partition = self.partitions.setdefault(pk, Budget(self.partition_rate, self.burst)) if pk is not None else None
        if not self.account.has(now) or (partition is not None and not partition.has(now)):
            return True
        if self.layer is not None and pk is not None and not self.layer.admit(pk, entities, now):
            return True
        self.account.take(entities)
        if partition is not None:
            partition.take(entities)
        return False

    def _charge(self, pk: str, entities: int) -> None:
        self.account.take(entities)
        self.partitions.setdefault(pk, Budget(self.partition_rate, self.burst)).take(entities)
        if self.layer is not None:
            self.layer.charge(pk, entities)

    def _busy(self) -> bytes:
        """503 ServerBusy (or, for ``timeout_share`` of them, 500 OperationTimedOut), as the service words them."""
        if self.rng.random() < self.timeout_share:
            code, status, message = "OperationTimedOut", "500 Internal Server Error", _TIMED_OUT
        else:
            code, status, message = "ServerBusy", "503 Service Unavailable", "The server is busy."
        body = json.dumps({"odata.error": {"code": code, "message": {"lang": "en-US", "value": message}}}).encode()
        head = (
            f"HTTP/1.1 {status}\r\nContent-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n"
            f"x-ms-error-code: {code}\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        return head.encode() + body
