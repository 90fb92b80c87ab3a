"""``loadtest advise``: the design that fits the workload, in the outputs every command writes (results.json with its
``advice`` section, report.html with "Designs that fit", ``--junit``). The figures beside the advice are the current
design's peak window at the peak x growth, simulated (``run.target_kind: "advice"``)."""

from __future__ import annotations

import argparse
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import wrapup
from ..exit_codes import EXIT_CHECK_FAILED, EXIT_OK, EXIT_RUN_FAILED, UsageError
from ..findings.assess import checks_for, exit_code
from ..options.advise import ADVISE_OPTIONS
from ..options.commands import REPLAY_OPTIONS, refuse_extra
from ..options.stress import OPTION_BY_DEST
from ..outputs import REPORT_FILE, check_out, new_run_id
from ..report import junit
from ..traffic.run_replay import replay_path
from .search import WINDOW_S, search
from .section import advice_section, console
from .verify import verify
from .workload import WORKLOAD, Workload, from_namespace, from_results

__all__ = ["advise"]

GROWTH, FROM, FAMILIES, VERIFY, VERIFY_RATE, VERIFY_TIME = ADVISE_OPTIONS
OUT, JUNIT, FAIL_ON, OVERWRITE = (OPTION_BY_DEST[d] for d in ("out", "junit", "fail_on", "overwrite"))


def _workload(ns: argparse.Namespace, extra: list[str]) -> Workload:
    """The workload from its one source, every rule checked before anything runs."""
    refuse_extra(extra, "advise", "advise sends nothing but its --verify runs; give the workload and --arrival-rate")
    growth = GROWTH.value(ns)
    given = {dest for dest in vars(ns) if getattr(ns, dest) not in (None, "")}
    source = FROM.value(ns)
    if source:
        beside = [f"--{d.replace('_', '-')}" for d in (*WORKLOAD, "traffic") if d in given]
        if beside:
            raise UsageError(f"--from and {', '.join(beside)}: give the workload once (--from reads it from the results)")
        peak = float(ns.arrival_rate) if getattr(ns, "arrival_rate", None) not in (None, "") else 0.0
        return from_results(source, growth, peak)
    replay_path(ns, REPLAY_OPTIONS[1:])  # a replay's options only beside --traffic, and no workload's there
    return from_namespace(ns, given, growth)


def advise(ns: argparse.Namespace, extra: list[str]) -> int:
    """Validate, search, (verify,) write the outputs, print the advice; the exit code: ``--fail-on`` on the current
    design at the peak x growth, or 3 where the real runs disagreed with the simulation."""
    workload = _workload(ns, extra)
    families, verifying = FAMILIES.value(ns), VERIFY.value(ns)
    rate, seconds = VERIFY_RATE.value(ns), VERIFY_TIME.value(ns)
    fail_on, junit_file = FAIL_ON.value(ns), JUNIT.value(ns)
    run_id = new_run_id()
    out = check_out(OUT.value(ns) or str(Path("reports") / f"advice-{run_id}"), overwrite=OVERWRITE.value(ns))
    began = time.perf_counter()
    found = search(workload, families)
    elapsed = time.perf_counter() - began
    checked = verify(found, workload, out, rate=rate, seconds=seconds) if verifying else None
    results = found.results
    results.run = replace(
        results.run,
        id=run_id,
        started=time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
        target_kind="advice",
        settings={**results.run.settings, "fail_on": ",".join(fail_on) or "never"},
    )
    results.advice = advice_section(found, elapsed_s=elapsed, verification=checked)
    results.simulation = {
        "model": f"the current design's demand per key at the peak x growth, {WINDOW_S} s through the throttling "
        "emulator's partition layer (token buckets per PartitionKey and per account) in virtual time, ticks of 0.1 s",
        "leaves_out": results.advice["leaves_out"],
        "step_s": 0.1,
        "budgets": {"partition_rate": workload.settings.partition_target, "account_rate": workload.settings.account_target},
        "keys": len(found.current.load.keys),
        "operations": round(workload.rate * WINDOW_S),
        "elapsed_s": round(elapsed, 3),
    }
    if not wrapup.finish(results, out, target=None, started=time.time(), outputs=wrapup.OUTPUTS[-1:]):
        return 1
    code, messages = exit_code(results, checks_for(fail_on))
    if checked is not None and not checked["agrees"]:
        failed_runs = any("partitions" not in e and e.get("agrees") is False for e in checked["designs"])
        # a verifying run that could not be done is the run's failure (1); runs that disagreed, a check's (3)
        code = EXIT_RUN_FAILED if failed_runs else max(code, EXIT_CHECK_FAILED)
    written = junit_file and junit.write(junit_file, [_suite(results.advice, run_id), junit.suite(results, fail_on, index=1)])
    lines = console(results.advice) + [f"Report: {out / REPORT_FILE}"]
    lines += [f"JUnit: {junit_file}"] if written else []
    lines += [f"  FAILED {m}" for m in messages]
    print("\n".join(lines), file=sys.stdout, flush=True)
    return code if code else EXIT_OK


def _suite(advice: dict[str, Any], run_id: str) -> ET.Element:
    """The advice as a test suite: a design fits (failed where none does), and each verified design agrees."""
    cases: list[tuple[str, str, tuple[str, str, str] | None]] = []
    fits = advice["chosen"] != ""
    cases.append(("a design fits", "advice", None if fits else ("NO_DESIGN", advice["recommendation"], advice["why"])))
    for entry in (advice.get("verification") or {}).get("designs", []):
        if "partitions" not in entry:
            if entry.get("agrees") is False:  # its run failed: the proof was not made
                cases.append((f"verify {entry['family']} {entry['n']}", "verify", ("NOT_VERIFIED", entry["why_not"], str(entry))))
            continue
        wrong = [r["partition"] for r in entry["partitions"] if not r["agrees"]]
        failure = None if entry["agrees"] else ("DISAGREES", f"{entry['label']}: the real run disagrees on {wrong}", str(entry))
        cases.append((f"verify {entry['family']} {entry['n']}", "verify", failure))
    return junit.plain_suite(f"partition-stress advice {run_id}", cases, [advice["why"], advice["recommendation"]])
