"""The state of this process's stress test, one per Locust environment: what its users, listeners and pages read
(``current_run``). ``lifecycle`` makes it at ``init`` and moves it through the test's events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from weakref import WeakKeyDictionary

from locust.env import Environment

from ..account.endpoint import Target
from ..counting.request_listener import PartitionMetrics
from ..exit_codes import EXIT_OK
from ..options.settings import Settings
from ..outputs import check_out, new_run_id
from ..results.form import Results
from ..testbed.integrity import Ledger
from ..testbed.table import TestTable
from .distributed import Cluster
from .in_flight import InFlight

__all__ = ["StressRun", "current_run", "set_current_run"]

_RUNS: WeakKeyDictionary[Environment, StressRun] = WeakKeyDictionary()


@dataclass(kw_only=True)
class StressRun:
    """What this process's stress test works with; users read it through ``current_run``."""

    settings: Settings
    target: Target
    table: TestTable
    metrics: PartitionMetrics
    ledger: Ledger
    cluster: Cluster
    streams: count[int] = field(default_factory=count)  # this process's users, numbered from 0 each test
    users: int = 0  # the whole run's users at test start: --arrival-rate's share per user
    run_id: str = field(default_factory=new_run_id)
    out: Path | None = None
    started: float = 0.0
    tests: int = 0
    results: Results | None = None
    exit_code: int = EXIT_OK
    messages: list[str] = field(default_factory=list)
    interrupted: str = ""  # Ctrl-C or SIGTERM (its name): operations still in flight get a moment, not the stop timeout

    @property
    def in_flight(self) -> InFlight:
        """This process's open-loop operations in flight (sampled each second by the cluster)."""
        return self.cluster.in_flight

    @property
    def seeded(self) -> int:
        """Rows seeded under the PartitionKey (RowKeys 0 .. seeded-1)."""
        return self.table.seeded or self.settings.seed_entities

    def output_dir(self) -> Path:
        if self.settings.out:
            base = Path(self.settings.out)
            return base if self.tests <= 1 else base.with_name(f"{base.name}-{self.tests}")
        if self.settings.run_id:  # one engine of a shared run: as its upload is laid out
            return Path("reports") / self.run_id / self.settings.engine
        return Path("reports") / self.run_id

    def check_output_dir(self) -> Path:
        """This test's folder, checked before it sends anything as ``--out`` is before the first
        (``outputs.check_out``): the web UI's later tests (``X-2``…) and a folder its form changed follow the same
        rule, or are refused (``UsageError``) while nothing is lost."""
        out = self.output_dir()
        if self.settings.out:
            check_out(str(out), overwrite=self.settings.overwrite)
        return out


def current_run(environment: Environment) -> StressRun:
    try:
        return _RUNS[environment]
    except KeyError:
        raise RuntimeError(
            "no stress test on this environment: import from loadtest in the locustfile, or call loadtest.register(environment)"
        ) from None


def set_current_run(environment: Environment, run: StressRun) -> None:
    _RUNS[environment] = run
