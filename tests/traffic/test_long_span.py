"""Logs over more than a day, read as a user reads them: the figures are those of every second (each peak's seconds
kept, the rest summed per minute or hour), the outputs say which rows are bins, and shards of the span merge into the
same figures."""

from __future__ import annotations

import json
import random
import shutil
import time
from collections import Counter
from pathlib import Path
from unittest.mock import patch

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import in_process, run_info
from test_forms import classic_line

from loadtest.counting.phases import Phases
from loadtest.results import rolled_frame, summary
from loadtest.results.rolled_frame import BIN_COLUMN
from loadtest.traffic import reader
from loadtest.traffic.tally import Tally

DAYS = 9  # past a week: an hour a bin
FIGURES = ("requests", "attempts", "throttled", "entities", "peak_eps", "offered_peak_eps", "mean_eps")


def _write(folder: Path, draw: random.Random) -> list[Path]:
    """Storage Analytics' folders over ``DAYS`` days, a file an hour: a few requests an hour over eight keys, a burst
    on 'k1' on the third day (its peak), and 'k2' throttled for ten minutes on the sixth."""
    files = []
    for hour in range(DAYS * 24):
        day, at_hour = divmod(hour, 24)
        seconds = sorted(draw.randrange(3600) for _ in range(draw.randint(2, 12)))
        lines = [(second, f"k{draw.randrange(8)}", False) for second in seconds]
        if (day, at_hour) == (2, 14):
            lines += [(1800 + i // 6, "k1", False) for i in range(120)]  # some 6 a second for 20 s
        if (day, at_hour) == (5, 3):
            lines += [(600 + i * 5, "k2", True) for i in range(120)]
        text = []
        for i, (second, key, throttled) in enumerate(sorted(lines)):
            stamp = f"2026-11-{1 + day:02d}T{at_hour:02d}:{second // 60:02d}:{second % 60:02d}.1000000Z"
            url = f"http://127.0.0.1:10002/acct/orders(PartitionKey='{key}',RowKey='r{i}')"
            status, words = ("503", "ServerBusy") if throttled else ("200", "Success")
            request = f"{hour}-{i}"
            text.append(classic_line(time=stamp, url=url, status=status, text=words, request_id=request, client=request))
        path = folder / "2026" / "11" / f"{1 + day:02d}" / f"{at_hour:02d}00" / "000000.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(text))
        files.append(path)
    return files


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> tuple[Path, list[Path], dict]:
    """The logs, their files, and one ``loadtest traffic`` read of them (its results.json)."""
    folder = tmp_path_factory.mktemp("long")
    files = _write(folder / "$logs" / "table", random.Random(3))
    with pytest.MonkeyPatch.context() as monkeypatch:
        code, out, err = in_process(monkeypatch, "traffic", str(folder / "$logs"), "--out", str(folder / "whole"))
    assert code in (0, 3), out + err
    return folder, files, json.loads((folder / "whole" / "results.json").read_text())


def _rows(results: dict) -> dict:
    return {(r["partition"], r["op_class"]): [r[name] for name in FIGURES] for r in results["partitions"]}


def test_a_span_past_a_week_gives_the_figures_of_every_second_in_bins_of_an_hour(logs):
    folder, files, results = logs
    tally = Tally(entity_bytes=900)
    for path in files:
        reader.read(str(path), "auto", tally, Counter())
    counts = tally.finish()
    info = run_info(target_kind="logs", duration_s=counts.stopped - counts.started, partition_target=2000, account_target=20000)
    seconds = summary.build(counts, info, buckets=counts.frame())  # every second, as a day's read holds them
    assert _rows(results) == {(r.partition, str(r.op_class)): [getattr(r, n) for n in FIGURES] for r in seconds.partitions}
    assert results["account"]["peak_eps"] == seconds.account.peak_eps and results["account"]["peak_eps"] >= 6
    series = pd.read_parquet(folder / "whole" / "series.parquet")
    assert set(series[BIN_COLUMN]) - {1} <= set(range(1, 3601)) and (series[BIN_COLUMN] == 3600).any()
    assert len(series) < len(seconds.timeseries) and series["requests"].sum() == seconds.timeseries["requests"].sum()
    burst = series[(series["partition"] == "k1") & (series[BIN_COLUMN] == 1)]
    assert burst["entities"].sum() > 0  # the peak's seconds kept as seconds
    assert "past a day, " in results["logs"]["leaves_out"] and "per hour" in results["logs"]["leaves_out"]
    csv = pd.read_csv(folder / "whole" / "timeseries.csv")
    assert list(csv.columns)[-1] == BIN_COLUMN and csv[BIN_COLUMN].max() == 3600


def test_the_report_of_a_long_span_says_its_bins_and_dates_its_times(logs):
    folder, _, results = logs
    html = (folder / "whole" / "report.html").read_text()
    assert "2026-11-01 00:" in html and "2026-11-09 23:" in html  # the span, dated at both ends
    throttled = [f for f in results["findings"] if f["kind"] == "THROTTLED" and f["partition"] == "k2"]
    assert len(throttled) == 1 and "throttled hours (each hour read as its mean per second)" in throttled[0]["message"]
    assert "2026-11-06 03:00:00" in throttled[0]["message"]


def test_shards_of_a_long_span_merge_into_the_figures_of_one_read(logs, tmp_path, monkeypatch):
    folder, files, results = logs
    shards = []
    for part in (files[: 4 * 24], files[4 * 24 :]):  # four days, then five: each past a day itself
        out = tmp_path / f"shard-{len(shards)}"
        code, said, err = in_process(monkeypatch, "traffic", *map(str, part), "--no-report", "--out", str(out))
        assert code in (0, 3), said + err
        shards.append(str(out))
    code, said, err = in_process(monkeypatch, "merge", *shards, "--no-report", "--out", str(tmp_path / "merged"))
    assert code in (0, 3), said + err
    merged = json.loads((tmp_path / "merged" / "results.json").read_text())
    assert _rows(merged) == _rows(results) and merged["account"] == results["account"]
    assert merged["logs"]["leaves_out"].count("past a day, ") == 1


def _mutated(path: Path, how: str) -> None:
    """A shard's buckets.parquet made wrong in one way."""
    if how == "not parquet":
        path.write_bytes(b"PAR1 not a parquet file")
        return
    table = pq.read_table(path)
    if how == "an op class":
        table = table.set_column(2, "op_class", pa.array(["SCAN"] * table.num_rows))
    elif how == "a second":
        table = table.set_column(0, "second", pa.array([10**9] * table.num_rows, pa.int64()))
    elif how == "a count as text":
        table = table.set_column(table.column_names.index("requests"), "requests", pa.array(["1"] * table.num_rows))
    elif how == "a tally":
        table = table.set_column(table.column_names.index("errors"), "errors", pa.array(['{"x": -0.5}'] * table.num_rows))
    elif how == "rows dropped":
        table = table.slice(0, table.num_rows - 1)
    pq.write_table(table, path)


@pytest.fixture(scope="module")
def two_shards(logs, tmp_path_factory) -> list[Path]:
    """Two days' shards and the two after (together past a day), read once for every mutation."""
    _, files, _ = logs
    folder, shards = tmp_path_factory.mktemp("shards"), []
    with pytest.MonkeyPatch.context() as monkeypatch:
        for part in (files[: 2 * 24], files[2 * 24 : 4 * 24]):
            out = folder / f"shard-{len(shards)}"
            code, said, err = in_process(monkeypatch, "traffic", *map(str, part), "--no-report", "--out", str(out))
            assert code in (0, 3), said + err
            shards.append(out)
    return shards


@pytest.mark.parametrize("how", ["not parquet", "an op class", "a second", "a count as text", "a tally", "rows dropped"])
def test_a_long_spans_shard_with_wrong_buckets_is_refused_in_one_line_and_nothing_is_written(
    two_shards, tmp_path, monkeypatch, how
):
    shards = [tmp_path / shard.name for shard in two_shards]
    for shard, given in zip(shards, two_shards, strict=True):
        shutil.copytree(given, shard)
    _mutated(shards[1] / "buckets.parquet", how)
    code, said, err = in_process(monkeypatch, "merge", *map(str, shards), "--no-report", "--out", str(tmp_path / "merged"))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert str(shards[1]) in err and "buckets.parquet" in err and not (tmp_path / "merged").exists()


def test_counts_of_records_read_block_by_block_are_put_away_in_time_order(tmp_path):
    """Past a day, a long span's windows are found holding only each series' newest seconds, which needs the counts
    read back in time order: records of many keys (the other partitions' folded after each block's own) are."""
    draw, lines = random.Random(5), []
    for i in range(24_000):  # five blocks of the reader's (of 1 MiB here)
        second = i * 12  # some 3.3 days
        key = f"k{min(int(draw.paretovariate(1.0)), 400):03d}"
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(1_793_491_200 + second))
        url = f"http://127.0.0.1:10002/acct/orders(PartitionKey='{key}',RowKey='r{i}')"
        lines.append(classic_line(time=f"{stamp}.1000000Z", url=url, request_id=f"r{i}", client=f"c{i}"))
    (tmp_path / "x.log").write_text("".join(lines))
    tally = Tally(entity_bytes=900)
    with patch.object(reader, "BLOCK_BYTES", 1 << 20):
        reader.read(str(tmp_path / "x.log"), "auto", tally, Counter())
    counts = tally.finish()
    assert counts.aged.rows > 5_000 and len(counts.top_partitions()) == 50  # others folded as they aged
    phases = Phases.of([], counts.started, counts.steady_from, counts.stopped)
    batches = (frame for frame, _ in rolled_frame._batches(counts.frames(), counts.top_partitions()))
    with patch.object(rolled_frame, "_BATCH_ROWS", 1_000):
        assert rolled_frame._windows_in_order(batches, phases) is not None
