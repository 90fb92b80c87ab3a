"""The report's first words: one sentence per partition design, read from the assessed results.

The hottest partition's peak against its target, the sustained ceiling when one was searched, and what besides
the design bounded the figures (the emulator, the generator, a lost target or worker), so the page leads with the
verdict and the findings follow as its evidence.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from ..bounds.throttlers import budget
from ..ceiling.remedies import LIMITS
from ..counting.buckets import GROUPS, named
from ..exit_codes import UsageError
from ..findings.checklist import judged_peak, range_words, ranges
from ..findings.levels import level
from ..results.finding_kinds import BOUNDS
from ..results.form import Results
from ..results.rolled_frame import BIN_COLUMN
from ..results.wall_clock import time_form
from ..service.key_ends import ranges_words
from ..service.operations import OpClass
from ..workload.key_specs import key_strategy

__all__ = ["SCANNED_AS_ASKED", "design_words", "short_scans", "verdict_sentences", "what_ran"]


BUILT_IN = "HotPartitionUser"  # the tool's own user (``users.HotPartitionUser``), which runs the command line's design


def _design(results: Results) -> str:
    """The design that ran: each table user class's (one: its design; several: each with its share of the users),
    else (a simulation, a results.json before classes were recorded) the run's settings."""
    settings = results.run.settings
    replayed = results.simulation.get("traffic") if results.simulation else None
    if replayed:
        return _replayed(replayed)
    simulated = f"Simulated at {results.run.recorded.arrival_rate:,.0f} operations/s, k" if results.run.simulated else "K"
    classes = [c for c in results.run.user_classes if c.get("table_user")]
    if not classes:
        return f"{simulated}ey design {design_words(settings, results.keys.get('distinct', 0))}"
    if len(classes) == 1:
        one = classes[0]
        whose = "K" if one["name"] == BUILT_IN else f"{one['name']}'s k"  # the tool's own user: the run's settings
        return f"{whose}ey design {design_words(one['design'], results.keys.get('distinct', 0))}"
    total = sum(c["users"] for c in results.run.user_classes) or 1
    each = "; ".join(f"{c['name']} ({c['users'] / total:.0%} of users) {design_words(c['design'])}" for c in classes)
    return f"{len(classes)} user classes, key designs {each}"


def _replayed(replayed: Mapping[str, Any]) -> str:
    """A replayed traffic profile in words: whose demand, at which multiple, over which keys."""
    start, stop = (datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S") for t in replayed["span"])
    placed = "spread as the attributed" if replayed["unattributed"] == "spread" else "kept apart"
    return (
        f"Production traffic from the logs ({start} to {stop[11:]} UTC, {replayed['partitions_named']:,} partitions by "
        f"name and {replayed['tail_partitions']:,} more in groups) replayed at {replayed['scale']:g}x, "
        f"{replayed['mean_operations_per_s']:,.0f} operations/s on average and {replayed['peak_operations_per_s']:,.0f}/s "
        f"at peak ({replayed['unattributed_share']:.0%} naming no partition, {placed})"
        + (
            f", with {len(replayed['split_keys']):,} hot partitions each spread over {replayed['split_hot']} keys"
            if replayed.get("split_keys")
            else ""
        )
    )


def design_words(design: Mapping[str, Any], distinct: int = 0) -> str:
    """A key design in words: ``single (PartitionKey 'hot')`` or ``hash-prefix:16, zipfian:0.9 skew (about 16
    PartitionKeys touched)``; the skew when not uniform."""
    strategy = str(design.get("key_strategy", "single"))
    skew = str(design.get("skew", "uniform"))
    words = strategy.partition(":")[0] if strategy.startswith("single") else strategy
    if skew != "uniform" and not strategy.startswith("single"):
        words += f", {skew} skew"
    if strategy.startswith("single"):
        key = strategy.partition(":")[2] or design.get("partition_key", "")
        return f"{words} (PartitionKey {key!r})"
    return f"{words} (about {distinct:,} PartitionKeys touched)" if distinct else words


def _peak(results: Results) -> str:
    partition = results.hottest()[0]
    row = results.headline(partition)
    ends = [(judged_peak(end, open_loop=results.open_loop), name, end) for name, _, end in ranges(results)]
    peak, name, end = max(ends, key=lambda e: e[0], default=(-1.0, "", None))
    if end is not None and peak >= row.judged(results.open_loop)[0]:  # the range holds the hottest key
        said = range_words(end, open_loop=results.open_loop)
        return f"the hottest partition is {named(name)}: it {said} ({level(end['ratio'])})"
    what = "GET and PUT together" if row.op_class == OpClass.ALL else row.op_class
    if results.open_loop:  # judged on its demand: the design's question
        return (
            f"the hottest partition {partition!r} was asked for {row.offered_peak_eps:,.0f} entities/s at peak ({what}), "
            f"{row.offered_ratio:.0%} of the {row.target:,}/s per-partition target ({row.finding}), and served "
            f"{row.peak_eps:,.0f}/s"
        )
    return (
        f"the hottest partition {partition!r} peaked at {row.peak_eps:,.0f} entities/s ({what}), "
        f"{row.ratio:.0%} of the {row.target:,}/s per-partition target ({row.finding})"
    )


def _ceiling(results: Results) -> str:
    search = results.ceiling
    ceiling, limit = search["ceiling"], search["limited_by"]
    if ceiling is None:
        return "the ceiling search gave way at its first step"
    if not limit:
        return f"the ceiling search held every step, up to {ceiling['entities_per_s']:,.0f} entities/s: the ceiling is higher"
    return f"it sustained {ceiling['entities_per_s']:,.0f} entities/s before {limit} limited it"


def _clock(results: Results, t: int) -> str:
    """A second of the run on the UTC clock (``HH:MM:SS``; its second since the start where the start is unreadable, or
    the time is past the dates a ``datetime`` holds)."""
    try:
        at = datetime.fromisoformat(results.run.started.replace("Z", "+00:00")) + timedelta(seconds=t)
        return at.strftime(time_form(results.run.duration_s))
    except (ValueError, OverflowError):  # no date, or one past the year 9999
        return f"{t} s"


def _logs(results: Results) -> str:
    """The sentence of an account's request logs: the partition most throttled and when, the hottest one's peak,
    and the requests that name no partition."""
    logs = results.logs
    span = [f"{s[:10]} {s[11:19]}" for s in logs.get("span") or [results.run.started]]
    first, last = span[0], span[-1]
    throttled: Counter[str] = Counter()
    for row in results.partitions:
        if row.partition not in GROUPS and row.op_class != OpClass.ALL:
            throttled[row.partition] += row.throttled
    said = ["no request to a partition was throttled"]
    if throttled and max(throttled.values()) > 0:
        worst, n = max(throttled.items(), key=lambda kv: (kv[1], kv[0]))
        frame = results.timeseries
        rows = frame[(frame["partition"] == worst) & (frame["throttled"] > 0)]
        first_t, last_t = (int(rows["t"].min()), int((rows["t"] + rows[BIN_COLUMN]).max()) - 1) if len(rows) else (0, 0)
        said = [f"partition {worst!r} was throttled {n:,} times between {_clock(results, first_t)} and "
                f"{_clock(results, last_t)} UTC"]  # fmt: skip
    said.append(_peak(results).replace("the hottest partition", "the hottest", 1))
    if logs.get("unattributed_share"):
        said.append(f"{logs['unattributed_share']:.0%} of the requests name no partition (inserts and batches)")
    records = f"{logs['records']:,} records, " if "records" in logs else ""
    until = last[11:] if last[:10] == first[:10] else last  # another day's: dated
    return f"The account's request logs ({records}{first} to {until} UTC) show {'; '.join(said)}."


def verdict_sentences(results: Results) -> list[str]:
    """One sentence for the run's partition design (the report's verdict); the logs' own for ``loadtest traffic``."""
    if not results.hottest():
        return ["No table operations were recorded: there is nothing to judge."]
    if results.logs:
        return [_logs(results)]
    parts = [_peak(results)]
    if results.run.interrupted:
        planned = f" of the {results.run.planned_s:,.0f} s planned" if results.run.planned_s else ""
        parts.append(f"cut short by {results.run.interrupted} after {results.run.duration_s:,.1f} s{planned}")
    if results.engines:
        names = ", ".join(e["engine"] for e in results.engines)
        parts.append(f"the load of {len(results.engines)} engines ({names}) merged and judged together")
    if results.ceiling:
        parts.append(_ceiling(results))
    kinds = {f.kind for f in results.findings}
    limit = LIMITS.get(results.ceiling.get("limited_by", ""))
    kinds |= {limit} if limit in BOUNDS else set()  # the search's own limit, where it bounds the figures
    bounds = [words for kind, words in BOUNDS.items() if kind in kinds]
    if results.run.simulated:
        parts.append("simulated by the partition layer's model with the budgets given, not measured")
    elif bounds:
        parts.append(f"bounded by {' and '.join(bounds)}, so these figures are lower bounds")
    elif results.run.recorded.emulate_throttling:
        parts.append(
            f"measured against the throttling emulator's {budget(results.run):,.0f} entities/s per partition, not Azure's"
        )
    elif results.run.emulator:
        parts.append("measured on an emulator: Azure's own partition servers may serve more")
    return [f"{_design(results)}: {'; '.join(parts)}."]


def what_ran(results: Results) -> str:
    """What served (or judged) the figures, in one sentence, never naming a part that did not run: production logs,
    a simulation, Azurite behind the throttling emulator, Azurite alone, another emulator, or a real account; then,
    where a run's scans read fewer rows than they asked, why (``short_scans``)."""
    served = _served(results)
    short = short_scans(results)
    return f"{served} {short}" if short else served


#: Scans that returned on average at least this share of the rows they asked read what they asked.
SCANNED_AS_ASKED = 0.95


def short_scans(results: Results) -> str:
    """A run's row range scans that returned fewer rows than ``--scan-size`` asked because the rows seeded under each
    key ran out (``--seed-entities`` is spread over the design's keys): what they read, why, and what to seed; "" where
    they read what they asked (or the run made none)."""
    asked = int(results.run.settings.get("scan_size") or 0)
    scans = [n for n in results.workload.get("names", []) if n.get("op") == "scan" and n.get("requests")]
    if results.logs or results.run.simulated or not asked or not scans:
        return ""
    requests, returned = sum(n["requests"] for n in scans), sum(n["returned"] for n in scans)
    if returned >= SCANNED_AS_ASKED * asked * requests:
        return ""
    settings, seeded = results.run.settings, results.run.seeded
    if len(results.run.user_classes) > 1:  # several designs: which one's keys ran out is not the run's to say
        return ""
    try:
        design = key_strategy(settings.get("key_strategy", "single"), default_key=settings.get("partition_key", "hot"))
    except UsageError:
        return ""
    keys = design.keys()
    if not keys or seeded < 2 * len(keys):  # a key an entity (guid, time-ordered keys): seeding cannot lengthen a scan
        return ""
    return (
        f"Its row range scans asked for {asked:,} rows each and returned {returned / requests:,.0f} on average: "
        f"--seed-entities {seeded:,} is spread over the design's {len(keys):,} PartitionKeys ({seeded // len(keys):,} "
        f"rows under each), so the scans ran out of rows and read fewer entities than the design's would; seed "
        f"{len(keys) * asked:,} ({asked:,} under each) to scan as asked."
    )


def _served(results: Results) -> str:
    run = results.run
    budgets = f"{budget(run):,.0f} entities/s per partition and {budget(run, 'account'):,.0f} per account"
    throttled = sum(row.throttled for row in results.partitions if row.op_class != OpClass.ALL)
    if results.logs:
        return (
            "Read from the account's own request logs: they tell what the service answered and when, not what it was "
            f"never asked; they leave out {results.logs.get('leaves_out', '').rstrip('; ')}."
        )
    recorded = run.recorded
    ranges = ranges_words(per_key_only=recorded.emulator_per_key_only, server_rate=recorded.emulator_server_rate)
    if run.simulated:
        return (
            f"Judged by the partition layer's model, nothing sent: it throttled as Azure would over {budgets}, with "
            f"{ranges} ({throttled:,} throttled attempts)."
        )
    if recorded.emulate_throttling:
        return (
            f"Measured on Azurite behind the throttling emulator, which answered 503 ServerBusy as Azure would over "
            f"{budgets}, with {ranges} ({throttled:,} throttled attempts); "
            "Azurite itself serves at one Node process's pace, far less than a real partition server, so the verdict "
            "on the design comes from the demand, the ratios and the findings."
        )
    if run.emulator and throttled:
        return (
            f"Measured on an emulator at {run.endpoint or 'the address given'} that throttled {throttled:,} attempts "
            "(its budgets were not given to this run); figures are what that emulator served."
        )
    if run.emulator:
        return (
            "Measured on Azurite alone: it never throttles and serves at one Node process's pace, far less than a real "
            "partition server, so figures are what this machine's emulator served; the verdict on the design comes from "
            "the ratios and findings."
        )
    return f"Measured on the account at {run.endpoint or 'the address given'}: Azure's own answers."
