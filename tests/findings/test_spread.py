"""KEY_SKEW: a design over several PartitionKeys whose load one key takes most of, judged on the share it took (an
open loop's on its demand), against the partition and account targets."""

from __future__ import annotations

from helpers import run_info
from synthetic import recorded

from loadtest.findings.assess import assess
from loadtest.results.summary import build


def per_second(shares: dict[str, int], seconds: int = 12, **event) -> dict[int, list[dict]]:
    """Each second, ``shares[key]`` reads of one entity on each key."""
    return {t: [{"partition": key, **event} for key, n in shares.items() for _ in range(n)] for t in range(seconds)}


def skew_findings(seconds, **info):
    results = assess(build(recorded(seconds), run_info(**info)))
    return [f for f in results.findings if f.kind == "KEY_SKEW"]


def test_one_key_taking_half_of_eight_keys_load_is_key_skew_naming_the_headroom_it_leaves():
    found = skew_findings(per_second({"k0": 14, **{f"k{i}": 2 for i in range(1, 8)}}), partition_target=100)
    assert len(found) == 1 and found[0].partition == "k0", found
    message = found[0].message
    assert "partition 'k0' took 50% of the table's load over about 8 PartitionKeys touched (an even share: 12%)" in message
    assert "reaches the 100/s partition target when the table takes 200 entities/s in all" in message
    assert "an even spread would take 800/s" in message
    assert "write sharding" in found[0].remedy


def test_an_even_spread_two_keys_or_a_mild_skew_raise_none():
    assert skew_findings(per_second({f"k{i}": 4 for i in range(8)})) == []
    assert skew_findings(per_second({"a": 30, "b": 1})) == []  # two keys: a design that never meant to spread
    assert skew_findings(per_second({"k0": 5, **{f"k{i}": 3 for i in range(1, 8)}})) == []  # 19 %: under a quarter


def test_the_account_target_is_named_when_an_even_spread_would_pass_it_first():
    found = skew_findings(per_second({"k0": 12, **{f"k{i}": 2 for i in range(1, 8)}}), partition_target=2000)
    assert "an even spread would take 16,000/s" in found[0].message  # 8 keys: under the account's 20,000/s
    found = skew_findings(per_second({"k0": 24, **{f"k{i}": 1 for i in range(1, 25)}}), partition_target=2000)
    assert "an even spread would reach the account's 20,000/s target first" in found[0].message  # 25 keys: 50,000/s


def test_an_open_loop_is_judged_on_the_demand_its_hot_key_asked_for_not_what_throttling_let_through():
    """The hot key asked for 20 a second and was served 4, as every other key: served evenly, asked unevenly."""
    asked = per_second({f"k{i}": 4 for i in range(8)}, unsent=[])
    for events in asked.values():
        events += [{"partition": "k0", "error": "ServerBusy", "unsent": []}] * 16
    found = skew_findings(asked, settings={"arrival_rate": 48.0})
    assert found and "partition 'k0' took 42% of the table's demand" in found[0].message, found
    served_only = per_second({f"k{i}": 4 for i in range(8)})
    assert skew_findings(served_only) == []


def test_every_remedy_that_spreads_a_key_says_prefix_never_suffix():
    """One spreading rule (issue #63): the docs advise a hash prefix; KEY_SKEW said "suffix each hot key", advise wrote
    'hot-b0'. Every remedy and the key function write the bucket first."""
    from loadtest.findings.remedies import spread_words
    from loadtest.results.finding_kinds import KINDS
    from loadtest.workload.key_templates import bucket_key, template_keys

    said = [kind.remedy for kind in KINDS.values()] + [spread_words("hot", 5000, 2000, {})]
    assert not [s for s in said if "suffix each" in s or "key + '-' +" in s]
    assert "prefix each hot key" in KINDS["KEY_SKEW"].remedy and "'00-hot'" in said[-1]
    assert [bucket_key("hot", i, 12) for i in range(12)] == template_keys("{:12}-hot")  # a run sends what advise names
