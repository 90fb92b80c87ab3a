"""Hostile results for ``loadtest report`` and ``loadtest merge``: results.json and its parquet sidecars as anyone may
have made them. Each ends in exit 0, or in exit 2 with one line naming what is wrong; never a traceback, never memory
without bound, never a file outside the output folder. Keys are drawn as typed (never as mathtext) and are never a
spreadsheet's formula in timeseries.csv."""

from __future__ import annotations

import copy
import csv
import json
import math
import resource
import tempfile
from functools import cache
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import in_process
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_results import engine_results

from loadtest.outputs import BUCKETS_FILE, RESULTS_FILE, SERIES_FILE, TIMESERIES_FILE
from loadtest.results.series_schema import MAX_SPAN_S

PREFIX = "loadtest: error: "


@cache
def engine_files(name: str) -> dict[str, bytes]:
    """An engine's run as it writes it (results.json, series.parquet, buckets.parquet, timeseries.csv), made once;
    ``long``: the same, its last second 700 s after the start (a run whose findings and charts say UTC too)."""
    if name.startswith("long "):
        return _lengthened(engine_files(name.removeprefix("long ")))
    with tempfile.TemporaryDirectory() as folder:
        engine_results(name).write(Path(folder))
        return {path.name: path.read_bytes() for path in Path(folder).iterdir()}


def _lengthened(files: dict[str, bytes]) -> dict[str, bytes]:
    data = json.loads(files[RESULTS_FILE])
    data["run"]["duration_s"] += 700
    data["mergeable"]["metrics"]["clock"]["stopped"] += 700
    series = pq.read_table(pa.BufferReader(files[SERIES_FILE]))
    seconds, wall = series.column("t").to_pylist(), series.column("second").to_pylist()
    seconds[-1], wall[-1] = seconds[-1] + 700, wall[-1] + 700
    series = replaced(replaced(series, "t", pa.array(seconds, pa.int64())), "second", pa.array(wall, pa.int64()))
    sink = pa.BufferOutputStream()
    pq.write_table(series, sink)
    return {**files, RESULTS_FILE: json.dumps(data).encode(), SERIES_FILE: sink.getvalue().to_pybytes()}


def written(folder: Path, name: str = "a", *, data: dict | str | None = None, **tables: pa.Table | None) -> Path:
    """An engine's folder (``name``: a, b, long a, long b): its files, results.json as ``data`` (an object, or raw
    text), a parquet sidecar as a table given (``series``/``buckets``; None: left out)."""
    folder.mkdir(parents=True, exist_ok=True)
    for file, content in engine_files(name).items():
        (folder / file).write_bytes(content)
    if data is not None:
        (folder / RESULTS_FILE).write_text(data if isinstance(data, str) else json.dumps(data))
    for kind, table in tables.items():
        path = folder / {"series": SERIES_FILE, "buckets": BUCKETS_FILE}[kind]
        if table is None:
            path.unlink()
        else:
            pq.write_table(table, path)
    return folder


def results_of(name: str = "a") -> dict:
    return json.loads(engine_files(name)[RESULTS_FILE])


def table_of(file: str, name: str = "a") -> pa.Table:
    return pq.read_table(pa.BufferReader(engine_files(name)[file]))


def replaced(table: pa.Table, column: str, values: pa.Array | list) -> pa.Table:
    array = values if isinstance(values, pa.Array) else pa.array(values)
    return table.set_column(table.schema.get_field_index(column), column, array)


def files_under(root: Path) -> dict[Path, int]:
    return {path: path.stat().st_mtime_ns for path in root.rglob("*") if path.is_file()}


def report(monkeypatch, folder: Path) -> tuple[int | str, str]:
    """``loadtest report FOLDER`` from the folder above it (where a file written by a relative path would land)."""
    monkeypatch.chdir(folder.parent)
    code, _, err = in_process(monkeypatch, "report", str(folder))
    return code, err


def merge(monkeypatch, tmp_path: Path, first: Path, second: Path) -> tuple[int | str, str]:
    monkeypatch.chdir(tmp_path)
    code, _, err = in_process(monkeypatch, "merge", str(first), str(second), "--out", str(tmp_path / "m"))
    return code, err


def assert_one_line(code: int | str, err: str, *said: str) -> None:
    """Exit 2, one line on stderr that says each of ``said``."""
    assert code == 2 and err.startswith(PREFIX) and err.count("\n") == 1 and "Traceback" not in err, (code, err)
    for words in said:
        assert words in err, (words, err)


def raw(data: dict, where: tuple, text: str) -> str:
    """results.json's text with the value at ``where`` replaced by ``text`` as it stands (JSON that ``json.dumps``
    does not write: 10^400, NaN, nesting past Python's recursion)."""
    changed, mark = copy.deepcopy(data), "\x00hostile\x00"
    target = changed
    for step in where[:-1]:
        target = target[step]
    target[where[-1]] = mark
    return json.dumps(changed).replace(json.dumps(mark), text)


# --- 1. what ended in a traceback -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "where, text, said",
    [
        (("account", "mean_eps"), "1" + "0" * 400, "results.account.mean_eps: a number"),
        (("partitions", 0, "requests"), str(2**64), "results.partitions[0].requests: a whole number"),
        (("run", "partition_target"), str(-(2**63) - 1), "results.run.partition_target: a whole number"),
    ],
)
def test_a_number_too_large_for_its_type_is_refused_in_one_line(tmp_path, monkeypatch, where, text, said):
    """Once `account.mean_eps` = 10^400 ended in OverflowError (int too large to convert to float)."""
    code, err = report(monkeypatch, written(tmp_path / "r", data=raw(results_of(), where, text)))
    assert_one_line(code, err, said)
    second = written(tmp_path / "b", "b", data=raw(results_of("b"), where, text))
    code, err = merge(monkeypatch, tmp_path, written(tmp_path / "a"), second)
    assert_one_line(code, err, said)
    assert not (tmp_path / "m").exists()


def test_json_nested_past_the_parsers_depth_is_refused_in_one_line(tmp_path, monkeypatch):
    """Once JSON nested 200,000 deep ended in RecursionError."""
    deep = raw(results_of(), ("run", "settings"), "[" * 200_000 + "]" * 200_000)
    code, err = report(monkeypatch, written(tmp_path / "r", data=deep))
    assert_one_line(code, err, "nested")
    deep_b = raw(results_of("b"), ("run", "settings"), "[" * 200_000 + "]" * 200_000)
    code, err = merge(monkeypatch, tmp_path, written(tmp_path / "a"), written(tmp_path / "b", "b", data=deep_b))
    assert_one_line(code, err, "nested")


@pytest.mark.parametrize("series", [5, [1], {"file": SERIES_FILE, "rows": [1]}, {"file": SERIES_FILE, "rows": "3"}])
def test_a_series_entry_of_the_wrong_type_is_refused_in_one_line(tmp_path, monkeypatch, series):
    """Once `series` of the wrong type with no parquet beside it ended in TypeError."""
    data = {**results_of(), "series": series}
    code, err = report(monkeypatch, written(tmp_path / "r", data=data, series=None))
    assert_one_line(code, err, "results.series")


def test_an_inline_timeseries_second_beyond_int64_is_refused_in_one_line(tmp_path, monkeypatch):
    """Once a results.json holding its rows (before series.parquet) with `t` = 2^70 ended in OverflowError."""
    from loadtest.results import series_frame

    data = results_of()
    rows = series_frame.records(series_frame.read(written(tmp_path / "src") / SERIES_FILE))
    del data["series"]
    data["timeseries"] = rows
    text = raw(data, ("timeseries", 0, "t"), str(2**70))
    code, err = report(monkeypatch, written(tmp_path / "r", data=text, series=None))
    assert_one_line(code, err, "results.timeseries[0].t: a whole number")


@pytest.mark.parametrize(
    "column, values, said",
    [
        ("errors", lambda n: ["not json"] * n, "column 'errors'"),
        ("throttled_by", lambda n: ['{"partition": "x"}'] * n, "column 'throttled_by'"),
        ("users", lambda n: ["x"] * n, "column 'users'"),
        ("requests", lambda n: pa.array([None] * n, pa.int64()), "column 'requests'"),
        ("p50_ms", lambda n: ["fast"] * n, "column 'p50_ms'"),
        ("partition", lambda n: pa.array([None] * n, pa.string()), "column 'partition'"),
        ("op_class", lambda n: ["POST"] * n, "column 'op_class'"),
    ],
)
def test_a_series_parquet_column_of_the_wrong_form_is_refused_in_one_line(tmp_path, monkeypatch, column, values, said):
    """Once `errors` not JSON ended in JSONDecodeError, and `users` as text in ArrowTypeError while drawing."""
    series = table_of(SERIES_FILE)
    code, err = report(monkeypatch, written(tmp_path / "r", series=replaced(series, column, values(series.num_rows))))
    assert_one_line(code, err, SERIES_FILE, said)


def test_a_wall_clock_at_the_end_of_datetimes_range_is_drawn_without_a_traceback(tmp_path, monkeypatch):
    """A series whose wall-clock seconds end at 9999-12-31 (each a date), 700 s long (a UTC axis along the top): its
    ticks past the year 9999 once ended the report in ValueError (year 10000 is out of range); a logs' run started
    then, in OverflowError (date value out of range) in the page's first words."""
    from loadtest.results.schema import EPOCH_END

    series = table_of(SERIES_FILE)
    seconds = series.column("t").to_pylist()
    seconds[-1] = 700
    series = replaced(series, "t", pa.array(seconds, pa.int64()))
    series = replaced(series, "second", pa.array([EPOCH_END - 1] * series.num_rows, pa.int64()))
    code, err = report(monkeypatch, written(tmp_path / "r", series=series))
    assert code == 0, err
    data = results_of()
    data["run"] |= {"started": "9999-12-31T23:59:59+00:00", "target_kind": "logs"}
    data["logs"] = {
        "sources": ["PT1H.json"], "forms": {}, "span": ["9999-12-31T23:59:59Z"], "client_request_id": "",
        "hashed_keys": False, "records": 1, "requests": 1, "unattributed": {}, "unattributed_share": 0.0,
        "estimated_share": 0.0, "entity_bytes": 1, "table_operations": {}, "passed": {}, "unreadable": {},
        "unreadable_examples": {}, "leaves_out": "",
    }  # fmt: skip
    code, err = report(monkeypatch, written(tmp_path / "logs", data=data))
    assert code == 0, err


def test_engines_whose_clock_ends_at_datetimes_last_date_merge_without_a_traceback(tmp_path, monkeypatch):
    """Two engines of a long run (its findings say their seconds in UTC too) on a clock in 9999's last hour, a worker
    lost after it: the finding once failed the merge (exit 1) in ValueError (year 10000 is out of range)."""
    from loadtest.results.schema import EPOCH_END

    folders = []
    for name in "ab":
        data = results_of(name)
        clock, mergeable = data["mergeable"]["metrics"]["clock"], data["mergeable"]
        shift = int(EPOCH_END - 2000 - clock["started"])
        clock.update(started=clock["started"] + shift, stopped=clock["stopped"] + shift + 700, steady_from=None)
        mergeable["samples"]["second"] = [second + shift for second in mergeable["samples"]["second"]]
        for name_ in ("latency", "corrected"):
            mergeable["metrics"][name_] = [[second + shift, *rest] for second, *rest in mergeable["metrics"][name_]]
        data["workers"]["lost"][0]["lost_at_s"] = 5000.0
        buckets = table_of(BUCKETS_FILE, name)
        seconds = pa.array([second + shift for second in buckets.column("second").to_pylist()], pa.int64())
        folders.append(written(tmp_path / name, name, data=data, buckets=replaced(buckets, "second", seconds)))
    code, err = merge(monkeypatch, tmp_path, *folders)
    assert code == 0, err
    assert "after 9999" in (tmp_path / "m" / RESULTS_FILE).read_text()


@pytest.mark.parametrize(
    "where, value, said",
    [
        (("current", "ratio"), "x", 'results.advice.current.ratio: a number, not "x"'),
        (("current", "simulated"), {}, "results.advice.current.simulated.served_share: missing"),
        (("designs", 0, "curve"), [[1, "x"]], "results.advice.designs[0].curve[0][1]: a number"),
        (("designs", 0, "cost"), {}, "results.advice.designs[0].cost"),
        (("designs", 0, "cost", "ops"), [{"op": "read"}], "results.advice.designs[0].cost.ops[0].per_s: missing"),
        (("designs", 2), {}, "results.advice.designs[2].family: missing"),
        (("partition_target",), 0, "results.advice.partition_target: a positive number"),
    ],
)
def test_an_advice_section_of_the_wrong_form_is_refused_in_one_line(tmp_path, monkeypatch, where, value, said):
    """`loadtest advise`'s section held its designs as objects of anything: a ratio of "x" once ended the report in
    ValueError (could not convert string to float), a design without a family in KeyError, a cost without its figures
    in TypeError while the page was rendered. What the report reads of it is declared, and checked on read."""
    from test_results import every_section

    data = copy.deepcopy(every_section())
    target = data["advice"]
    for step in where[:-1]:
        target = target[step]
    target[where[-1]] = value
    (tmp_path / RESULTS_FILE).write_text(json.dumps(data))
    code, err = report(monkeypatch, tmp_path)
    assert_one_line(code, err, said)


# --- 2. keys drawn as text, never as mathtext -----------------------------------------------------------------------

MATH = "$^^$"  # a PartitionKey Azure takes, and mathtext cannot parse


def test_a_key_of_dollars_is_drawn_as_typed_in_every_chart(tmp_path, monkeypatch):
    """Once the PartitionKey `$^^$` ended the report in matplotlib's ParseSyntaxException: report.html lost for a key
    the service accepts. Every string drawn is text: keys, key ranges, op classes' labels, strategies, families."""
    from matplotlib.text import Text

    from loadtest.report import canvas, ceiling_chart, charts, designs_chart, heat_map
    from loadtest.results.comparison import Comparison, StrategyOutcome

    data = results_of()
    for row in data["partitions"]:
        row["partition"] = row["partition"].replace("hot", MATH)
    data["key_ranges"] = [{**r, "range": "$"} for r in data["key_ranges"]]
    series = table_of(SERIES_FILE)
    keys = [p.replace("hot", MATH) for p in series.column("partition").to_pylist()]
    folder = written(tmp_path / "r", data=data, series=replaced(series, "partition", keys))

    figures: list = []
    image = canvas.image

    def kept(fig) -> str:
        figures.append(fig)
        return image(fig)

    for module in (canvas, ceiling_chart, charts, heat_map, designs_chart):
        monkeypatch.setattr(module, "image", kept)
    code, err = report(monkeypatch, folder)
    assert code == 0, err
    outcomes = [StrategyOutcome(strategy=f"template:{MATH}{i}", run_dir="", exit_code=0, hottest_peak_eps=5.0) for i in "ab"]
    charts.strategy_peaks(Comparison(strategies=outcomes, partition_target=2000, settings={}))
    advice = {
        "partition_target": 2000, "headroom": 0.8, "current": {"ratio": 2.0}, "chosen": MATH,
        "judged_at_operations_per_s": 4000, "designs": [{"family": MATH, "curve": [[1, 4000.0], [2, 2000.0]]}],
    }  # fmt: skip
    designs_chart.designs_chart(advice)
    steps = [
        {"offered_per_s": 10.0 * k, "served_per_s": 10.0 * k, "entities_per_s": 10.0 * k, "p99_ms": 5.0,
         "corrected_p99_ms": 6.0, "good": k < 2}
        for k in (1, 2)
    ]  # fmt: skip
    fake = type("R", (), {"ceiling": {"steps": steps, "ceiling": steps[0], "limited_by": MATH, "plan": {"max_p99_ms": 9}}})
    fake.run = type("Run", (), {"partition_target": 2000})
    ceiling_chart.ceiling_steps(fake)  # type: ignore[arg-type]
    shown = [
        t._preprocess_math(t.get_text())  # noqa: SLF001 -- what matplotlib draws: (the text, whether as mathtext)
        for fig in figures
        for t in fig.findobj(Text)
        if "$" in t.get_text()
    ]
    assert shown and not [s for s in shown if s[1]], shown  # nothing as mathtext
    texts = {s[0] for s in shown}
    assert {f"{MATH} GET", f"template:{MATH}a", MATH, f"gave way: {MATH}"} <= texts | {t.split(" (")[0] for t in texts}, texts


# --- 3. sizes refused at the edge -----------------------------------------------------------------------------------


@pytest.mark.parametrize("t", [10**11, MAX_SPAN_S + 1, -MAX_SPAN_S - 1])
def test_a_series_that_spans_past_the_bound_is_refused_naming_it(tmp_path, monkeypatch, t):
    """A row at t = 10^11 once allocated zeros of partitions x 10^11 (predicted; refused here with a small file)."""
    series = table_of(SERIES_FILE)
    seconds = series.column("t").to_pylist()
    seconds[-1] = t
    code, err = report(monkeypatch, written(tmp_path / "r", series=replaced(series, "t", pa.array(seconds, pa.int64()))))
    assert_one_line(code, err, SERIES_FILE, f"{MAX_SPAN_S:,} s")


def test_an_engine_whose_clock_spans_past_the_bound_is_refused_naming_it(tmp_path, monkeypatch):
    """An engine whose clock spans 2.5 x 10^11 s once made the merge's dense arrays that long (predicted)."""
    data = results_of("b")
    clock = data["mergeable"]["metrics"]["clock"]
    clock["started"], clock["stopped"] = 1.0, 2.5e11
    code, err = merge(monkeypatch, tmp_path, written(tmp_path / "a"), written(tmp_path / "b", "b", data=data))
    assert_one_line(code, err, "results.mergeable.metrics.clock", f"{MAX_SPAN_S:,} s")
    assert not (tmp_path / "m").exists()


def test_engines_whose_clocks_together_span_past_the_bound_are_refused_naming_it(tmp_path, monkeypatch):
    """Each engine's clock short, the two far apart: the merge's arrays would span both."""
    data = results_of("b")
    clock = data["mergeable"]["metrics"]["clock"]
    shift = MAX_SPAN_S + 10
    clock["started"], clock["stopped"] = clock["started"] + shift, clock["stopped"] + shift
    clock["steady_from"] = clock["steady_from"] and clock["steady_from"] + shift
    code, err = merge(monkeypatch, tmp_path, written(tmp_path / "a"), written(tmp_path / "b", "b", data=data))
    assert_one_line(code, err, f"{MAX_SPAN_S:,} s")
    assert not (tmp_path / "m").exists()


def test_seconds_of_the_run_past_the_bound_are_refused_naming_it(tmp_path, monkeypatch):
    """A key range's second at 10^11 once allocated the heat map's 745 GiB; an engine's key range far from its clock,
    the merged report's; a worker lost at 1e308 s or a step failed then, in a run past 600 s (its seconds said in UTC
    too), ended the merge in OverflowError (timestamp out of range)."""
    data = results_of()
    data["key_ranges"][0]["t"] = 10**11
    code, err = report(monkeypatch, written(tmp_path / "r", data=data))
    assert_one_line(code, err, "results.key_ranges[0].t: a second of the run", f"{MAX_SPAN_S:,} s")
    first = written(tmp_path / "a")
    for i, (change, said) in enumerate(
        [
            (lambda d: d["mergeable"]["metrics"].update(ranges=[[10**11, "c", 5]]), "results.mergeable.metrics.ranges[0][0]"),
            (lambda d: d["workers"]["lost"][0].update(lost_at_s=1e308), "results.workers.lost[0].lost_at_s"),
            (lambda d: d.update(incomplete=[{"step": "x", "error": "y", "at_s": 1e308}]), "results.incomplete[0].at_s"),
        ]
    ):
        data = results_of("b")
        data["mergeable"]["metrics"]["clock"]["stopped"] += 700  # a long run: its findings say their seconds in UTC
        change(data)
        code, err = merge(monkeypatch, tmp_path, first, written(tmp_path / f"b{i}", "b", data=data))
        assert_one_line(code, err, said)


# --- 4. timeseries.csv: no formulas ---------------------------------------------------------------------------------

FORMULAS = ["=1+1", "+cmd", "-2+3", "@SUM(A1)", "\tx", "\rx"]


def test_a_key_that_a_spreadsheet_reads_as_a_formula_is_quoted_in_the_csv_only(tmp_path):
    """A key beginning with = + - @ (tab, carriage return) is a formula when a spreadsheet opens timeseries.csv: there
    it begins with a single quote, as OWASP advises; series.parquet and results.json keep it exact."""
    from loadtest.results import series_frame

    frame = series_frame.read(written(tmp_path / "src") / SERIES_FILE).head(len(FORMULAS)).copy()
    frame["partition"] = FORMULAS
    frame["errors"] = ['{"=HYPERLINK(1)":1}', *[""] * (len(FORMULAS) - 1)]
    series_frame.write_csv(frame, tmp_path)
    series_frame.write(frame, tmp_path / SERIES_FILE)
    with (tmp_path / TIMESERIES_FILE).open(newline="") as file:
        rows = list(csv.DictReader(file))
    assert [row["partition"] for row in rows] == [f"'{key}" for key in FORMULAS]
    assert rows[0]["errors"] == "'=HYPERLINK(1):1"
    assert rows[0]["op_class"] == frame["op_class"].iloc[0]  # text that is no formula stays as it is
    again = series_frame.read(tmp_path / SERIES_FILE)
    assert list(again["partition"]) == FORMULAS and again["errors"].iloc[0] == '{"=HYPERLINK(1)":1}'


# --- 5. fuzzing: every field, every column ---------------------------------------------------------------------------

NUMBERS = ["1" + "0" * 400, str(2**63), str(2**64), str(-(2**63) - 1), "1e999", "-1e999", "NaN", "Infinity", "-Infinity",
           str(2**63 - 1), str(-(2**63)), str(10**11), str(-(10**11)), str(MAX_SPAN_S + 1), "-1", "0", "0.5", "-1e308",
           "1e308", "1e-300"]  # fmt: skip
TEXTS = ["..", "../../escaped", "/etc/passwd", 'say "hi"', "line\nbreak\r\n", "<img src=x onerror=alert(1)>", MATH, "=1+1",
         "x" * 5000, "", "\u0000"]  # fmt: skip
SHAPES = ["null", "true", "[]", "{}", '[1, "x"]', '{"x": 1}', "[" * 100_000 + "]" * 100_000, "[" * 500 + "]" * 500,
          '{"a": ' * 300 + "1" + "}" * 300]  # fmt: skip
#: Raw JSON texts of every kind: numbers past their types, strings from anyone, other types, nesting.
HOSTILE = NUMBERS + [json.dumps(t) for t in TEXTS] + SHAPES


def hostile(data: dict, where: tuple) -> st.SearchStrategy[str]:
    """A hostile value for the place ``where``: half the time of its own kind (a string for a string, a number for a
    number: what the reader takes, and the report then draws), else of any."""
    value: object = data
    for step in where:
        value = value[step]  # type: ignore[index]
    own = (
        [json.dumps(t) for t in TEXTS] if isinstance(value, str)
        else NUMBERS if isinstance(value, (int, float)) and not isinstance(value, bool)
        else HOSTILE
    )  # fmt: skip
    return st.sampled_from(own) | st.sampled_from(HOSTILE)


def places(data: object, path: tuple = ()) -> list[tuple]:
    """Every place in a results.json (each key of each object; a list's first two items), by its path."""
    found = [path] if path else []
    items = data.items() if isinstance(data, dict) else enumerate(data[:2]) if isinstance(data, list) else []
    for key, inner in items:
        found += places(inner, (*path, key))
    return found


@cache
def places_of(name: str) -> list[tuple]:
    return places(results_of(name))


def assert_contract(code: int | str, err: str) -> None:
    """Exit 0, or exit 2 with one line; never a traceback."""
    assert "Traceback" not in err and code in (0, 2), (code, err[-2000:])
    assert code == 0 or (err.startswith(PREFIX) and err.count("\n") == 1), err


def peak_mb() -> float:
    """This process's peak resident memory so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


#: Memory a case may add to the process's peak: a report of the run drawn is some tens of megabytes.
CASE_MB = 300


def run_command(monkeypatch, root: Path, command: str, mutated: Path, intact: str) -> tuple[int | str, str]:
    """``report`` on ``mutated``, or ``merge`` of the ``intact`` engine and ``mutated``: the contract held; no file
    written or changed but in the output folder (report: report.html beside results.json; merge: --out), none on exit
    2; the process's peak memory grown by at most ``CASE_MB``."""
    first = written(root / "intact", intact) if command == "merge" else None
    before, peak = files_under(root), peak_mb()
    if command == "report":
        code, err = report(monkeypatch, mutated)
    else:
        code, err = merge(monkeypatch, root, first, mutated)
    after = files_under(root)
    changed = {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}
    allowed = {mutated / "report.html"} if command == "report" else {p for p in changed if root / "m" in p.parents}
    assert_contract(code, err)
    assert changed <= (allowed if code == 0 else set()), (changed, err)
    assert peak_mb() - peak <= CASE_MB, (peak_mb() - peak, err)
    return code, err


HEALTH = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


COMMANDS = st.sampled_from(["report", "merge"])
LENGTHS = st.sampled_from(["", "long "])  # a run of 5 s, or past 600 s (its findings and charts say UTC too)


@settings(max_examples=10, deadline=None, suppress_health_check=HEALTH)
@given(data=st.data(), command=COMMANDS, length=LENGTHS)
def test_results_json_with_any_field_mutated_is_reported_or_refused_in_one_line(
    tmp_path_factory, monkeypatch, data, command, length
):
    """Any field of results.json (any section, any depth, the series' entry too) as a hostile value: a number past its
    type, NaN, ±Infinity, negative, zero; a string with .., /, quotes, line breaks, HTML, $…$, 5 KB; another type;
    nesting past the parser's depth. ``report`` on it, or ``merge`` of it beside an intact engine."""
    name = length + ("b" if command == "merge" else "a")
    where = data.draw(st.sampled_from(places_of(name)), label="where")
    value = data.draw(hostile(results_of(name), where), label="value")
    root = tmp_path_factory.mktemp("fuzz")
    mutated = written(root / "mutated", name, data=raw(results_of(name), where, value))
    run_command(monkeypatch, root, command, mutated, intact=f"{length}a")


def column_mutations(table: pa.Table) -> st.SearchStrategy[tuple[str, str, pa.Array]]:
    """A column of a parquet sidecar given another type, nulls, int64's extremes, a span past the bound, or hostile
    text, in one row or in all: (column, what was done, its new values)."""
    n = table.num_rows
    values = {
        "int64 max": pa.array([2**63 - 1] * n, pa.int64()),
        "int64 min": pa.array([-(2**63)] * n, pa.int64()),
        "uint64 max": pa.array([2**64 - 1] * n, pa.uint64()),
        "negative": pa.array([-1] * n, pa.int64()),
        "zero": pa.array([0] * n, pa.int64()),
        "past the span": pa.array([MAX_SPAN_S + 1] * n, pa.int64()),
        "nulls": pa.array([None] * n, pa.int64()),
        "int32": pa.array([1] * n, pa.int32()),
        "float": pa.array([1.5] * n, pa.float64()),
        "nan": pa.array([math.nan] * n, pa.float64()),
        "infinity": pa.array([math.inf] * n, pa.float64()),
        "bool": pa.array([True] * n, pa.bool_()),
        "binary": pa.array([b"\xff"] * n, pa.binary()),
        "dictionary": pa.array(["GET"] * n).dictionary_encode(),
        "large text": pa.array(["x"] * n, pa.large_string()),
        **{f"text {t[:12]!r}": pa.array([t] * n, pa.string()) for t in TEXTS},
        **{f"json {t}": pa.array([t] * n, pa.string()) for t in ('{"a": 1e999}', '{"a": -1}', '{"a": 9223372036854775808}',
                                                                 "[]", "null", '{"a": "1"}', "[" * 5000 + "]" * 5000)},
    }  # fmt: skip

    @st.composite
    def mutation(draw: st.DrawFn) -> tuple[str, str, pa.Array]:
        column = draw(st.sampled_from(table.column_names))
        kind = draw(st.sampled_from(sorted(values)))
        new = values[kind]
        if draw(st.booleans()):  # one row only, the rest as they were
            row = draw(st.integers(0, n - 1))
            old = table.column(column).combine_chunks()
            try:
                new = pa.concat_arrays([old.slice(0, row), new.slice(row, 1).cast(old.type), old.slice(row + 1)])
                kind = f"{kind} in row {row}"
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                pass  # no value of the column's own type: every row
        return column, kind, new

    return mutation()


@settings(max_examples=6, deadline=None, suppress_health_check=HEALTH)
@given(data=st.data(), command=COMMANDS, length=LENGTHS)
def test_a_parquet_sidecar_with_any_column_mutated_is_reported_or_refused_in_one_line(
    tmp_path_factory, monkeypatch, data, command, length
):
    """series.parquet (for report) and buckets.parquet (for merge): a column of another type, with nulls, at int64's
    extremes, past the span, or of hostile text; in one row or in all."""
    name, file, kind = (length + "a", SERIES_FILE, "series") if command == "report" else (length + "b", BUCKETS_FILE, "buckets")
    table = table_of(file, name)
    column, _, values = data.draw(column_mutations(table), label="mutation")
    root = tmp_path_factory.mktemp("fuzz")
    mutated = written(root / "mutated", name, **{kind: replaced(table, column, values)})
    run_command(monkeypatch, root, command, mutated, intact=f"{length}a")
