"""``loadtest traffic SOURCE…``: the account's request logs read into a run's outputs (results.json, timeseries.csv,
report.html) from the same summary, verdict and report, ``run.target_kind: "logs"``. Nothing is sent anywhere.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from .. import wrapup
from ..account.connection_string import CONNECTION_STRING_ENV
from ..counting.bucket_frame import Chunks
from ..engines.blobs import upload_outputs, upload_place
from ..exit_codes import ToolError, UsageError
from ..findings.assess import checks_for, exit_code
from ..options.rules import host_engine
from ..options.traffic import TRAFFIC_OPTIONS
from ..outputs import check_out, new_run_id
from ..progress import Progress
from ..report import junit
from ..report.server_logs import kql_string
from ..results import summary
from ..results.form import Results, RunInfo
from ..results.mergeable import capture
from ..results.rolled_frame import binned_leaves_out, width_for
from ..service.log_forms import utc_text
from ..service.scale_targets import judged_against
from .classic import HourSeen
from .container import LogBlobs
from .forms import ANALYTICS_COLUMNS
from .profile_counts import ProfileCounts
from .reader import paths, read, shown
from .shards import PROFILE_STATE_ENV, PROFILE_STATE_FILE, read_in_shards, shards
from .tally import Tally
from .workload import LEAVES_OUT as WORKLOAD_LEAVES_OUT

__all__ = ["LEAVES_OUT", "kql", "traffic_command"]

_NAMED = 5  # sources a message names, the rest counted

LEAVES_OUT = (
    "the partition of an insert or a batch (its keys are in the request's body, which no log keeps); a query's "
    "entities (scanned and returned rows are not logged: estimated from its answer's size); whether an application "
    "retried a throttled request except by its client request id; outages (a gap in the logs is no evidence of one); "
    + WORKLOAD_LEAVES_OUT
)


def _at(epoch: float) -> str:
    """A time as the query compares it: a Kusto string literal read as a ``datetime``."""
    return f"todatetime({kql_string(utc_text(epoch))})"


def kql(since: float | None, until: float | None) -> str:
    """The Log Analytics query that exports the columns ``loadtest traffic`` reads, for a window (the last day); what
    it embeds, quoted as Kusto string literals."""
    if since is None and until is None:
        window = "TimeGenerated > ago(1d)"
    elif until is None:
        window = f"TimeGenerated >= {_at(since)}"  # type: ignore[arg-type]
    elif since is None:
        window = f"TimeGenerated < {_at(until)}"
    else:
        window = f"TimeGenerated >= {_at(since)} and TimeGenerated < {_at(until)}"
    return (
        "// partition-stress: the table requests `loadtest traffic` reads. Run it in the workspace that receives the\n"
        "// account's diagnostic settings (table: StorageRead, StorageWrite, StorageDelete); export the result as CSV.\n"
        f"StorageTableLogs\n| where {window}\n| project {', '.join(ANALYTICS_COLUMNS.values())}\n"
        "| order by TimeGenerated asc\n"
    )


def _named(names: list[str]) -> str:
    """The sources a message names: the first few, each shown on one line, the rest counted."""
    more = f" and {len(names) - _NAMED:,} more" if len(names) > _NAMED else ""
    return ", ".join(map(shown, names[:_NAMED])) + more


def _read_logs(given: dict[str, Any], names: list[str], tally: Tally, forms: Counter[str]) -> tuple[list[str], list[str]]:
    """Every source's records into ``tally``: the files named, or the blobs of ``--from-container``; the sources read
    and the console's line on the blobs."""
    containers, seen = given["from_container"], HourSeen()  # one for every source: a duplicate may be in another file
    counted = lambda: f"{tally.counted:,} records counted"  # noqa: E731
    if not containers:
        with Progress("traffic: reading", _size(names), "bytes", detail=counted) as progress:
            for name in names:
                read(name, given["format"], tally, forms, seen=seen, progress=progress)
        return names, []
    with LogBlobs(
        containers,
        prefix=given["prefix"],
        since=given["since"],
        until=given["until"],
        connection_string=given["connection_string"],
        account_url=given["account_url"],
        timeout=given["timeout"],
    ) as blobs:
        names = blobs.names()
        with Progress("traffic: reading blobs", None, "bytes", detail=counted) as progress:
            for name in names:
                with blobs.open(name) as stream:
                    read(name, given["format"], tally, forms, stream, seen, progress)
    passed = "".join(f"; passed by {n:,} {why}" for why, n in blobs.passed.items())
    return names, [f"Read {len(names):,} log blobs from {', '.join(containers)}{passed}."]


def _size(names: list[str]) -> int | None:
    """The bytes of the files named, as stored; None where one is standard input or cannot be sized."""
    try:
        return sum(os.path.getsize(name) for name in names) if "-" not in names else None
    except OSError:
        return None


def traffic_command(ns: argparse.Namespace) -> int:
    """Read, count, write the outputs, print the findings; the exit code ``--fail-on`` asks for."""
    given = {opt.dest: opt.value(ns) for opt in TRAFFIC_OPTIONS}
    since, until = given["since"], given["until"]
    if since is not None and until is not None and until <= since:
        raise UsageError(f"--until {utc_text(until)} is not after --since {utc_text(since)}")
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
    groups = shards(names, given["jobs"]) if names and "-" not in names else [names]
    run_id = given["run_id"] or new_run_id()
    engine = given["engine"] or (host_engine() if given["run_id"] else run_id)  # a part of a shared read, or the read
    upload = _upload(given, run_id, engine, len(groups))
    wanted = Path(given["out"] or str(Path("reports") / run_id / (engine if given["run_id"] else "")))
    made = [folder for folder in (wanted, *wanted.parents) if not folder.exists()]  # what check_out makes
    out = check_out(str(wanted), overwrite=given["overwrite"])
    began = time.perf_counter()
    try:
        if len(groups) > 1:
            results, added = read_in_shards(ns, groups, run_id, profile=bool(given["profile_out"]))
            said = [f"Read in {len(groups)} processes."]
            profile = added and _write_profile(given, added.counts, added.first, added.last, added.records)
        else:
            results, profile, said = _read_once(given, names, run_id, engine, out)
    except ToolError:
        for folder in made:  # refused: nothing written, the folders made for the outputs (still empty) let go of
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    report = not given["no_report"]  # a shard's report is merge's to draw
    finished = wrapup.finish(
        results, out, target=None, started=time.time(), outputs=wrapup.OUTPUTS[-1:], upload=upload, report=report
    )
    if not finished:
        return 1
    code, messages = exit_code(results, checks_for(given["fail_on"]))
    written = given["junit"] and junit.write(given["junit"], [junit.suite(results, given["fail_on"])])
    logs = results.logs
    forms = logs["forms"]
    lines = [
        f"Read {sum(forms.values()):,} records ({', '.join(f'{n:,} {f}' for f, n in forms.items())}) in "
        f"{time.perf_counter() - began:.1f} s; counted {logs['records']:,}, {logs['requests']:,} operations, "
        f"{logs['unattributed_share']:.0%} naming no partition."
    ]
    lines += said
    if logs["unreadable"]:
        lines.append("Unreadable: " + "; ".join(f"{n:,} {why}" for why, n in logs["unreadable"].items()))
    lines.append(wrapup.written_line(out, report))
    if upload is not None and not any(step["step"] == upload[0] for step in results.incomplete):
        place = upload_place(given["upload"], run_id, engine)
        lines.append(f"Uploaded: {place} (loadtest merge --from-container {given['upload']} --run-id {run_id})")
    if written:
        lines.append(f"JUnit: {given['junit']}")
    if profile is not None:
        lines.append(f"Traffic profile: {profile} (loadtest simulate --traffic {profile} --scale N)")
    lines += wrapup.console_lines(results)
    lines += [f"  FAILED {m}" for m in messages]
    print("\n".join(lines), flush=True)
    return code


def _upload(given: dict[str, Any], run_id: str, engine: str, shards: int) -> tuple[str, Callable[[Path], object]] | None:
    """``--upload``: the step that hands the written outputs to ``CONTAINER/<run-id>/<engine>/``, as a run's engine
    does, for ``loadtest merge --from-container``; refused in one line where it could not be done."""
    container = given["upload"]
    if not container:
        return None
    if not (given["connection_string"] or given["account_url"]):
        raise UsageError(
            f"--upload {container}: name the account that receives the outputs: --connection-string (or "
            f"${CONNECTION_STRING_ENV}) or --account-url"
        )
    if shards > 1:
        raise UsageError(f"--upload {container} with --jobs: a part of a shared read is one process; give --jobs 1")
    place = upload_place(container, run_id, engine)
    account = {"connection_string": given["connection_string"], "account_url": given["account_url"]}
    return f"the upload to {place}", lambda out: upload_outputs(
        out, container=container, run_id=run_id, engine=engine, timeout=given["timeout"], **account
    )


def _read_once(
    given: dict[str, Any], names: list[str], run_id: str, engine: str, out: Path
) -> tuple[Results, Path | None, list[str]]:
    """The logs read in this process, as run ``run_id``'s part ``engine``: the results (with their mergeable count),
    the profile written (--profile-out; a --jobs shard's demand counts, in ``out``), and what the console says of the
    blobs read."""
    tally = Tally(
        entity_bytes=given["entity_bytes"],
        client_request_id=given["client_request_id"],
        since=given["since"],
        until=given["until"],
        hash_keys=given["hash_keys"],
        profile=ProfileCounts() if given["profile_out"] or os.environ.get(PROFILE_STATE_ENV) else None,
    )
    forms: Counter[str] = Counter()
    names, blobs_read = _read_logs(given, names, tally, forms)
    counts = tally.finish()
    if tally.first is None or tally.last is None:
        operations = {shown(name): n for name, n in tally.table_operations.items()}  # names the logs wrote
        said = "; ".join(f"{n:,} {why}" for why, n in (tally.unreadable + tally.passed + Counter(operations)).items())
        raise UsageError(f"traffic: no entity operation counted in {_named(names)}" + (f" ({said})" if said else ""))
    targets = judged_against(given["profile"], given["partition_target"], given["account_target"])
    first = int(tally.first)
    info = RunInfo(
        id=run_id,
        started=utc_text(first),
        duration_s=float(int(tally.last) + 1 - first),
        target_kind="logs",
        table="",
        seeded=0,
        partition_target=targets.partition,
        account_target=targets.account,
        profile=given["profile"],
        endpoint="the account's request logs",
        entity_bytes=tally.workload.entity_bytes() or given["entity_bytes"],
        settings={"profile_out": given["profile_out"]} if given["profile_out"] else {},
    )
    width = width_for(int(info.duration_s))
    if width > 1:  # a long span: its seconds read a chunk at a time, never one frame
        results = summary.build(counts, info, workload=tally.workload.figures(), roll=True)
        buckets: pd.DataFrame | Chunks = Chunks(counts.frames, counts.aged.rows + len(counts.buckets))
    else:
        buckets = counts.frame()  # one frame for the summary and the mergeable count
        results = summary.build(counts, info, workload=tally.workload.figures(), buckets=buckets)
    # a read of some of the logs (an hour's, a day's) is a shard ``loadtest merge`` adds to the others, as engines'
    results.mergeable = capture(counts, tally.workload.profile, {}, run_id=info.id, engine=engine, buckets=buckets)
    results.logs = {
        "sources": names,
        "forms": dict(forms),
        "span": [utc_text(tally.first), utc_text(tally.last)],
        "client_request_id": given["client_request_id"],
        "hashed_keys": given["hash_keys"],
        **tally.account(results),
        "leaves_out": LEAVES_OUT + binned_leaves_out(width),
    }  # type: ignore[typeddict-item]
    counts.close()
    profile = None
    if tally.profile is not None and os.environ.get(PROFILE_STATE_ENV):  # a --jobs shard: its parent adds the shards'
        state = tally.profile.state(first=tally.first, last=tally.last, records=tally.counted)
        (out / PROFILE_STATE_FILE).write_text(json.dumps(state), encoding="utf-8")
    elif tally.profile is not None:
        profile = _write_profile(given, tally.profile, tally.first, tally.last, tally.counted)
    return results, profile, blobs_read


def _write_profile(given: dict[str, Any], counts: ProfileCounts, first: float, last: float, records: int) -> Path:
    """--profile-out: the demand counted (one read's, or its shards' added), as a traffic profile."""
    hashed, entity_bytes = given["hash_keys"], given["entity_bytes"]
    return counts.write(
        Path(given["profile_out"]), first=first, last=last, hashed=hashed, records=records, entity_bytes=entity_bytes
    )
