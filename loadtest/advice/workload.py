"""The workload ``advise`` designs for, from the sources ``simulate`` reads: the options, a traffic profile (as the
options ``run --traffic`` replays it with), or a finished run's results.json (the workload its settings recorded).

Every source ends as the same thing: the workload's options (``options``, what ``namespace`` parses and a run is
given), the settings they make, and the peak operations/s. Each design is these options with its key design in
place of the current one, so the search, the simulation and the verifying runs read one workload.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..exit_codes import UsageError
from ..limits import MAX_SIMULATED_RATE
from ..options.settings import Settings, namespace
from ..results.rolled_frame import BIN_COLUMN
from ..results.rows import RecordedSettings
from ..results.schema import USER_SETTINGS
from ..service.operations import OPERATIONS

__all__ = ["WORKLOAD", "Workload", "from_namespace", "from_results"]

#: The options that are the workload (what each design keeps): the users' settings and the seeded table.
WORKLOAD = (*USER_SETTINGS, "seed_entities", "key_seed", "entity_size", "properties")


@dataclass(frozen=True, kw_only=True)
class Workload:
    """The workload's options (dest -> value as given), the settings they make, its peak operations/s and the growth
    the design must hold (peak x growth is what every design is judged at)."""

    options: dict[str, str]
    settings: Settings
    peak: float  # operations/s
    growth: float
    source: str  # what it was read from: "options", "--traffic FILE", "--from FILE"

    @property
    def rate(self) -> float:
        """Operations/s the designs are judged at: the peak times the growth."""
        return self.peak * self.growth

    def with_key(self, key_strategy: str, **options: str) -> Settings:
        """The same workload with another key design (and the ``options`` it sets, e.g. its skew)."""
        return Settings.from_options(namespace(**{**self.options, **options, "key_strategy": key_strategy}), offline=True)

    def argv(self, **overrides: str) -> list[str]:
        """The workload as command-line options (a verifying run's, the advise command line a finding prints)."""
        values = {**self.options, **overrides}
        return [arg for dest, value in values.items() for arg in (f"--{dest.replace('_', '-')}", str(value))]


def _checked(options: dict[str, str], peak: float, growth: float, source: str) -> Workload:
    settings = Settings.from_options(namespace(**options), offline=True)
    if not any(OPERATIONS[name].op_class for name in settings.mix):
        raise UsageError("--mix: the workload has no operations; give at least one, e.g. --mix read=80,upsert=20")
    if not 0 < peak <= MAX_SIMULATED_RATE:
        raise UsageError(
            f"--arrival-rate{f' {peak:g}' if peak else ''}: advise needs the workload's peak, operations/s above 0 and at most "
            f"{MAX_SIMULATED_RATE:,}, e.g. --arrival-rate 400"
        )
    if settings.key_strategy.startswith("traffic:") and not settings.keys().keys():
        raise UsageError(f"{source}: the profile names no partition; advise needs its partitions' demand")
    return Workload(options=options, settings=settings, peak=peak, growth=growth, source=source)


def from_namespace(ns: argparse.Namespace, given: set[str], growth: float) -> Workload:
    """The options given on the command line (``given``: their dests), or the profile ``--traffic`` names as the
    options ``run --traffic`` sets from it (its busiest bin x ``--scale``, or ``--arrival-rate``, as the peak)."""
    if getattr(ns, "traffic", ""):
        from ..traffic.run_replay import replayed

        ns.users, ns.rate, ns.duration = "", "", ""
        replayed(ns)  # mix, key strategy (traffic:FILE), batch and scan sizes, seeded entities, the peak
        given = given | {"mix", "key_strategy", "batch_size", "scan_size", "seed_entities"}
        source = f"--traffic {ns.traffic}"
    else:
        source = "options"
    options = {dest: str(getattr(ns, dest)) for dest in WORKLOAD if dest in given and getattr(ns, dest) not in (None, "")}
    peak = float(getattr(ns, "arrival_rate", 0) or 0)
    return _checked(options, peak, growth, source)


def from_results(path: str, growth: float, peak: float = 0.0) -> Workload:
    """The workload a results.json's settings recorded (a run's or a simulation's), at its peak: ``peak`` if given,
    else the open loop's ``--arrival-rate``, else the busiest second's operations."""
    flag = f"--from {path}"
    try:
        data: Any = json.loads(Path(path).read_text(encoding="utf-8"))
        settings, kind = data["run"]["settings"], data["run"]["target_kind"]
        assert isinstance(settings, dict)
        recorded = RecordedSettings.of(settings)  # its numbers, or the one line below
    except FileNotFoundError:
        raise UsageError(f"{flag}: no such file; give a results.json a run or a simulation wrote") from None
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AssertionError):
        raise UsageError(f"{flag}: not a partition-stress results.json (its run.settings and run.target_kind)") from None
    if kind == "traffic":
        raise UsageError(
            f"{flag}: a traffic read records no workload options; give its profile with --traffic FILE "
            "(loadtest traffic LOGS --profile-out FILE)"
        )
    if kind == "advice":
        raise UsageError(f"{flag}: an advice's own results; give the run or simulation it advised on")
    options = {dest: _text(settings[dest]) for dest in WORKLOAD if settings.get(dest) not in (None, "")}
    if not peak:
        peak = recorded.arrival_rate or _busiest(path)
    return _checked(options, peak, growth, flag)


def _text(value: Any) -> str:
    """A recorded setting as its option's text (a mix recorded as a mapping: ``read=80,upsert=20``)."""
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def _busiest(path: str) -> float:
    """A closed loop's peak: the busiest second's operations in the series beside the results (0 without one)."""
    from ..results.form import Results

    try:
        frame = Results.load_file(Path(path)).timeseries
    except (OSError, ValueError):
        return 0.0
    if frame.empty:
        return 0.0
    seconds = frame[(frame["op_class"] != "ALL") & (frame[BIN_COLUMN] == 1)]  # a long span's bins are no second's
    return float(seconds.groupby("t")["requests"].sum().max()) if len(seconds) else 0.0
