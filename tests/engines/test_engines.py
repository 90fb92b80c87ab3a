"""Engines of one run (Azure Load Testing's LocalRunners): a shared table seeded once, outputs uploaded to a blob
container, and `loadtest merge` — exact on synthetic events in this process, and end to end with three `locust -f`
processes against Azurite's table and blob services."""

from __future__ import annotations

import csv
import gc
import json
import os
import subprocess
import sys
import uuid
import weakref
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from azure.data.tables import TableClient
from azure.storage.blob import ContainerClient
from browser import chromium_page
from helpers import ROOT, SHORT, in_process, readable, results_of, run_info
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from synthetic import recorded

from loadtest.account.azurite import azurite_connection_string
from loadtest.account.blob_container import BLOB_API_VERSION
from loadtest.child_process import free_port
from loadtest.counting import bucket_frame
from loadtest.counting.counts import TOP_K, ms_at, new_histogram
from loadtest.counting.request_evidence import RequestProfile
from loadtest.engines.blobs import RUN_OUTPUTS
from loadtest.engines.merge import merge
from loadtest.findings.assess import assess
from loadtest.redact import AZURITE_KEY
from loadtest.results import summary
from loadtest.results.form import Results
from loadtest.results.mergeable import capture
from loadtest.results.series_frame import records
from loadtest.testbed.seeding_claim import SEEDING_PARTITION
from loadtest.testbed.table import TestTable
from loadtest.workload.key_specs import key_strategy

START = 1_000_000.0
DESIGN = {"key_strategy": "set:3", "partition_key": "hot", "row_key_strategy": "sequential", "key_seed": 1, "skew": "uniform"}


def engine(
    name: str, seconds: dict[int, list[dict]], *, run_id: str = "r1", start: float = START, compact: bool = False, **run
) -> Results:
    """One engine's results from synthetic events, as its run writes them (figures, verdict, mergeable count);
    ``compact``: its count compacted each second as a run's is."""
    metrics = recorded(seconds, start=start, compact=compact)
    info = run_info(id=run_id, target_kind="connection-string", endpoint="http://127.0.0.1:1/a", settings=dict(DESIGN), **run)
    results = summary.build(metrics, info)
    results.mergeable = capture(metrics, RequestProfile(), {}, run_id=run_id, engine=name)
    metrics.close()
    return assess(results)


def load(per_second: int, *, partition: str = "k0", op_class: str = "GET", ms: float = 5.0, seconds: int = 6) -> dict:
    return {t: [{"partition": partition, "op_class": op_class, "ms": ms}] * per_second for t in range(seconds)}


# --- in this process: the merge on synthetic events ---------------------------------------------------------------


def test_merged_latency_percentiles_are_the_merged_histograms():
    """Three engines with different latencies: the merged run's percentiles are those of one histogram holding every
    engine's values (HdrHistogram's encoding, added), not an average of the engines' percentiles."""
    latencies = {"a": [2.0] * 50, "b": [20.0] * 30 + [200.0] * 5, "c": [7.0] * 40 + [900.0]}
    engines = []
    for name, values in latencies.items():
        seconds = {t: [{"partition": "k0", "ms": ms} for ms in values] for t in range(3)}
        engines.append((name, engine(name, seconds)))
    merged = merge(engines)
    every = new_histogram()
    for values in latencies.values():
        for ms in values * 3:
            every.record_value(int(ms * 1000))
    for percentile, field in ((50, "p50_ms"), (95, "p95_ms"), (99, "p99_ms")):
        assert merged.latency["GET"][field] == ms_at(every, percentile)
    assert merged.latency["GET"]["max_ms"] == pytest.approx(900.0, rel=0.01)
    assert merged.latency["GET"]["p99_ms"] != max(r.latency["GET"]["p99_ms"] for _, r in engines)  # a real merge


def test_merged_counts_are_the_sum_per_second_partition_and_op_class():
    """Seconds align by wall clock (engine b started 2 s later); every count adds up exactly; the top keys come from the
    merged sketches; each engine's share is named."""
    busy = {t: [{"partition": "k1", "op_class": "PUT", "error": "ServerBusy"}] for t in range(6)}
    a = engine("a", {t: events + busy[t] for t, events in load(30, partition="k0").items()})
    b = engine("b", load(50, partition="k0"), start=START + 2)
    c = engine("c", load(40, partition="k2"))
    merged = merge([("a", a), ("b", b), ("c", c)])
    rows = {(r.partition, r.op_class): r for r in merged.partitions}
    assert rows[("k0", "GET")].entities == 6 * 30 + 6 * 50 and rows[("k2", "GET")].entities == 240
    assert rows[("k1", "PUT")].failures == 6 and merged.errors == {"ServerBusy": 6}
    assert merged.attempts == a.attempts + b.attempts + c.attempts
    by_second = {}
    for row in records(merged.timeseries):
        if row["partition"] == "k0":
            by_second[row["second"]] = row["entities"]
    assert by_second[int(START) + 1] == 30 and by_second[int(START) + 2] == 30 + 50  # b's first second is START + 2
    assert merged.keys["top"][0] == "k0" and merged.keys["distinct"] == 3
    assert [e["engine"] for e in merged.engines] == ["a", "b", "c"]
    assert sum(e["entities"] for e in merged.engines) == merged.account.entities
    # the steady phase is when all three ran: b's from START + 2 to a's and c's end
    assert merged.run.steady_from_s == 2.0 and merged.run.steady_seconds == 4


def test_engines_that_folded_different_keys_merge_every_named_keys_whole_count():
    """Two engines over the same 20 seconds: each keeps its own heavy keys apart and folds the other's light ones (more
    keys than it keeps apart). Merged, every named key has its whole count, the one a single run of all the load gives,
    and a key some of whose seconds folded says its peak is at least what it says (issue #64)."""
    keys = [f"k{i:02d}" for i in range(TOP_K + 20)]
    early, late = keys[:35], keys[35:]
    seconds = range(20)
    a = {t: [{"partition": k} for k in early for _ in range(3)] + [{"partition": k} for k in late[t % 7 :: 7]] for t in seconds}
    b = {t: [{"partition": k} for k in late for _ in range(3)] + [{"partition": k} for k in early[t % 7 :: 7]] for t in seconds}
    merged = merge([("a", engine("a", a, compact=True)), ("b", engine("b", b, compact=True))])
    together = engine("one", {t: a[t] + b[t] for t in seconds}, compact=True)
    made = Counter(event["partition"] for events in [*a.values(), *b.values()] for event in events)
    rows = {r.partition: r for r in merged.partitions if r.op_class == "GET" and r.partition[:1] != "#"}
    one = {r.partition: r for r in together.partitions if r.op_class == "GET" and r.partition[:1] != "#"}
    assert rows.keys() == one.keys() and len(rows) >= TOP_K
    assert {k: (r.requests, r.entities) for k, r in rows.items()} == {k: (made[k], made[k]) for k in rows}
    assert {k: r.requests for k, r in one.items()} == {k: made[k] for k in one}
    assert any(r.partial for r in rows.values())  # the shape folds: some key's seconds were not all kept apart
    other = next(r for r in merged.partitions if r.partition == "#other" and r.op_class == "GET")
    assert other.requests == sum(made.values()) - sum(r.requests for r in rows.values())


def test_the_merge_holds_one_engine_at_a_time_and_adds_them_all():
    """Engines are read as the merge takes them: by the time the third is read, the first is gone from memory (only
    the sum and each engine's few figures stay), and the sum is still every engine's."""
    made: list[weakref.ref] = []

    def engines():
        for i in range(5):
            if i >= 2:
                gc.collect()
                assert made[i - 2]() is None, f"engine {i - 2} still held when engine {i} is read"
            results = engine(f"e{i}", load(10 + i, partition=f"k{i % 2}"))
            made.append(weakref.ref(results))
            yield f"e{i}", results

    merged = merge(engines())
    assert len(made) == 5 and [e["engine"] for e in merged.engines] == [f"e{i}" for i in range(5)]
    assert merged.account.entities == sum(6 * (10 + i) for i in range(5))
    assert sum(e["share"] for e in merged.engines) == pytest.approx(1.0, abs=0.001)


def test_each_engine_alone_is_cool_and_together_hot():
    """A partition target between one engine's share and the sum: each engine's own verdict COOL, the merged one HOT."""
    engines = [(name, engine(name, load(40), partition_target=100)) for name in "abc"]
    assert all(r.headline("k0").finding == "COOL" for _, r in engines)
    merged = assess(merge(engines))
    assert merged.headline("k0").finding == "HOT" and merged.headline("k0").peak_eps == 120.0
    assert [e["hottest_finding"] for e in merged.engines] == ["COOL"] * 3


BAD_MERGES = {  # each engine's name and what differs in its results.json; the folders are e0, e1
    "nothing given": ([], "merge: give engines' results"),
    "a run id apart": ([("a", {}), ("b", {"id": "r2"})], "different run ids: 'r1' (e0) and 'r2' (e1)"),
    "one engine twice": ([("a", {}), ("a", {})], "engine 'a' twice: e0 and e1"),
    "another table": ([("a", {}), ("b", {"table": "other"})], "different targets: table 't' (e0) and 'other' (e1)"),
    "another target": ([("a", {}), ("b", {"partition_target": 500})], "different targets: partition_target 2000 (e0) and 500"),
    "another key design": (
        [("a", {}), ("b", {"settings": {**DESIGN, "key_strategy": "guid"}})],
        "different key designs: --key-strategy 'set:3' (e0) and 'guid' (e1)",
    ),
    "older results": ([("a", {}), ("b", {"mergeable": None})], "e1: no mergeable data"),
    "a simulation": ([("a", {"simulated": True})], "e0: a simulation, not one engine's run"),
    "not results": ([("a", {"run": None})], "e0: not a partition-stress results.json"),
}


@pytest.mark.parametrize("case", BAD_MERGES, ids=list(BAD_MERGES))
def test_bad_merge_inputs_are_one_line_exit_2_and_nothing_written(case, tmp_path, monkeypatch):
    """Through `loadtest merge` on engines' folders, as a user gives them."""
    given, said = BAD_MERGES[case]
    for i, (name, change) in enumerate(given):
        data = engine(name, load(2, seconds=2)).to_dict()
        for field, value in change.items():
            if field in ("mergeable", "run"):
                data.pop(field)  # written before engines were merged; or no run at all
            else:
                data["run"][field] = value
        (tmp_path / f"e{i}").mkdir()
        (tmp_path / f"e{i}" / "results.json").write_text(json.dumps(data))
    monkeypatch.chdir(tmp_path)
    code, out, err = in_process(monkeypatch, "merge", *(f"e{i}" for i in range(len(given))), "--out", "m")
    assert code == 2 and said in err, err
    assert err.count("\n") == 1 and "Traceback" not in err and not (tmp_path / "m").exists()


def test_engines_written_with_their_buckets_beside_merge_as_those_written_before_that_file(tmp_path, monkeypatch):
    """Each engine written as a run writes it (buckets.parquet beside results.json, which names it), and the same
    engines as results.json held them before that file (the buckets listed in it): the merges are the same run."""
    engines = [engine(name, load(10 + i, partition=f"k{i % 2}", seconds=4)) for i, name in enumerate("abc")]
    for i, results in enumerate(engines):
        results.write(tmp_path / f"new{i}")
        assert json.loads((tmp_path / f"new{i}" / "results.json").read_text())["mergeable"]["metrics"]["buckets"] == {
            "file": "buckets.parquet",
            "rows": len(results.mergeable["metrics"]["buckets"]),
        }
        (tmp_path / f"old{i}").mkdir()
        (tmp_path / f"old{i}" / "results.json").write_text(json.dumps(results.to_dict()))
    monkeypatch.chdir(tmp_path)
    for form in ("new", "old"):
        code, out, err = in_process(monkeypatch, "merge", *(f"{form}{i}" for i in range(3)), "--out", f"m-{form}", "--no-report")
        assert code == 0, err
    new, old = results_of(tmp_path / "m-new"), results_of(tmp_path / "m-old")
    assert new["partitions"] == old["partitions"] and new["timeseries"] == old["timeseries"]
    assert new["account"]["entities"] == sum(r.account.entities for r in engines) == 4 * (10 + 11 + 12)


#: What becomes of engine e1's buckets.parquet, and the one line that says so.
BUCKETS_FAULTS = {
    "copied without it": (lambda path, other: path.unlink(), "e1: its buckets (buckets.parquet) are not beside"),
    "not Parquet": (lambda path, other: path.write_text("not a table"), "e1: buckets.parquet: not a readable Parquet file"),
    "not the one named": (
        lambda path, other: path.write_bytes(other.read_bytes()),
        "e1: buckets.parquet holds 2 rows, and results.json says 4",
    ),
    "cut short": (lambda path, other: path.write_bytes(path.read_bytes()[:-100]), "e1: buckets.parquet: not a readable"),
}


@pytest.mark.parametrize("case", BUCKETS_FAULTS, ids=list(BUCKETS_FAULTS))
def test_an_engines_buckets_missing_or_broken_are_one_line_exit_2_and_nothing_written(case, tmp_path, monkeypatch):
    change, said = BUCKETS_FAULTS[case]
    engine("a", load(3, seconds=2)).write(tmp_path / "e0")
    both = {t: events + load(3, partition="k1", seconds=2)[t] for t, events in load(3, seconds=2).items()}
    engine("b", both).write(tmp_path / "e1")
    change(tmp_path / "e1" / "buckets.parquet", tmp_path / "e0" / "buckets.parquet")
    monkeypatch.chdir(tmp_path)
    code, out, err = in_process(monkeypatch, "merge", "e0", "e1", "--out", "m")
    assert code == 2 and said in err, err
    assert err.count("\n") == 1 and "Traceback" not in err and not (tmp_path / "m").exists()


def broken(table: pa.Table, column: str, how: str, row: int) -> pa.Table:
    """An engine's buckets with one column changed ``how``, at one row where it is a value."""
    values = table.column(column).to_pylist()
    if how == "dropped":
        return table.drop_columns([column])
    if how == "as text":
        return table.set_column(table.column_names.index(column), column, pa.array([str(v) for v in values]))
    if how == "as fractions":
        return table.set_column(table.column_names.index(column), column, pa.array([0.5] * len(values)))
    replaced = {"empty": None, "odd text": "{not json", "a tally of text": '{"ServerBusy":"x"}', "far second": 10**12}[how]
    values[row % len(values)] = replaced
    return table.set_column(table.column_names.index(column), column, pa.array(values))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    column=st.sampled_from(bucket_frame.COLUMNS),
    how=st.sampled_from(["dropped", "as text", "as fractions", "empty", "odd text", "a tally of text", "far second"]),
    row=st.integers(0, 50),
)
def test_an_engines_buckets_malformed_merge_or_are_one_line_exit_2(tmp_path, monkeypatch, column, how, row):
    """Whatever is wrong in an engine's buckets.parquet, `loadtest merge` adds it or says what in one line, exit 2."""
    folder = tmp_path / uuid.uuid4().hex[:8]
    for name in ("e0", "e1"):
        engine(name, load(3, seconds=3)).write(folder / name)
    path = folder / "e1" / "buckets.parquet"
    try:
        pq.write_table(broken(pq.read_table(path), column, how, row), path)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return  # a change Parquet cannot hold
    monkeypatch.chdir(folder)
    code, _, err = in_process(monkeypatch, "merge", "e0", "e1", "--out", "m")
    event(f"{how}: exit {code}")
    assert code in (0, 1, 2) and "Traceback" not in err, err
    if code == 2:
        assert err.count("\n") == 1 and "e1: buckets.parquet: " in err and not (folder / "m").exists(), err


# --- against Azurite: three engines, one run ------------------------------------------------------------------------

#: Each engine's load: 2 users at 20 operations/s, 80 % point reads and 20 % upserts on one key, 40 entities/s. The
#: partition target of 70 sits between one engine's share (40/s: COOL) and the three together (120/s: HOT).
ENGINE_LOAD = ("-u", "2", "-r", "2", "-t", "4s", "--rate", "20", "--mix", "read=80,upsert=20", "--seed-entities", "300")
TARGET = ("--partition-target", "70")
ENGINES = ("e1", "e2", "e3")
#: A connection string left in a locust.conf beside the outputs: it must never be uploaded.
PLANTED = "DefaultEndpointsProtocol=https;AccountName=planted;AccountKey=cGxhbnRlZC1rZXk=;EndpointSuffix=core.windows.net"


@pytest.fixture(scope="module")
def three_engines(azurite, blob_service, tmp_path_factory):
    """Three `locust -f` processes started together (three LocalRunners, as Azure Load Testing runs them), one run id
    and upload container from the environment as ALT hands them over, on a table none of them has yet; then `loadtest
    merge --from-container`. Returns the folders, the processes' outcomes and the merge's."""
    base = tmp_path_factory.mktemp("engines")
    connection = azurite_connection_string(azurite.port, blob_port=blob_service.port)
    env = {**os.environ, "AZURE_STORAGE_CONNECTION_STRING": connection, "LOCUST_RUN_ID": "alt-run-1", "LOCUST_UPLOAD": "runs"}
    locustfile = ROOT / "loadtest" / "locustfile.py"
    for name in ENGINES:  # each --out a project folder: its locust.conf and notes are no output of the run's
        (base / name).mkdir()
        (base / name / "locust.conf").write_text(f"connection-string = {PLANTED}\n")
        (base / name / "notes.txt").write_text("not an output\n")
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "locust", "-f", str(locustfile), "--headless", *ENGINE_LOAD, *TARGET]
            + ["--engine", name, "--out", str(base / name), "--csv", str(base / f"locust-{name}")],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        for name in ENGINES
    ]
    outcomes = []
    try:
        for child in children:
            outcomes.append((child.wait(timeout=120), child.stdout.read()))
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
    merged = subprocess.run(
        [sys.executable, "-m", "loadtest", "merge", "--from-container", "runs", "--run-id", "alt-run-1"]
        + ["--out", str(base / "merged")],
        cwd=ROOT,
        env={**os.environ, "AZURE_STORAGE_CONNECTION_STRING": connection},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    return {"base": base, "outcomes": outcomes, "merge": merged, "connection": connection}


def test_three_engines_merged_from_the_container_add_up_exactly(three_engines):
    for code, output in three_engines["outcomes"]:
        assert code == 0, output[-3000:]
    merge_done = three_engines["merge"]
    assert merge_done.returncode == 0, merge_done.stdout + merge_done.stderr
    base = three_engines["base"]
    engines = [results_of(base / name) for name in ENGINES]
    merged = results_of(base / "merged")
    assert merged["run"]["id"] == "alt-run-1" and [e["engine"] for e in merged["engines"]] == list(ENGINES)
    assert merged["attempts"] == sum(e["attempts"] for e in engines) > 0
    assert merged["errors"] == {} and all(e["errors"] == {} for e in engines)
    # the user class that ran, its users those of every engine together
    (ran,) = merged["run"]["user_classes"]
    assert ran["name"] == "HotPartitionUser" and ran["users"] == sum(e["run"]["users"] for e in engines) > 0
    assert ran["design"]["key_strategy"] == "single" and ran["from_class"] == []
    for op_class in ("GET", "PUT"):
        (row,) = [r for r in merged["partitions"] if r["partition"] == "hot" and r["op_class"] == op_class]
        own = [next(r for r in e["partitions"] if r["partition"] == "hot" and r["op_class"] == op_class) for e in engines]
        for field in ("requests", "entities", "attempts", "failures", "offered"):
            assert row[field] == sum(r[field] for r in own), (op_class, field)
    assert merged["integrity"]["lost"] == 0 and merged["integrity"]["acknowledged_writes"] == sum(
        e["integrity"]["acknowledged_writes"] for e in engines
    )
    # beside a count that never passed through the summary: Locust's own statistics of each engine (its --csv)
    for op_class in ("GET", "PUT"):
        locust_counted = 0
        for name in ENGINES:
            with (base / f"locust-{name}_stats.csv").open() as stats:
                locust_counted += sum(
                    int(r["Request Count"]) for r in csv.DictReader(stats) if r["Name"].startswith(f"{op_class} ")
                )
        (row,) = [r for r in merged["partitions"] if r["partition"] == "hot" and r["op_class"] == op_class]
        assert row["requests"] == locust_counted > 0, (op_class, row["requests"], locust_counted)
    # every engine's timeseries second by second, added by wall clock
    per_second: dict[tuple[int, str], int] = {}
    for results in engines:
        for row in results["timeseries"]:
            per_second[(row["second"], row["op_class"])] = per_second.get((row["second"], row["op_class"]), 0) + row["entities"]
    assert {(r["second"], r["op_class"]): r["entities"] for r in merged["timeseries"]} == per_second


def test_an_upload_holds_the_runs_own_outputs_by_name_and_no_secret(three_engines):
    """Each --out also held a locust.conf with a connection string and a notes file: neither leaves the machine."""
    container = ContainerClient.from_connection_string(three_engines["connection"], "runs", api_version=BLOB_API_VERSION)
    with container:
        names = sorted(blob.name for blob in container.list_blobs(name_starts_with="alt-run-1/"))
        texts = [readable(name, container.download_blob(name).readall()) for name in names]
    written = [
        (engine, output) for engine in ENGINES for output in RUN_OUTPUTS if (three_engines["base"] / engine / output).exists()
    ]
    assert {output for _, output in written} == set(RUN_OUTPUTS) - {"timeseries.csv.gz"}  # a short run's series: plain
    assert names == sorted(f"alt-run-1/{engine}/{output}" for engine, output in written)
    assert not [name for name, text in zip(names, texts, strict=True) if "cGxhbnRlZC1rZXk" in text or AZURITE_KEY in text]


def test_each_engine_alone_is_cool_and_the_merged_run_hot(three_engines):
    base = three_engines["base"]
    for name in ENGINES:
        own = results_of(base / name)
        (row,) = [r for r in own["partitions"] if r["partition"] == "hot" and r["op_class"] == "ALL"]
        assert row["finding"] == "COOL" and row["peak_eps"] < 56, (name, row)  # 40/s of 70: under WARM's 80 %
    merged = results_of(base / "merged")
    (row,) = [r for r in merged["partitions"] if r["partition"] == "hot" and r["op_class"] == "ALL"]
    assert row["finding"] == "HOT" and row["peak_eps"] > 100, row
    assert "HOT" in three_engines["merge"].stdout


def test_three_engines_on_an_absent_table_seed_it_once(three_engines, target):
    """Started together, one engine seeds and the others wait for it: the table holds the 300 seeded rows once (and
    the seeding's record), every engine removed its own rows, none failed."""
    outputs = [output for _, output in three_engines["outcomes"]]
    assert sum(o.count("Seeding 300 entities") for o in outputs) == 1, outputs
    table_name = results_of(three_engines["base"] / "e1")["run"]["table"]
    with TableClient.from_connection_string(target.connection_string, table_name) as client:
        rows = list(client.list_entities(select=["PartitionKey", "RowKey"]))
    seeded = [r for r in rows if r["PartitionKey"] != SEEDING_PARTITION]
    assert len(seeded) == 300 and len(rows) == 301
    seeds = key_strategy("single", default_key="hot")
    assert {r["RowKey"][-10:] for r in seeded} == {seeds.seeded(i, 300)[1] for i in range(300)}
    TestTable(target=target, name=table_name, created=True).drop()


@pytest.mark.browser
def test_the_merged_report_names_the_three_engines_in_chromium(three_engines, artifacts):
    page_file = three_engines["base"] / "merged" / "report.html"
    with chromium_page() as page:
        page.goto(page_file.as_uri())
        assert "3 engines merged" in page.inner_text("h1")
        assert page.eval_on_selector_all("#engines-table tr.engine", "rows => rows.map(r => r.dataset.engine)") == list(ENGINES)
        verdict = page.inner_text("#verdict")
        assert "3 engines (e1, e2, e3) merged and judged together" in verdict
        assert page.inner_text("#engines-table").count("COOL") == 3
        # the merged run judges the partition once: HOT, GET and PUT its parts, no COOL row beside it
        rows = page.eval_on_selector_all(
            "#findings-table tr.finding", "rows => rows.map(r => [r.dataset.kind, r.children[1].innerText])"
        )
        assert [kind for kind, where in rows if kind in ("HOT", "WARM", "COOL")] == ["HOT"] and rows[0] == ["HOT", "hot"]
        page.screenshot(path=str(artifacts / "merged-engines-report.png"), full_page=True)


def test_a_master_with_three_workers_finds_what_three_merged_engines_find(three_engines, azurite, loadtest, tmp_path):
    """The same workload as one Locust master and three workers (the master merges them): the same finding per
    partition and op class; the totals apart only by what each run sent, each counted exactly."""
    out = tmp_path / "distributed"
    users = str(2 * len(ENGINES))
    load = [*ENGINE_LOAD]
    load[1] = load[3] = users  # -u and -r: the three engines' users together
    # 6 s, not the engines' 4: a 4-s run under a master gave its workers' CPU in 3 seconds once (on a fresh clone), as
    # they join and report against the seconds' edges; the findings compared are per-second levels, not totals
    load[5] = "6s"
    stats = tmp_path / "locust-stats"  # Locust's --json-file adds .json
    args = ("--out", str(out), "--connection-string", azurite.connection_string, "--json-file", str(stats))
    done = loadtest("run", "--workers", "3", *load, *TARGET, *args)
    assert done.code == 0, done.output
    distributed, merged = results_of(out), results_of(three_engines["base"] / "merged")
    assert len(distributed["workers"]["reported"]) == 3 and distributed["workers"]["lost"] == []
    assert done.output.count("Seeding 300 entities") == 1 and done.output.count("Worker joined the run") == 3
    locust_requests = sum(entry["num_requests"] for entry in json.loads(stats.with_suffix(".json").read_text()))
    assert sum(r["requests"] for r in distributed["partitions"] if r["op_class"] != "ALL") == locust_requests
    workers_cpu = [s["workers_cpu"] for s in distributed["load"] if "workers_cpu" in s]  # each worker's, every second
    assert len(workers_cpu) >= 4 and all(set(cpu) == set(distributed["workers"]["reported"]) for cpu in workers_cpu[1:-1])
    findings = {(r["partition"], r["op_class"]): r["finding"] for r in merged["partitions"]}
    assert {(r["partition"], r["op_class"]): r["finding"] for r in distributed["partitions"]} == findings
    assert findings[("hot", "ALL")] == "HOT"
    # one level per partition, on its total: its GET and PUT rows carry it, one finding says it, the same in both
    assert set(findings.values()) == {"HOT"}
    levels = [
        [(f["partition"], f["kind"], f["op_class"]) for f in results["findings"] if f["kind"] in ("HOT", "WARM", "COOL")]
        for results in (distributed, merged)
    ]
    assert levels[0] == levels[1] == [("hot", "HOT", None)], levels
    for results in (distributed, merged):  # each counted exactly: its rows are its seconds added up
        (row,) = [r for r in results["partitions"] if r["op_class"] == "GET"]
        assert row["entities"] == sum(t["entities"] for t in results["timeseries"] if t["op_class"] == "GET")
    # the merge adds the engines: its steady mean is theirs summed (each engine's own pace: on a busy machine three
    # engines at 20/s a user served 32-36/s each, not 40, and the merge 100.5, their sum within 4 %). What each run
    # sent is the machine's pace, not the merge's doing: the two runs are held to the same level above, not one rate
    engines = [results_of(three_engines["base"] / name) for name in ENGINES]
    summed = sum(next(r for r in e["partitions"] if r["op_class"] == "ALL")["mean_eps"] for e in engines)
    mean = next(r for r in merged["partitions"] if r["op_class"] == "ALL")["mean_eps"]
    assert mean == pytest.approx(summed, rel=0.15), (mean, summed)
    for results in (distributed, merged):  # neither above what 6 users at 20/s ask
        assert next(r for r in results["partitions"] if r["op_class"] == "ALL")["mean_eps"] <= 120 * 1.1


def test_an_upload_that_cannot_reach_its_container_keeps_the_local_outputs(azurite, loadtest, tmp_path):
    """A blob endpoint nobody listens on: the run's outputs are written here, an INCOMPLETE finding names the upload,
    exit 1, and the failure is one line."""
    closed = azurite_connection_string(azurite.port, blob_port=free_port())
    out = tmp_path / "out"
    args = ("--upload", "runs", "--run-id", "r-unreachable", "--out", str(out))
    done = loadtest("run", *SHORT, *args, env={"AZURE_STORAGE_CONNECTION_STRING": closed})
    assert done.code == 1, done.output
    results = results_of(out)
    (incomplete,) = [f for f in results["findings"] if f["kind"] == "INCOMPLETE"]
    assert "the upload to runs/r-unreachable/" in incomplete["message"]
    assert "cannot reach the blob service" in incomplete["message"]
    assert (out / "report.html").exists() and (out / "timeseries.csv").exists()
    failed = [line for line in done.stderr.splitlines() if "upload" in line and "failed" in line]
    assert len(failed) == 1 and "AccountKey" not in done.output and AZURITE_KEY not in done.output


@pytest.mark.parametrize(
    "args, said",
    [
        (("--upload", "runs"), "--upload runs: the embedded Azurite has no blob service"),
        (("--upload", "Runs_1"), "--upload 'Runs_1': a blob container name is 3-63 lowercase letters"),
        (("--run-id", "a/b"), "--run-id 'a/b': 1-63 letters, digits"),
    ],
)
def test_engine_options_are_checked_before_anything_starts(args, said, monkeypatch):
    code, _, err = in_process(monkeypatch, "run", *args)
    assert code == 2 and said in err and err.count("\n") == 1, err


def test_a_table_connection_string_without_a_blob_endpoint_cannot_upload(monkeypatch, azurite):
    env = {"AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string}
    code, _, err = in_process(monkeypatch, "run", "--upload", "runs", env=env)
    assert code == 2 and "names no blob endpoint: add BlobEndpoint=" in err and AZURITE_KEY not in err, err


def test_merge_from_a_container_without_the_run_or_unreachable_is_one_line(azurite, blob_service, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    env = {"AZURE_STORAGE_CONNECTION_STRING": azurite_connection_string(azurite.port, blob_port=blob_service.port)}
    code, _, err = in_process(monkeypatch, "merge", "--from-container", "runs", "--run-id", "no-such-run", env=env)
    assert code == 2 and "no engine's results.json under runs/no-such-run/" in err and err.count("\n") == 1, err
    env = {"AZURE_STORAGE_CONNECTION_STRING": azurite_connection_string(azurite.port, blob_port=free_port())}
    code, _, err = in_process(monkeypatch, "merge", "--from-container", "runs", "--run-id", "r1", env=env)
    assert code == 1 and "cannot reach the blob service" in err and err.count("\n") == 1, err
    code, _, err = in_process(monkeypatch, "merge", "--from-container", "runs", env=env)
    assert code == 2 and "--from-container runs: needs --run-id ID" in err, err
    assert not (tmp_path / "reports").exists()


def test_results_of_no_engine_written_over_an_engines_folder_leave_no_buckets_of_its(tmp_path):
    """A merge written with --overwrite into an engine's folder: the engine's buckets.parquet goes (an upload of the
    folder would carry them as the merge's)."""
    one = engine("a", load(3, seconds=2))
    one.write(tmp_path)
    assert (tmp_path / "buckets.parquet").is_file()
    merge([("a", one)]).write(tmp_path)
    assert not (tmp_path / "buckets.parquet").exists()
