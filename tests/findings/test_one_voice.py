"""One voice (issue #51): each partition judged once, remedies that follow the measured cause and never contradict
another finding's, one order everywhere, and remedies sized with arithmetic on what was measured.

The pairwise test builds every combination of what can happen to one partition — its load against the target, an
open or closed loop, demand unsent, throttling by the partition's or the account's budget, 4xx answers, hot
neighbours in key order, a busy account, an outage — through the real listener and detectors, and holds every
finding's act against every other finding's measured cause on that partition."""

from __future__ import annotations

import functools
import itertools
import re

import pytest
from helpers import run_info
from synthetic import recorded

from loadtest.findings.assess import assess
from loadtest.findings.examples import EXAMPLES
from loadtest.findings.order import rank, weight
from loadtest.findings.remedies import CONTRADICTS, accounts_needed, contradictions, keys_needed, spread_brief, spread_words
from loadtest.results.finding_kinds import KINDS
from loadtest.results.finding_names import Act, Cause
from loadtest.results.form import Finding
from loadtest.results.summary import build

TARGET = 100  # entities/s per partition in these scenarios
START = 1_000_000
SECONDS = 12

LOADS = {"cool-under-half": 0.2, "half-warm": 0.45, "cool": 0.6, "warm": 0.9, "hot": 1.6}
LOOPS = ("closed", "open", "open-unsent")
THROTTLING = ("none", "partition", "account")
CONTEXTS = ("alone", "errors", "hot-neighbours", "busy-account", "outage")


@functools.cache
def scenario(load: str, loop: str, throttling: str, context: str):
    """Partition 'p' (GET and PUT halves of its load) for 12 s in the given circumstances, built and assessed (once:
    the tests read them)."""
    per_second = int(LOADS[load] * TARGET)
    events: dict[int, list[dict]] = {}
    for t in range(SECONDS):
        unsent = [(START + t, "p", "GET", int(per_second))] if loop == "open-unsent" else [] if loop == "open" else None
        throttle = {"throttled": 1, "attempts": 2} if throttling != "none" else {}
        second = [
            {"partition": "p", "op": "read", "entities": per_second // 2, "unsent": unsent, **throttle},
            {"partition": "p", "op": "insert", "op_class": "PUT", "entities": per_second // 2, **throttle},
            {"partition": "z", "op": "read", "entities": 1},  # the rest of the account, answered every second
        ]
        if context == "errors":
            second.append({"partition": "p", "op": "read", "entities": 0, "error": "ResourceNotFound"})
        if context == "hot-neighbours":
            second += [{"partition": key, "op": "read", "entities": int(1.5 * TARGET)} for key in ("o", "q")]
        if context == "outage" and 5 <= t <= 8:
            second = [
                {"partition": "p", "op": "read", "entities": 0, "error": "Timeout", "ms": 3000.0},
                {"partition": "z", "op": "read", "entities": 1},
            ]
        events[t] = second
    settings = {"arrival_rate": per_second, "arrivals": "constant"} if loop != "closed" else {}
    if throttling != "none":
        settings |= {"emulate_throttling": True, "emulator_partition_rate": float(TARGET), "emulator_account_rate": 1000.0}
    account = int(1.1 * per_second) + 1 if context == "busy-account" else 1000  # p and z near the account target
    results = build(
        recorded(events, start=START),
        run_info(partition_target=TARGET, account_target=account, emulator=True, settings=settings),
    )
    for row in results.partitions:  # each throttled attempt's reason, as the emulator's answers tell them apart
        if row.throttled:
            row.throttled_by = {throttling: row.throttled}
    return assess(results)


CASES = list(itertools.product(LOADS, LOOPS, THROTTLING, CONTEXTS))


def _on(findings: list[Finding], partition: str) -> list[Finding]:
    return [f for f in findings if f.partition == partition]


def test_no_remedy_contradicts_another_findings_measured_cause_in_any_combination():
    pairs: set[frozenset[str]] = set()
    said = []
    for case in CASES:
        results = scenario(*case)
        on_p = _on(results.findings, "p")
        levels = [f for f in on_p if f.kind in ("HOT", "WARM", "COOL")]
        assert len(levels) <= 1, (case, levels)  # the partition judged once
        assert {row.finding for row in results.partitions if row.partition == "p"} <= {levels[0].kind} if levels else True
        assert all(f.cause and f.act for f in results.findings), case  # every finding says what it measured and asks
        said += [f"{case}: {c}" for c in contradictions(results.findings)]
        pairs |= {frozenset((a.kind, b.kind)) for a, b in itertools.combinations(on_p, 2) if a.kind != b.kind}
    assert not said, "\n".join(said[:20])
    # the combinations covered every pair of kinds one partition can hold
    expected = {
        frozenset(pair)
        for pair in [
            *itertools.product(("HOT", "WARM", "COOL"), ("THROTTLED", "UNSERVED", "ERRORS", "OUTAGE")),
            ("THROTTLED", "UNSERVED"),
            ("THROTTLED", "ERRORS"),
            ("UNSERVED", "ERRORS"),
            ("THROTTLED", "OUTAGE"),
        ]
    }
    assert expected <= pairs, sorted(tuple(sorted(p)) for p in expected - pairs)


def test_the_check_itself_fails_on_the_contradictions_the_issue_saw():
    """No test that cannot fail: the pairs the default job's report held are caught."""
    hot = Finding(kind="HOT", partition="hot", op_class=None, message="", remedy="", cause="over", act="spread")
    cool = Finding(kind="COOL", partition="hot", op_class="GET", message="", remedy="", cause="under", act="none")
    throttled = Finding(kind="THROTTLED", partition="hot", op_class=None, message="", remedy="", cause="throttled", act="retry")
    more_workers = Finding(
        kind="UNSERVED", partition="hot", op_class=None, message="", remedy="", cause="throttled", act="generators"
    )
    assert contradictions([hot, cool]) and contradictions([throttled, more_workers])
    assert not contradictions([hot, throttled])
    assert Cause.THROTTLED in CONTRADICTS[Act.GENERATORS] and Cause.OVER in CONTRADICTS[Act.NONE]


@pytest.mark.parametrize("load", ["cool", "warm", "hot"])
def test_unserved_demand_refused_by_throttling_asks_for_the_design_and_unsent_demand_for_generators(load):
    refused = next(f for f in scenario(load, "open-unsent", "partition", "alone").findings if f.kind == "UNSERVED")
    assert (refused.cause, refused.act) == ("throttled", "spread") and "Locust" not in refused.remedy
    assert "PartitionKeys" in refused.remedy and "more load generators would not change that" in refused.remedy
    unsent = next(f for f in scenario(load, "open-unsent", "none", "alone").findings if f.kind == "UNSERVED")
    assert (unsent.cause, unsent.act) == ("unsent", "generators") and "--workers" in unsent.remedy


def test_a_throttled_partition_under_half_its_budget_names_what_the_records_show():
    by_neighbours = next(
        f for f in scenario("cool-under-half", "closed", "partition", "hot-neighbours").findings if f.kind == "THROTTLED"
    )
    assert by_neighbours.cause == "neighbour" and "its own load does not explain it" in by_neighbours.message
    assert "'o' at 150/s" in by_neighbours.message and "'q' at 150/s" in by_neighbours.message
    assert "Spread the hot neighbours, not this partition" in by_neighbours.remedy
    by_account = next(
        f for f in scenario("cool-under-half", "closed", "partition", "busy-account").findings if f.kind == "THROTTLED"
    )
    assert by_account.cause == "account" and "the account's total reached" in by_account.message
    assert "storage accounts" in by_account.remedy
    nothing = next(f for f in scenario("cool-under-half", "closed", "partition", "alone").findings if f.kind == "THROTTLED")
    assert nothing.cause == "unexplained" and "nothing in the data read explains it" in nothing.message
    own = next(f for f in scenario("hot", "closed", "partition", "alone").findings if f.kind == "THROTTLED")
    assert own.cause == "throttled" and "more PartitionKeys" in own.remedy


def test_cool_says_no_action_only_when_nothing_else_on_its_partition_or_account_asks_for_one():
    alone = next(f for f in scenario("cool", "closed", "none", "alone").findings if f.kind == "COOL")
    assert alone.act == "none" and alone.remedy.startswith("No action needed")
    throttled = next(f for f in scenario("cool", "closed", "partition", "alone").findings if f.kind == "COOL")
    assert throttled.act == "note" and "No action" not in throttled.remedy and "THROTTLED" in throttled.remedy


def test_the_one_order_is_severity_then_how_far_over_then_the_partition():
    results = scenario("hot", "open-unsent", "partition", "hot-neighbours")
    key = rank(results)
    assert results.findings == sorted(results.findings, key=key)
    weights = [weight(f) for f in results.findings]
    assert weights == sorted(weights)
    over = [f for f in results.findings if f.kind in ("HOT", "THROTTLED", "UNSERVED")]
    ratios = {p: max(r.judged(True)[1] for r in results.partitions if r.partition == p) for p in {f.partition for f in over}}
    firsts = [f.partition for f in over]
    assert [ratios[p] for p in dict.fromkeys(firsts)] == sorted((ratios[p] for p in dict.fromkeys(firsts)), reverse=True)
    assert results.findings[0].kind == "HOT" and results.findings[0].partition == "p"  # 160 % before its 150 % neighbours


@pytest.mark.parametrize(("peak", "under", "roomy"), [(3_557, 2, 3), (2_000, 1, 2), (2_001, 2, 2), (1_600, 1, 1), (12_000, 6, 8)])
def test_the_split_is_arithmetic_on_the_peak(peak, under, roomy):
    assert (keys_needed(peak, 2_000), keys_needed(peak, 2_000, 0.8)) == (under, roomy)
    assert accounts_needed(peak * 10, 20_000) == (under, roomy)
    said = spread_words("hot", peak, 2_000, {"key_strategy": "single"})
    assert f"at least {under} PartitionKeys to be under its 2,000/s target, {roomy} to stay under 80%" in said


def test_the_default_jobs_178_percent_needs_two_keys_to_be_under_and_three_for_headroom():
    said = spread_words("hot", 3_557, 2_000, {"key_strategy": "single"})
    assert "'hot' needs 3,557 entities/s at peak: spread it over at least 2 PartitionKeys" in said and ", 3 to stay" in said
    assert "write sharding" in said and "'00-hot' … '02-hot'" in said  # one hot value: its own suffix buckets, prefixed
    increasing = spread_words("hot", 3_557, 2_000, {"key_strategy": "append-only"})
    assert "seconds first" in increasing and "hash" in increasing and "write sharding" not in increasing
    # what one key served bounds the split too: a quarter served needs four keys whatever the peak
    assert "over at least 4 PartitionKeys" in spread_brief("hot", 150, 2_000, served=0.25)


def _shape(text: str) -> str:
    """A message with its names and figures taken out: what a detector's wording is, whatever it measured."""
    text = text.split("; also measured: ")[0]  # what else was measured, when it was: not the wording
    return re.sub(r"\d[\d,.]*", "N", re.sub(r"'[^']*'", "Q", text))


def test_the_documented_examples_are_worded_as_the_detectors_word_them():
    """docs/reference/findings.md shows each kind's declared example: those of the kinds these scenarios raise read
    as a detector's own message does, names and figures aside."""
    shapes: dict[str, set[str]] = {}
    for case in CASES:
        for found in scenario(*case).findings:
            shapes.setdefault(found.kind, set()).add(_shape(found.message))
    for kind in ("HOT", "WARM", "COOL", "THROTTLED", "UNSERVED"):
        assert _shape(EXAMPLES[kind]) in shapes[kind], (kind, sorted(shapes[kind])[:6])
    assert set(EXAMPLES) == set(KINDS) and all(EXAMPLES.values())
