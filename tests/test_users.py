"""A user's own locustfile: TableUser subclasses configured by class attributes, run by Locust's runner."""

from __future__ import annotations

import textwrap

from helpers import ROOT, run_locustfile


def readme_example() -> str:
    """The README's custom-user example, verbatim."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("- **Your own workload**", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    return textwrap.dedent(block)


def test_the_readme_example_runs_without_errors_at_the_rate_it_asks(azurite, tmp_path):
    """Its hash-prefix keys are seeded (they were not: a quarter of its reads were 404), and 4 users at
    constant_throughput(10) offer 40 operations/s."""
    locustfile = tmp_path / "orders_locustfile.py"
    locustfile.write_text(readme_example())
    assert "constant_throughput(10)" in locustfile.read_text()
    results, _ = run_locustfile(locustfile, tmp_path, azurite, "-u", "4", "-r", "4", "-t", "8s")
    assert results["errors"] == {}, results["errors"]
    assert len({row["partition"] for row in results["partitions"] if row["op_class"] != "ALL"}) == 16
    steady_from = results["run"]["steady_from_s"]
    per_second: dict[int, int] = {}
    for row in results["timeseries"]:
        per_second[row["t"]] = per_second.get(row["t"], 0) + row["requests"]
    steady = [n for t, n in sorted(per_second.items()) if t >= steady_from][:-1]  # the last second is cut short
    assert len(steady) >= 5, per_second
    assert abs(sum(steady) / len(steady) - 40) <= 0.05 * 40, steady


TWO_CLASSES = """
from loadtest import TableUser


class OrdersUser(TableUser):
    key_strategy = "hash-prefix:8"
    mix = {"read": 70, "update": 20, "scan": 10}


class EventsUser(TableUser):  # its class attributes configure its workload: three keys, 90 % on the first
    key_strategy = "set:3"
    skew = "hotspot:90,34"
    mix = {"insert": 3, "read": 1}
"""


def test_several_user_classes_each_find_their_own_seeded_rows_and_are_kept_apart(azurite, tmp_path):
    """Two TableUser classes in one file: each configured by its class attributes (key strategy, skew, mix), each
    finding the rows seeded for it, their requests kept apart by name in Locust's statistics."""
    locustfile = tmp_path / "two_classes.py"
    locustfile.write_text(TWO_CLASSES)
    results, stats = run_locustfile(locustfile, tmp_path, azurite, "-u", "4", "-r", "4", "-t", "4s", "--seed-entities", "60")
    assert results["errors"] == {}, results["errors"]
    partitions = {row["partition"] for row in results["partitions"] if row["op_class"] != "ALL"}
    assert partitions == {f"{i:03d}" for i in range(8)} | {f"k{i:07d}" for i in range(3)}
    names = {entry["name"] for entry in stats}
    assert {"OrdersUser: GET point read", "EventsUser: GET point read", "EventsUser: PUT insert"} <= names, names
    events: dict[str, int] = {}
    for row in results["partitions"]:
        if row["op_class"] != "ALL" and row["partition"].startswith("k"):
            events[row["partition"]] = events.get(row["partition"], 0) + row["entities"]
    assert events["k0000000"] > 0.75 * sum(events.values())  # the hotspot: 90 % on the first third


FAILING_TASK = """
from locust import constant_throughput, task

import loadtest.plugin  # noqa: F401
from loadtest.users import TableUser


class BrokenUser(TableUser):
    wait_time = constant_throughput(20)

    @task
    def read_then_break(self):
        self.table.read(*self.existing())
        {}["Missing"]
"""


def test_exceptions_in_a_users_own_tasks_are_counted_and_reported(azurite, tmp_path):
    """The operations a failing task never reached were never sent: the results say so instead of staying silent."""
    locustfile = tmp_path / "broken.py"
    locustfile.write_text(FAILING_TASK)
    results, _ = run_locustfile(locustfile, tmp_path, azurite, "-u", "2", "-r", "2", "-t", "3s", "--seed-entities", "20")
    reads = sum(r["requests"] for r in results["partitions"] if r["op_class"] == "GET")
    assert results["workload"]["task_errors"] == [{"error": "KeyError: 'Missing'", "count": reads}]
    finding = next(f for f in results["findings"] if f["kind"] == "ERRORS" and f["partition"] is None)
    assert f"raised {reads:,} exceptions (KeyError: 'Missing'" in finding["message"] and "task code" in finding["remedy"]
