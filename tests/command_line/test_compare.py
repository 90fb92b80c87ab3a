"""``loadtest compare``: the same offered load per strategy against a real Azurite, one ranked report."""

from __future__ import annotations

import json

import pytest
from browser import chromium_page
from helpers import in_process

from loadtest.results.comparison import StrategyOutcome, rank

WORKLOAD = ("-t", "4s", "-u", "4", "-r", "4", "--rate", "10", "--mix", "read=50,insert=50", "--seed-entities", "200")


def outcome(name, ratio, top1, entities=100):
    return StrategyOutcome(
        strategy=name, run_dir="x", exit_code=0, ratio=ratio, hottest_peak_eps=ratio * 10, top1_share=top1, entities=entities
    )


def test_rank_puts_the_coolest_hottest_partition_first_and_skips_failed_runs():
    ranking, text = rank(
        [
            outcome("single", 4.0, 1.0),
            outcome("guid", 0.06, 0.01),
            outcome("hash", 0.3, 0.08),
            StrategyOutcome(strategy="broken", run_dir="x", exit_code=1),
        ]
    )
    assert ranking == ["guid", "hash", "single"]
    assert text.startswith("guid spreads the load best") and "single is the worst" in text


@pytest.mark.alone
@pytest.mark.browser
def test_single_is_hot_and_guid_cool_under_the_same_offered_load(loadtest, azurite, tmp_path, artifacts):
    done = loadtest(
        "compare",
        "--strategies",
        "single,guid",
        "--out",
        str(tmp_path),
        *WORKLOAD,
        "--partition-target",
        "10",
        "--connection-string",
        azurite.connection_string,
        timeout=300,
    )
    assert done.code == 0, done.output
    comparison = json.loads((tmp_path / "comparison.json").read_text())
    by_name = {s["strategy"]: s for s in comparison["strategies"]}
    single, guid = by_name["single"], by_name["guid"]
    assert single["entities"] == pytest.approx(guid["entities"], rel=0.15)  # the same offered load
    assert single["hottest_peak_eps"] > 10 > guid["hottest_peak_eps"]
    assert "HOT" in single["findings"] and "HOT" not in guid["findings"] and "COOL" in guid["findings"]
    assert single["partitions"] == 1 and guid["partitions"] > 100 and single["top1_share"] == 1.0
    assert comparison["ranking"] == ["guid", "single"]
    with chromium_page() as page:
        page.goto((tmp_path / "comparison.html").as_uri())
        verdicts = dict(
            page.eval_on_selector_all(
                "#strategies-table tr.strategy", "rows => rows.map(r => [r.dataset.strategy, r.dataset.verdict])"
            )
        )
        assert verdicts == {"single": "HOT", "guid": "COOL"}
        assert page.inner_text("#recommendation").startswith("guid spreads the load best")
        assert page.eval_on_selector("#chart-strategies", "i => i.complete && i.naturalWidth") > 300
        page.click("#strategies-table tr[data-strategy=guid] a")
        page.wait_for_selector("#chart-heat")
        assert page.eval_on_selector("#chart-heat", "i => i.complete && i.naturalWidth") > 300
        page.go_back()
        page.screenshot(path=str(artifacts / "compare.png"), full_page=True)


def test_compare_needs_two_valid_strategies_before_running_anything(monkeypatch, tmp_path):
    code, _, stderr = in_process(monkeypatch, "compare", "--strategies", "single", "--out", str(tmp_path))
    assert code == 2 and "at least two" in stderr
    code, stdout, stderr = in_process(monkeypatch, "compare", "--strategies", "single,sideways", "--out", str(tmp_path))
    assert code == 2 and "Traceback" not in stdout + stderr
    assert "--strategies: 'sideways': unknown strategy; valid: single" in stderr
    assert not (tmp_path / "single").exists()


def test_compare_simulate_ranks_the_strategies_at_a_rate_no_machine_could_send(loadtest, tmp_path):
    out = tmp_path / "cmp"
    args = ("--strategies", "single,hash-prefix:100", "--arrival-rate", "200000", "-t", "30s", "--mix", "read=100")
    done = loadtest("compare", "--simulate", *args, "--emulator-account-rate", "500000", "--out", str(out))
    assert done.code == 0, done.output
    comparison = json.loads((out / "comparison.json").read_text())
    assert comparison["ranking"] == ["hash-prefix:100", "single"]
    single, spread = (
        next(s for s in comparison["strategies"] if s["strategy"] == name) for name in ("single", "hash-prefix:100")
    )
    assert single["hottest_peak_eps"] == pytest.approx(200_000, rel=0.01) and single["ratio"] == pytest.approx(100, rel=0.01)
    assert spread["hottest_peak_eps"] == pytest.approx(2_000, rel=0.01)  # 200,000/s over 100 keys: each at its target
    for strategy in ("single", "hash-prefix-100"):
        results = json.loads((out / strategy / "results.json").read_text())
        assert results["run"]["simulated"] and results["run"]["target_kind"] == "simulation"
    # the page says what happened: simulated, no table, no Azurite, no client (before: "ran once … on a fresh table")
    page = (out / "comparison.html").read_text()
    assert comparison["simulated"] and "PartitionKey strategies compared, simulated" in page and 'id="simulated"' in page
    assert "fresh table" not in page and "Azurite" not in page and ">Measured<" not in page and ">Simulated<" in page
    assert "client" not in comparison["settings"] and "timeout" not in comparison["settings"]


def test_split_hot_ranks_a_single_hot_key_spread_over_keys_above_the_design_as_logged(loadtest, tmp_path):
    """The docs' remedy against production's own demand: one key asked 3x its target (at --scale 5) beside a cool one;
    spread over 4 keys it is under the target, and the comparison ranks that first."""
    from loadtest.traffic.profile_counts import ProfileCounts

    counts = ProfileCounts()
    for second in range(20):
        for _ in range(120):
            counts.add(1_795_000_000 + second, "QueryEntity", "GET", "orders-17", 1)
        for _ in range(10):
            counts.add(1_795_000_000 + second, "UpdateEntity", "PUT", "orders-3", 1)
    profile = counts.write(
        tmp_path / "traffic.json", first=1_795_000_000, last=1_795_000_019, hashed=False, records=0, entity_bytes=1024
    )
    done = loadtest(
        "compare", "--simulate", "--traffic", str(profile), "--scale", "5", "--split-hot", "1,4",
        "--partition-target", "200", "--out", str(tmp_path / "cmp"),
    )  # fmt: skip
    assert done.code == 0, done.output
    comparison = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    assert comparison["ranking"] == ["hot partitions split 4 ways", "as logged"], comparison["ranking"]
    by_name = {s["strategy"]: s for s in comparison["strategies"]}
    assert by_name["as logged"]["hottest_partition"] == "orders-17" and "HOT" in by_name["as logged"]["findings"]
    assert by_name["hot partitions split 4 ways"]["hottest_partition"].startswith("orders-17-0")
    assert "HOT" not in by_name["hot partitions split 4 ways"]["findings"]
    split = json.loads((tmp_path / "cmp" / "hot-partitions-split-4-ways" / "results.json").read_text())
    assert split["simulation"]["traffic"]["split_keys"] == ["orders-17"]
    refused = loadtest("compare", "--split-hot", "1,4", "--traffic", str(profile), "--out", str(tmp_path / "no"))
    assert refused.code == 2 and "give --simulate and --traffic FILE" in refused.stderr, refused.output
