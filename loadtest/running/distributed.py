"""Everything between a Locust master and its workers, and the run's once-a-second samples.

The messages, each defined once here:

- ``RUN`` master -> worker at test start: the table and settings to join (before the spawn messages);
- ``report_to_master`` / ``worker_report`` (Locust's): a worker's drained counts every few seconds;
- ``STOP`` master -> worker: stop your users now (the master is quitting first);
- ``LEDGER`` then ``FINAL`` worker -> master once its users stopped: its acknowledged writes, then
  its last counts; the master waits for every worker's ``FINAL`` before writing results.

The sampler reads every process's own CPU and its open loop's operations in flight every second
(a worker sends its readings with its counts); on the master it also reads the CPU of the run's
local servers (the embedded Azurite, the throttling emulator, a table service on the loopback port
given) and of the machine's cores, records users running, names
workers that went missing (no heartbeat) and compacts the metrics. A worker whose master falls silent stops
loading after ``MASTER_SILENT_S`` (Locust itself would load on for a minute before quitting).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import gevent
import psutil
from locust.env import Environment
from locust.rpc import Message
from locust.runners import STATE_RUNNING, STATE_SPAWNING, MasterRunner, Runner, WorkerRunner

from ..counting.generator_cpu import CpuMeter
from ..counting.request_evidence import RequestProfile
from ..counting.request_listener import PartitionMetrics
from ..testbed.integrity import Ledger
from .in_flight import InFlight

__all__ = ["Cluster"]

RUN = "partition_stress_run"
LEDGER = "partition_stress_ledger"
STOP = "partition_stress_stop"
FINAL = "partition_stress_final"
REPORT_KEY = "partition_stress"  # a worker's counts inside Locust's own report_to_master data
WORKLOAD_KEY = "partition_stress_workload"  # and its request profile's
CPU_KEY = "partition_stress_cpu"  # and its own CPU and operations in flight, per second
#: A worker stops its users when the master has not answered its heartbeats for this long (it answers every second).
MASTER_SILENT_S = 5.0
log = logging.getLogger("loadtest")


class Cluster:
    """This process's side of the master/worker exchange, and the per-second samples."""

    def __init__(self, environment: Environment, metrics: PartitionMetrics, ledger: Ledger, workload: RequestProfile) -> None:
        self.environment, self.metrics, self.ledger, self.workload = environment, metrics, ledger, workload
        self.samples: dict[int, dict[str, Any]] = {}  # second -> users, this process's cpu %, servers' cpu %, in flight
        self.cpu = CpuMeter()
        self.in_flight = InFlight()  # this process's open-loop operations in flight
        self.servers: dict[str, psutil.Process] = {}  # the run's local servers (on the master), by name
        self._own_seconds: dict[int, dict[str, Any]] = {}  # a worker's cpu % and in flight per second, until its report
        self.workers_cpu: dict[str, dict[int, float]] = {}  # the master: worker id -> second -> its cpu %
        self.workers_in_flight: dict[str, dict[int, dict[str, float]]] = {}  # and its operations in flight
        self.worker_reports: dict[str, float] = {}  # worker id -> time of its last report (master)
        self.finals: set[str] = set()  # workers whose last counts arrived (master)
        self.lost: dict[str, dict[str, Any]] = {}  # workers that went missing (master)
        self._sampler: gevent.Greenlet | None = None

    @classmethod
    def register(
        cls,
        environment: Environment,
        metrics: PartitionMetrics,
        ledger: Ledger,
        workload: RequestProfile,
        *,
        on_join: Callable[[dict[str, Any]], None],
    ) -> Cluster:
        """Wire this process's messages; a worker calls ``on_join`` with the master's run."""
        cluster = cls(environment, metrics, ledger, workload)
        events, runner = environment.events, environment.runner
        events.test_start.add_listener(cluster.on_test_start)
        events.test_stop.add_listener(cluster.on_test_stop)
        if isinstance(runner, WorkerRunner):
            events.report_to_master.add_listener(lambda client_id, data: data.update(cluster.drain()))
            runner.register_message(RUN, lambda msg, **_: on_join(msg.data))
            runner.register_message(STOP, lambda msg, **_: runner.stop(), concurrent=True)
            events.test_stop.add_listener(cluster.hand_over)
            gevent.spawn(cluster.watch_master, runner)
        elif isinstance(runner, MasterRunner):
            events.worker_report.add_listener(cluster.on_worker_report)
            runner.register_message(LEDGER, lambda msg, **_: ledger.merge(msg.data))
            runner.register_message(FINAL, cluster.on_final)
        return cluster

    @property
    def runner(self) -> Runner | None:
        return self.environment.runner

    # --- master -------------------------------------------------------------------------

    def announce(self, payload: dict[str, Any]) -> None:
        """Send the workers the run to join (at test start, before Locust's spawn messages)."""
        if isinstance(self.runner, MasterRunner):
            self.runner.send_message(RUN, payload)

    def on_worker_report(self, client_id: str, data: dict[str, Any]) -> None:
        self.worker_reports[client_id] = time.time()
        self.merge(data, client_id)

    def on_final(self, msg: Message, **_: Any) -> None:
        self.worker_reports[msg.node_id] = time.time()
        self.merge(msg.data, msg.node_id)
        self.finals.add(msg.node_id)

    def collect(self, timeout: float) -> list[str]:
        """At test stop: stop workers still running and wait for every worker's last counts.

        Locust's headless quit stops the master before its workers; without this, the seconds
        after their last periodic report would be missing. Returns the workers that never answered.
        """
        runner = self.runner
        if not isinstance(runner, MasterRunner):
            return []
        running = [c.id for c in runner.clients.values() if c.state in ("spawning", "running")]
        for client_id in running:
            runner.send_message(STOP, None, client_id)
        deadline = time.monotonic() + timeout
        waiting: list[str] = []
        while time.monotonic() < deadline:
            self._check_workers()
            waiting = [
                c.id
                for c in runner.clients.values()
                if c.id not in self.finals and c.id not in self.lost and (c.id in self.worker_reports or c.id in running)
            ]
            if not waiting:
                return []
            gevent.sleep(0.1)
        return waiting

    def watch(self, servers: dict[str, int | None]) -> None:
        """Read these processes' CPU every second too (name -> PID; None: not started here)."""
        self.servers = {}
        for name, pid in servers.items():
            try:
                if pid is not None:
                    self.servers[name] = psutil.Process(pid)
            except psutil.Error:
                continue
        self._servers_cpu()  # the first reading starts each one's clock

    def gathered(self) -> dict[str, Any]:
        """For the results, beside the metrics: the per-second samples, the workers' record, the request profile."""
        samples = {second: dict(sample) for second, sample in self.samples.items()}
        for sample in samples.values():
            if "in_flight" in sample:  # added to below: a copy
                sample["in_flight"] = dict(sample["in_flight"])
        for worker, per_second in self.workers_cpu.items():
            for second, pct in per_second.items():
                samples.setdefault(second, {}).setdefault("workers_cpu", {})[worker] = pct
        for per_second in self.workers_in_flight.values():  # every process's operations in flight, added up
            for second, figures in per_second.items():
                into = samples.setdefault(second, {}).setdefault("in_flight", {})
                for name, value in figures.items():
                    into[name] = into.get(name, 0) + value
        return {"samples": samples, "workers": self.record(), "workload": self.workload.figures()}

    def record(self) -> dict[str, Any]:
        """The workers that reported and those lost, for the results (empty when not distributed)."""
        if not self.worker_reports:
            return {}
        return {"reported": sorted(self.worker_reports), "lost": list(self.lost.values())}

    def _check_workers(self) -> None:
        """Record a worker that went missing (no heartbeat): its unreported seconds are lost."""
        runner, started = self.runner, self.metrics.started
        if not isinstance(runner, MasterRunner) or started is None:
            return
        now = time.time()
        for client in list(runner.clients.values()):
            if client.state == "missing" and client.id not in self.lost:
                last = self.worker_reports.get(client.id)
                self.lost[client.id] = {
                    "worker": client.id,
                    "index": runner.worker_indexes.get(client.id),  # its users' RowKeys carry it
                    "lost_at_s": round(now - started, 1),
                    "last_report_s": round(last - started, 1) if last else None,
                }

    # --- worker -------------------------------------------------------------------------

    def hand_over(self, environment: Environment, **_: Any) -> None:
        """Once this worker's users stopped: its ledger, then what the periodic reports have not sent."""
        runner = environment.runner
        runner.send_message(LEDGER, self.ledger.to_dict())
        runner.send_message(FINAL, self.drain())

    def drain(self) -> dict[str, Any]:
        """This worker's counts since its last report: the metrics' and the request profile's."""
        seconds, self._own_seconds = self._own_seconds, {}
        own = {str(second): sample for second, sample in seconds.items()}
        return {REPORT_KEY: self.metrics.drain(), WORKLOAD_KEY: self.workload.drain(), CPU_KEY: own}

    def merge(self, data: dict[str, Any], worker: str) -> None:
        """Add a worker's counts (the master)."""
        self.metrics.merge(data.get(REPORT_KEY))
        self.workload.merge(data.get(WORKLOAD_KEY))
        cpu, in_flight = self.workers_cpu.setdefault(worker, {}), self.workers_in_flight.setdefault(worker, {})
        for second, sample in data.get(CPU_KEY, {}).items():
            cpu[int(second)] = sample["cpu"]
            if sample.get("in_flight"):
                in_flight[int(second)] = sample["in_flight"]

    def watch_master(self, runner: WorkerRunner) -> None:
        """Stop loading the target once the master is gone: nobody would count what this worker sends."""
        while True:
            gevent.sleep(1.0)
            last = runner.last_heartbeat_timestamp
            silent = time.time() - last if last else 0.0
            if silent > MASTER_SILENT_S and runner.state in (STATE_SPAWNING, STATE_RUNNING):
                runner.stop()
                log.error("no answer from the master for %.0f s: stopped this worker's users", silent)

    # --- the per-second sampler ----------------------------------------------------------------

    def on_test_start(self, **_: Any) -> None:
        self.samples.clear()
        self.worker_reports.clear()
        self.finals.clear()
        self.lost.clear()
        self.workers_cpu.clear()
        self.workers_in_flight.clear()
        self._own_seconds.clear()
        self.cpu = CpuMeter()  # from the test's start, not the process's (imports, seeding)
        psutil.cpu_percent(None)  # the machine's and the servers' readings from the test's start, too
        self._servers_cpu()
        if self._sampler is None:
            self._sampler = gevent.spawn(self._sample)

    def on_test_stop(self, **_: Any) -> None:
        if self._sampler is not None:
            self._sampler.kill(block=False)
            self._sampler = None

    def _sample(self) -> None:
        """Once a second: this process's CPU and operations in flight; a worker keeps them for its next report, the
        master (or the only process) records users running and the servers' CPU beside them, names workers that went
        missing and compacts the metrics."""
        while True:
            gevent.sleep(1.0 - time.time() % 1.0)
            second, cpu, runner = int(time.time()) - 1, self.cpu.read(), self.runner
            in_flight = self.in_flight.sample() if self.in_flight.done or self.in_flight.peak else {}
            if isinstance(runner, WorkerRunner):
                self._own_seconds[second] = {"cpu": cpu, "in_flight": in_flight}
                continue
            if runner is None:
                continue
            self.samples[second] = sample = {"users": runner.user_count, "cpu": cpu}
            if in_flight:
                sample["in_flight"] = in_flight
            servers = self._servers_cpu()
            if servers:
                sample["servers_cpu"] = servers
            sample["machine_cpu"] = psutil.cpu_percent(None)  # every core of this machine, whoever used it
            self._check_workers()
            self.metrics.compact()

    def _servers_cpu(self) -> dict[str, float]:
        """Each watched server's CPU (% of one core) since the last reading; one that has gone is left out."""
        readings = {}
        for name, process in list(self.servers.items()):
            try:
                readings[name] = round(process.cpu_percent(None), 1)
            except psutil.Error:
                del self.servers[name]
        return readings
