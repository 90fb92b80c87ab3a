"""``loadtest run --traffic``: a profile as a real run's workload options (what Locust is handed), the profile's keys
drawn by their share of each op class, and every option that cannot go with it refused in one line."""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from pathlib import Path

import pytest
from helpers import in_process

from loadtest.counting.buckets import UNATTRIBUTED
from loadtest.limits import MAX_SEED_ENTITIES
from loadtest.traffic.profile_counts import ProfileCounts
from loadtest.workload.key_specs import key_strategy

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
    argv = [part for arg in sys.argv[3:] for part in arg.split("=", 1)]  # --flag=value as --flag value
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


def rewritten(profile: Path, tmp_path: Path, change) -> Path:
    """A copy of the profile with ``change`` made to its JSON (NaN and Infinity written as Python's json writes them)."""
    data = json.loads(profile.read_text())
    change(data)
    path = tmp_path / f"changed-{len(list(tmp_path.glob('changed-*')))}.json"
    path.write_text(json.dumps(data))
    return path


def _all_unattributed(profile: dict) -> dict:
    """The profile's demand as if no record had named its partition."""
    return {"PUT": {"requests": profile["requests"], "entities": profile["requests"]}}


def _busier(profile: dict, factor: int) -> None:
    """Every request of the profile ``factor`` times over (the profile's parts still add up)."""
    for name, value in profile.items():
        if name == "requests":
            profile[name] = [n * factor for n in value] if isinstance(value, list) else value * factor
        elif isinstance(value, dict):
            _busier(value, factor)
        elif isinstance(value, list):
            for item in (item for item in value if isinstance(item, dict)):
                _busier(item, factor)


#: Each malformed profile issue 53 reports: the change, what the one line says (the field, or the profile's fault).
MALFORMED = {
    "no operations": (lambda p: p.pop("operations"), "profile.operations: missing"),
    "requests Infinity": (lambda p: p.update(requests=math.inf), "profile.requests: a whole number"),
    "requests a string": (lambda p: p.update(requests="5"), "profile.requests: a whole number"),
    "tail keys a string": (lambda p: p["tail"][0].update(keys="3"), "profile.tail[0].keys: a whole number"),
    "all bins zero": (lambda p: p["rate"].update(requests=[0] * len(p["rate"]["requests"])), "profile.rate.requests"),
    "bins past the span": (lambda p: p["rate"]["requests"].extend([1] * 10), "profile.rate.requests: 70 bins of 1 s"),
    "no partition": (lambda p: p.update(partitions=[], tail=[], unattributed=_all_unattributed(p)), "named no partition"),
}


@pytest.mark.parametrize("command", ["run", "simulate", "advise"])
@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_profile_is_refused_in_one_line_by_every_command_that_replays_it(
    monkeypatch, tmp_path, profile, command, case
):
    change, said = MALFORMED[case]
    path = rewritten(profile, tmp_path, change)
    rate = ["--arrival-rate", "10"] if case == "all bins zero" else []  # a peak of 0: its scale was a division by 0
    code, out, err = in_process(monkeypatch, command, "--traffic", str(path), *rate, "--out", str(tmp_path / "o"))
    assert code == 2 and err.count("\n") == 1 and said in err and "Traceback" not in out + err, (code, err)
    assert f"--traffic {path}: " in err and "--seed-entities" not in err and not (tmp_path / "o").exists()


@pytest.mark.parametrize("keys", [MAX_SEED_ENTITIES, 10**9])
def test_a_tail_past_what_a_run_can_seed_is_refused_before_a_key_is_made(monkeypatch, tmp_path, profile, keys):
    """A run seeds an entity under every key it may draw: a profile with more is refused, naming the bound, before
    its keys are made (10^9 of them were a billion strings); a simulation replays the tail in groups."""
    path = rewritten(profile, tmp_path, lambda p: p["tail"][0].update(keys=keys))
    code, out, err = in_process(monkeypatch, "run", "--traffic", str(path), "--out", str(tmp_path / "o"))
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in out + err, err
    assert f"over the {MAX_SEED_ENTITIES:,} a run seeds" in err and "simulate --traffic" in err


def test_a_replays_rate_is_kept_whole_and_past_the_bounds_refused_naming_the_scale(monkeypatch, tmp_path, profile):
    """The scale's rate is the run's: under the slowest schedule or over the most a run offers, refused naming --scale
    (not an --arrival-rate the user never gave); a low peak keeps its digits (0.000 was a closed loop)."""
    busy = rewritten(profile, tmp_path, lambda p: _busier(p, 10_000))  # its peak 1,040,000/s
    for path, scale in ((profile, "1e-9"), (busy, "10")):
        code, _, err = in_process(monkeypatch, "run", "--traffic", str(path), "--scale", scale)
        assert code == 2 and f"--scale {float(scale):g}: the profile's peak" in err and err.count("\n") == 1, err
        assert "--arrival-rate" not in err
    one_a_day = {"span": {"start": START, "seconds": 2 * 86_400}, "rate": {"bin_s": 86_400, "requests": [6240, 0]}}
    path = rewritten(profile, tmp_path, lambda p: p.update(one_a_day))
    assert float(handed(monkeypatch, "--traffic", str(path), "--scale", "0.001")["--arrival-rate"]) == pytest.approx(
        6.24 / 86_400
    )


def test_a_profile_whose_operations_asked_nothing_is_refused_as_having_no_mix(monkeypatch, tmp_path, profile):
    """Every logged operation at 0 requests: their shares of the mix were a division by 0."""
    path = rewritten(profile, tmp_path, lambda p: [row.update(requests=0) for row in p["operations"]])
    code, out, err = in_process(monkeypatch, "run", "--traffic", str(path))
    assert code == 2 and "the profile logged no entity operation a run can replay" in err and err.count("\n") == 1, err


def test_a_simulation_replays_no_more_of_a_profile_than_a_run_would(monkeypatch, tmp_path, profile):
    """A profile longer than the longest run (a year of logs): simulate replays its first week, as ``run`` does (it
    replayed the whole span, a float a second, and ran for hours); here the bound is 20 s of the profile's 60."""
    monkeypatch.setattr("loadtest.simulator.simulate_command.MAX_DURATION_S", 20)
    monkeypatch.setattr("loadtest.report.render", lambda results, out: None)  # the page is not the point
    code, out, err = in_process(monkeypatch, "simulate", "--traffic", str(profile), "--out", str(tmp_path / "o"))
    assert code == 0, out + err
    assert json.loads((tmp_path / "o" / "results.json").read_text())["run"]["duration_s"] == 20
