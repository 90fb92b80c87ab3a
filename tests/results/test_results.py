import copy
import csv
import json
import re
import uuid
from dataclasses import MISSING, dataclass, fields, is_dataclass
from functools import cache
from pathlib import Path
from types import NoneType, UnionType
from typing import Annotated, Union, get_args, get_origin, get_type_hints, is_typeddict

import pandas as pd
import pytest
from hdrh.histogram import HdrHistogram
from helpers import in_process, run_info
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from synthetic import environment, recorded

from loadtest.advice.search import search
from loadtest.advice.section import advice_section
from loadtest.advice.workload import Workload
from loadtest.ceiling.judge import judged
from loadtest.ceiling.plan import Plan, StepWindow
from loadtest.counting.buckets import OTHER
from loadtest.counting.request_evidence import RequestProfile
from loadtest.engines.merge import merge
from loadtest.findings.assess import assess
from loadtest.options.rules import DESIGN_FAMILIES
from loadtest.options.settings import Settings, namespace
from loadtest.results import series_frame
from loadtest.results.form import Results
from loadtest.results.mergeable import Mergeable, capture
from loadtest.results.summary import build
from loadtest.testbed.integrity import Ledger, verify
from loadtest.typed import reader as typed_reader
from loadtest.typed.column_checkers import Wrong


def test_mean_covers_the_steady_phase_and_peak_the_whole_run():
    # ramp: 10 entities/s for 5 s, steady: 50/s for 10 s
    seconds = {t: [{"op": "insert", "op_class": "PUT", "entities": 10 if t < 5 else 50}] for t in range(15)}
    results = build(recorded(seconds, steady_from=5), run_info(partition_target=100))
    (row,) = results.rows("PUT")
    assert row.mean_eps == 50.0
    assert row.peak_eps == 50.0
    assert row.ratio == 0.5
    assert row.entities == 5 * 10 + 10 * 50
    assert results.run.steady_seconds == 10


def test_a_run_shorter_than_the_window_never_has_a_peak_below_its_mean():
    seconds = {t: [{"entities": 10 if t < 2 else 100}] for t in range(8)}
    results = build(recorded(seconds, steady_from=2), run_info())
    (row,) = results.rows("GET")
    assert row.mean_eps == 100.0 and row.peak_eps == 100.0
    assert results.run.peak_window_s == 6


def test_seconds_without_requests_count_as_zero():
    results = build(recorded({0: [{"entities": 30}], 9: [{"entities": 30}]}), run_info())
    assert results.rows("GET")[0].peak_eps == 6.0  # 60 entities over a 10-second window


def test_get_and_put_add_up_to_the_partition_total_and_the_account():
    seconds = {
        t: [{"op": "read", "entities": 1}] * 3 + [{"op": "upsert", "op_class": "PUT", "entities": 1}] * 2 for t in range(10)
    }
    results = build(recorded(seconds), run_info())
    rows = {r.op_class: r for r in results.partitions}
    assert (rows["GET"].mean_eps, rows["PUT"].mean_eps, rows["ALL"].mean_eps) == (3.0, 2.0, 5.0)
    assert results.account.entities == 50 and results.account.mean_eps == 5.0


def test_errors_and_attempts_add_up():
    seconds = {0: [{"error": "ServerBusy", "attempts": 3, "throttled": 3}, {"error": "ResourceNotFound"}, {"attempts": 2}]}
    results = build(recorded(seconds), run_info())
    assert results.errors == {"ServerBusy": 1, "ResourceNotFound": 1}
    assert results.attempts == 6
    assert results.rows("GET")[0].entities == 1


def test_json_round_trip_and_contract_fields(tmp_path):
    results = build(recorded({0: [{"entities": 3}], 1: [{"op": "batch", "op_class": "PUT", "entities": 100}]}), run_info())
    results.write(tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    for name in (
        "id",
        "started",
        "duration_s",
        "target_kind",
        "table",
        "seeded",
        "partition_target",
        "account_target",
        "profile",
    ):
        assert name in data["run"]
    for row in data["partitions"]:
        assert {"partition", "op_class", "requests", "entities", "mean_eps", "peak_eps", "target", "ratio", "finding"} <= set(row)
    assert {"entities", "mean_eps", "peak_eps", "target", "ratio", "finding"} <= set(data["account"])
    assert "errors" in data and "attempts" in data and "findings" in data
    assert "timeseries" not in data and data["series"] == {"file": "series.parquet", "rows": 2, "csv": "timeseries.csv"}
    again = Results.load_file(tmp_path / "results.json")
    assert again.to_dict() == results.to_dict()
    assert Results.from_json((tmp_path / "results.json").read_text()).timeseries.empty  # the series is in its own file


def test_a_results_json_without_its_series_beside_it_says_so_in_one_line(tmp_path, monkeypatch):
    build(recorded({t: [{"entities": 1}] for t in range(3)}), run_info()).write(tmp_path)
    (tmp_path / "series.parquet").unlink()
    code, out, err = in_process(monkeypatch, "report", str(tmp_path))
    said = f"{tmp_path / 'results.json'}: its per-second series (series.parquet, 3 rows) is not beside it"
    assert code == 2 and out == "" and err.count("\n") == 1 and f"{said}; copy the run's folder whole" in err, err
    (tmp_path / "series.parquet").write_text("not parquet")
    code, out, err = in_process(monkeypatch, "report", str(tmp_path))
    assert code == 2 and out == "" and err.count("\n") == 1 and "series.parquet: not a readable Parquet file" in err, err


def test_timeseries_csv_has_one_row_per_second_partition_and_op_class(tmp_path):
    seconds = {t: [{"entities": 1}, {"op": "insert", "op_class": "PUT", "entities": 2}] for t in range(3)}
    build(recorded(seconds), run_info()).write(tmp_path)
    rows = list(csv.DictReader((tmp_path / "timeseries.csv").open()))
    assert len(rows) == 6
    assert {(r["t"], r["op_class"]) for r in rows} == {(str(t), c) for t in range(3) for c in ("GET", "PUT")}
    assert sum(int(r["entities"]) for r in rows if r["op_class"] == "PUT") == 6


def test_a_series_past_a_spreadsheets_ease_is_written_gzipped_with_the_same_rows(tmp_path, monkeypatch):
    """Past ``PLAIN_CSV_ROWS`` the spreadsheet copy is timeseries.csv.gz (pandas reads it as it is); results.json and the
    page name it, and the plain file an earlier run left in the folder goes."""
    seconds = {t: [{"entities": 1}, {"op": "insert", "op_class": "PUT", "entities": 2}] for t in range(3)}
    results = build(recorded(seconds), run_info())
    results.write(tmp_path / "plain")
    monkeypatch.setattr(series_frame, "PLAIN_CSV_ROWS", 5)
    (tmp_path / "gz").mkdir()
    (tmp_path / "gz" / "timeseries.csv").write_text("an earlier run's")
    results.write(tmp_path / "gz")
    assert sorted(p.name for p in (tmp_path / "gz").iterdir()) == ["results.json", "series.parquet", "timeseries.csv.gz"]
    pd.testing.assert_frame_equal(
        pd.read_csv(tmp_path / "gz" / "timeseries.csv.gz"), pd.read_csv(tmp_path / "plain" / "timeseries.csv")
    )
    assert json.loads((tmp_path / "gz" / "results.json").read_text())["series"]["csv"] == "timeseries.csv.gz"
    code, _, err = in_process(monkeypatch, "report", str(tmp_path / "gz"))
    assert code == 0 and "timeseries.csv.gz (one row per second" in (tmp_path / "gz" / "report.html").read_text(), err


@pytest.mark.parametrize(
    "broken, said",
    [("{}", "results.run: missing"), ("[]", "results: an object, not []"), ('{"run": {}}', "results.run.id: missing")],
)
def test_from_json_refuses_what_is_not_results(broken, said):
    with pytest.raises(ValueError, match=re.escape(said)):
        Results.from_json(broken)


def test_untracked_keys_land_in_key_ranges_that_add_up():
    seconds = {
        t: [{"partition": f"{c}{t}-{i}", "entities": 1} for c in "ab" for i in range(100)]
        + [{"partition": "hot", "entities": 500}]
        for t in range(12)
    }
    results = build(recorded(seconds, steady_from=1), run_info())
    ranges = {}
    for row in results.key_ranges:
        ranges[row["range"]] = ranges.get(row["range"], 0) + row["entities"]
    tracked = sum(r.entities for r in results.partitions if r.partition != OTHER and r.op_class == "GET")
    assert set(ranges) <= {"a", "b"} and sum(ranges.values()) + tracked == 12 * (200 + 500)
    assert results.keys["top"][0] == "hot" and results.keys["top1_share"] == pytest.approx(500 / 700, abs=0.001)


def test_retry_amplification_backoff_and_first_attempt_latency():
    env = environment()
    metrics = recorded({0: [{"ms": 10.0}] * 3}, env=env)
    for ms, first_ms, attempts, backoff in ((900.0, 8.0, 3, 0.4), (700.0, 5.0, 2, 0.2)):
        env.events.request.fire(
            request_type="read",
            name="GET point read",
            response_time=ms,
            response_length=1,
            exception=None,
            context={
                "partition": "hot",
                "op_class": "GET",
                "entities": 1,
                "attempts": attempts,
                "throttled": attempts - 1,
                "backoff_s": backoff,
                "first_ms": first_ms,
            },
        )
    results = build(metrics, run_info(settings={"retry": "fixed:3,0.6"}))
    assert results.retry == {"strategy": "fixed:3,0.6", "backoff_s": 0.6, "attempts_per_operation": (3 + 3 + 2) / 5}
    latency = results.latency["GET"]
    assert latency["p99_ms"] > 800 and latency["first_attempt_p99_ms"] < 11  # end to end vs first attempt


# --- a results.json that is not one: loadtest report and loadtest merge say what is wrong, in one line ---------------

START = 1_000.0  # the engines' clock (epoch seconds): small, so that a fuzzed second stays near the run's own
DESIGN = {"key_strategy": "set:3", "partition_key": "hot", "row_key_strategy": "sequential", "key_seed": 1, "skew": "uniform"}


def _events(t: int) -> list[dict]:
    """One second: 60 cool keys (more than the metrics track apart: key ranges), a hot one with retried, throttled and
    failed writes."""
    cool = [{"op": "read", "partition": f"{c}{i:02}", "ms": 2.0 + i % 5} for c in "abc" for i in range(20)]
    hot = [{"op": "upsert", "op_class": "PUT", "partition": "hot", "ms": 9.0, "attempts": 2, "throttled": 1}] * 5
    hot += [{"op": "read", "partition": "hot", "error": "ServerBusy", "attempts": 3, "throttled": 3, "ms": 30.0 + t}]
    return cool + hot


def engine_results(name: str, *, seconds: int = 5) -> Results:
    """One engine's run with every section its run writes: load samples and workers (one lost), the workload's request
    names, an open loop's arrivals, the read-back (a write lost) and its mergeable count."""
    env = environment()
    profile = RequestProfile.register(env)
    metrics = recorded({t: _events(t) for t in range(seconds)}, start=START, steady_from=1, env=env)
    samples = {int(START) + t: {"users": 4, "cpu": 30.0 + t, "workers_cpu": {"w1": 20.0, "w2": 25.0}} for t in range(seconds)}
    workers = {"reported": ["w1", "w2"], "lost": [{"worker": "w2", "index": 1, "lost_at_s": 4.0, "last_report_s": 3.0}]}
    settings_ = {**DESIGN, "arrival_rate": 400.0, "arrivals": "constant", "retry": "fixed:3,0.1"}
    info = run_info(target_kind="connection-string", endpoint="http://127.0.0.1:1/a", users=4, settings=settings_)
    results = build(metrics, info, samples=samples, workers=workers, workload=profile.figures())
    results.integrity = verify(Ledger(created={("hot", "u0.1"), ("hot", "u0.2")}), {("hot", "u0.1")})
    results.mergeable = capture(metrics, profile, samples, run_id="r1", engine=name)
    metrics.close()
    return assess(results)


def from_results_options(options: dict[str, str], *, peak: float) -> Workload:
    return Workload(options=options, settings=Settings.from_options(namespace(**options), offline=True), peak=peak,
                    growth=2.0, source="options")  # fmt: skip


@cache
def every_section() -> dict:
    """A results.json with every section of the form filled: two engines merged (their shares, workers, read-back,
    load), one engine's mergeable count, a ceiling search, a simulation's model and range splits, a failed step, and
    what a reading of logs counts."""
    results = merge([("a", engine_results("a")), ("b", engine_results("b"))])
    results.mergeable = engine_results("a").mergeable
    metrics = recorded({t: _events(t) for t in range(6)}, start=START)
    plan = Plan(start=100, step=100, maximum=300, step_s=3, max_p99_ms=20.0)
    windows = [
        StepWindow(index=i, offered=100 * (i + 1), users=10, spawn_rate=10, began=START + 2 * i, ended=START + 2 * i + 3)
        for i in range(2)
    ]
    results.ceiling = judged(plan, windows, True, metrics, run_info(emulator=True))
    metrics.close()
    results.simulation = {
        "model": "the throttling emulator's partition layer",
        "leaves_out": "latency",
        "step_s": 0.1,
        "budgets": {"partition_rate": 2000.0, "account_rate": 20000.0},
        "keys": 61,
        "operations": 2000,
        "elapsed_s": 0.4,
    }
    results.range_splits = [{"t": 2.0, "key": "b10", "offline_until_t": 3.5, "low": "a", "high": "c"}]
    results.incomplete = [{"step": "server-logs.kql", "error": "OSError: disk full", "at_s": 6.2}]
    results.logs = {
        "sources": ["PT1H.json"], "forms": {"diagnostic": 10}, "span": ["2026-11-24T13:00:00Z", "2026-11-24T13:00:09Z"],
        "client_request_id": "", "hashed_keys": False, "records": 10, "requests": 8, "unattributed": {"InsertEntity": 2},
        "unattributed_share": 0.25, "estimated_share": 0.0, "entity_bytes": 1024, "table_operations": {"CreateTable": 1},
        "passed": {}, "unreadable": {"not JSON": 1}, "unreadable_examples": {"not JSON": ["{oops"]}, "leaves_out": "outages",
    }  # fmt: skip
    workload = from_results_options({"key_strategy": "single"}, peak=400.0)
    results.advice = advice_section(search(workload, DESIGN_FAMILIES), elapsed_s=0.3)  # type: ignore[typeddict-item]
    data = assess(results).to_dict()
    assert all(data[name] for name in data if name not in ("schema",)), [name for name in data if not data[name]]
    return data


@cache
def engines_written() -> tuple[dict, dict]:
    return engine_results("a").to_dict(), engine_results("b").to_dict()


def nodes(data: dict) -> dict[str, dict[tuple, list[tuple]]]:
    """Every object and list in each section (the top-level field it is in), by its place in the form (a path with
    any row for its index: ``("timeseries", "*", "errors")``): the paths from the top to each."""
    found: dict[str, dict[tuple, list[tuple]]] = {}

    def walk(value, path):
        for key, inner in value.items() if isinstance(value, dict) else enumerate(value):
            if isinstance(inner, (dict, list)) and (inner or isinstance(inner, dict)):
                here = (*path, key)
                found.setdefault(here[0], {}).setdefault(tuple("*" if isinstance(p, int) else p for p in here), []).append(here)
                walk(inner, here)

    walk(data, ())
    return found


def named(path: tuple) -> str:
    """A path as the reader names it: ``results.timeseries[3].requests``."""
    steps = (f"[{p}]" if isinstance(p, int) else f".{p}" if p.isidentifier() else f"[{json.dumps(p)}]" for p in path)
    return "results" + "".join(steps)


JSON = st.recursive(  # values of every JSON type; numbers of a run's magnitudes (their types, not their sizes, are fuzzed)
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.floats(-1e9, 1e9, allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


@dataclass(frozen=True)
class Change:
    """What a fuzzed results.json has that the written one had not, said briefly (as a failing example shows it)."""

    section: str
    action: str  # delete, replace, extra (a key added), fill (a key in an empty object), append (a list item), truncate
    path: tuple = ()  # where: the object or list changed (() the whole)
    key: str | int = ""
    value: object = None
    cut: int = 0  # truncate: the characters kept

    def applied(self, data: dict) -> str:
        if self.action == "truncate":
            return json.dumps(data)[: self.cut]
        changed = copy.deepcopy(data)
        target = changed
        for step in self.path:
            target = target[step]
        if self.action == "delete":
            del target[self.key]
        elif self.action == "append":
            target.append(self.value)
        else:
            target[self.key] = self.value
        return json.dumps(changed)


@st.composite
def changes(draw, data: dict, section: str) -> Change:
    """In ``section``, at any level (the section itself, or any place of an object or a list in it, then one of them):
    a key or an item deleted or replaced with any JSON value, a key or an item added; or the file cut short."""
    places = nodes(data).get(section, {})
    place = draw(st.sampled_from([None, *sorted(places, key=str)]))
    action = draw(st.sampled_from(["delete", "replace", "extra", "truncate"]))
    if action == "truncate":
        return Change(section, "truncate", cut=draw(st.integers(0, len(json.dumps(data)) - 1)))
    if place is None:  # the section itself, a field of the whole
        if action == "extra":
            return Change(section, "extra", (), f"x{draw(st.integers(0, 99))}", draw(JSON))
        return Change(section, action, (), section, draw(JSON) if action == "replace" else None)
    path = draw(st.sampled_from(places[place]))
    target = data
    for step in path:
        target = target[step]
    if isinstance(target, list) and action == "extra":
        return Change(section, "append", path, len(target), draw(JSON))
    if isinstance(target, dict) and (action == "extra" or not target):
        return Change(section, "extra" if target else "fill", path, f"x{draw(st.integers(0, 99))}", draw(JSON))
    key = draw(st.sampled_from(sorted(target) if isinstance(target, dict) else range(len(target))))
    return Change(section, action, path, key, draw(JSON) if action == "replace" else None)


#: Every section of the form: the reader is fuzzed on each (every run covers every one); the commands on any.
SECTIONS = [f.name for f in fields(Results)]
HEALTH = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


def assert_names_the_change(said: str, change: Change) -> None:
    """What the reader said is wrong names the field changed, or one in it (a key deleted: that it is missing)."""
    path, key, action = change.path, change.key, change.action
    if action == "truncate":
        return
    changed = path if action in ("fill", "append") or action == "delete" and isinstance(key, int) else (*path, key)
    assert said.startswith(named(changed)) and said[len(named(changed))] in ".[:", (said, change)
    assert action != "delete" or isinstance(key, int) or said.startswith(f"{named(changed)}: missing"), (said, change)


def added_a_field(change: Change) -> bool:
    """A key added to an object of named fields (not to a map, nor to a section left empty): always read past."""
    return change.action == "extra" and has_fields(declared(Results, change.path))


@pytest.mark.parametrize("section", SECTIONS)
@settings(max_examples=10, deadline=None, suppress_health_check=HEALTH)
@given(st.data())
def test_every_section_is_checked_on_read_and_the_field_named(section, data):
    """In each section, at any level (the section, a row, a row's object): a key deleted or replaced by any JSON value,
    a key or an item added, the file cut short. The reader takes it (a key added, a value of the right type, an optional
    key gone) or raises one ``ValueError`` naming the field changed; never another exception."""
    change = data.draw(changes(every_section(), section))
    text = change.applied(every_section())
    whole = json.loads(text) if change.action != "truncate" else None
    if isinstance(whole, dict) and section in whole:  # the fast test of a whole column agrees with the walk
        checker = typed_reader._checker(json_hints()[section])
        try:
            checker.check(whole[section])
            walked = True
        except Wrong:
            walked = False
        assert checker.converts or checker.test([whole[section]]) == walked, change
    try:
        Results.from_json(text)
    except ValueError as err:
        event(f"{change.section}: {change.action}, named")
        assert "\n" not in str(err) and not added_a_field(change), (err, change)
        assert_names_the_change(str(err), change)
    else:
        event(f"{change.section}: {change.action}, read")


@settings(max_examples=8, deadline=None, suppress_health_check=HEALTH)
@given(st.data())
def test_report_on_a_malformed_results_json_is_one_line_exit_2_never_a_traceback(tmp_path, monkeypatch, data):
    """The same through `loadtest report`, in any section: it renders what the reader took (every reader of the report
    reads it with defaults, nothing else raises), or says in one line which field is wrong, exit 2."""
    change = data.draw(changes(every_section(), data.draw(st.sampled_from(SECTIONS))))
    folder = tmp_path / f"r{uuid.uuid4().hex[:8]}"
    folder.mkdir()
    (folder / "results.json").write_text(change.applied(every_section()))
    code, _, err = in_process(monkeypatch, "report", str(folder))
    event(f"{change.section}: {change.action}, exit {code}")
    assert code in (0, 2) and "Traceback" not in err, err
    if code == 2:
        assert err.count("\n") == 1 and "not a partition-stress results.json: " in err, err
        assert_names_the_change(err.split("not a partition-stress results.json: ", 1)[1], change)
    assert code == 0 or not added_a_field(change), err  # the contract: fields may be added freely


@settings(max_examples=6, deadline=None, suppress_health_check=HEALTH)
@given(st.data())
def test_merge_of_a_malformed_engine_is_one_line_exit_2_never_a_traceback(tmp_path, monkeypatch, data):
    """The same for `loadtest merge`, on one of two engines' results.json: every section is read (mergeable's histograms
    and sketches decoded), so the merge adds only what it can; else one line, exit 2, nothing written."""
    first, second = engines_written()
    change = data.draw(changes(second, data.draw(st.sampled_from(SECTIONS))))
    folder = tmp_path / uuid.uuid4().hex[:8]
    for name, written in (("e0", json.dumps(first)), ("e1", change.applied(second))):
        (folder / name).mkdir(parents=True)
        (folder / name / "results.json").write_text(written)
    monkeypatch.chdir(folder)
    code, _, err = in_process(monkeypatch, "merge", "e0", "e1", "--out", "m")
    event(f"{change.section}: {change.action}, exit {code}")
    assert code in (0, 1, 2) and "Traceback" not in err, err
    if code == 2:
        assert err.count("\n") == 1 and not (folder / "m").exists(), err
    else:  # merged: every output written (a failing renderer would be an INCOMPLETE step)
        merged = json.loads((folder / "m" / "results.json").read_text())
        assert not [step for step in merged["incomplete"] if not step["step"].startswith("engine ")], merged["incomplete"]
    assert code == 0 or not added_a_field(change), err


def test_the_two_cases_of_the_issue(tmp_path, monkeypatch):
    """Once `loadtest report` on timeseries rows without `requests` ended in KeyError: 'requests', and `loadtest merge`
    on a mergeable of {"version": 1} in KeyError: 'engine'."""
    data = copy.deepcopy(every_section())
    for row in data["timeseries"]:
        del row["requests"]
    (tmp_path / "results.json").write_text(json.dumps(data))
    code, _, err = in_process(monkeypatch, "report", str(tmp_path))
    assert code == 2 and err.count("\n") == 1 and "results.timeseries[0].requests: missing" in err, err
    first, second = engines_written()
    second = {**second, "mergeable": {"version": 1}}
    for name, written in (("e0", first), ("e1", second)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(written))
    monkeypatch.chdir(tmp_path)
    code, _, err = in_process(monkeypatch, "merge", "e0", "e1", "--out", "m")
    assert code == 2 and err.count("\n") == 1 and "e1: not a partition-stress results.json: results.mergeable." in err, err
    assert "missing" in err and not (tmp_path / "m").exists()


def test_an_older_series_row_without_a_tally_beside_rows_with_it_reads_as_nothing_counted():
    """The section fuzz on a fresh clone once deleted ``throttled_by`` from the first row only: the rows' records read
    it as NaN, and the reader ended in a TypeError. A key added later (``NotRequired``) reads as nothing counted."""
    data = copy.deepcopy(every_section())
    del data["timeseries"][0]["throttled_by"]
    assert all("throttled_by" in row for row in data["timeseries"][1:])  # kept beside it: the records read NaN
    results = Results.from_json(json.dumps(data))
    assert results.timeseries["throttled_by"].iloc[0] == ""
    assert len(results.timeseries) == len(data["timeseries"])


def test_report_names_the_field_that_is_wrong(tmp_path, monkeypatch):
    """Once a `run` that was a number ended in an AttributeError traceback."""
    for change, said in (
        (("run", 5), "results.run: an object, not 5"),
        (("partitions", {}), "results.partitions: a list"),
        (("ceiling", {"plan": {}}), "results.ceiling.plan.start: missing"),
        (("workers", {"reported": ["w1"], "lost": [{"worker": "w1"}]}), "results.workers.lost[0].lost_at_s: missing"),
        (("latency", {"GET": {"p50_ms": "fast"}}), 'results.latency.GET.p50_ms: a number, not "fast"'),
        (("arrivals", {"rate": 5}), "results.arrivals.arrivals: missing"),
        (("mergeable", {**every_section()["mergeable"], "engine": None}), "results.mergeable.engine: a string, not null"),
    ):
        data = copy.deepcopy(every_section())
        data[change[0]] = change[1]
        (tmp_path / "results.json").write_text(json.dumps(data))
        code, _, err = in_process(monkeypatch, "report", str(tmp_path))
        assert code == 2 and said in err and err.count("\n") == 1, err


def test_an_engines_count_that_does_not_decode_is_named_before_the_merge(tmp_path, monkeypatch):
    """A histogram or a sketch that its library cannot read (or one of another range): named on read, not a traceback
    from inside the merge."""
    base = every_section()
    for where, value, said in (
        (("metrics", "latency", 0, 2), "AAAA", "results.mergeable.metrics.latency[0][2]: an HDR histogram"),
        (("metrics", "heavy"), "bm90IGEgc2tldGNo", "results.mergeable.metrics.heavy: a frequent-items sketch"),
        (("metrics", "clock", "started"), 1e300, "results.mergeable.metrics.clock.started: a time in seconds since 1970"),
    ):
        data = copy.deepcopy(base)
        target = data["mergeable"]
        for step in where[:-1]:
            target = target[step]
        target[where[-1]] = value
        with pytest.raises(ValueError, match=re.escape(said)):
            Results.from_dict(data)
    wide = HdrHistogram(1, 10**12, 2)
    wide.record_value(10**11)  # past the metrics' hour: their merge could not add it
    data = copy.deepcopy(base)
    data["mergeable"]["metrics"]["latency"][0][2] = wide.encode().decode("ascii")
    with pytest.raises(ValueError, match=re.escape("results.mergeable.metrics.latency[0][2]: an HDR histogram")):
        Results.from_dict(data)
    data["mergeable"] = {"version": 2, "whatever": "a later form"}  # read past: merge names its version
    assert Results.from_dict(data).mergeable["version"] == 2


def json_hints() -> dict:
    """The types of results.json's fields, the series' as results.json held it before its file (what is fuzzed)."""
    older = {f.name: f.metadata["older"] for f in fields(Results) if f.metadata}
    return {**get_type_hints(Results, include_extras=True), **older}


def declared(kind, path: tuple):
    """The type the form declares at ``path`` (an optional value's own; mergeable's current version)."""
    origin, args = get_origin(kind), get_args(kind)
    if origin is Annotated:
        return declared(args[0], path)
    if origin in (Union, UnionType):
        return declared(next(a for a in args if a is not NoneType), path)
    if not path:
        return kind
    step, rest = path[0], path[1:]
    if is_dataclass(kind) or is_typeddict(kind):
        hints = json_hints() if kind is Results else get_type_hints(kind, include_extras=True)
        return declared(hints.get(step, object), rest)
    if origin is list:
        return declared(args[0], rest)
    if origin is tuple:
        return declared(args[step], rest)
    if origin is dict:
        return declared(args[1], rest)
    return object  # past what the form declares


def has_fields(kind) -> bool:
    """Whether values of ``kind`` are objects of named fields (a key added is a field read past), not maps."""
    kind = get_args(kind)[0] if get_origin(kind) in (Union, UnionType) else kind
    return is_dataclass(kind) or is_typeddict(kind)


def is_list(kind) -> bool:
    return get_origin(kind) in (list, tuple)


def oldest(kind, value, *, sections: bool):
    """``value`` as a results.json written before every optional field: each ``NotRequired`` key gone, each dataclass
    field with a default gone (with ``sections``, the sections too; else the sections stay, their optional keys gone);
    fields the form does not declare gone too."""
    origin, args = get_origin(kind), get_args(kind)
    if origin is Annotated:
        return oldest(args[0], value, sections=sections)
    if origin in (Union, UnionType):
        if value is None:
            return None
        kinds = [a for a in args if a is not NoneType]  # the one the value is (an object or a list), else the first
        return oldest(next((a for a in kinds if is_list(a) == isinstance(value, list)), kinds[0]), value, sections=sections)
    if is_dataclass(kind):
        hints, kept = get_type_hints(kind, include_extras=True), {}
        for f in fields(kind):
            needed = f.default is MISSING and (f.default_factory is MISSING or not sections and bool(value.get(f.name)))
            if f.name in value and needed:
                kept[f.name] = oldest(hints[f.name], value[f.name], sections=sections)
        return kept
    if is_typeddict(kind):
        hints = get_type_hints(kind, include_extras=True)
        return {k: oldest(hints[k], value[k], sections=sections) for k in kind.__required_keys__ if k in value}
    if origin is list:
        return [oldest(args[0], v, sections=sections) for v in value]
    if origin is tuple:
        return [oldest(a, v, sections=sections) for a, v in zip(args, value, strict=True)]
    if origin is dict:
        return {k: oldest(args[1], v, sections=sections) for k, v in value.items()}
    return value


@pytest.mark.parametrize("sections", [False, True], ids=["every optional key gone", "every optional field gone"])
def test_a_results_json_without_its_optional_fields_still_reports_and_merges(tmp_path, monkeypatch, sections):
    """The keys the form marks optional came later than their sections: a results.json written before them is read
    with defaults, by the report and by the merge alike."""
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "results.json").write_text(json.dumps(oldest(Results, every_section(), sections=sections)))
    code, _, err = in_process(monkeypatch, "report", str(tmp_path / "r"))
    assert code == 0, err
    for name, written in zip(("e0", "e1"), engines_written(), strict=True):
        older = oldest(Results, written, sections=sections)
        older["mergeable"] = oldest(Mergeable, written["mergeable"], sections=sections)  # what a merge needs, at its oldest
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(older))
    monkeypatch.chdir(tmp_path)
    code, _, err = in_process(monkeypatch, "merge", "e0", "e1", "--out", "m")
    assert code == 0, err


def test_a_results_json_written_before_the_latency_roll_up_still_reports_and_merges(tmp_path, monkeypatch):
    """A real 1-s run's results.json from main at 5774fbe (per-second latency only, no ``*_minutes``): its report
    renders, and two engines of it merge into twice its counts."""
    older = json.loads((Path(__file__).parents[1] / "data" / "results-5774fbe.json").read_text())
    assert "latency_minutes" not in older["mergeable"]["metrics"] and older["mergeable"]["metrics"]["latency"]
    for engine in ("e0", "e1"):
        copied = copy.deepcopy(older)
        copied["mergeable"]["engine"] = engine
        (tmp_path / engine).mkdir()
        (tmp_path / engine / "results.json").write_text(json.dumps(copied))
    code, _, err = in_process(monkeypatch, "report", str(tmp_path / "e0"))
    assert code == 0 and (tmp_path / "e0" / "report.html").is_file(), err
    monkeypatch.chdir(tmp_path)
    code, _, err = in_process(monkeypatch, "merge", "e0", "e1", "--out", "m")
    assert code == 0, err
    merged = json.loads((tmp_path / "m" / "results.json").read_text())
    single = {(r["partition"], r["op_class"]): r["requests"] for r in older["partitions"]}
    assert {(r["partition"], r["op_class"]): r["requests"] for r in merged["partitions"]} == {k: 2 * n for k, n in single.items()}
    assert {op: 0 < f["p99_ms"] for op, f in merged["latency"].items()} == {op: True for op in older["latency"]}
