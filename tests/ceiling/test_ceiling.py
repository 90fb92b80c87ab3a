"""The ceiling search: its plan and judgement (pure, synthetic counts), the command's rules, and searches against the
throttling emulator's known per-partition budget (the ground truth), one process and distributed."""

from __future__ import annotations

import argparse
import json
import os
import re
import textwrap
import time
import urllib.request

import pytest
from browser import chromium_page
from helpers import in_process, results_of, run_locustfile, web_ui_process

from loadtest.ceiling.judge import search, step_figures, stopped_by
from loadtest.ceiling.plan import Plan, StepWindow
from loadtest.child_process import free_port
from loadtest.counting.buckets import Bucket
from loadtest.counting.latency import Latency
from loadtest.exit_codes import UsageError

BUDGET = 300  # entities/s per PartitionKey: the emulator's, the figure the search must find
BURST = 0.4  # seconds of budget each bucket holds: batches arriving together fit; a step over the budget soon throttles
BATCHES = ("--mix", "batch=100", "--batch-size", "10", "--entity-size", "128")  # 10 entities per operation


def plan(**given) -> Plan:
    values = {"ceiling_start": 100, "ceiling_step": 100, "ceiling_max": 1000, "step_time": "5s", "max_p99": 500}
    values.update(given)
    return Plan.from_options(argparse.Namespace(**{k: str(v) for k, v in values.items()}))


def test_each_step_is_a_whole_number_of_users_at_one_rate():
    assert (plan().user_rate, plan().steps, plan().users(9)) == (10, 10, 100)
    wide = plan(ceiling_start=225, ceiling_step=25, ceiling_max=400)
    assert wide.user_rate == 5 and [wide.offered(k) for k in range(wide.steps)] == [225, 250, 275, 300, 325, 350, 375, 400]
    assert all(wide.users(k) * wide.user_rate == wide.offered(k) for k in range(wide.steps))
    assert plan(ceiling_start=3, ceiling_step=7, ceiling_max=10).user_rate == 1


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ({"ceiling_start": 500, "ceiling_max": 400}, "--ceiling-start 500 is above --ceiling-max 400"),
        ({"ceiling_start": 1, "ceiling_step": 1, "ceiling_max": 5000}, "makes 5,000 steps; at most 1,000"),
        ({"step_time": "2s"}, "--step-time '2s': a step must run at least 3 s"),
        ({"max_p99": "-1"}, "--max-p99"),
        ({"ceiling_step": "0"}, "--ceiling-step"),
    ],
)
def test_a_plan_that_cannot_run_is_refused_naming_the_flag(given, says):
    with pytest.raises(UsageError, match=re.escape(says)):
        plan(**given)


def counts(per_second: dict[int, dict[str, Bucket]], latency_ms: float = 5.0, late_ms: float = 0.0):
    """Synthetic metrics: buckets per (second, partition, op class) and one latency per operation."""
    buckets, latency, corrected = {}, Latency(), Latency()
    for second, partitions in per_second.items():
        for key, bucket in partitions.items():
            partition, op_class = key.split("/")
            buckets[(second, partition, op_class)] = bucket
            for hists, ms in ((latency, latency_ms), (corrected, latency_ms + late_ms)):
                hist = hists.at(second, op_class)
                for _ in range(bucket.requests):
                    hist.record_value(int(ms * 1000))
    return buckets, latency, corrected


def ok(n: int, entities: int = 1) -> Bucket:
    return Bucket(requests=n, attempts=n, entities=n * entities, offered=n * entities)


def test_a_step_counts_its_whole_seconds_after_the_first_and_sums_each_partition_over_op_classes():
    window = StepWindow(index=2, offered=100, users=10, spawn_rate=20, began=100.2, ended=105.2)
    assert window.seconds() == [102, 103, 104]
    per_second = {s: {"a/GET": ok(60), "a/PUT": ok(10, 10), "b/GET": ok(30)} for s in range(100, 106)}
    per_second[101] = {"a/GET": ok(1000)}  # the settling second: not counted
    buckets, latency, corrected = counts(per_second, latency_ms=4.0, late_ms=10.0)
    samples = {s: {"cpu": 40.0, "workers_cpu": {"w1": 95.0}} for s in range(100, 106)}
    figures = step_figures(window, buckets, latency, corrected, samples, first=100.0)
    assert (figures["step"], figures["seconds"], figures["from_s"], figures["to_s"]) == (3, 3, 0.2, 5.2)
    assert figures["served_per_s"] == 100 and figures["served_share"] == 1.0 and figures["entities_per_s"] == 190
    assert figures["partitions"][0] == {"partition": "a", "entities_per_s": 160, "GET": 60, "PUT": 100}
    assert figures["p99_ms"] == pytest.approx(4.0, rel=0.02) and figures["corrected_p99_ms"] == pytest.approx(14.0, rel=0.02)
    assert figures["generator_cpu"] == 95.0  # the busiest process: a pegged worker, not the idle master


def figures(**given):
    base = {
        "step": 2,
        "offered_per_s": 200,
        "served_per_s": 200.0,
        "served_share": 1.0,
        "entities_per_s": 200.0,
        "throttled_share": 0.0,
        "error_share": 0.0,
        "errors": {},
        "corrected_p99_ms": 20.0,
        "p99_ms": 10.0,
        "generator_cpu": 30.0,
        "partitions": [{"partition": "hot", "entities_per_s": 200.0, "GET": 200.0}],
    }
    return {**base, **given}


@pytest.mark.parametrize(
    ("given", "rule"),
    [
        ({"served_share": 0.94, "served_per_s": 188.0}, "served"),
        ({"throttled_share": 0.011}, "throttled"),
        ({"error_share": 0.02, "errors": {"ResourceNotFound": 8}}, "errors"),
        ({"corrected_p99_ms": 501.0}, "p99"),
    ],
)
def test_each_rule_alone_ends_the_search(given, rule):
    assert stopped_by(figures(), plan()) == {}
    assert list(stopped_by(figures(**given), plan())) == [rule]
    assert (
        list(stopped_by(figures(served_share=0.95, throttled_share=0.01, error_share=0.01, corrected_p99_ms=500), plan())) == []
    )


def test_the_ceiling_is_the_last_good_step_and_what_ended_the_search_is_named():
    steps = [figures(step=1, offered_per_s=100, entities_per_s=100.0), figures(), figures(step=3, throttled_share=0.2)]
    found = search(plan(), steps, emulator=True, stopped=True)
    assert found["ceiling"]["step"] == 2 and found["ceiling"]["entities_per_s"] == 200.0 and found["found"]
    assert found["limited_by"] == "throttling" and "20.0% of attempts throttled" in found["reason"]
    assert [s["good"] for s in found["steps"]] == [True, True, False]
    # no throttling: a pegged generator is blamed before the emulator, the emulator before latency
    slow = figures(step=3, corrected_p99_ms=900.0, generator_cpu=97.0)
    assert search(plan(), [figures(), slow], emulator=True, stopped=True)["limited_by"] == "generator"
    slow["generator_cpu"] = 50.0
    assert search(plan(), [figures(), slow], emulator=True, stopped=True)["limited_by"] == "emulator"  # its CPU unread
    assert search(plan(), [figures(), slow], emulator=False, stopped=True)["limited_by"] == "latency"


def test_what_limited_a_search_is_the_process_measured_out_of_cpu_never_the_emulator_by_elimination():
    """Once 'emulator' was said of any step that slowed against Azurite without throttling, its CPU unread."""
    slow = figures(step=3, corrected_p99_ms=900.0, servers_cpu={"Azurite": 40.0, "the throttling emulator": 12.0})
    assert search(plan(), [figures(), slow], emulator=True, stopped=True)["limited_by"] == "latency"  # both read, idle
    slow["servers_cpu"]["Azurite"] = 98.5
    found = search(plan(), [figures(), slow], emulator=True, stopped=True)
    assert found["limited_by"] == "emulator" and "Azurite used 98% of a core" in found["reason"], found["reason"]
    slow.update(servers_cpu={"Azurite": 70.0}, machine_cpu=97.0)  # no process pegged, the machine's cores all busy
    found = search(plan(), [figures(), slow], emulator=True, stopped=True)
    assert found["limited_by"] == "machine" and "the machine's cores were 97% busy (Azurite 70%" in found["reason"]
    slow.update(machine_cpu=60.0, capped=120)  # every lane busy
    found = search(plan(), [figures(), slow], emulator=True, stopped=True)
    assert found["limited_by"] == "concurrency" and "120 slots waited for a lane" in found["reason"]


def test_a_search_limited_by_throttling_names_the_budget_or_target_that_throttled():
    steps = [figures(), figures(step=3, throttled_share=0.2, throttled_by={"partition": 30, "account": 10})]
    throttlers = {"partition": "the throttling emulator's 300 entities/s per-partition budget", "account": "the account's"}
    found = search(plan(), steps, emulator=True, stopped=True, throttlers=throttlers)
    assert found["limited_by"] == "throttling"
    assert found["reason"].endswith(f"(30 by {throttlers['partition']}, 10 by {throttlers['account']})"), found["reason"]


def test_a_search_that_never_gave_way_says_the_ceiling_is_higher_and_one_that_gave_way_at_once_has_none():
    held = search(plan(), [figures()], emulator=False, stopped=False)
    assert held["ceiling"]["entities_per_s"] == 200.0 and held["limited_by"] == "" and "ceiling is higher" in held["reason"]
    at_once = search(plan(), [figures(served_share=0.5, served_per_s=100.0)], emulator=False, stopped=True)
    assert at_once["ceiling"] is None and "first step gave way" in at_once["reason"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--rate", "5"], "--rate 5: the ceiling search sets the offered load itself"),
        (["--arrival-rate", "100"], "--arrival-rate 100: the ceiling search sets the offered load itself"),
        (["--ceiling-start", "900", "--ceiling-max", "800"], "--ceiling-start 900 is above --ceiling-max 800"),
        (["--step-time", "1s"], "--step-time '1s': a step must run at least 3 s"),
        (["--ceiling-start", "1", "--ceiling-step", "100", "--ceiling-max", "99901"], "its last step needs 99,901 users"),
        (["-u", "10"], "-u: the ceiling search sets the users itself"),
        (["--run-time", "1m"], "--run-time: the ceiling search sets the users itself"),
    ],
)
def test_the_command_refuses_a_search_it_cannot_run_in_one_line_before_anything_starts(monkeypatch, args, says):
    """In this process, up to where Locust would start (the user's path, a child process: the test after this)."""
    code, stdout, stderr = in_process(monkeypatch, "ceiling", *args)
    assert code == 2 and says in stderr, stderr
    assert len(stderr.strip().splitlines()) == 1 and "Traceback" not in stdout + stderr and "Azurite" not in stdout + stderr


def test_the_command_refuses_a_search_as_a_user_runs_it(loadtest):
    done = loadtest("ceiling", "-u", "10")
    assert done.code == 2 and "-u: the ceiling search sets the users itself" in done.stderr, done.output
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.output and "Azurite" not in done.output


def ceiling_search(loadtest, tmp_path, *args: str) -> dict:
    """``loadtest ceiling`` on its own embedded Azurite behind the emulator's per-partition budget: results.json."""
    done = loadtest(
        "ceiling",
        *("--emulate-throttling", "--emulator-partition-rate", str(BUDGET), "--emulator-burst", str(BURST)),
        *BATCHES,
        *("--step-time", "4s", "--seed-entities", "160", "--out", str(tmp_path), *args),
        timeout=180,
    )
    assert done.code == 0, done.output
    return results_of(tmp_path)


def never_above_the_budget(results: dict) -> None:
    """No partition served more than its token bucket allows: ``BUDGET`` per second plus the ``BURST`` it holds (and
    a batch in flight), over each step and over each second."""
    for step in results["ceiling"]["steps"]:
        allowed = BUDGET * (step["seconds"] + BURST) + 10
        assert all(p["entities_per_s"] * step["seconds"] <= allowed for p in step["partitions"]), step
    per_second: dict[tuple[int, str], int] = {}
    for row in results["timeseries"]:
        per_second[(row["t"], row["partition"])] = per_second.get((row["t"], row["partition"]), 0) + row["entities"]
    assert max(per_second.values()) <= BUDGET * (1 + BURST) + 10, max(per_second.values())


@pytest.fixture(scope="module")
def one_key_report(tmp_path_factory):
    """One key's search: its folder (report.html beside results.json). Its first step is 7 % under the budget, good
    with room to spare; 310/s is good, the burst covering two thirds of its 4-s excess, and 340/s gives way (its
    excess a third over the burst), as 320 and 340/s did with 5-s steps and the burst of 0.5 s."""
    from helpers import run_loadtest

    out = tmp_path_factory.mktemp("one-key")
    ceiling_search(run_loadtest, out, "--ceiling-start", "28", "--ceiling-step", "3", "--ceiling-max", "37")
    return out


@pytest.fixture(scope="module")
def one_key(one_key_report):
    return results_of(one_key_report)


@pytest.mark.alone
def test_one_key_finds_the_emulators_budget_within_ten_percent_and_names_throttling(one_key):
    search_ = one_key["ceiling"]
    assert search_["ceiling"]["entities_per_s"] == pytest.approx(BUDGET, rel=0.10), search_["steps"]
    assert search_["limited_by"] == "throttling" and search_["found"]
    assert search_["steps"][-1]["good"] is False and all(s["good"] for s in search_["steps"][:-1])
    finding = next(f for f in one_key["findings"] if f["kind"] == "CEILING")
    assert f"sustained ceiling {search_['ceiling']['entities_per_s']:,.0f} entities/s" in finding["message"]
    assert "limited by throttling" in finding["message"]
    budget = f"by the throttling emulator's {BUDGET:,} entities/s per-partition budget"  # what judged each figure
    assert budget in search_["reason"] and budget in finding["message"], finding["message"]
    # the budget given is the target the search is judged by (none given: the service scaled down), one figure
    assert f"of the {BUDGET:,}/s partition target" in finding["message"]
    levels = [f["message"] for f in one_key["findings"] if f["kind"] in ("HOT", "WARM", "COOL")]
    assert levels and not [m for m in levels if "throttling was against" in m], levels
    never_above_the_budget(one_key)


@pytest.mark.alone
def test_sixteen_hashed_keys_under_the_same_budget_reach_at_least_four_times_one_keys_ceiling(one_key, loadtest, tmp_path):
    spread = ceiling_search(
        loadtest,
        tmp_path,
        *("--key-strategy", "hash-prefix:16", "--ceiling-start", "160", "--ceiling-step", "80", "--ceiling-max", "160"),
    )  # one step, 1,600 entities/s (about 100/s a key, a third of each key's budget): a ceiling of at least 4x
    single = one_key["ceiling"]["ceiling"]["entities_per_s"]
    assert spread["ceiling"]["ceiling"]["entities_per_s"] >= 4 * single, spread["ceiling"]["steps"]
    assert len(spread["ceiling"]["ceiling"]["partitions"]) == 16
    never_above_the_budget(spread)


@pytest.mark.alone
def test_a_distributed_search_judges_each_step_from_every_workers_counts(loadtest, tmp_path):
    """Two workers: each step is judged from both workers' counts merged at the master (each ran half the users)."""
    done = loadtest(
        "ceiling",
        *("--workers", "2", "--ceiling-start", "100", "--ceiling-step", "100", "--ceiling-max", "200", "--step-time", "3s"),
        *("--mix", "read=100", "--select", "n", "--seed-entities", "100", "--out", str(tmp_path)),
        timeout=180,
    )
    assert done.code == 0, done.output
    results = json.loads((tmp_path / "results.json").read_text())
    steps = results["ceiling"]["steps"]
    assert [s["offered_per_s"] for s in steps] == [100, 200] and all(s["good"] for s in steps), steps
    assert all(s["served_per_s"] == pytest.approx(s["offered_per_s"], rel=0.05) for s in steps)
    assert len(results["workers"]["reported"]) == 2 and "ceiling is higher" in results["ceiling"]["reason"]


OWN_LOCUSTFILE = textwrap.dedent(
    """
    import loadtest.plugin  # noqa: F401
    from loadtest.ceiling.shape import CeilingShape  # noqa: F401
    from loadtest.running.users import TableUser
    from locust import task


    class OrdersUser(TableUser):
        key_strategy = "set:4"

        @task
        def read_an_order(self):
            self.table.read(*self.existing(), select=["n"])
    """
)


@pytest.mark.alone
def test_your_own_users_under_the_shape_in_your_own_locustfile(azurite, tmp_path):
    locustfile = tmp_path / "locustfile.py"
    locustfile.write_text(OWN_LOCUSTFILE)
    results, stats = run_locustfile(
        locustfile,
        tmp_path,
        azurite,
        *("--ceiling-start", "50", "--ceiling-step", "50", "--ceiling-max", "100", "--step-time", "3s", "--seed-entities", "40"),
    )
    steps = results["ceiling"]["steps"]
    assert [s["offered_per_s"] for s in steps] == [50, 100] and all(s["good"] for s in steps), steps
    assert {p["partition"] for p in steps[-1]["partitions"]} == {"0", "1", "2", "3"} or len(steps[-1]["partitions"]) == 4
    assert [s["name"] for s in stats if s["name"] != "Aggregated"] == ["GET point read"]


@pytest.mark.browser
@pytest.mark.alone  # not a pace of its own: it reads the search the alone tests read, made once (scripts/test.sh's phases)
def test_the_report_opens_with_the_verdict_then_the_findings_and_the_ceiling_chart(one_key_report, artifacts):
    results = json.loads((one_key_report / "results.json").read_text())
    with chromium_page(height=1000) as page:
        page.goto((one_key_report / "report.html").as_uri())
        page.wait_for_load_state("load")
        first = page.eval_on_selector("h1", "h => h.nextElementSibling.id")
        verdict = page.inner_text("#verdict")
        ceiling = results["ceiling"]["ceiling"]["entities_per_s"]
        assert first == "verdict" and f"sustained {ceiling:,.0f} entities/s before throttling limited it" in verdict
        assert "Key design single (PartitionKey 'hot')" in verdict
        headings = page.eval_on_selector_all("h2", "hs => hs.map(h => h.id)")
        assert headings[:3] == ["findings", "ceiling", "checklist"], headings
        width = page.eval_on_selector("#chart-ceiling", "i => i.complete ? i.naturalWidth : 0")
        rows = page.eval_on_selector_all("#ceiling-table tr.ceiling-step", "rows => rows.map(r => r.dataset.good)")
        assert width > 300 and rows == [str(s["good"]).lower() for s in results["ceiling"]["steps"]]
        page.screenshot(path=str(artifacts / "ceiling-report.png"), full_page=True)


@pytest.mark.alone
def test_the_web_ui_starts_the_search_with_its_shape_and_writes_it_when_done(azurite, tmp_path):
    """``loadtest ceiling --web``: Locust's start swarms with the shape; the steps run, judged, into results.json."""
    port, out = free_port(), tmp_path / "out"
    args = ["-m", "loadtest", "ceiling", "--web", "--web-port", str(port), "--mix", "read=100", "--seed-entities", "50"]
    args += ["--ceiling-start", "50", "--ceiling-step", "50", "--ceiling-max", "100", "--step-time", "3s", "--out", str(out)]
    env = {**os.environ, "AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string}
    with web_ui_process(args, port=port, env=env, log=tmp_path / "web.log") as (_, url):
        request = urllib.request.Request(url + "/swarm", data=b"user_count=1&spawn_rate=1", method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            assert "CeilingShape" in json.loads(response.read())["message"]
        deadline = time.monotonic() + 60
        while not (out / "results.json").exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        steps = json.loads((out / "results.json").read_text())["ceiling"]["steps"]
    assert [(s["offered_per_s"], s["good"]) for s in steps] == [(50, True), (100, True)]


@pytest.mark.parametrize("phase", [0.0, 0.49, 0.99])
@pytest.mark.parametrize("late", [0.003, -0.003])
def test_each_step_lasts_its_step_time_in_ticks_whatever_their_phase(monkeypatch, phase, late):
    """Locust ticks a shape once a second, give or take a few milliseconds: every step holds --step-time ticks, also
    when a step's boundary falls just after a tick (the last step once lost a second to it and went unjudged)."""
    from loadtest.ceiling import shape as shape_module
    from loadtest.ceiling.shape import CeilingShape
    from loadtest.counting.request_listener import PartitionMetrics

    clock = [1_000.0 + phase]
    monkeypatch.setattr(shape_module.time, "time", lambda: clock[0])
    shape = CeilingShape()
    shape.plan, shape.metrics = Plan(start=100, step=100, maximum=300, step_s=4, max_p99_ms=500.0), PartitionMetrics()
    shape._judge = lambda now: None  # no counts to judge here: only the steps' clock
    ticks = []
    while (state := shape.tick()) is not None and len(ticks) < 30:
        ticks.append(state[0])
        clock[0] += 1.0 + late
    assert ticks == [10] * 4 + [20] * 4 + [30] * 4, ticks
