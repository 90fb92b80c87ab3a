"""The generator's own CPU, read every second: exact on short runs, where Locust's 5-s monitor read 0 %."""

from __future__ import annotations

import json

import pytest

from loadtest.counting.generator_cpu import CpuMeter


class Fake:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_reading_is_cpu_time_over_wall_time_since_the_last():
    wall, cpu = Fake(), Fake()
    meter = CpuMeter(clock=wall, cpu=cpu)
    wall.now, cpu.now = 101.0, 100.9
    assert meter.read() == 90.0
    wall.now, cpu.now = 103.0, 101.1
    assert meter.read() == 10.0
    assert meter.read() == 0.0  # no time passed: no reading to make


@pytest.mark.alone
def test_a_run_that_saturates_the_generator_is_generator_bound(loadtest, azurite, tmp_path):
    """azure-data-tables costs ~1.2 ms of client CPU per operation: 32 closed-loop users keep one process at a core."""
    done = loadtest(
        "run",
        *("--client", "sdk", "-u", "32", "-r", "32", "-t", "7s", "--mix", "read=100", "--seed-entities", "200"),
        *("--out", str(tmp_path), "--no-report", "--connection-string", azurite.connection_string),
    )
    assert done.code == 0, done.output
    results = json.loads((tmp_path / "results.json").read_text())
    cpu = [s["cpu"] for s in results["load"] if s["t"] >= results["run"]["steady_from_s"]]
    assert len(cpu) >= 5 and all(c > 0 for c in cpu), cpu  # a reading every second, none of Locust's early zeros
    (bound,) = [f for f in results["findings"] if f["kind"] == "GENERATOR_BOUND"]
    assert bound["message"].startswith("the load generator used")
