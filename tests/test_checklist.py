"""The docs' checklist as findings: each one from a workload that breaks its practice, none from one that keeps them.

Every run is real: Locust's runner against the session's Azurite, through ``loadtest run`` (the built-in
mix) or ``locust -f`` (a user's own tasks). A trigger run must raise its own finding and no other of the
checklist's; the good workload raises none.
"""

from __future__ import annotations

import json

import pytest
from conftest import ROOT, run_locustfile

from loadtest.checklist import CHECKLIST, LOW_DENSITY

SHORT = ("-t", "3s", "-u", "4", "-r", "4", "--seed-entities", "400")  # evidence enough: every rule wants 20 operations
LONGER = ("-t", "5s", "-u", "4", "-r", "4", "--seed-entities", "400")  # where no finding may come, more chances to

GOOD = """
from locust import constant_throughput, task

import loadtest.plugin  # noqa: F401
from loadtest.users import TableUser


class GoodUser(TableUser):
    key_strategy = "hash-prefix:16"
    wait_time = constant_throughput(20)

    @task(8)
    def point_read(self):
        self.table.read(*self.existing(), select=["n"])

    @task(1)
    def range_by_key(self):
        pk, _ = self.existing()
        self.table.query("PartitionKey eq @pk and RowKey lt @hi", parameters={"pk": pk, "hi": self.keys.row(5)}, select=["n"])

    @task(1)
    def conditional_update(self):  # optimistic concurrency: the read is needed, not a read-before-write
        pk, rk = self.existing()
        current = self.table.read(pk, rk, select=["n"])
        if current is not None:
            self.table.update(self.entity(pk, rk), etag=current.metadata["etag"])

    @task(1)
    def batch_of_ten(self):
        pk, _ = self.new_keys()
        self.table.batch([("upsert", self.entity(pk, self.new_keys()[1])) for _ in range(10)])

    @task(1)
    def upsert_new(self):
        self.table.upsert(self.entity(*self.new_keys()))
"""

READ_THEN_WRITE = """
from locust import constant_throughput, task

import loadtest.plugin  # noqa: F401
from loadtest.users import TableUser


class ReadThenWriteUser(TableUser):
    key_strategy = "hash-prefix:16"
    wait_time = constant_throughput(20)

    @task
    def read_then_update(self):
        pk, rk = self.existing()
        if self.table.read(pk, rk, select=["n"]) is not None:
            self.table.update(self.entity(pk, rk))
"""


def checklist_kinds(results: dict) -> set[str]:
    return {f["kind"] for f in results["findings"] if f["kind"] in CHECKLIST}


def run_mix(loadtest, azurite, tmp_path, *args: str) -> dict:
    done = loadtest("run", *SHORT, *args, "--out", str(tmp_path), "--connection-string", azurite.connection_string)
    assert done.code == 0, done.output
    return json.loads((tmp_path / "results.json").read_text())


def run_file(source: str, azurite, tmp_path, args: tuple[str, ...] = SHORT) -> dict:
    locustfile = tmp_path / "workload_locustfile.py"
    locustfile.write_text(source)
    results, _ = run_locustfile(locustfile, tmp_path, azurite, *args)
    assert results["errors"] == {}, results["errors"]
    return results


@pytest.fixture(scope="module")
def good(azurite, tmp_path_factory) -> dict:
    return run_file(GOOD, azurite, tmp_path_factory.mktemp("good"), LONGER)


@pytest.mark.parametrize("kind", list(CHECKLIST))
def test_a_workload_that_keeps_the_practices_raises_no_checklist_finding(good, kind):
    names = {n["name"] for n in good["workload"]["names"]}
    assert {"GET point read", "GET query", "PUT batch upsert", "PUT update merge If-Match etag", "PUT upsert merge"} <= names
    assert kind not in checklist_kinds(good), [f["message"] for f in good["findings"] if f["kind"] == kind]


def readme_worked_example() -> str:
    """The README's worked example of the application's own queries, verbatim."""
    readme = (ROOT / "README.md").read_text()
    return readme.split("## Your application's own queries and operations", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]


def test_the_readmes_own_query_at_one_percent_density_is_low_query_density(azurite, tmp_path):
    """The issue's case, from the README: the user's own query reports rows returned and estimated rows scanned."""
    source = readme_worked_example()
    assert "self.table.query(" in source and "n ge @least" in source
    results = run_file(source, azurite, tmp_path)
    largest = next(n for n in results["workload"]["names"] if n["name"] == "GET largest orders")
    assert largest["requests"] >= 20 and largest["reach"] == "range" and largest["op"] == "query"
    assert largest["scanned"] == largest["estimated"] == 100 * largest["requests"]  # 400 seeded rows over 4 keys
    assert 0 < largest["returned"] < largest["scanned"]
    assert 0.004 <= largest["density"] <= 0.025, largest  # n spreads evenly over 0..99: n ge 99 returns about 1 %
    gets = [r for r in results["partitions"] if r["op_class"] == "GET"]
    assert sum(r["estimated"] for r in gets) == largest["estimated"]  # the partitions' entities are the rows scanned
    assert checklist_kinds(results) == {"LOW_QUERY_DENSITY"}
    message = next(f["message"] for f in results["findings"] if f["kind"] == "LOW_QUERY_DENSITY")
    assert "'GET largest orders'" in message and f"{largest['scanned']:,}" in message and f"{LOW_DENSITY:.0%}" in message


def test_reading_an_entity_then_updating_it_unconditionally_is_read_before_write(azurite, tmp_path):
    results = run_file(READ_THEN_WRITE, azurite, tmp_path)
    update = next(n for n in results["workload"]["names"] if n["name"] == "PUT update merge")
    assert update["after_read"] == update["requests"] > 0
    assert checklist_kinds(results) == {"READ_BEFORE_WRITE"}


@pytest.mark.parametrize(
    "kind,args",
    [
        ("SCANS", ("--mix", "read=50,table-scan=50", "--select", "n", "--scan-size", "20")),
        ("NO_PROJECTION", ("--mix", "read=100")),
        ("UNBATCHED_WRITES", ("--mix", "upsert=100")),
        ("APPEND_ONLY", ("--mix", "insert=100", "--key-strategy", "append-only")),
        ("PREPEND_ONLY", ("--mix", "insert=100", "--key-strategy", "prepend-only")),
    ],
)
def test_a_built_in_workload_that_breaks_a_practice_raises_its_finding(loadtest, azurite, tmp_path, kind, args):
    results = run_mix(loadtest, azurite, tmp_path, *args)
    assert checklist_kinds(results) == {kind}, [(f["kind"], f["message"]) for f in results["findings"]]
    finding = next(f for f in results["findings"] if f["kind"] == kind)
    assert finding["remedy"] == CHECKLIST[kind]
