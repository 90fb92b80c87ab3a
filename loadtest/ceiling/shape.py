"""``loadtest ceiling`` on Locust's ``LoadTestShape``: steps of offered load until the partition gives way.

Each user offers ``Plan.user_rate`` operations/s on an open-loop schedule, so a step's offered load is its users
times that rate. A step is judged once its seconds have reached this process's metrics (a master waits for its
workers' next reports); the first step that is not good ends the test. The results record the search from every
step's figures, judged again once all counts are in.

Headless, from the web UI, distributed: put the shape in a locustfile beside your users::

    from loadtest import CeilingShape, TableUser  # noqa: F401
"""

from __future__ import annotations

import argparse
import logging
import time

from locust import LoadTestShape
from locust.runners import WORKER_REPORT_INTERVAL, MasterRunner

from ..counting.counts import RunCounts
from ..exit_codes import ToolError
from .judge import step_figures, stopped_by
from .plan import Plan, StepWindow

__all__ = ["CeilingShape"]

log = logging.getLogger("loadtest")
LOCAL_LAG_S = 1.2  # a step's last second is in the metrics a moment after it ends
REPORT_LAG_S = WORKER_REPORT_INTERVAL + 1.5  # ... and in a master's after every worker's next report
TICK_SLACK_S = 0.5  # half of Locust's second between a shape's ticks


class CeilingShape(LoadTestShape):
    """Offered load from ``--ceiling-start`` up by ``--ceiling-step``, each step ``--step-time``, until a step
    serves under 95 % of what it offered, throttles over 1 % of its attempts, or its corrected p99 passes
    ``--max-p99``; or ``--ceiling-max`` is reached."""

    def __init__(self) -> None:
        super().__init__()
        self.plan: Plan | None = None
        self.windows: list[StepWindow] = []
        self.judged = 0
        self.gave_way: dict[str, str] = {}
        self.metrics: RunCounts | None = None  # the run's counts, given by ``watch``

    def watch(self, metrics: RunCounts, options: argparse.Namespace) -> None:
        """Judge steps from these counts (the stress test's lifecycle hands them over at ``init``, once the plan these
        options make has passed its rules: ``UsageError`` otherwise)."""
        Plan.from_options(options)
        self.metrics = metrics

    def plan_for(self, options: argparse.Namespace) -> Plan:
        """The plan as these options set it: the runner's, or (a worker's users) the master's sent with the spawn."""
        return self.plan or Plan.from_options(options)

    def reset_time(self) -> None:
        """A new test (Locust calls this at each start): the plan from the options as they are now."""
        super().reset_time()
        # a master resets again inside its first tick's start(): the step that tick began stays
        running = [w for w in self.windows if w.index == 0 and w.ended is None and len(self.windows) == 1]
        self.windows, self.judged, self.gave_way = running, 0, {}
        try:
            self.plan = Plan.from_options(self.runner.environment.parsed_options)
        except ToolError as err:
            log.error("ceiling search not started: %s", err)
            self.plan = None

    def tick(self) -> tuple[int, float] | None:
        plan, now = self.plan, time.time()
        if plan is None or self.metrics is None:
            return None
        # each step --step-time long from its own first tick, to the nearest tick: Locust ticks a shape once a second,
        # and a step's end falling just after a tick (the master restarts the run's clock on its first tick) cost that
        # step a second and gave it to the next; a last step cut to 3 s had too few whole seconds to be judged
        current = self.windows[-1] if self.windows else None
        index = 0 if current is None else current.index + (now - current.began + TICK_SLACK_S >= plan.step_s)
        self._judge(now)
        if self.gave_way or index >= plan.steps:
            self.close(now)
            if self.gave_way:
                log.info("ceiling search: step %d gave way: %s", self.judged, "; ".join(self.gave_way.values()))
            return None
        if not self.windows or self.windows[-1].index != index:
            self.close(now)
            users = plan.users(index)
            before = plan.users(index - 1) if index else 0
            spawn = float(max(1, 2 * (users - before)))  # this step's users within half a second
            self.windows.append(StepWindow(index=index, offered=plan.offered(index), users=users, spawn_rate=spawn, began=now))
        return self.windows[-1].users, self.windows[-1].spawn_rate

    def ran(self, now: float) -> tuple[Plan, list[StepWindow], bool] | None:
        """At the test's end: the plan, the steps as they ran, and whether it ended before the plan's last step
        (a step gave way, or it was stopped from the web UI or by a signal: the running step ends now)."""
        if self.plan is None or not self.windows:
            return None
        self.close(now)
        return self.plan, list(self.windows), bool(self.gave_way) or len(self.windows) < self.plan.steps

    def close(self, now: float) -> None:
        """End the running step (the search ends, or the test is stopped)."""
        if self.windows and self.windows[-1].ended is None:
            self.windows[-1].ended = now

    def _judge(self, now: float) -> None:
        """Judge every step whose counts are all in; the first that gave way stops the search."""
        lag = REPORT_LAG_S if isinstance(self.runner, MasterRunner) else LOCAL_LAG_S
        metrics = self.metrics
        while self.judged < len(self.windows) and not self.gave_way:
            window = self.windows[self.judged]
            if window.ended is None or now < window.ended + lag:
                return
            seconds = window.seconds()
            buckets = metrics.between(min(seconds), max(seconds)) if seconds else {}
            figures = step_figures(window, buckets, metrics.latency, metrics.corrected, {}, 0.0)
            self.gave_way = stopped_by(figures, self.plan)
            self.judged += 1
            log.info(
                "ceiling search: step %d, %d operations/s offered: served %.0f/s, corrected p99 %.0f ms%s",
                window.index + 1,
                window.offered,
                figures["served_per_s"],
                figures["corrected_p99_ms"],
                "" if self.gave_way else ": good",
            )
