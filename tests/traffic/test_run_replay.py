"""``loadtest run --traffic``: a profile as a real run's workload options (what Locust is handed), the profile's keys
drawn by their share of each op class, and every option that cannot go with it refused in one line."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from helpers import in_process

from loadtest.buckets import UNATTRIBUTED
from loadtest.key_specs import key_strategy
from loadtest.traffic.profile import ProfileCounts

START = 1_795_500_000
#: Per second: reads and upserts on three named keys (hot 40+20, warm 10+5, cool 2+1), 25 reads over 1,300 light
#: keys (the profile's tail past its 1,000 named), a batch of 20 inserts that names no partition.
NAMED = {"hot": (40, 20), "warm": (10, 5), "cool": (2, 1)}


@pytest.fixture(scope="module")
def profile(tmp_path_factory) -> Path:
    counts = ProfileCounts()
    for s in range(60):
        for key, (reads, writes) in NAMED.items():
            counts.add(START + s, "QueryEntity", "GET", key, reads, reads)
            counts.add(START + s, "InsertOrMergeEntity", "PUT", key, writes, writes)
        for i in range(25):
            counts.add(START + s, "QueryEntity", "GET", f"t{(s * 25 + i) % 1300:04d}", 1, 1)
        counts.add(START + s, "EntityGroupTransaction", "PUT", UNATTRIBUTED, 20, 1)
    path = tmp_path_factory.mktemp("profile") / "traffic.json"
    return counts.write(path, first=START, last=START + 59, hashed=False, records=0, entity_bytes=1000)


def handed(monkeypatch, *args: str) -> dict[str, str]:
    """Locust's options as ``loadtest run`` hands them over (validated: nothing sent)."""
    code, out, err = in_process(monkeypatch, "run", *args)
    assert code == "launched", out + err
    argv = sys.argv[3:]
    return {flag: value for flag, value in zip(argv, [*argv[1:], ""], strict=True) if flag.startswith("-")}


def test_the_profile_becomes_the_runs_keys_mix_rate_seeding_and_time(monkeypatch, profile):
    given = handed(monkeypatch, "--traffic", str(profile), "--scale", "2")
    assert given["--key-strategy"] == f"traffic:{profile}:spread"
    mix = dict(part.split("=") for part in given["--mix"].split(","))
    requests = {"read": 60 * (52 + 25), "upsert": 60 * 26, "batch": 60}  # the logged operations' requests
    assert {name: int(w) for name, w in mix.items()} == {
        name: round(10_000 * n / sum(requests.values())) for name, n in requests.items()
    }
    assert given["--batch-size"] == "20"  # the logged entities per batch
    assert given["--seed-entities"] == "1303"  # an entity under each named key and each of the tail's
    assert float(given["--arrival-rate"]) == 2 * (52 + 25 + 26 + 1)  # the busiest second's operations, twice
    assert given["-t"] == "60s" and given["-u"] == "10"
    given = handed(monkeypatch, "--traffic", str(profile), "--scale", "100", "--unattributed", "apart", "-t", "5s")
    assert given["-u"] == "11" and given["-t"] == "5s"  # enough users for 10,400/s at 1,000 each
    assert given["--key-strategy"].endswith(":apart")


def test_the_keys_are_drawn_by_their_share_of_the_op_class_about_to_run(profile):
    keys = key_strategy(f"traffic:{profile}", seed=1, stream=3)
    assert len(keys.keys()) == 1303 and keys.keys()[:3] == ["hot", "warm", "cool"]
    drawn = {}
    for op_class in ("GET", "PUT"):
        keys.aim(op_class)
        drawn[op_class] = Counter(keys.existing(1303)[0] for _ in range(20_000))
    reads = sum(r for r, _ in NAMED.values()) + 25
    assert drawn["GET"]["hot"] / 20_000 == pytest.approx(40 / reads, abs=0.02)
    assert drawn["GET"]["warm"] / 20_000 == pytest.approx(10 / reads, abs=0.015)
    assert sum(n for key, n in drawn["GET"].items() if key not in NAMED) / 20_000 == pytest.approx(25 / reads, abs=0.02)
    assert set(drawn["PUT"]) == set(NAMED)  # the light keys were only read
    assert drawn["PUT"]["hot"] / 20_000 == pytest.approx(20 / 26, abs=0.02)
    assert {keys.new_partition() for _ in range(200)} <= set(NAMED)  # a batch's inserts: spread as the writes are
    apart = key_strategy(f"traffic:{profile}:apart", seed=1)
    apart.aim("PUT")
    assert len({apart.new_partition() for _ in range(200)}) == 200  # each its own key
    keys_, shares = keys.access_shares(1303)
    assert shares.sum() == pytest.approx(1.0) and dict(zip(keys_, shares, strict=True))["hot"] == pytest.approx(40 / reads)


@pytest.mark.parametrize(
    "args, said",
    [
        (["--scale", "2"], "--scale: only with --traffic FILE"),
        (["--unattributed", "apart"], "--unattributed: only with --traffic FILE"),
        (["--traffic", "{profile}", "--mix", "read=1"], "--mix: with --traffic the profile's partitions and mix are"),
        (["--traffic", "{profile}", "--key-strategy", "set:4", "--skew", "zipfian"], "--key-strategy, --skew: with --traffic"),
        (["--traffic", "{profile}", "--rate", "5"], "--rate: with --traffic the run is an open loop"),
        (["--traffic", "{profile}", "--scale", "2", "--arrival-rate", "9"], "--scale and --arrival-rate: give one"),
        (["--traffic", "{profile}", "--scale", "100", "-u", "3"], "-u 3: --traffic"),
        (["--traffic", "{profile}", "--scale", "0"], "--scale '0'"),
        (["--traffic", "{profile}", "--unattributed", "nowhere"], "--unattributed 'nowhere'"),
        (["--traffic", "nowhere.json"], "--traffic nowhere.json: no such file"),
        (["--key-strategy", "traffic:nowhere.json"], "--key-strategy 'traffic:nowhere.json': no such file"),
        (["--key-strategy", "traffic:"], "--key-strategy 'traffic:': traffic:PROFILE names a traffic profile"),
    ],
)
def test_what_cannot_be_replayed_is_refused_in_one_line_before_anything_starts(monkeypatch, profile, args, said):
    code, out, err = in_process(monkeypatch, "run", *(a.format(profile=profile) for a in args))
    assert code == 2 and said in err and err.count("\n") == 1 and "Traceback" not in out + err, err
