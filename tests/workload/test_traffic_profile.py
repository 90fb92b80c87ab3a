"""The traffic profile from synthetic demand: the heaviest partitions by name and exactly, the rest as groups alike in
demand whose totals stay exact (also when the lightest are folded to bound memory), the rate over the span in bins
that fit a day, and a profile read back refused in one line when it is not one."""

from __future__ import annotations

import json
import math
import resource
import tempfile
from pathlib import Path

import pytest
from helpers import in_process
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from loadtest.counting.buckets import UNATTRIBUTED
from loadtest.exit_codes import UsageError
from loadtest.traffic import profile_counts
from loadtest.traffic.profile_counts import ProfileCounts
from loadtest.workload import traffic_profile as profiles
from loadtest.workload.traffic_profile import FORMAT, load_profile

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
    monkeypatch.setattr(profile_counts, "HEAVIEST", 2)
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
    monkeypatch.setattr(profile_counts, "MAX_KEYS", 8)
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
        (json.dumps({"format": FORMAT, "version": 1, "requests": 5}), "profile.span: missing"),
        (json.dumps({"format": FORMAT, "version": True}), "profile version true; this tool reads version 1"),
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


# --- a profile read against its form (issue 53) -----------------------------------------------------------------------

#: A small profile as ``ProfileCounts`` writes one: a named partition, a tail group of four keys, a batch naming none.
VALID = {
    "format": FORMAT,
    "version": 1,
    "span": {"start": T0, "seconds": 4},
    "records": 0,
    "requests": 24,
    "hashed_keys": False,
    "entity_bytes": 100,
    "rate": {"bin_s": 1, "requests": [6, 6, 6, 6]},
    "operations": [
        {"operation": "QueryEntity", "op_class": "GET", "requests": 16, "entities": 16},
        {"operation": "InsertOrMergeEntity", "op_class": "PUT", "requests": 4, "entities": 4},
        {"operation": "EntityGroupTransaction", "op_class": "PUT", "requests": 4, "entities": 20},
    ],
    "partitions": [{"key": "hot", "demand": {"GET": {"requests": 12, "entities": 12}, "PUT": {"requests": 4, "entities": 4}}}],
    "tail": [{"requests_at_least": 1, "keys": 4, "demand": {"GET": {"requests": 4, "entities": 4}}}],
    "unattributed": {"PUT": {"requests": 4, "entities": 20}},
}


DELETE = object()


def _set(profile: dict, path: tuple, value: object) -> dict:
    """``profile`` with the field at ``path`` set to ``value`` (``DELETE``: removed; one past a list's end: added)."""
    *inner, last = path
    place = profile
    for step in inner:
        place = place[step]
    if value is DELETE:
        del place[last]
    elif isinstance(place, list) and last == len(place):
        place.append(value)
    else:
        place[last] = value
    return profile


def mutated(path: tuple, value: object) -> dict:
    """``VALID`` with one field changed (``_set``)."""
    return _set(json.loads(json.dumps(VALID)), path, value)


#: Each malformed profile issue 53 reports (and its neighbours), and what the one line says of it.
MALFORMED = [
    (("operations",), DELETE, "profile.operations: missing"),
    (("requests",), math.inf, "profile.requests: a whole number"),
    (("requests",), "5", 'profile.requests: a whole number, not "5"'),
    (("requests",), 10**400, "profile.requests: a whole number"),
    (("requests",), 25, "profile.rate.requests ask 24 requests, the profile's requests are 25: each counts the same"),
    (("tail", 0, "demand", "GET", "requests"), 5, "profile.partitions, tail and unattributed ask 25 requests"),
    (("tail", 0, "keys"), "3", 'profile.tail[0].keys: a whole number, not "3"'),
    (("tail", 0, "keys"), 0, "profile.tail[0].keys: a whole number from 1 to 9,007,199,254,740,992, not 0"),
    (("partitions", 0, "demand", "GET", "requests"), -1, "profile.partitions[0].demand.GET.requests: a number from 0"),
    (("partitions", 0, "demand", "GET", "entities"), math.nan, "profile.partitions[0].demand.GET.entities: a number"),
    (("partitions", 0, "demand", "ALL"), {"requests": 1, "entities": 1}, "profile.partitions[0].demand"),
    (("partitions", 0, "key"), None, "profile.partitions[0].key: a string, not null"),
    (("partitions", 1), VALID["partitions"][0], "profile.partitions[1].key: each partition named once"),
    (("rate", "requests"), [0, 0, 0, 0], "profile.rate.requests: 1 to 1,440 bins, a request in one at least, not [0, 0, 0, 0]"),
    (("rate", "requests"), [1] * 10, "profile.rate.requests: 10 bins of 1 s cover 10 s; a span of 4 s takes 4"),
    (("rate", "bin_s"), math.nan, "profile.rate.bin_s"),
    (("span", "seconds"), 10**12, "profile.span.seconds: a whole number of seconds from 1 to"),
    (("span", "start"), 253_402_300_799, "profile.span: a span that ends before the year 10000"),
    (("entity_bytes",), 2**40, "profile.entity_bytes"),
    (("unattributed",), [], "profile.unattributed: an object, not []"),
]


@pytest.mark.parametrize(("path", "value", "said"), MALFORMED, ids=[said.split(":")[0] for *_, said in MALFORMED])
def test_a_malformed_profile_is_refused_naming_its_field(tmp_path, path, value, said):
    file = tmp_path / "traffic.json"
    file.write_text(json.dumps(mutated(path, value)))
    with pytest.raises(UsageError) as refused:
        load_profile(str(file))
    assert str(refused.value).startswith(f"--traffic {file}: ") and said in str(refused.value)
    assert "\n" not in str(refused.value)


def test_a_profile_name_with_a_newline_is_shown_escaped_in_one_line(tmp_path):
    file = tmp_path / "traffic\n.json"
    with pytest.raises(UsageError) as refused:
        load_profile(str(file))
    assert str(refused.value).startswith(f"--traffic {str(file)!r}: no such file") and "\n" not in str(refused.value)


def test_a_key_split_in_shares_is_read_as_advise_verify_writes_it(tmp_path):
    """A design that spreads a key over N (``advise --verify``'s sharded profile) gives each a fraction of its demand."""
    hot = VALID["partitions"][0]
    shares = [{"key": f"hot-b{j}", "demand": {c: {k: v / 5 for k, v in d.items()} for c, d in hot["demand"].items()}}
              for j in range(5)]  # fmt: skip
    file = tmp_path / "traffic.json"
    file.write_text(json.dumps(VALID | {"partitions": shares}))
    assert load_profile(str(file))["partitions"][0]["demand"]["GET"]["requests"] == 12 / 5


def test_a_profile_whose_logs_named_no_partition_says_so(tmp_path):
    """Not "--seed-entities 0" (a flag nobody gave): what is wrong with the profile."""
    file = tmp_path / "traffic.json"
    unattributed = {"PUT": {"requests": 24, "entities": 24}}  # the logs named none: every request is unattributed
    file.write_text(json.dumps(mutated(("partitions",), []) | {"tail": [], "unattributed": unattributed}))
    with pytest.raises(UsageError, match="its partitions and tail ask no request: the logs named no partition"):
        load_profile(str(file))


def test_the_valid_profile_is_read_and_a_deep_or_huge_file_is_refused(tmp_path):
    file = tmp_path / "traffic.json"
    file.write_text(json.dumps(VALID))
    assert load_profile(str(file)) == VALID
    file.write_text('{"format": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(UsageError, match="not a traffic profile"):
        load_profile(str(file))
    with file.open("r+b") as sparse:
        sparse.truncate(profiles.MAX_PROFILE_BYTES + 1)  # a sparse file: nothing is read of it
    with pytest.raises(UsageError, match=f"a traffic profile is at most {profiles.MAX_PROFILE_BYTES:,} bytes"):
        load_profile(str(file))


# --- the fuzz: profiles mutated field by field, replayed by simulate and run ----------------------------------------


def _paths(value: object, at: tuple = ()) -> list[tuple]:
    """Every field of ``value`` (objects' keys, lists' items), inner ones too."""
    inner = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    return [path for key, item in inner for path in ((*at, key), *_paths(item, (*at, key)))]


PATHS = _paths(VALID)
MEMORY_BOUND_KIB = 256 * 1024  # what one replay of a small profile may add to the process's peak: its form bounds every size
DEEP = "\x00deep"  # written as JSON nested 100,000 deep
#: The edges of every JSON type: numbers past a float and int64, NaN and infinities, names that are paths or markup.
EDGES = [
    *(None, True, False, 0, -1, 1, 0.5, -0.0, 1e308, math.nan, math.inf, -math.inf),
    *(2**53, 2**53 + 1, 2**63, 10**400, -(10**400)),
    *("", "5", "GET", "ALL", "..", "../x", "/etc/passwd", "<img src=x onerror=alert(1)>", "$^^$", "a\nb", "a/b", "x" * 5000),
    *([], {}, [[[]]], [0] * 2000, {"GET": {}}, {"requests": 1}, DEEP),
]
HOSTILE = st.one_of(
    st.sampled_from(EDGES),
    st.integers(),
    st.floats(),
    st.text(max_size=8),
    st.lists(st.integers(min_value=-2, max_value=10**9), max_size=6),
    st.recursive(
        st.none() | st.integers() | st.text(max_size=3),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
        max_leaves=6,
    ),
)
PLAUSIBLE = st.one_of(st.integers(min_value=0, max_value=10**6), st.sampled_from([0, 1, 60, 86_400, 2**53]))  # past the form
MUTATION = st.tuples(st.sampled_from(PATHS), st.one_of(st.just(DELETE), HOSTILE, HOSTILE, PLAUSIBLE, PLAUSIBLE))


def _no_charts(results: object) -> dict[str, str]:
    """The report without its charts (drawing them is most of a simulation's second; they read no profile)."""
    return dict.fromkeys(("entities", "heat", "peaks", "latency", "errors"), "")


@settings(max_examples=80, suppress_health_check=list(HealthCheck))
@given(mutations=st.lists(MUTATION, min_size=1, max_size=3), command=st.sampled_from(["simulate", "run"]))
def test_fuzz_a_mutated_profile_is_replayed_or_refused_in_one_line_and_nothing_is_written_beside_the_output(mutations, command):
    import loadtest.report.charts  # loads matplotlib: only when the fuzz runs

    profile = json.loads(json.dumps(VALID))
    for path, value in mutations:
        try:
            profile = _set(profile, path, value)
        except (KeyError, IndexError, TypeError):  # an earlier mutation took the field's place away
            continue
    text = json.dumps(profile).replace(json.dumps(DEEP), "[" * 100_000 + "]" * 100_000)
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        patch.setattr(loadtest.report.charts, "all_charts", _no_charts)
        Path("traffic.json").write_text(text)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB: the process's peak so far
        code, stdout, stderr = in_process(patch, command, "--traffic", "traffic.json", "--out", "out")
        grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        beside = {p for p in Path(".").rglob("*") if p.parts[0] not in ("out", "traffic.json")}
        made = Path("out").exists()
    event(f"{command}: {code}")
    assert "Traceback" not in stdout + stderr and not beside, (stderr, beside)
    assert grew < MEMORY_BOUND_KIB, f"a replay raised the process's peak by {grew:,} KiB"
    if code == 2:
        assert stderr.count("\n") == 1 and stderr.startswith("loadtest: error: ") and not made, stderr
    else:
        assert code in (0, "launched"), (code, stderr)
