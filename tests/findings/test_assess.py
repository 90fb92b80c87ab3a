import pytest
from helpers import run_info
from synthetic import recorded

from loadtest.findings.assess import FindingCheck, assess, checks_for, exit_code
from loadtest.findings.levels import level
from loadtest.results.form import Results
from loadtest.results.summary import build


def steady(entities_per_second: int, op_class: str = "PUT", seconds: int = 12, **event):
    op = "insert" if op_class == "PUT" else "read"
    return {t: [{"op": op, "op_class": op_class, "entities": entities_per_second, **event}] for t in range(seconds)}


def judged(seconds, **info):
    return assess(build(recorded(seconds), run_info(**info)))


def kinds(results):
    return [f.kind for f in results.findings]


@pytest.mark.parametrize("ratio,expected", [(0.0, "COOL"), (0.79, "COOL"), (0.8, "WARM"), (1.0, "WARM"), (1.01, "HOT")])
def test_levels(ratio, expected):
    assert level(ratio) == expected


def test_same_workload_is_hot_under_a_small_target_and_cool_under_a_large_one():
    assert kinds(judged(steady(100), partition_target=50)) == ["HOT"]
    assert kinds(judged(steady(100), partition_target=5000)) == ["COOL"]
    assert kinds(judged(steady(100), partition_target=110)) == ["WARM"]


def test_every_finding_carries_a_remedy_and_names_the_partition():
    results = judged(steady(100), partition_target=50)
    (finding,) = results.findings
    assert finding.partition == "hot" and finding.op_class is None  # the partition is judged, its op classes its parts
    assert "PartitionKeys" in finding.remedy
    assert "200%" in finding.message


def test_get_and_put_each_cool_but_together_hot_is_reported_on_the_total():
    seconds = {t: [{"op": "read", "entities": 60}, {"op": "insert", "op_class": "PUT", "entities": 60}] for t in range(10)}
    results = judged(seconds, partition_target=100)
    # one level for the partition, on its total: GET and PUT are its parts, never a level of their own
    assert [(f.kind, f.partition, f.op_class) for f in results.findings] == [("HOT", "hot", None)]
    assert "GET 60/s and PUT 60/s at their own peaks, 50% and 50% of the entities" in results.findings[0].message
    assert {row.finding for row in results.partitions} == {"HOT"}


def test_account_target_is_held_too():
    results = judged(steady(100), partition_target=1000, account_target=110)
    assert ("WARM", None) in [(f.kind, f.partition) for f in results.findings]
    assert results.account.finding == "WARM"


def test_throttling_and_errors_are_separate_findings():
    seconds = steady(10, seconds=3)
    seconds[1] += [{"op": "insert", "op_class": "PUT", "error": "ServerBusy", "throttled": 4, "attempts": 4}]
    seconds[2] += [{"op": "insert", "op_class": "PUT", "error": "EntityAlreadyExists"}] * 2
    results = judged(seconds)
    found = {f.kind: f for f in results.findings}
    assert "4 attempts were throttled (all PUT)" in found["THROTTLED"].message
    assert "2 of 6 operations failed (EntityAlreadyExists x2)" in found["ERRORS"].message


def test_fail_on_checks_turn_findings_into_exit_3_with_messages():
    hot = judged(steady(100), partition_target=50)
    assert exit_code(hot, checks_for(("hot",)))[0] == 3
    assert exit_code(hot, checks_for(("throttled", "errors")))[0] == 0
    assert exit_code(hot, checks_for(()))[0] == 0
    assert "HOT" in FindingCheck("HOT").fails(hot)
    assert FindingCheck("COOL").fails(judged(steady(100), partition_target=50)) is None


def test_generator_bound_when_the_client_cpu_is_pegged():
    metrics = recorded(steady(10))
    samples = {1_000_000 + t: {"users": 4, "cpu": 99.0} for t in range(12)}
    assert "GENERATOR_BOUND" in kinds(assess(build(metrics, run_info(), samples=samples)))


def test_generator_bound_when_a_third_of_its_seconds_are_pegged_and_not_below():
    metrics = recorded(steady(10))
    samples = {1_000_000 + t: {"users": 4, "cpu": 95.0 if t % 3 == 0 else 60.0} for t in range(12)}  # 4 of 12
    assert "GENERATOR_BOUND" in kinds(assess(build(metrics, run_info(), samples=samples)))
    samples = {1_000_000 + t: {"users": 4, "cpu": 95.0 if t % 4 == 0 else 60.0} for t in range(12)}  # 3 of 12
    assert "GENERATOR_BOUND" not in kinds(assess(build(metrics, run_info(), samples=samples)))


def test_a_pegged_worker_is_named_while_the_master_idles():
    metrics = recorded(steady(10))
    samples = {1_000_000 + t: {"users": 4, "cpu": 3.0, "workers_cpu": {"w-a": 99.0, "w-b": 40.0}} for t in range(12)}
    findings = [f for f in assess(build(metrics, run_info(), samples=samples)).findings if f.kind == "GENERATOR_BOUND"]
    assert len(findings) == 1 and findings[0].message.startswith("worker w-a used 99% of a core")


def test_the_emulator_bound_is_the_server_measured_out_of_cpu_and_a_measured_idle_one_is_not_blamed():
    """Saturation read from the figures alone blamed the emulator; the servers' CPU, read each second, now decides."""
    users = [2, 4, 6, 8, 10] + [10] * 10
    shape = ([100, 130, 140, 140, 140] + [140] * 10, [20, 30, 43, 57, 71] + [71] * 10)
    seconds = {t: [{"ms": shape[1][t]}] * shape[0][t] for t in range(len(users))}

    def with_servers(azurite_cpu: float) -> Results:
        samples = {
            1_000_000 + t: {"users": u, "cpu": 50.0, "servers_cpu": {"Azurite": azurite_cpu}, "machine_cpu": 60.0}
            for t, u in enumerate(users)
        }
        return assess(build(recorded(seconds, steady_from=5), run_info(emulator=True), samples=samples))

    (bound,) = [f for f in with_servers(99.0).findings if f.kind == "EMULATOR_BOUND"]
    assert bound.message.startswith("Azurite used 99% of a core on average in the steady phase"), bound.message
    assert "EMULATOR_BOUND" not in kinds(with_servers(35.0))  # measured and idle: not the emulator


def test_an_unserved_demand_names_the_machine_when_its_cores_were_busy_with_each_process_share():
    start = 1_000_000
    events = {t: [{"entities": 1}] * 50 for t in range(12)}
    samples = {start + t: {"users": 10, "cpu": 45.0, "servers_cpu": {"Azurite": 52.0}, "machine_cpu": 99.0} for t in range(12)}
    info = run_info(partition_target=200, emulator=True, settings={"arrival_rate": 100, "arrivals": "constant"})
    metrics = recorded(events, start=start)
    metrics.on_unsent([(start + t, "hot", "GET", 50) for t in range(12)])  # half the demand sent and not served
    results = assess(build(metrics, info, samples=samples))
    (unserved,) = [f for f in results.findings if f.kind == "UNSERVED"]
    said = "the machine's cores were busy (99% of all of them: Azurite 52%, the load generator 45% of a core)"
    assert said in unserved.message and "Azurite ran out" not in unserved.message, unserved.message


def test_the_errors_remedy_says_what_each_code_means_here():
    seconds = steady(10)
    seconds[1] += [{"op": "read", "op_class": "GET", "error": "TableNotFound"}] * 3
    seconds[2] += [{"op": "read", "op_class": "GET", "error": "Timeout"}]
    (errors,) = [f for f in judged(seconds).findings if f.kind == "ERRORS"]
    assert "TableNotFound: the test table was gone" in errors.remedy and "Timeout: no answer within --timeout" in errors.remedy
    assert "ResourceNotFound" not in errors.remedy and "never retry a 4xx" in errors.remedy


def open_loop(served: int, unsent: int, seconds: int = 12, **info):
    """An open loop on 'hot': ``served`` reads/s sent and served, ``unsent`` more each second dropped unsent."""
    start = 1_000_000
    events = {
        t: [{"entities": 1}] * (served - 1) + [{"entities": 1, "unsent": [(start + t, "hot", "GET", 1)] * unsent}]
        for t in range(seconds)
    }
    info.setdefault("settings", {"arrival_rate": served + unsent, "arrivals": "constant"})
    return assess(build(recorded(events, start=start), run_info(**info)))


def test_an_open_loop_is_judged_on_its_demand_with_what_was_served_beside_it():
    results = open_loop(served=100, unsent=300, partition_target=200, emulator=True)
    (row,) = results.rows()
    assert (row.mean_eps, row.offered_mean_eps, row.offered_peak_eps) == (100, 400, 400)
    assert (row.ratio, row.offered_ratio, row.finding) == (0.5, 2.0, "HOT")
    hot = next(f for f in results.findings if f.kind == "HOT")
    assert "was asked for 400 entities/s at peak" in hot.message and "200% of the 200/s partition target" in hot.message
    assert "it served 100/s at peak (50%)" in hot.message
    (unserved,) = [f for f in results.findings if f.kind == "UNSERVED"]
    assert "served 100 of the 400 entities/s asked of it on average in the steady phase, 25%" in unserved.message
    # the cause measured, not inferred: a quarter of the schedule was sent (UNSENT, its own finding), Azurite unblamed
    assert "the run sent 25% of its schedule (UNSENT)" in unserved.message and "Azurite" not in unserved.message
    assert "--workers" in unserved.remedy and (unserved.cause, unserved.act) == ("unsent", "generators")
    (unsent,) = [f for f in results.findings if f.kind == "UNSENT"]
    assert "the run sent 25% of its schedule's demand" in unsent.message and "--max-in-flight" in unsent.remedy
    assert results.hottest() == ["hot"] and results.peaks() == {"hot": 400}


def test_an_open_loop_that_serves_its_demand_raises_no_unserved_and_a_closed_loop_is_judged_on_served():
    assert "UNSERVED" not in kinds(open_loop(served=100, unsent=2, partition_target=200))
    closed = open_loop(served=100, unsent=300, partition_target=200, settings={})
    assert kinds(closed) == ["COOL"] and "demand" not in closed.findings[0].message  # served, as before


def test_many_unserved_partitions_name_the_least_served_and_count_the_rest():
    start = 1_000_000
    events = {
        t: [
            {"partition": f"p{i}", "entities": 1, "unsent": [(start + t, f"p{i}", "GET", 1)] * (10 + i)}
            for i in range(6)
            for _ in range(10)
        ][::10]
        + [{"partition": f"p{i}", "entities": 1} for i in range(6) for _ in range(9)]
        for t in range(12)
    }
    results = assess(build(recorded(events, start=start), run_info(settings={"arrival_rate": 100, "arrivals": "constant"})))
    unserved = [f for f in results.findings if f.kind == "UNSERVED"]
    assert [f.partition for f in unserved] == ["p5", "p4", "p3", None]  # the least served first, then the rest counted
    assert "3 more partitions served under 95% of their demand" in unserved[-1].message


def slowing(*, grows=True, emulator=True, cpu=20.0, seconds=18, scan_ms=20.0, batch_ms=(5.0, 5.0), settings=None):
    """GET scans at 1,000 entities/s and 5 ms for the first half, 500/s and ``scan_ms`` after; batches (``batch_ms``
    before and after) add 1,000 rows a second (or none) to a table seeded with 1,000."""
    events = {}
    for t in range(seconds):
        slow = t >= seconds // 2
        events[t] = [{"op": "scan", "entities": 50 if slow else 100, "ms": scan_ms if slow else 5.0}] * 10 + [
            {"op": "batch", "op_class": "PUT", "entities": 100, "rows": 100 if grows else 0, "ms": batch_ms[slow]}
        ] * 10
    results = build(recorded(events), run_info(emulator=emulator, seeded=1000, **({"settings": settings} if settings else {})))
    results.load = [{"t": t, "users": 10, "cpu": cpu} for t in range(seconds)]
    return assess(results)


def test_emulator_slowed_names_the_kind_rows_rates_and_what_is_still_the_designs():
    (finding,) = [f for f in slowing().findings if f.kind == "EMULATOR_SLOWED"]
    assert finding.op_class == "GET" and finding.partition is None
    message = finding.message
    assert (
        "GET served 1,000 entities/s in the steady phase's first third (from 0 s to 5 s) and 500/s in its last "
        "(from 12 s to 17 s), 50% less" in message
    )
    assert "median latency rose from 5.0 to 20.1 ms" in message  # HDR histograms: 2 significant digits
    assert "the table grew from 6,000 to 18,000 rows" in message  # seeded + 1,000 a second, by the end of each third
    assert "Azurite's queries slow as it grows" in message and "the demand offered" in message and finding.remedy


def test_emulator_slowed_reads_the_latency_a_closed_loops_users_waited_on_not_only_the_op_class_own():
    """Seen on a real run: scans x0.54 while their own median latency rose x1.36 (under the 1.5) and the batches the
    same users ran in turn slowed more. A closed loop's rate is its users over all their operations' time."""
    (finding,) = [f for f in slowing(scan_ms=6.5, batch_ms=(5.0, 12.0)).findings if f.kind == "EMULATOR_SLOWED"]
    assert finding.op_class == "GET" and "its median latency went from 5.0 to 6.5 ms" in finding.message
    assert "PUT's, which the same users wait on in turn, rose from 5.0 to 12" in finding.message
    # an open loop's operations wait on nothing of their own users': only their own latency counts
    open_loop = slowing(scan_ms=6.5, batch_ms=(5.0, 12.0), settings={"arrival_rate": 100, "arrivals": "constant"})
    assert "EMULATOR_SLOWED" not in kinds(open_loop)
    assert "EMULATOR_SLOWED" not in kinds(slowing(scan_ms=6.5))  # no latency rose: not the emulator slowing


@pytest.mark.parametrize(
    "case", [dict(grows=False), dict(emulator=False), dict(cpu=97.0)], ids=["table-kept", "real-account", "generator-bound"]
)
def test_no_emulator_slowed_unless_azurite_the_table_grew_and_the_generator_kept_up(case):
    assert "EMULATOR_SLOWED" not in kinds(slowing(**case))


def throttled(reasons: dict[str, int], load: int = 10, **info):
    """A steady PUT load on 'hot' (``load`` entities/s) with 4 throttled attempts in second 1, told apart by ``reasons``."""
    seconds = steady(load, seconds=12)
    seconds[1] += [{"op": "insert", "op_class": "PUT", "throttled": 4, "attempts": 5}]
    results = build(recorded(seconds), run_info(**info))
    for row in results.rows():
        row.throttled_by = dict(reasons)
    return assess(results)


def test_the_accounts_findings_get_the_accounts_remedies_and_a_partitions_keep_theirs():
    """The issue: the account over its limit was told to spread the load over more PartitionKeys."""
    (account,) = [f for f in judged(steady(100), partition_target=1000, account_target=50).findings if f.partition is None]
    assert account.kind == "HOT" and account.message.startswith("the account peaked at 100 entities/s")
    assert "at least 2 storage accounts to be under its 50/s target, 3 to stay under 80%" in account.remedy
    assert "more storage accounts" in account.remedy and "40,000 requests/s" in account.remedy
    assert "--account-target" in account.remedy and "20,000 entities/s per account" in account.remedy
    (partition,) = judged(steady(100), partition_target=50).findings
    assert "at least 2 PartitionKeys" in partition.remedy and "storage accounts" not in partition.remedy
    at_budget = {"emulate_throttling": True, "emulator_partition_rate": 15.0, "emulator_account_rate": 20000.0}
    by_account = next(f for f in throttled({"account": 4}).findings if f.kind == "THROTTLED")
    by_partition = next(f for f in throttled({"partition": 4}, settings=at_budget).findings if f.kind == "THROTTLED")
    both = next(f for f in throttled({"partition": 3, "account": 1}, settings=at_budget).findings if f.kind == "THROTTLED")
    assert "more storage accounts" in by_account.remedy and "more PartitionKeys" not in by_account.remedy
    assert "more PartitionKeys" in by_partition.remedy and "storage accounts" not in by_partition.remedy
    assert "more PartitionKeys" in both.remedy and "more storage accounts" in both.remedy


def test_a_simulations_unserved_remedy_is_its_own_answer_not_to_run_a_simulation():
    (unserved,) = [f for f in open_loop(served=100, unsent=300, simulated=True).findings if f.kind == "UNSERVED"]
    assert "loadtest simulate" not in unserved.remedy and "simulation's answer" in unserved.remedy
    assert "25% of it served) over at least 4 PartitionKeys" in unserved.remedy and unserved.act == "spread"
    refused_by_the_account = open_loop(served=100, unsent=300, simulated=True)
    for row in refused_by_the_account.rows():
        row.throttled_by = {"account": 5}
    (by_account,) = [f for f in assess(refused_by_the_account).findings if f.kind == "UNSERVED"]
    assert "more storage accounts" in by_account.remedy and "PartitionKeys (" not in by_account.remedy
    (measured,) = [f for f in open_loop(served=100, unsent=300).findings if f.kind == "UNSERVED"]
    assert "--workers" in measured.remedy  # a measured run whose generator fell short: send it whole


EMULATED = {"emulate_throttling": True, "emulator_partition_rate": 300.0, "emulator_account_rate": 20000.0}


def test_throttled_names_the_budget_that_judged_it_and_the_level_the_target_it_judges():
    """The issue: through the emulator at a 300/s budget, COOL (against 2,000/s) stood beside THROTTLED unexplained."""
    results = throttled({"partition": 4}, load=200, emulator=True, settings=EMULATED)
    found = {f.kind: f for f in results.findings}
    budget = "4 for the partition over the throttling emulator's 300 entities/s per-partition budget"
    assert budget in found["THROTTLED"].message and found["THROTTLED"].cause == "throttled"
    said = "The level is against the 2,000/s partition target; throttling was against the throttling emulator's 300"
    assert said in found["COOL"].message and "No action needed" not in found["COOL"].remedy  # it was throttled
    on_azure = {f.kind: f for f in throttled({"partition": 4}, load=200).findings}
    assert "4 for the partition over Azure's 2,000/s partition target" in on_azure["THROTTLED"].message
    assert "throttling was against" not in on_azure["COOL"].message  # no budget but the target: nothing to tell apart
    # at a tenth of the target its own load does not explain the throttling, and the remedy does not say to spread it
    assert "its own load does not explain it" in on_azure["THROTTLED"].message
    assert on_azure["THROTTLED"].cause == "unexplained" and "spread the partition" not in on_azure["THROTTLED"].remedy
    simulated = {f.kind: f for f in throttled({"account": 4}, simulated=True, settings=EMULATED).findings}
    assert "4 for the account over the simulation's 20,000 entities/s account budget" in simulated["THROTTLED"].message


def test_the_findings_name_the_window_the_run_averaged_its_peaks_over():
    results = judged({t: [{"entities": 100}] for t in range(8)}, partition_target=50)
    assert results.run.peak_window_s == 8 and "(8-second moving average)" in results.findings[0].message
    short = assess(build(recorded(steady(100, seconds=15), steady_from=10), run_info(partition_target=50)))
    assert short.run.peak_window_s == 5 and "(5-second moving average)" in short.findings[0].message


@pytest.mark.parametrize(("steady_from", "raised"), [(9, True), (7, False), (30, True)], ids=["9-of-15", "7-of-15", "never"])
def test_a_ramp_that_takes_most_of_the_run_is_a_finding_naming_what_the_figures_cover(steady_from, raised):
    """The issue: compare -t 15s -u 20 at -r 2 ramped for 9 of its 15 s, and nothing said so."""
    results = assess(build(recorded(steady(100, seconds=15), steady_from=steady_from), run_info(users=20, duration_s=15)))
    ramp = [f for f in results.findings if f.kind == "RAMP_DOMINATES"]
    assert bool(ramp) == raised
    if raised and steady_from < 15:
        assert ramp[0].message.startswith(
            "the users' ramp took 9 of the 15 s they ran (20 users), over 50%: the means cover the last 6 s"
        )
        assert "the highest 6-second moving average" in ramp[0].message and "-r" in ramp[0].remedy
    elif raised:
        assert "the ramp never finished in the 15 s the run lasted" in ramp[0].message
    assert (exit_code(results, checks_for(("ramp_dominates",)))[0] == 3) == raised  # --fail-on ramp_dominates


def test_a_finding_on_a_key_counted_apart_only_late_says_its_figures_are_at_least_these():
    """A key that joined the hottest late lacks its folded first seconds (``PartitionRow.partial``): every finding on
    it says its figures are a lower bound, and no other finding does."""
    from loadtest.findings.assess import AT_LEAST

    seconds = steady(10, seconds=12)
    seconds[1] += [{"op": "insert", "op_class": "PUT", "throttled": 4, "attempts": 5}]
    results = build(recorded(seconds), run_info())
    exact = {f.kind: f.message for f in assess(results).findings}
    for row in results.rows():
        row.partial = True
    marked = {f.kind: f for f in assess(results).findings if f.partition == "hot"}
    assert marked and all(f.message.endswith(AT_LEAST) and f.message.count(AT_LEAST) == 1 for f in marked.values())
    assert not [m for m in exact.values() if AT_LEAST in m]
