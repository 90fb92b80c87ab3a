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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import junit
from .connection_string import CONNECTION_STRING_ENV
from .exit_codes import RunError, UsageError
from .key_specs import key_strategy
from .options import rules
from .options.commands import REAL_RUN_ONLY
from .options.stress import OPTION_BY_DEST
from .outputs import COMPARISON_FILE, RESULTS_FILE, strict_json, write_text
from .results import Results

__all__ = ["Comparison", "StrategyOutcome", "compare", "split_designs", "summarise"]

FAIL_ON, JUNIT = OPTION_BY_DEST["fail_on"], OPTION_BY_DEST["junit"]

#: What the docs say that Azurite cannot show: it has no range partitions.
INFERRED = {
    "append-only": "Inferred from the docs, not measured: append-only keys always insert into the last range "
    "partition, so one partition server takes every insert however many keys there are.",
    "prepend-only": "Inferred from the docs, not measured: prepend-only keys always insert into the first range "
    "partition, so one partition server takes every insert however many keys there are.",
    "timestamp": "Inferred from the docs, not measured: time-ordered keys put the current period's inserts on one "
    "range partition; seconds-first formats (ssyyyyMMdd…) spread them over 60.",
}


@dataclass(kw_only=True)
class StrategyOutcome:
    strategy: str
    run_dir: str
    exit_code: int
    hottest_partition: str = ""
    hottest_peak_eps: float = 0.0
    ratio: float = 0.0
    partitions: int = 0
    top1_share: float = 0.0
    top10_share: float = 0.0
    entities: int = 0
    findings: list[str] = field(default_factory=list)
    inferred: str = ""
    peak_window_s: int = 0  # the seconds its peaks averaged (its run's steady phase, when shorter than 10)


@dataclass(kw_only=True)
class Comparison:
    strategies: list[StrategyOutcome]
    partition_target: int
    settings: dict[str, Any]
    ranking: list[str] = field(default_factory=list)
    recommendation: str = ""
    simulated: bool = False  # ``compare --simulate``: the partition layer's model ran each strategy, nothing was sent

    def to_json(self) -> str:
        return strict_json(asdict(self), root="comparison")[0]  # its figures come from results read strictly


def _slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", spec).strip("-") or "strategy"


def summarise(spec: str, run_dir: Path, exit_code: int) -> StrategyOutcome:
    """One strategy's line of the comparison, from its results.json."""
    outcome = StrategyOutcome(
        strategy=spec, run_dir=str(run_dir), exit_code=exit_code, inferred=INFERRED.get(spec.partition(":")[0], "")
    )
    path = run_dir / RESULTS_FILE
    if not path.exists():
        return outcome
    results = Results.load_file(path)
    hottest = results.hottest()
    if hottest:
        row = results.headline(hottest[0])
        outcome.hottest_partition = row.partition
        outcome.hottest_peak_eps, outcome.ratio = row.judged(results.open_loop)  # an open loop's (a simulation's): demand
        outcome.peak_window_s = results.run.peak_window_s
    outcome.partitions = int(results.keys.get("distinct", len(results.peaks())))
    outcome.top1_share = results.keys.get("top1_share", 0.0)
    outcome.top10_share = results.keys.get("top10_share", 0.0)
    outcome.entities = results.account.entities
    outcome.findings = list(dict.fromkeys(f.kind for f in results.findings))  # in the one order, heaviest first
    return outcome


def rank(outcomes: list[StrategyOutcome]) -> tuple[list[str], str]:
    """Best first: the lowest hottest-partition ratio, then the least concentrated load."""
    done = [o for o in outcomes if o.exit_code in (0, 3) and o.entities]
    ordered = sorted(done, key=lambda o: (o.ratio, o.top1_share, o.strategy))
    if not ordered:
        return [], "No strategy completed a run: see each run's output."
    best, worst = ordered[0], ordered[-1]
    text = (
        f"{best.strategy} spreads the load best: its hottest partition peaked at {best.hottest_peak_eps:,.0f} entities/s "
        f"({best.ratio:.0%} of the target) with {best.top1_share:.0%} of the entities on its busiest key"
    )
    if worst is not best:
        text += (
            f"; {worst.strategy} is the worst: {worst.hottest_peak_eps:,.0f} entities/s ({worst.ratio:.0%}) on one key "
            f"with {worst.top1_share:.0%} of the entities"
        )
    return [o.strategy for o in ordered], text + "."


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
    fail_on = rules.fail_on(FAIL_ON.flag, results.run.settings.get("fail_on", "never"))
    return junit.suite(results, fail_on, index=index, name=name, package=package)
