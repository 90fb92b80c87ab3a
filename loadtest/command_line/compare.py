"""``loadtest compare``: the same workload once per PartitionKey strategy, then one ranked comparison.

Each strategy runs as its own ``loadtest run`` (a child process): a fresh table, and a fresh
embedded Azurite when no target is given, since Azurite slows as it fills. The comparison
reads only the runs' results.json files.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from ..account.connection_string import CONNECTION_STRING_ENV
from ..exit_codes import RunError, UsageError
from ..options import rules
from ..options.commands import REAL_RUN_ONLY
from ..options.stress import OPTION_BY_DEST
from ..outputs import COMPARISON_FILE, RESULTS_FILE, write_text
from ..report import junit
from ..results.comparison import Comparison, StrategyOutcome, rank, summarise
from ..results.form import Results
from ..workload.key_specs import key_strategy

__all__ = ["compare", "split_designs"]

FAIL_ON, JUNIT = OPTION_BY_DEST["fail_on"], OPTION_BY_DEST["junit"]


def _slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", spec).strip("-") or "strategy"


def _secrets_to_environment(run_args: list[str]) -> tuple[list[str], dict[str, str]]:
    """A connection string goes to the runs through the environment, never a command line (``ps`` shows those)."""
    env, args, items = dict(os.environ), [], iter(run_args)
    for arg in items:
        if arg == "--connection-string":
            env[CONNECTION_STRING_ENV] = next(items, "")
        elif arg.startswith("--connection-string="):
            env[CONNECTION_STRING_ENV] = arg.split("=", 1)[1]
        else:
            args.append(arg)
    return args, env


def split_designs(ways: list[int]) -> dict[str, list[str]]:
    """``--split-hot 1,4,16``: a replayed profile's design as logged and with its hot partitions split each way."""
    return {("as logged" if n == 1 else f"hot partitions split {n} ways"): ["--split-hot", str(n)] for n in ways}


def compare(
    strategies: list[str],
    run_args: list[str],
    out: Path,
    *,
    timeout: float = 3600,
    simulate: bool = False,
    designs: dict[str, list[str]] | None = None,
    junit_file: str = "",
) -> Comparison:
    """Run ``loadtest run`` (``simulate``: ``loadtest simulate``) once per strategy with the same ``run_args``, then
    compare. ``designs``: named options per run instead of key strategies (``split_designs``); ``junit_file``: each
    run's verdict as a test suite there (``--junit``)."""
    if designs is None:
        if len(strategies) < 2:
            raise UsageError("--strategies needs at least two, e.g. --strategies single,hash-prefix:16,guid")
        for spec in strategies:  # every one valid before the first run starts
            try:
                key_strategy(spec)
            except UsageError as err:
                raise UsageError(f"--strategies: {str(err).replace('--key-strategy ', '', 1)}") from None
        designs = {spec: ["--key-strategy", spec] for spec in strategies}
    run_args, env = _secrets_to_environment(run_args)
    env.pop(JUNIT.locust_env, None)  # the comparison writes the one file, a suite per run: not each run its own
    command = "simulate" if simulate else "run"
    outcomes = []
    for number, (spec, design) in enumerate(designs.items(), 1):
        run_dir = out / _slug(spec)
        print(f"compare: running {spec} ({number} of {len(designs)}) -> {run_dir}", flush=True)
        try:
            done = subprocess.run(
                [sys.executable, "-m", "loadtest", command, *run_args, *design, "--out", str(run_dir)],
                stdin=subprocess.DEVNULL,
                timeout=timeout,
                env=env,
            )
        except subprocess.TimeoutExpired as err:
            raise RunError(f"compare: the {spec} run took over {timeout:.0f} s") from err
        if done.returncode == 2:
            raise UsageError(f"compare: the {spec} run refused its options (exit 2); see above")
        outcomes.append(summarise(spec, run_dir, done.returncode))
    hidden = {"key_strategy", "table", "out", *(REAL_RUN_ONLY if simulate else ())}  # a simulation has no client, no table
    measured = [Path(o.run_dir) / RESULTS_FILE for o in outcomes if (Path(o.run_dir) / RESULTS_FILE).exists()]
    first = Results.load_file(measured[0]) if measured else None
    comparison = Comparison(
        strategies=outcomes,
        partition_target=first.run.partition_target if first else 0,
        settings={k: v for k, v in (first.run.settings.items() if first else []) if k not in hidden},
        simulated=simulate,
    )
    comparison.ranking, comparison.recommendation = rank(outcomes)
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / COMPARISON_FILE, comparison.to_json())
    if junit_file:
        junit.write(junit_file, [_suite(outcome, index) for index, outcome in enumerate(outcomes)])
    return comparison


def _suite(outcome: StrategyOutcome, index: int) -> ET.Element:
    """A strategy's run as a test suite: its results.json judged by the ``--fail-on`` it ran with (its settings
    record it), so the suite fails where the run's exit code did; a run that left no results, in error."""
    name, package = f"partition-stress {outcome.strategy}", f"{junit.PACKAGE}.{_slug(outcome.strategy)}"
    path = Path(outcome.run_dir) / RESULTS_FILE
    try:
        results = Results.from_json(path.read_text(encoding="utf-8"))  # the verdict's fields: not the series beside it
    except (OSError, ValueError) as err:
        reason = f"the {outcome.strategy} run (exit {outcome.exit_code}) left no results.json to judge: {err}"
        return junit.missing_suite(name, reason, index=index, package=package)
    fail_on = rules.fail_on(FAIL_ON.flag, results.run.recorded.fail_on)
    return junit.suite(results, fail_on, index=index, name=name, package=package)
