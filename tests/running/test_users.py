"""A user's own locustfile: TableUser subclasses configured by class attributes, run by Locust's runner."""

from __future__ import annotations

import pytest
from browser import chromium_page
from helpers import docs_example, locust_headless, run_locustfile, tables


def readme_example() -> str:
    """The docs' custom-user example (how-to/own-locustfile.md, which the README's tour repeats), verbatim."""
    return docs_example("how-to/own-locustfile.md", "OrdersUser")


@pytest.mark.alone
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
    # what ran is what the report says: the class's design, not the command line's defaults (single, 'hot', uniform)
    (orders,) = results["run"]["user_classes"]
    assert orders["name"] == "OrdersUser" and orders["users"] == 4 and not orders["own_tasks"]
    assert orders["design"] == {
        "key_strategy": "hash-prefix:16",
        "skew": "zipfian:0.9",
        "row_key_strategy": "sequential",
        "mix": "read=80,upsert=15,batch=5",
        "batch_size": 100,
        "batch_mix": "upsert=100",
    }
    assert orders["from_class"] == ["key_strategy", "skew", "mix"]
    with chromium_page() as page:
        page.goto((tmp_path / "out" / "report.html").as_uri())
        first = page.inner_text("#verdict p")
        assert first.startswith("OrdersUser's key design hash-prefix:16, zipfian:0.9 skew (about 16 PartitionKeys touched)")
        assert "single" not in first and "'hot'" not in first
        design = page.inner_text("#classes-table tr[data-class=OrdersUser]")
        assert (
            "key_strategy hash-prefix:16" in design and "skew zipfian:0.9" in design and "mix read=80,upsert=15,batch=5" in design
        )
        shown = page.eval_on_selector_all("#settings-table th", "ths => ths.map(t => t.textContent)")
        assert "mix" not in shown and "skew" not in shown and "key_strategy" not in shown  # the CLI's, which did not run
        assert "entity_size" in shown


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
    designs = {c["name"]: (c["users"], c["design"]) for c in results["run"]["user_classes"]}
    assert designs == {
        "OrdersUser": (2, {"key_strategy": "hash-prefix:8", "skew": "uniform", "row_key_strategy": "sequential",
                           "mix": "read=70,update=20,scan=10", "scan_size": 100}),
        "EventsUser": (2, {"key_strategy": "set:3", "skew": "hotspot:90,34", "row_key_strategy": "sequential",
                           "mix": "insert=3,read=1"}),
    }  # fmt: skip
    report = (tmp_path / "out" / "report.html").read_text()
    assert (
        "2 user classes, key designs OrdersUser (50% of users) hash-prefix:8; EventsUser (50% of users) set:3, hotspot:90,34 skew"
        in report
    )


#: The README's class with a misspelled attribute and three bad values.
MISSPELLED = """
from loadtest import TableUser


class OrdersUser(TableUser):
    key_stratgy = "guid"
    mix = {"reed": 80, "upsert": 20}
    batch_size = 500
    skew = ["zipfian"]


class FineUser(TableUser):
    key_strategy = "set:4"
    REGION = "westeurope"  # the class's own: a constant
    _orders = 3  # and a private one
    own_attributes = ("tenant",)
    tenant = "contoso"
"""


def test_a_misspelled_attribute_and_bad_values_are_refused_at_once_by_class_and_name_before_a_table_is_made(
    azurite, target, tmp_path
):
    """Before: the misspelling ran the command line's single 'hot' design and exited 0 (HOT 174 %), and a bad mix
    was named as the flag --mix the user never typed, hiding batch_size behind it."""
    locustfile = tmp_path / "misspelled.py"
    locustfile.write_text(MISSPELLED)
    before = tables(target)
    done = locust_headless(locustfile, azurite, "-u", "2", "-t", "2s", "--out", str(tmp_path / "out"))
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
    (line,) = errors
    for named in ("OrdersUser.key_stratgy", "did you mean key_strategy?", "OrdersUser.mix 'reed=80,upsert=20'",
                  "unknown operation 'reed'", "OrdersUser.batch_size 500", "OrdersUser.skew ['zipfian']"):  # fmt: skip
        assert named in line, line
    assert "--mix" not in line and "FineUser" not in line and "REGION" not in line
    assert tables(target) == before  # nothing created on the target
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("attributes", "named"),
    [
        ("mix = ['read']", "OrdersUser.mix ['read']: must be a dict or str"),
        ("batch_size = '50'", "OrdersUser.batch_size '50': must be int"),
        ("key_strategy = 'hash-prefix:0'", "OrdersUser.key_strategy 'hash-prefix:0': hash-prefix:N takes N from 1 to 1000"),
        ("row_key_strategy = 'counter'", "OrdersUser.row_key_strategy 'counter': unknown strategy"),
        ("partition_key = 'orders/2026'", "OrdersUser.partition_key 'orders/2026'"),
        ("weight = -1", "OrdersUser.weight -1: must be a whole number"),
        ("def on_strat(self):\n        pass", "OrdersUser.on_strat: Locust never calls it (did you mean on_start?)"),
        ("scan_sise = 10", "OrdersUser.scan_sise: not an attribute the tool or Locust reads (did you mean scan_size?)"),
        ("own_attributes = 3", "OrdersUser.own_attributes 3: must be a tuple of attribute names"),
    ],
)
def test_each_class_attribute_is_judged_as_its_option_is(attributes, named):
    from loadtest.exit_codes import UsageError
    from loadtest.options.settings import Settings, namespace
    from loadtest.running.user_classes import settings_per_class
    from loadtest.running.users import TableUser

    scope: dict = {"TableUser": TableUser}
    exec(f"class OrdersUser(TableUser):\n    {attributes}\n", scope)
    with pytest.raises(UsageError) as refused:
        settings_per_class(Settings.from_options(namespace()), [scope["OrdersUser"]])
    assert named in str(refused.value), str(refused.value)


FAILING_TASK = """
from locust import constant_throughput, task

import loadtest.plugin  # noqa: F401
from loadtest.running.users import TableUser


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
    results, _ = run_locustfile(
        locustfile, tmp_path, azurite, "-u", "2", "-r", "2", "-t", "3s", "--seed-entities", "20", "--no-report"
    )
    reads = sum(r["requests"] for r in results["partitions"] if r["op_class"] == "GET")
    assert results["workload"]["task_errors"] == [{"error": "KeyError: 'Missing'", "count": reads}]
    finding = next(f for f in results["findings"] if f["kind"] == "ERRORS" and f["partition"] is None)
    assert f"raised {reads:,} exceptions (KeyError: 'Missing'" in finding["message"] and "task code" in finding["remedy"]
