"""THROTTLED, once per partition (GET and PUT its parts), by reason, each named with the budget
or target that judged it (``throttlers.throttler``), and with its cause as measured: the partition's own load, the
account's limit, or — where its own load was under half of what judged it — what the records show at those seconds
(the account's total, hot neighbouring PartitionKeys, which Azure serves from one range partition) or that nothing
read explains it. The ERRORS beside them are ``errors``'."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..bounds.throttlers import judged_by, throttler
from ..counting.buckets import GROUPS, named
from ..results import series_frame
from ..results.finding_kinds import SPREAD_ACCOUNTS
from ..results.finding_names import Act, Cause, K
from ..results.form import Finding, PartitionRow, Results
from ..results.rolled_frame import BIN_COLUMN
from ..results.schema import KeyEnd
from ..results.wall_clock import unit_of
from ..service.error_codes import BUSY, THROTTLING_CODES
from ..service.operations import OpClass
from . import checklist
from .common import finding
from .errors import errors, share

__all__ = ["OWN_LOAD_SHARE", "Explained", "explained", "failures", "reasons", "throttled_failures"]

_RETRY = "Retry 503 ServerBusy, 500 OperationTimedOut and 504 with exponential backoff (never 4xx)"
#: A throttled partition whose own load stayed under this share of what judged it: its load does not explain it.
OWN_LOAD_SHARE = 0.5
NEIGHBOURS = 2  # PartitionKeys each side in key order held against a throttled key's seconds
BUSY_SHARE = 0.8  # a neighbour (or the account) at this share of its target at those seconds explains the throttling


def throttled_failures(row: PartitionRow) -> int:
    """Operations that failed with a throttling code (after their retries)."""
    return sum(n for code, n in row.errors.items() if code in THROTTLING_CODES)


def reasons(results: Results, throttled_by: Mapping[str, int]) -> str:
    """The throttled attempts by reason, as the answers told them apart, each with the budget or target that judged
    it: "40,898 for the partition over the throttling emulator's 2,000 entities/s per-partition budget"."""
    words = {
        "partition": f"for the partition over {throttler(results.run, 'partition')}",
        "account": f"for the account over {throttler(results.run, 'account')}",
        "timeout": "timed out (500 OperationTimedOut or 504)",
        BUSY: "answered 503 ServerBusy (the records do not say whether for the partition's target or the account's limit)",
    }
    by = sorted(throttled_by.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{n:,} {words.get(reason, reason)}" for reason, n in by)


@dataclass(frozen=True)
class Explained:
    """Why a partition was throttled, as measured: the ``cause`` and its words (with figures), and the remedy's."""

    cause: Cause
    words: str
    remedy: str
    act: Act


def _asked(frame: pd.DataFrame) -> pd.Series:
    """What each row of the series asked of the service: its entities sent (served or refused), at least its served."""
    return np.maximum(frame["offered"], frame["entities"])


def explained(results: Results, partition: str, throttled_by: Mapping[str, int]) -> Explained:
    """Why ``partition`` was throttled. Its own load at or over half of what judged it: its load (the account's limit
    where the answers said so). Under half: what the records show at its throttled seconds — the account's total near
    its target, a neighbouring PartitionKey (in key order) near its own, or nothing read."""
    judge, open_loop = judged_by(results.run), results.open_loop
    if throttled_by and set(throttled_by) <= {"account"}:
        return Explained(Cause.ACCOUNT, "the account was over its limit", _account_remedy(), Act.ACCOUNTS)
    seconds: list[int] = []
    own_peak = results.headline(partition).judged(open_loop)[0]
    width = 1
    if own_peak < OWN_LOAD_SHARE * judge:  # the series read only where its own load may not explain it
        frame, width = series_frame.one_width(results.timeseries)  # a long span's: bin by bin, each bin's mean
        frame = frame[frame["op_class"] != OpClass.ALL]
        own = frame[frame["partition"] == partition]
        seconds = sorted(set(own.loc[own["throttled"] > 0, "t"].tolist()))
        at = frame[frame["t"].isin(seconds)]
        per_second = at.assign(asked=_asked(at) / at[BIN_COLUMN]).groupby(["t", "partition"])["asked"].sum()
        if seconds:
            own_peak = max(own_peak, float(per_second.xs(partition, level="partition").max()))
    if own_peak >= OWN_LOAD_SHARE * judge or not seconds:
        return Explained(
            Cause.THROTTLED,
            f"its own load ({own_peak:,.0f} entities/s at peak) against the {judge:,.0f}/s that judged it",
            f"{_RETRY}, and spread the partition's load over more PartitionKeys (its level's remedy sizes the split)."
            + (f" Where the account was over its limit: {SPREAD_ACCOUNTS}." if "account" in throttled_by else ""),
            Act.RETRY,
        )
    span = _seconds_words(results, seconds, width)
    own_words = (
        f"its own load peaked at {own_peak:,.0f} entities/s, {own_peak / judge:.1%} of "
        f"{throttler(results.run, 'partition')}, so its own load does not explain it"
    )
    account_target = results.run.account_target
    totals = per_second.groupby(level="t").sum()
    account_peak = float(totals.max()) if len(totals) else 0.0
    if account_target and account_peak >= BUSY_SHARE * account_target:
        return Explained(
            Cause.ACCOUNT,
            f"{own_words}; in {span}, the account's total reached {account_peak:,.0f} entities/s, "
            f"{account_peak / account_target:.0%} of its {account_target:,}/s target",
            _account_remedy(),
            Act.ACCOUNTS,
        )
    keys = sorted({r.partition for r in results.partitions if r.partition not in GROUPS})
    i = keys.index(partition) if partition in keys else -1
    near = [k for k in keys[max(0, i - NEIGHBOURS) : i + NEIGHBOURS + 1] if k != partition] if i >= 0 else []
    peaks = {k: float(per_second.xs(k, level="partition").max()) for k in near if k in per_second.index.get_level_values(1)}
    hot = sorted(((p, k) for k, p in peaks.items() if p >= BUSY_SHARE * judge), reverse=True)
    if hot:
        listed = ", ".join(f"{k!r} at {p:,.0f}/s" for p, k in hot[:3])
        return Explained(
            Cause.NEIGHBOUR,
            f"{own_words}; in {span}, its neighbours in key order were hot ({listed}), and Azure serves "
            "adjacent PartitionKeys from one range partition",
            f"{_RETRY}. Spread the hot neighbours, not this partition: a hash prefix scatters keys across the key space, "
            "so a hot key no longer shares a range partition with its neighbours.",
            Act.INVESTIGATE,
        )
    return Explained(
        Cause.UNEXPLAINED,
        f"{own_words}; in {span}, nothing in the data read explains it: the account's total peaked at "
        f"{account_peak:,.0f} entities/s ({account_peak / account_target:.0%} of its target) and no neighbouring "
        "PartitionKey was near its own",
        f"{_RETRY}. Look beyond what was read: other tables and the account's other services (blobs, queues, files) "
        "share its limits, and its neighbours may be keys these records do not hold.",
        Act.INVESTIGATE,
    )


def _seconds_words(results: Results, seconds: list[int], width: int = 1) -> str:
    """Its throttled seconds in words: how many, and from when to when (a long span's: its throttled minutes or hours,
    ``width`` seconds each, and the figures beside them their means)."""
    unit = "second" if width == 1 else unit_of(width)
    if not seconds:
        return f"its throttled {unit}s"
    means = "" if width == 1 else f" (each {unit} read as its mean per second)"
    return f"its {len(seconds):,} throttled {unit}s{means}, {results.clock.span(seconds[0], seconds[-1] + width)}"


def _account_remedy() -> str:
    return f"{_RETRY}; the account was over its limit, so {SPREAD_ACCOUNTS}."


def _throttled(results: Results, partition: str, rows: list[PartitionRow]) -> Finding | None:
    """A partition's THROTTLED finding: its attempts by op class and reason, the operations that failed anyway, and
    the cause measured."""
    throttled = sum(r.throttled for r in rows)
    failed = sum(throttled_failures(r) for r in rows)
    if not throttled and not failed:
        return None
    by_reason: Counter[str] = Counter()
    for row in rows:
        by_reason.update(row.throttled_by)
    parts = [r for r in rows if r.throttled]
    each = (
        f" ({', '.join(f'{r.op_class} {r.throttled:,}' for r in parts)})"
        if len(parts) > 1
        else (f" (all {parts[0].op_class})" if parts else "")
    )
    why = explained(results, partition, by_reason)
    attempts = "attempt was" if throttled == 1 else "attempts were"
    message = f"partition {named(partition)}: {throttled:,} {attempts} throttled{each}"
    message += f": {reasons(results, by_reason)}" if by_reason else ""
    if failed:
        message += f"; {failed:,} operations still failed after their retries"
    elif not results.logs:  # the logs do not say whether the application retried
        message += "; every one succeeded on a retry"
    message += f". Cause: {why.words}"
    return finding(K.THROTTLED, message, remedy=why.remedy, partition=partition, cause=why.cause, act=why.act)


def _range_throttled(results: Results, where: str, end: KeyEnd, inside: Mapping[str, list[PartitionRow]]) -> Finding | None:
    """One THROTTLED for the keys that landed in the range where new keys land (``where``: which end), throttled as one
    range partition, not one finding a key: how many keys, from which to which, and the range's own load as the cause."""
    rows = [row for its in inside.values() for row in its]
    throttled, failed = sum(r.throttled for r in rows), sum(throttled_failures(r) for r in rows)
    if not throttled and not failed:
        return None
    by_reason: Counter[str] = Counter()
    for row in rows:
        by_reason.update(row.throttled_by)
    keys = sorted(p for p, its in inside.items() if any(r.throttled or throttled_failures(r) for r in its))
    judge, open_loop = judged_by(results.run), results.open_loop
    peak = checklist.judged_peak(end, open_loop=open_loop)
    attempts = "attempt was" if throttled == 1 else "attempts were"
    message = (
        f"{named(where)}: {throttled:,} {attempts} throttled across {len(keys):,} of the keys that landed there "
        f"({keys[0]!r} … {keys[-1]!r})"
    )
    message += f": {reasons(results, by_reason)}" if by_reason else ""
    message += f"; {failed:,} operations still failed after their retries" if failed else ""
    message += (
        f". Cause: the range's own load ({peak:,.0f} entities/s at peak, as one range partition serves it, however "
        f"many keys come and go in it) against the {judge:,.0f}/s that judged it"
    )
    remedy = (
        f"{_RETRY}, and stop new keys landing at one end of the key order: prefix them with a hash, or put the seconds "
        "first (ssyyyyMMdd…), as the docs advise; the range's level sizes the split."
    )
    return finding(K.THROTTLED, message, remedy=remedy, partition=where, cause=Cause.THROTTLED, act=Act.RETRY)


def failures(results: Results) -> list[Finding]:
    """THROTTLED per partition (the range where new keys land as one); then the ERRORS (``errors``)."""
    findings: list[Finding] = []
    rows: dict[str, list[PartitionRow]] = {}
    for row in results.rows():
        if row.op_class != OpClass.ALL:
            rows.setdefault(row.partition, []).append(row)
    attempts = sum(max(r.attempts, r.requests) for its in rows.values() for r in its)
    for where, _, end in checklist.ranges(results):
        inside = {p: its for p, its in rows.items() if p not in GROUPS and checklist.landed(end, p)}
        found = _range_throttled(results, where, end, inside)
        if found is not None:
            found.share = share(sum(r.throttled for its in inside.values() for r in its), attempts)
            findings.append(found)
            rows = {p: its for p, its in rows.items() if p not in inside}
    for partition, its in rows.items():
        throttled = _throttled(results, partition, its)
        if throttled:
            throttled.share = share(sum(r.throttled for r in its), attempts)
            findings.append(throttled)
    return findings + errors(results)
