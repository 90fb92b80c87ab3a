"""The docs' checklist as findings: each one from a workload that breaks its practice, none from one that keeps them.

The built-in mix's triggers are proven on the request events it fires (synthetic, through the real request
profile and key strategies), one of them end to end through ``loadtest run``; the user's own tasks run for real,
``locust -f`` against the session's Azurite. A trigger must raise its own finding and no other of the checklist's;
the good workload raises none.
"""

from __future__ import annotations

import json

import pytest
from helpers import docs_example, run_info, run_locustfile
from locust.env import Environment
from locust.event import Events
from synthetic import Clock

from loadtest.counting.request_evidence import RequestProfile
from loadtest.counting.request_listener import PartitionMetrics
from loadtest.findings import checklist
from loadtest.findings.checklist import LOW_DENSITY
from loadtest.results import summary
from loadtest.results.finding_kinds import CHECKLIST
from loadtest.workload.key_specs import key_strategy

SHORT = ("-t", "3s", "-u", "4", "-r", "4", "--seed-entities", "400")  # evidence enough: every rule wants 20 operations
LONGER = ("-t", "5s", "-u", "4", "-r", "4", "--seed-entities", "400")  # where no finding may come, more chances to

GOOD = """
from locust import constant_throughput, task

import loadtest.plugin  # noqa: F401
from loadtest.running.users import TableUser


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
from loadtest.running.users import TableUser


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
    done = loadtest("run", *SHORT, *args, "--out", str(tmp_path), "--no-report", "--connection-string", azurite.connection_string)
    assert done.code == 0, done.output
    return json.loads((tmp_path / "results.json").read_text())


def run_file(source: str, azurite, tmp_path, args: tuple[str, ...] = SHORT, allowed: frozenset[str] = frozenset()) -> dict:
    locustfile = tmp_path / "workload_locustfile.py"
    locustfile.write_text(source)
    results, _ = run_locustfile(locustfile, tmp_path, azurite, *args, "--no-report")
    assert set(results["errors"]) <= allowed, results["errors"]
    return results


@pytest.fixture(scope="module")
def good(azurite, tmp_path_factory) -> dict:
    # two users may read the same entity and update it with its etag: the second is refused (412), as optimistic
    # concurrency means it to be (seen once in a full suite)
    return run_file(GOOD, azurite, tmp_path_factory.mktemp("good"), LONGER, frozenset({"UpdateConditionNotSatisfied"}))


@pytest.mark.parametrize("kind", list(CHECKLIST))
def test_a_workload_that_keeps_the_practices_raises_no_checklist_finding(good, kind):
    names = {n["name"] for n in good["workload"]["names"]}
    assert {"GET point read", "GET query", "PUT batch upsert", "PUT update merge If-Match etag", "PUT upsert merge"} <= names
    assert kind not in checklist_kinds(good), [f["message"] for f in good["findings"] if f["kind"] == kind]


def readme_worked_example() -> str:
    """The docs' worked example of the application's own queries (how-to/own-locustfile.md), verbatim."""
    return docs_example("how-to/own-locustfile.md", "OrderHistoryUser")


def test_the_readmes_own_query_at_one_percent_density_is_low_query_density(azurite, tmp_path):
    """The issue's case, from the docs: the user's own query reports rows returned and estimated rows scanned."""
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


def fired(kind: str) -> list[tuple[str, str, dict]]:
    """The request events (type, name, context) the built-in mix fires for the workload that breaks ``kind``'s
    practice, as the session fires them (``test_conformance`` holds the session to them against Azurite)."""
    point = ("read", "GET point read", {"partition": "hot", "op_class": "GET", "entities": 1, "select": True})
    if kind == "SCANS":  # --mix read=50,table-scan=50 --select n --scan-size 20
        scan = (
            "table-scan",
            "GET full table scan",
            {"partition": "(table)", "op_class": "GET", "entities": 20, "returned": 20, "select": True},
        )
        return [point, scan] * 30
    if kind == "NO_PROJECTION":  # --mix read=100, no --select
        return [("read", "GET point read", {**point[2], "select": False})] * 40
    if kind == "UNBATCHED_WRITES":  # --mix upsert=100: one client, one key, many writes a second
        return [("upsert", "PUT upsert merge", {"partition": "hot", "op_class": "PUT", "entities": 1, "client": "c1."})] * 40
    strategy = key_strategy(kind.lower().replace("_", "-"))  # --key-strategy append-only, prepend-only: over 40 s
    return [
        (
            "insert",
            "PUT insert",
            {"partition": strategy.new_partition(), "op_class": "PUT", "entities": 1, "client": f"c{i % 4}."},
        )
        for i in range(200)
    ]


def synthetic_findings(events: list[tuple[str, str, dict]], per_second: int = 100, arrivals: dict | None = None) -> set[str]:
    """The checklist's findings from the request profile and the counts of ``events`` (the key order is the counts'),
    ``per_second`` of them each second (``arrivals``: an open loop's schedule)."""
    environment, clock = Environment(events=Events()), Clock()
    profile = RequestProfile.register(environment, clock)
    metrics = PartitionMetrics.register(environment, clock)
    clock.now = 1_000_000.0
    environment.events.test_start.fire(environment=environment)
    for i, (request_type, name, context) in enumerate(events):
        clock.now = 1_000_000.0 + i // per_second
        environment.events.request.fire(
            request_type=request_type, name=name, response_time=1.0, response_length=0, exception=None, context=context
        )
    environment.events.test_stop.fire(environment=environment)
    results = summary.build(metrics, run_info(entity_bytes=1100))
    results.workload, results.arrivals = profile.figures(), arrivals or {}
    found = checklist.findings(results)
    for finding in found:
        assert finding.remedy == CHECKLIST[finding.kind]
    return {f.kind for f in found}


@pytest.mark.parametrize("kind", ["SCANS", "NO_PROJECTION", "UNBATCHED_WRITES", "APPEND_ONLY", "PREPEND_ONLY"])
def test_a_built_in_workload_that_breaks_a_practice_raises_its_finding(kind):
    assert synthetic_findings(fired(kind), per_second=5 if "ONLY" in kind else 100) == {kind}


def test_an_open_loop_raises_no_unbatched_writes_its_users_are_lanes_not_clients():
    """The issue: 1,500 writes/s over 30 users made each user's 50 a second "unbatched", a consequence of the user
    count; the other practices are still the workload's."""
    schedule = {"rate": 1500.0, "arrivals": "constant"}
    assert synthetic_findings(fired("UNBATCHED_WRITES"), arrivals=schedule) == set()
    assert synthetic_findings(fired("APPEND_ONLY"), per_second=5, arrivals=schedule) == {"APPEND_ONLY"}


@pytest.mark.parametrize("keys", [["hot"], ["a", "b", "c", "zz-hot"], ["aa-hot", "b", "c", "d"]])
def test_a_fixed_key_set_written_most_at_its_largest_or_smallest_key_is_not_append_or_prepend_only(keys):
    """The end of a fixed key set never moves: its hot largest key is KEY_SKEW's or a level's, not the anti-pattern."""
    hot = max(keys) if "zz-hot" in keys else min(keys)
    context = lambda key: {"partition": key, "op_class": "PUT", "entities": 1}  # noqa: E731
    events = [("insert", "PUT insert", context(hot if i % 5 else keys[i % len(keys)])) for i in range(400)]
    assert synthetic_findings(events, per_second=5) == set()


def test_the_evidence_below_its_threshold_raises_nothing():
    for kind in ("SCANS", "NO_PROJECTION", "UNBATCHED_WRITES", "APPEND_ONLY", "PREPEND_ONLY"):
        assert synthetic_findings(fired(kind)[: checklist.MIN_EVIDENCE - 1]) == set(), kind


def test_a_built_in_workload_that_breaks_a_practice_raises_its_finding_end_to_end(loadtest, azurite, tmp_path):
    """One trigger through ``loadtest run`` and the session: each user's upserts one by one, closed loop on one key."""
    results = run_mix(loadtest, azurite, tmp_path, "--mix", "upsert=100")
    assert checklist_kinds(results) == {"UNBATCHED_WRITES"}, [(f["kind"], f["message"]) for f in results["findings"]]
    finding = next(f for f in results["findings"] if f["kind"] == "UNBATCHED_WRITES")
    assert finding["remedy"] == CHECKLIST["UNBATCHED_WRITES"]
