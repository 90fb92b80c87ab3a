"""``loadtest traffic SOURCE…``: the account's request logs read into a run's outputs (results.json, timeseries.csv,
report.html) from the same summary, verdict and report, ``run.target_kind: "logs"``. Nothing is sent anywhere.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from .. import junit, summary, wrapup
from ..exit_codes import UsageError
from ..findings.assess import checks_for, exit_code
from ..options.traffic import TRAFFIC_OPTIONS
from ..outputs import REPORT_FILE, check_out, new_run_id
from ..profiles import PROFILES
from ..results import RunInfo
from .container import LogBlobs
from .forms import ANALYTICS_COLUMNS
from .profile import ProfileCounts
from .reader import paths, read
from .tally import Tally
from .workload import LEAVES_OUT as WORKLOAD_LEAVES_OUT

__all__ = ["LEAVES_OUT", "kql", "traffic_command"]

LEAVES_OUT = (
    "the partition of an insert or a batch (its keys are in the request's body, which no log keeps); a query's "
    "entities (scanned and returned rows are not logged: estimated from its answer's size); whether an application "
    "retried a throttled request except by its client request id; outages (a gap in the logs is no evidence of one); "
    + WORKLOAD_LEAVES_OUT
)


def _utc(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def kql(since: float | None, until: float | None) -> str:
    """The Log Analytics query that exports the columns ``loadtest traffic`` reads, for a window (the last day)."""
    if since is None and until is None:
        window = "TimeGenerated > ago(1d)"
    elif until is None:
        window = f"TimeGenerated >= datetime({_utc(since)})"  # type: ignore[arg-type]
    elif since is None:
        window = f"TimeGenerated < datetime({_utc(until)})"
    else:
        window = f"TimeGenerated >= datetime({_utc(since)}) and TimeGenerated < datetime({_utc(until)})"
    return (
        "// partition-stress: the table requests `loadtest traffic` reads. Run it in the workspace that receives the\n"
        "// account's diagnostic settings (table: StorageRead, StorageWrite, StorageDelete); export the result as CSV.\n"
        f"StorageTableLogs\n| where {window}\n| project {', '.join(ANALYTICS_COLUMNS.values())}\n"
        "| order by TimeGenerated asc\n"
    )


def traffic_command(ns: argparse.Namespace) -> int:
    """Read, count, write the outputs, print the findings; the exit code ``--fail-on`` asks for."""
    given = {opt.dest: opt.value(ns) for opt in TRAFFIC_OPTIONS}
    since, until = given["since"], given["until"]
    if since is not None and until is not None and until <= since:
        raise UsageError(f"--until {_utc(until)} is not after --since {_utc(since)}")
    if given["kql"]:
        print(kql(since, until), end="", flush=True)
        return 0
    containers = given["from_container"]
    if containers and given["sources"]:
        raise UsageError("traffic: give the logs' files (SOURCE…) or --from-container, not both")
    if given["prefix"] and not containers:
        raise UsageError(f"--prefix {given['prefix']!r}: only with --from-container (it selects blobs)")
    if not given["sources"] and not containers:
        raise UsageError("traffic: give the logs to read: files, folders, globs or -, or --from-container C")
    names = [] if containers else paths(given["sources"])
    if given["profile_out"] and Path(given["profile_out"]).exists() and not given["overwrite"]:
        raise UsageError(f"--profile-out {given['profile_out']!r}: the file exists; give --overwrite to replace it")
    out = check_out(given["out"] or str(Path("reports") / new_run_id()), overwrite=given["overwrite"])
    tally = Tally(
        entity_bytes=given["entity_bytes"],
        client_request_id=given["client_request_id"],
        since=since,
        until=until,
        hash_keys=given["hash_keys"],
        profile=ProfileCounts() if given["profile_out"] else None,
    )
    forms: Counter[str] = Counter()
    began = time.perf_counter()
    if containers:
        with LogBlobs(
            containers,
            prefix=given["prefix"],
            since=since,
            until=until,
            connection_string=given["connection_string"],
            account_url=given["account_url"],
            timeout=given["timeout"],
        ) as blobs:
            names = blobs.names()
            for name in names:
                with blobs.open(name) as stream:
                    read(name, given["format"], tally, forms, stream)
        passed = "".join(f"; passed by {n:,} {why}" for why, n in blobs.passed.items())
        blobs_read = [f"Read {len(names):,} log blobs from {', '.join(containers)}{passed}."]
    else:
        blobs_read = []
        for name in names:
            read(name, given["format"], tally, forms)
    counts = tally.finish()
    if tally.first is None or tally.last is None:
        said = "; ".join(f"{n:,} {why}" for why, n in (tally.unreadable + tally.passed + tally.table_operations).items())
        raise UsageError(f"traffic: no entity operation counted in {', '.join(names)}" + (f" ({said})" if said else ""))
    partition_default, account_default = PROFILES[given["profile"]]
    first = int(tally.first)
    info = RunInfo(
        id=new_run_id(),
        started=_utc(first),
        duration_s=float(int(tally.last) + 1 - first),
        target_kind="logs",
        table="",
        seeded=0,
        partition_target=given["partition_target"] or partition_default,
        account_target=given["account_target"] or account_default,
        profile=given["profile"],
        endpoint="the account's request logs",
        entity_bytes=tally.workload.entity_bytes() or given["entity_bytes"],
        settings={"profile_out": given["profile_out"]} if given["profile_out"] else {},
    )
    results = summary.build(counts, info, workload=tally.workload.figures())
    results.logs = {
        "sources": names,
        "forms": dict(forms),
        "span": [_utc(tally.first), _utc(tally.last)],
        "client_request_id": given["client_request_id"],
        "hashed_keys": given["hash_keys"],
        **tally.account(results),
        "leaves_out": LEAVES_OUT,
    }  # type: ignore[typeddict-item]
    counts.close()
    if tally.profile is not None:
        profile = tally.profile.write(
            Path(given["profile_out"]),
            first=tally.first,
            last=tally.last,
            hashed=given["hash_keys"],
            records=tally.counted,
            entity_bytes=given["entity_bytes"],
        )
    if not wrapup.finish(results, out, target=None, started=time.time(), outputs=wrapup.OUTPUTS[-1:]):
        return 1
    code, messages = exit_code(results, checks_for(given["fail_on"]))
    written = given["junit"] and junit.write(given["junit"], [junit.suite(results, given["fail_on"])])
    logs = results.logs
    lines = [
        f"Read {sum(forms.values()):,} records ({', '.join(f'{n:,} {f}' for f, n in forms.items())}) in "
        f"{time.perf_counter() - began:.1f} s; counted {logs['records']:,}, {logs['requests']:,} operations, "
        f"{logs['unattributed_share']:.0%} naming no partition."
    ]
    lines += blobs_read
    if tally.unreadable:
        lines.append("Unreadable: " + "; ".join(f"{n:,} {why}" for why, n in tally.unreadable.items()))
    lines.append(f"Report: {out / REPORT_FILE}")
    if written:
        lines.append(f"JUnit: {given['junit']}")
    if tally.profile is not None:
        lines.append(f"Traffic profile: {profile} (loadtest simulate --traffic {profile} --scale N)")
    lines += wrapup.console_lines(results)
    lines += [f"  FAILED {m}" for m in messages]
    print("\n".join(lines), flush=True)
    return code
