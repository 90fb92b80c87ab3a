"""Production's skew to its remedy: a skewed run's own requests (the throttling emulator's ``--request-log``) read by
``loadtest traffic`` into a profile; ``advise --traffic`` spreads the one key that takes most of the load, into the
fewest buckets under 80 % at twice the peak, and ``--verify`` replays the profile with that key written over its
buckets through the throttling emulator. What a verification agrees on is the default job's test (alone); here, what
ran."""

import json
from pathlib import Path

from helpers import in_process, run_loadtest

from loadtest.workload.key_templates import bucket_key


def test_a_profile_whose_one_key_takes_most_of_the_load_is_advised_write_sharding_of_that_key_and_verify_replays_it(
    azurite, tmp_path, monkeypatch
):
    log, profile = tmp_path / "requests.json", tmp_path / "traffic.json"
    done = run_loadtest(
        "run", "--key-strategy", "set:4", "--skew", "hotspot:70,25", "--mix", "read=70,upsert=30", "--arrival-rate", "60",
        "-t", "4s", "-u", "4", "-r", "4", "--seed-entities", "40", "--emulate-throttling", "--request-log", str(log),
        "--out", str(tmp_path / "logged"), "--no-report", "--connection-string", azurite.connection_string,
    )  # fmt: skip
    assert done.code == 0, done.output
    code, out, err = in_process(
        monkeypatch, "traffic", str(log), "--profile-out", str(profile), "--no-report", "--out", str(tmp_path / "read")
    )
    assert code == 0, out + err
    logged = json.loads(profile.read_text())["partitions"]
    hot = max(logged, key=lambda row: sum(d["requests"] for d in row["demand"].values()))["key"]
    advised = tmp_path / "advice"
    done = run_loadtest(
        "advise", "--traffic", str(profile), "--arrival-rate", "3000", "--verify", "--verify-time", "3s",
        "--verify-rate", "100", "--out", str(advised), timeout=300,
    )  # fmt: skip
    assert done.code in (0, 3) and "Traceback" not in done.output, done.output  # 3: a disagreement, said (not judged here)
    advice = json.loads((advised / "results.json").read_text())["advice"]
    shard = next(d for d in advice["designs"] if d["family"] == "shard")
    assert advice["chosen"] == "shard" and shard["spread_keys"] == [hot], advice["recommendation"]
    load, target = advice["current"]["hottest_eps"], 0.8 * advice["partition_target"]
    assert advice["current"]["hottest"] == hot and load / shard["n"] < target <= load / (shard["n"] - 1)
    assert f"'{hot}' over {shard['n']} buckets" in done.stdout
    check = advice["verification"]
    assert [d["family"] for d in check["designs"]] == ["current", "shard"]
    sharded = json.loads((Path(check["designs"][1]["real_run"]) / "results.json").read_text())
    replayed = sharded["run"]["settings"]["key_strategy"]
    assert replayed.startswith("traffic:") and replayed.endswith("traffic-sharded.json:spread"), replayed
    buckets = {bucket_key(hot, i, shard["n"]) for i in range(shard["n"])}
    ran = {r["partition"] for r in sharded["partitions"] if r["op_class"] == "ALL"}
    assert buckets <= ran and hot not in ran  # the hot key's operations went to its buckets, each bucket asked
    assert {r["partition"] for r in check["designs"][1]["partitions"]} >= buckets
