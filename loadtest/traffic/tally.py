"""The records counted as a run counts its operations, into ``RunCounts`` (per second, partition and op class; latency
per second and op class), so the summary, verdict and report are a run's. What records cannot tell is counted apart.

A record is one attempt, as the service saw it. Its operation is its ``ClientRequestId`` (the SDKs keep one per
operation across its retries): the first record of an id is the operation's request (its demand), every record an
attempt. Throttled records count as throttled attempts with their reason; other errors as failures by status text.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

from ..buckets import GROUPS, UNATTRIBUTED
from ..counts import RunCounts, new_histogram
from ..redact import redact
from ..service_errors import logged_throttling
from .attribution import attribute
from .profile import ProfileCounts
from .records import LogRecord, Unreadable

__all__ = ["EXAMPLES", "RETRY_WINDOW_S", "Tally", "hashed"]

EXAMPLES = 3  # unreadable lines shown per reason (redacted, cut short)
RETRY_WINDOW_S = 300  # an operation's retries come within this: its id is forgotten after (memory stays bounded)
COMPACT_EVERY = 20_000  # records between foldings of old seconds' untracked keys (``RunCounts.compact``)
OUTSIDE = "outside --since/--until"
OTHER_CLIENTS = "another client's (--client-request-id)"


def hashed(key: str) -> str:
    """A PartitionKey's stable stand-in (``--hash-keys``): the same key, the same hash, in every run and output."""
    return "h" + hashlib.blake2b(key.encode("utf-8"), digest_size=8, person=b"pstress-keys").hexdigest()


class Tally:
    """Counts records; ``counts`` holds what a run would have, the rest is the logs' own account (``account``)."""

    def __init__(
        self,
        *,
        entity_bytes: int,
        client_request_id: str = "",
        since: float | None = None,
        until: float | None = None,
        hash_keys: bool = False,
        profile: ProfileCounts | None = None,
    ) -> None:
        self.counts = RunCounts()
        self.profile = profile  # each operation's demand, for --profile-out
        self.entity_bytes, self.prefix, self.since, self.until = entity_bytes, client_request_id, since, until
        self.hash_keys = hash_keys  # every key hashed as it is counted; unreadable lines never shown
        self.counted = 0
        self.unreadable: Counter[str] = Counter()
        self.examples: dict[str, list[str]] = {}
        self.passed: Counter[str] = Counter()  # read, not counted: outside the window, other clients' requests
        self.table_operations: Counter[str] = Counter()
        self.unattributed: Counter[str] = Counter()  # requests whose records name no partition, by operation
        self.first: float | None = None
        self.last: float | None = None
        self._operations: dict[str, float] = {}  # client request id -> when its latest attempt started
        self._forgotten_at = 0.0

    def add(self, item: LogRecord | Unreadable) -> None:
        if isinstance(item, Unreadable):
            self.unreadable[item.reason] += 1
            examples = self.examples.setdefault(item.reason, [])
            if len(examples) < EXAMPLES and not self.hash_keys:
                examples.append(redact(item.line.strip())[:300])
            return
        if self.prefix and not item.client_request_id.startswith(self.prefix):
            self.passed[OTHER_CLIENTS] += 1
            return
        if (self.since is not None and item.time < self.since) or (self.until is not None and item.time >= self.until):
            self.passed[OUTSIDE] += 1
            return
        attribution = attribute(item, self.entity_bytes)
        if attribution is None:
            self.table_operations[item.operation] += 1
            return
        partition = attribution.partition
        if self.hash_keys and partition not in GROUPS:
            partition = hashed(partition)
        self._count(item, attribution.op_class, partition, attribution.entities, attribution.estimated)

    def _count(self, record: LogRecord, op_class: str, partition: str, entities: int, estimated: bool) -> None:
        counts, second = self.counts, int(record.time)
        self.first = record.time if self.first is None else min(self.first, record.time)
        self.last = record.time if self.last is None else max(self.last, record.time)
        bucket = counts.bucket(second, partition, op_class)
        bucket.attempts += 1
        first = self._first_attempt(record)
        if first:
            bucket.requests += 1
            bucket.offered += entities
            if partition == UNATTRIBUTED:
                self.unattributed[record.operation] += 1
            else:
                counts.seen(partition, entities)
            if self.profile is not None:
                self.profile.add(second, record.operation, op_class, partition, entities)
        reason = logged_throttling(record.status, record.status_text, record.response_type)
        if reason is not None:
            bucket.throttled += 1
            bucket.throttled_by[reason] += 1
        elif record.status is not None and record.status < 400:
            bucket.entities += entities
            bucket.estimated += entities if estimated else 0
        else:
            bucket.failures += 1
            bucket.errors[record.status_text or f"HTTP{record.status}"] += 1
        if record.duration_ms is not None:
            micros = max(1, int(record.duration_ms * 1000))
            bucket.longest_ms = max(bucket.longest_ms, int(record.duration_ms))
            hist = counts.latency.get((second, op_class))
            if hist is None:
                hist = counts.latency[(second, op_class)] = new_histogram()
            hist.record_value(micros)
            if first:
                opening = counts.first_attempt.get(op_class)
                if opening is None:
                    opening = counts.first_attempt[op_class] = new_histogram()
                opening.record_value(micros)
        self.counted += 1
        if self.counted % COMPACT_EVERY == 0:
            counts.compact(now=self.last)

    def _first_attempt(self, record: LogRecord) -> bool:
        """Whether the record is its operation's first attempt: the first of its client request id (a record without
        one is an operation of its own). Ids older than ``RETRY_WINDOW_S`` are forgotten."""
        key = record.client_request_id
        if not key:
            return True
        first = key not in self._operations
        self._operations[key] = record.time
        if record.time - self._forgotten_at > RETRY_WINDOW_S / 5:
            self._operations = {k: t for k, t in self._operations.items() if t >= record.time - RETRY_WINDOW_S}
            self._forgotten_at = record.time
        return first

    def finish(self) -> RunCounts:
        """The counts with the records' clock: their first second to their last, all of it steady (no ramp)."""
        counts = self.counts
        if self.first is not None and self.last is not None:
            counts.started = counts.steady_from = float(int(self.first))
            counts.stopped = float(int(self.last) + 1)
        return counts

    def account(self) -> dict[str, Any]:
        """What the records were and what they could not tell: the ``logs`` section of the results."""
        requests = sum(b.requests for b in self.counts.buckets.values())
        entities = sum(b.entities for b in self.counts.buckets.values())
        estimated = sum(b.estimated for b in self.counts.buckets.values())
        return {
            "records": self.counted,
            "requests": requests,
            "unattributed": dict(self.unattributed),
            "unattributed_share": round(sum(self.unattributed.values()) / requests, 4) if requests else 0.0,
            "estimated_share": round(estimated / entities, 4) if entities else 0.0,
            "entity_bytes": self.entity_bytes,
            "table_operations": dict(self.table_operations),
            "passed": dict(self.passed),
            "unreadable": dict(self.unreadable),
            "unreadable_examples": self.examples,
        }
