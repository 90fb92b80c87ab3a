import csv
import json
import re

import pytest
from helpers import in_process, run_info
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from synthetic import environment, recorded

from loadtest.buckets import OTHER
from loadtest.results import Results
from loadtest.summary import build, moving_average_peak
from loadtest.verdict import assess


def test_moving_average_peak_is_the_best_10_second_window():
    series = [0.0] * 5 + [100.0] * 10 + [0.0] * 5 + [1000.0]
    assert moving_average_peak(series) == (4 * 100.0 + 1000.0) / 10  # the window ending on the spike wins
    assert moving_average_peak([4.0, 8.0]) == 6.0  # shorter than the window: its mean
    assert moving_average_peak([]) == 0.0


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
    again = Results.from_json((tmp_path / "results.json").read_text())
    assert again.to_dict() == results.to_dict()


def test_timeseries_csv_has_one_row_per_second_partition_and_op_class(tmp_path):
    seconds = {t: [{"entities": 1}, {"op": "insert", "op_class": "PUT", "entities": 2}] for t in range(3)}
    build(recorded(seconds), run_info()).write(tmp_path)
    rows = list(csv.DictReader((tmp_path / "timeseries.csv").open()))
    assert len(rows) == 6
    assert {(r["t"], r["op_class"]) for r in rows} == {(str(t), c) for t in range(3) for c in ("GET", "PUT")}
    assert sum(int(r["entities"]) for r in rows if r["op_class"] == "PUT") == 6


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


# --- a results.json that is not one: loadtest report says what is wrong, in one line -------------------------------

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
PLACES = ("", "run", "account", "partitions.0", "findings.0")  # the form's levels: the whole, its objects, a row


def small_results() -> dict:
    seconds = {t: [{"op": "read"}, {"op": "upsert", "op_class": "PUT"}] for t in range(3)}
    return assess(build(recorded(seconds), run_info())).to_dict()


def _at(data: dict, place: str):
    for part in place.split(".") if place else ():
        data = data[int(part)] if part.isdigit() else data[part]
    return data


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    place=st.sampled_from(PLACES),
    action=st.sampled_from(["delete", "replace", "extra", "truncate"]),
    pick=st.integers(0, 10**6),
    value=JSON,
)
def test_report_on_a_malformed_results_json_is_one_line_exit_2_never_a_traceback(
    tmp_path, monkeypatch, place, action, pick, value
):
    """Wrong types, missing or extra fields, a truncated file: `loadtest report` renders it (an extra field or a value
    of the right type) or says in one line what is wrong, exit 2."""
    data = small_results()
    target = _at(data, place)
    key = sorted(target)[pick % len(target)]
    text = json.dumps(data)
    if action == "delete":
        del target[key]
    elif action == "replace":
        target[key] = value
    elif action == "extra":
        target[f"x{pick}"] = value
    text = json.dumps(data) if action != "truncate" else text[: pick % len(text)]
    folder = tmp_path / f"r{pick}"
    folder.mkdir(exist_ok=True)
    (folder / "results.json").write_text(text)
    code, _, err = in_process(monkeypatch, "report", str(folder))
    assert code in (0, 2) and "Traceback" not in err, err
    if code == 2:
        assert err.count("\n") == 1 and "not a partition-stress results.json" in err, err
    if action == "extra":
        assert code == 0, err  # the contract: fields may be added freely


def test_report_names_the_field_that_is_wrong(tmp_path, monkeypatch):
    """Once a `run` that was a number ended in an AttributeError traceback."""
    for change, said in ((("run", 5), "results.run: an object, not 5"), (("partitions", {}), "results.partitions: a list")):
        data = small_results()
        data[change[0]] = change[1]
        (tmp_path / "results.json").write_text(json.dumps(data))
        code, _, err = in_process(monkeypatch, "report", str(tmp_path))
        assert code == 2 and said in err and err.count("\n") == 1, err
