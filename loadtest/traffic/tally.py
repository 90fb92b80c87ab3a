"""The records counted as a run counts its operations, into ``RunCounts`` (per second, partition and op class; latency
per second and op class), so the summary, verdict and report are a run's. What records cannot tell is counted apart.

A record is one attempt, as the service saw it. Its operation is its ``ClientRequestId`` (the SDKs keep one per
operation across its retries): the first record of an id is the operation's request (its demand), every record an
attempt. Throttled records count as throttled attempts with their reason; other errors as failures by status text.

Records are counted a block at a time (``count``, the columns of ``columns.COLUMNS``): grouped by second, partition and
op class in Arrow, so the buckets are touched once a group, not once a record.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..counting.buckets import GROUPS, UNATTRIBUTED
from ..counting.counts import RunCounts, new_histogram
from ..counting.latency import PER_SECOND_FOR_S, ROLLUP_S, minute_of
from ..engines.logged import logged_shares
from ..exit_codes import UsageError
from ..redact import redact
from ..results.form import Results
from ..service.error_codes import logged_throttling
from ..service.log_forms import utc_text
from .attribution import QuerySizes, attribute, codes_of
from .columns import from_records
from .profile_counts import ProfileCounts
from .recent_ids import RecentIds
from .records import LogRecord, Unreadable
from .workload import LoggedWorkload

__all__ = ["EXAMPLES", "LONGEST_SPAN_S", "RETRY_WINDOW_S", "Tally", "hashed"]

EXAMPLES = 3  # unreadable lines shown per reason (redacted, cut short)
RETRY_WINDOW_S = 300  # an operation's retries come within this: its id is forgotten after (memory stays bounded)
BLOCK = 65_536  # records read a line at a time, counted together
#: The longest span of records one run's outputs hold: past a week they are summed an hour a row (``rolled_frame``),
#: some 9,600 rows a partition and op class over this span. Longer logs are read a window at a time.
LONGEST_SPAN_S = 400 * 86_400
OUTSIDE = "outside --since/--until"
OTHER_CLIENTS = "another client's (--client-request-id)"
_KEY = ["second", "partition", "op_class"]


def _rows(table: pa.Table, *names: str) -> Iterator[tuple[Any, ...]]:
    """A (grouped, so short) table's rows as tuples of the named columns."""
    return zip(*(table[name].to_pylist() for name in names), strict=True)


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
        self.counts = RunCounts(live=False)  # no live view: its peaks of the seconds put away are not kept
        self.profile = profile  # each operation's demand, for --profile-out
        self.entity_bytes, self.prefix, self.since, self.until = entity_bytes, client_request_id, since, until
        self.hash_keys = hash_keys  # every key hashed as it is counted; unreadable lines never shown
        self.counted = 0
        self.unreadable: Counter[str] = Counter()
        self.examples: dict[str, list[str]] = {}
        self.passed: Counter[str] = Counter()  # read, not counted: outside the window, other clients' requests
        self.table_operations: Counter[str] = Counter()
        self.unattributed: Counter[str] = Counter()  # requests whose records name no partition, by operation
        self.error_status: dict[str, int] = {}  # each failure's status text and its HTTP status (4xx: the application's)
        self.workload = LoggedWorkload()  # the checklist's evidence
        self.first: float | None = None
        self.last: float | None = None
        self._recent = RecentIds(RETRY_WINDOW_S)  # operations' ids: a retry's is its first attempt's
        self._pending: list[LogRecord] = []
        self.query_sizes = QuerySizes()  # an entity's size in a query's answer: for a block without a point read

    def add(self, item: LogRecord | Unreadable) -> None:
        """One record read a line at a time (counted with the next ``BLOCK``), or a line that is not one."""
        if isinstance(item, Unreadable):
            self.unreadable[item.reason] += 1
            examples = self.examples.setdefault(item.reason, [])
            if len(examples) < EXAMPLES and not self.hash_keys:
                examples.append(redact(item.line.strip())[:300])
            return
        self._pending.append(item)
        if len(self._pending) >= BLOCK:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            pending, self._pending = self._pending, []
            self._block(from_records(pending))

    def count(self, records: pa.Table, said: pa.Table | None = None) -> None:
        """A block of records (``columns.COLUMNS``), in the order they were logged (after any added before it), with
        what ``attribution.attribute`` said of them when it was asked already (by the reader's thread)."""
        self._flush()
        self._block(records, said)

    def _block(self, records: pa.Table, said: pa.Table | None = None) -> None:
        stamps = records["time"].to_numpy()
        if (np.diff(stamps) < 0).any():  # newest first (the portal's export), or shuffled: counted in their order
            order = pa.array(np.argsort(stamps, kind="stable"))
            records, said = records.take(order), None if said is None else said.take(order)
        keep = np.ones(records.num_rows, bool)
        if self.prefix:
            ours = pc.starts_with(records["client_request_id"], self.prefix).to_numpy(zero_copy_only=False)
            self.passed[OTHER_CLIENTS] += int((~ours).sum())
            keep &= ours
        times = records["time"].to_numpy()
        if self.since is not None or self.until is not None:
            inside = (times >= (self.since if self.since is not None else -np.inf)) & (
                times < (self.until if self.until is not None else np.inf)
            )
            self.passed[OUTSIDE] += int((keep & ~inside).sum())
            keep &= inside
        if said is None:
            said = attribute(records, self.entity_bytes, self.query_sizes.mean())
        self.query_sizes.add(records, said)
        if not keep.all():
            records, said = records.filter(pa.array(keep)), said.filter(pa.array(keep))
        entity = pc.is_valid(said["op_class"])
        if not pc.all(entity).as_py():
            codes, names = codes_of(records.filter(pc.invert(entity))["operation"])
            self.table_operations.update({names[c]: int(n) for c, n in enumerate(np.bincount(codes)) if n})
            records, said = records.filter(entity), said.filter(entity)
        if records.num_rows:
            self._count(records, said)

    def _count(self, records: pa.Table, said: pa.Table) -> None:
        times = records["time"].to_numpy()
        first = min(float(times.min()), self.first if self.first is not None else np.inf)
        last = max(float(times.max()), self.last if self.last is not None else -np.inf)
        if last - first > LONGEST_SPAN_S:
            days = LONGEST_SPAN_S // 86_400
            raise UsageError(
                f"traffic: the records counted span {utc_text(first)} to {utc_text(last)}, more than {days} days, the most "
                f"one run's outputs hold; give --since/--until a window of at most {days} days"
            )
        self.first, self.last = first, last
        self.counted += records.num_rows
        partition = said["partition"]
        if self.hash_keys:
            codes, keys = codes_of(partition)
            partition = pa.array(np.array([k if k in GROUPS else hashed(k) for k in keys], object)[codes], pa.string())
        first = self._recent.first(records["client_request_id"], times)
        reason, failed = self._answers(records)
        entities = said["entities"].to_numpy()
        succeeded = (reason == None) & ~failed  # noqa: E711
        self.workload.add(records, said, first, failed, succeeded)
        duration = records["duration_ms"].to_numpy(zero_copy_only=False)  # NaN where not logged
        rows = pa.table(
            {
                "second": np.floor(times).astype(np.int64),
                "partition": partition,
                "op_class": said["op_class"],
                "operation": records["operation"],
                "first": first.astype(np.int64),
                "offered": np.where(first, entities, 0),
                "throttled": (reason != None).astype(np.int64),  # noqa: E711
                "reason": pa.array(reason, pa.string()),
                "failed": failed.astype(np.int64),
                "status": pc.fill_null(records["status"], -1),
                "error": pc.if_else(
                    pc.equal(records["status_text"], ""),
                    pc.fill_null(pc.binary_join_element_wise("HTTP", pc.cast(records["status"], pa.string()), ""), "Unknown"),
                    records["status_text"],
                ),
                "entities": np.where(succeeded, entities, 0),
                "estimated": np.where(succeeded & said["estimated"].to_numpy(zero_copy_only=False), entities, 0),
                "longest_ms": np.where(np.isnan(duration), 0, duration).astype(np.int64),
                "micros": np.maximum(1, np.where(np.isnan(duration), 0, duration * 1000)).astype(np.int64),
                "timed": ~np.isnan(duration),
                "weight": np.maximum(1, entities),
            }
        )
        self._buckets(rows)
        self._latency(rows.filter(rows["timed"]))
        self._demand(rows.filter(pc.equal(rows["first"], 1)))
        self.counts.compact(now=self.last)

    @staticmethod
    def _answers(records: pa.Table) -> tuple[np.ndarray, np.ndarray]:
        """Per record: its throttling reason (None if not throttled), and whether it failed otherwise: decided once
        for each distinct (status, status text, response type)."""
        status = pc.fill_null(records["status"], -1).to_numpy(zero_copy_only=False)
        text_codes, texts = codes_of(records["status_text"])
        type_codes, types = codes_of(records["response_type"])
        kinds = len(texts) * len(types)  # one number per (status, text, type): a 1-D unique is a fast sort
        distinct, inverse = np.unique((status + 1) * kinds + text_codes * len(types) + type_codes, return_inverse=True)
        combos = [(int(k // kinds) - 1, int(k % kinds) // len(types), int(k % len(types))) for k in distinct]
        reasons = [logged_throttling(None if s < 0 else s, texts[t], types[r]) for s, t, r in combos]
        failed = [reason is None and not (0 <= combo[0] < 400) for reason, combo in zip(reasons, combos, strict=True)]
        return np.array(reasons, dtype=object)[inverse], np.array(failed, dtype=bool)[inverse]

    def _buckets(self, rows: pa.Table) -> None:
        sums = ("first", "offered", "throttled", "failed", "entities", "estimated")
        grouped = rows.group_by(_KEY, use_threads=False).aggregate(
            [("second", "count"), *((name, "sum") for name in sums), ("longest_ms", "max")]
        )
        columns = (*_KEY, "second_count", *(f"{name}_sum" for name in sums), "longest_ms_max")
        for second, partition, op_class, attempts, requests, offered, throttled, failures, entities, estimated, longest in _rows(
            grouped, *columns
        ):
            bucket = self.counts.bucket(second, partition, op_class)
            bucket.attempts += attempts
            bucket.requests += requests
            bucket.offered += offered
            bucket.throttled += throttled
            bucket.failures += failures
            bucket.entities += entities
            bucket.estimated += estimated
            bucket.longest_ms = max(bucket.longest_ms, longest)
        for kind, column in (("throttled", "reason"), ("failed", "error")):
            marked = rows.filter(pc.equal(rows[kind], 1))
            if marked.num_rows and kind == "failed":  # each failure's status: 4xx are the application's own answers
                for error, status in _rows(
                    marked.group_by(["error", "status"], use_threads=False).aggregate([]), "error", "status"
                ):
                    self.error_status.setdefault(error, status)
            if marked.num_rows:
                by = marked.group_by([*_KEY, column], use_threads=False).aggregate([("second", "count")])
                for second, partition, op_class, what, n in _rows(by, *_KEY, column, "second_count"):
                    bucket = self.counts.bucket(second, partition, op_class)
                    (bucket.throttled_by if kind == "throttled" else bucket.errors)[what] += n

    def _latency(self, timed: pa.Table) -> None:
        """Each attempt's logged duration into its second's histogram (its minute's, where the second is further behind
        the newest record than the seconds kept apart: it would be rolled into it at once, and a histogram made a
        second was most of a sparse day's reading); a first attempt's into its op class's too."""
        latency, opening = self.counts.latency, self.counts.first_attempt
        aged = minute_of(int(self.last or 0) - PER_SECOND_FOR_S)  # ``Latency.roll_up``'s line
        second = timed["second"].to_numpy()
        timed = timed.set_column(
            timed.column_names.index("second"), "second", pa.array(np.where(second < aged, second - second % ROLLUP_S, second))
        )
        by = timed.group_by(["second", "op_class", "micros"], use_threads=False).aggregate([("first", "count"), ("first", "sum")])
        for second, op_class, micros, attempts, firsts in _rows(by, "second", "op_class", "micros", "first_count", "first_sum"):
            (latency.at_minute if second < aged else latency.at)(second, op_class).record_value(micros, attempts)
            if firsts:
                into = opening.get(op_class)
                if into is None:
                    into = opening[op_class] = new_histogram()
                into.record_value(micros, firsts)

    def _demand(self, firsts: pa.Table) -> None:
        """The operations' demand: the heaviest keys' weights, the unattributed by operation, the profile's."""
        named = firsts.filter(pc.not_equal(firsts["partition"], UNATTRIBUTED))
        by = named.group_by("partition", use_threads=False).aggregate([("weight", "sum")])
        for partition, weight in _rows(by, "partition", "weight_sum"):
            self.counts.seen(partition, weight)
        nameless = firsts.filter(pc.equal(firsts["partition"], UNATTRIBUTED))
        if nameless.num_rows:
            codes, names = codes_of(nameless["operation"])
            self.unattributed.update({names[c]: int(n) for c, n in enumerate(np.bincount(codes)) if n})
        if self.profile is not None:
            keys = ["second", "operation", "op_class", "partition"]
            by = firsts.group_by(keys, use_threads=False).aggregate([("offered", "sum"), ("first", "count")])
            for row in _rows(by, *keys, "offered_sum", "first_count"):
                self.profile.add(*row)

    def finish(self) -> RunCounts:
        """The counts with the records' clock: their first second to their last, all of it steady (no ramp)."""
        self._flush()
        counts = self.counts
        if self.first is not None and self.last is not None:
            counts.started = counts.steady_from = float(int(self.first))
            counts.stopped = float(int(self.last) + 1)
        return counts

    def account(self, results: Results) -> dict[str, Any]:
        """What the records were and what they could not tell: the ``logs`` section of ``results`` (built from these
        counts: their requests and entities are read from it, not added up again)."""
        return {
            "records": self.counted,
            "unattributed": dict(self.unattributed),
            **logged_shares(results, self.unattributed),
            "entity_bytes": self.entity_bytes,
            "table_operations": dict(self.table_operations),
            "passed": dict(self.passed),
            "unreadable": dict(self.unreadable),
            "unreadable_examples": self.examples,
            "error_status": dict(sorted(self.error_status.items())),
        }
