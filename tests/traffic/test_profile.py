"""The traffic profile from synthetic demand: the heaviest partitions by name and exactly, the rest as groups alike in
demand whose totals stay exact (also when the lightest are folded to bound memory), the rate over the span in bins
that fit a day, and a profile read back refused in one line when it is not one."""

from __future__ import annotations

import json

import pytest

from loadtest.buckets import UNATTRIBUTED
from loadtest.exit_codes import UsageError
from loadtest.traffic import profile as profiles
from loadtest.traffic.profile import FORMAT, ProfileCounts, load_profile

T0 = 1_795_000_000


def fed(counts: ProfileCounts, demand: dict[str, int], seconds: int = 1, op_class: str = "GET") -> ProfileCounts:
    """``demand[key]`` operations a second on each key, for ``seconds``."""
    for s in range(seconds):
        for key, n in demand.items():
            for _ in range(n):
                counts.add(T0 + s, "QueryEntity", op_class, key, 2)
    return counts


def made(counts: ProfileCounts, seconds: int) -> dict:
    return counts.profile(first=T0, last=T0 + seconds - 1, hashed=False, records=0, entity_bytes=512)


def totals(profile: dict) -> tuple[int, int]:
    rows = [*profile["partitions"], *profile["tail"], {"demand": profile["unattributed"]}]
    return (
        sum(d["requests"] for row in rows for d in row["demand"].values()),
        sum(d["entities"] for row in rows for d in row["demand"].values()),
    )


def test_the_heaviest_are_named_exactly_and_the_tail_is_grouped_by_demand(monkeypatch):
    monkeypatch.setattr(profiles, "HEAVIEST", 2)
    demand = {"hot": 50, "warm": 20, **{f"a{i}": 3 for i in range(5)}, **{f"b{i}": 1 for i in range(4)}}
    counts = fed(ProfileCounts(), demand, seconds=2)
    counts.add(T0, "InsertEntity", "PUT", UNATTRIBUTED, 1)
    profile = made(counts, 2)
    assert profile["format"] == FORMAT and profile["version"] == 1 and profile["span"] == {"start": T0, "seconds": 2}
    assert [row["key"] for row in profile["partitions"]] == ["hot", "warm"]
    assert profile["partitions"][0]["demand"] == {"GET": {"requests": 100, "entities": 200}}
    groups = {row["requests_at_least"]: row for row in profile["tail"]}
    assert groups[4]["keys"] == 5 and groups[4]["demand"]["GET"]["requests"] == 30  # 6 requests each: 4 to 7
    assert groups[2]["keys"] == 4 and groups[2]["demand"]["GET"]["requests"] == 8
    assert profile["unattributed"] == {"PUT": {"requests": 1, "entities": 1}}
    assert totals(profile) == (profile["requests"], 2 * (profile["requests"] - 1) + 1) == (179, 357)  # 89 a second
    assert profile["operations"][0] == {"operation": "QueryEntity", "op_class": "GET", "requests": 178, "entities": 356}


def test_folding_the_lightest_to_bound_memory_keeps_every_total(monkeypatch):
    monkeypatch.setattr(profiles, "MAX_KEYS", 8)
    counts = ProfileCounts()
    fed(counts, {"hot": 40})
    fed(counts, {f"k{i}": 1 + i % 3 for i in range(30)})  # many light keys: folded as they come
    assert len(counts.partitions) <= 8
    profile = made(counts, 1)
    assert profile["partitions"][0] == {"key": "hot", "demand": {"GET": {"requests": 40, "entities": 80}}}
    assert totals(profile)[0] == profile["requests"] == 40 + sum(1 + i % 3 for i in range(30))
    assert sum(row["keys"] for row in profile["tail"]) + len(profile["partitions"]) == 31


@pytest.mark.parametrize(("seconds", "bin_s"), [(60, 1), (1440, 1), (1441, 10), (86_400, 60), (7 * 86_400, 600)])
def test_the_rate_over_the_span_fits_a_day_of_bins(seconds, bin_s):
    counts = ProfileCounts()
    counts.add(T0, "QueryEntity", "GET", "k", 1)
    counts.add(T0 + seconds - 1, "QueryEntity", "GET", "k", 1)
    rate = made(counts, seconds)["rate"]
    assert rate["bin_s"] == bin_s and len(rate["requests"]) == -(-seconds // bin_s) <= 1440
    assert rate["requests"][0] == 1 and rate["requests"][-1] == 1 and sum(rate["requests"]) == 2


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (None, "no such file"),
        ("{not json", "not a traffic profile (JSONDecodeError"),
        (json.dumps({"format": "other"}), f"its 'format' must be {FORMAT!r}"),
        (json.dumps({"format": FORMAT, "version": 9}), "profile version 9; this tool reads version 1"),
        (json.dumps({"format": FORMAT, "version": 1, "requests": 5}), "a traffic profile's field is missing or malformed"),
    ],
)
def test_what_is_not_a_profile_is_refused_in_one_line(tmp_path, content, said):
    path = tmp_path / "traffic.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(UsageError) as refused:
        load_profile(str(path))
    assert str(refused.value).startswith(f"--traffic {path}: ") and said in str(refused.value)
    assert "\n" not in str(refused.value)


def test_a_profile_written_is_read_back(tmp_path):
    path = fed(ProfileCounts(), {"a": 2, "b": 1}).write(
        tmp_path / "t.json", first=T0, last=T0, hashed=True, records=3, entity_bytes=512
    )
    profile = load_profile(str(path))
    assert profile["hashed_keys"] and profile["records"] == 3 and profile["requests"] == 3
