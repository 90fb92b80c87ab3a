"""A day of logs read as two shards split at any hour and merged names every key with the counts one read gives, and
both are the requests made (issue #64): each read keeps its 50 heaviest keys apart a second and folds the rest into
the other partitions, so a key among the heaviest in one shard and folded in the other kept only the first shard's
count, unmarked ('cust-0006' GET 23 and PUT 10 where one read said 55 and 30). Now every part hands over each key's
folded counts (``counting.folded_totals``) and every named row adds them (``results.whole_totals``).

Hypothesis draws the keys (around the 50 a read keeps apart: steady ones, ones busy only before or after the split,
a few heavy ones), their weights, their hours and the split. ``SHARD_EXAMPLES`` sets how many (the sweep outside the
suite: ``SHARD_EXAMPLES=200 pytest tests/traffic/test_shards_exact.py``)."""

from __future__ import annotations

import json
import os
import random
import tempfile
from collections import Counter
from pathlib import Path

from helpers import in_process
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_forms import classic_line

EXAMPLES = int(os.environ.get("SHARD_EXAMPLES", "2"))
RECORDS_AN_HOUR = 90
#: (operation, op class) of the records drawn: point reads and updates
OPERATIONS = (("QueryEntity", "GET"), ("UpdateEntity", "PUT"))


@st.composite
def days(draw: st.DrawFn) -> tuple[int, dict[str, tuple[int, int, int]], int]:
    """(split hour, key -> (weight, first hour, last hour), seed): keys around the 50 a read keeps apart."""
    split = draw(st.integers(1, 23))
    keys = {}
    for i in range(draw(st.integers(45, 75))):
        first, last = sorted((draw(st.integers(0, 23)), draw(st.integers(0, 23))))
        if i < 10 or draw(st.booleans()):  # steady: the whole day (ten at least: every hour has records)
            first, last = 0, 23
        keys[f"k{i:03d}"] = (draw(st.integers(1, 12)), first, last)
    return split, keys, draw(st.integers(0, 2**16))


#: The issue's shape: 40 steady customers, 30 keys busy before noon and 30 after it.
HALVES = (
    12,
    {
        **{f"s{i:02d}": (4, 0, 23) for i in range(40)},
        **{f"e{i:02d}": (6, 0, 11) for i in range(30)},
        **{f"l{i:02d}": (6, 12, 23) for i in range(30)},
    },
    1,
)


def _write_day(folder: Path, keys: dict[str, tuple[int, int, int]], seed: int) -> tuple[list[Path], Counter]:
    """Classic logs, one file an hour, each hour's records drawn by the keys' weights among those alive in it:
    the files, and each (key, op class, status) as made."""
    draw = random.Random(seed)
    made: Counter = Counter()
    files = []
    for hour in range(24):
        alive = [(key, weight) for key, (weight, first, last) in keys.items() if first <= hour <= last]
        lines = []
        for i in range(RECORDS_AN_HOUR if alive else 0):
            key = draw.choices([k for k, _ in alive], weights=[w for _, w in alive])[0]
            operation, op_class = OPERATIONS[draw.random() < 0.3]
            throttled = draw.random() < 0.1
            second = draw.randrange(3600)
            at = f"2026-11-24T{hour:02d}:{second // 60:02d}:{second % 60:02d}.{i:07d}Z"
            url = f"http://127.0.0.1:10002/acct/orders(PartitionKey='{key}',RowKey='r{hour}-{i}')"
            status, text = ("503", "ServerBusy") if throttled else ("204" if op_class == "PUT" else "200", "Success")
            line = classic_line(time=at, url=url, status=status, text=text, request_id=f"id-{hour}-{i}", client=f"c-{hour}-{i}")
            lines.append((at, line.replace(";QueryEntity;", f";{operation};", 1)))
            made[(key, op_class, status == "503")] += 1
        path = folder / "2026" / "11" / "24" / f"{hour:02d}00" / "000000.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line for _, line in sorted(lines)))
        files.append(path)
    return files, made


def _rows(folder: Path) -> dict[tuple[str, str], dict]:
    results = json.loads((folder / "results.json").read_text())
    return {(r["partition"], r["op_class"]): r for r in results["partitions"] if r["partition"][:1] != "#"}


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(day=days())
@example(day=HALVES)
def test_shards_split_at_any_hour_merged_name_every_key_with_one_reads_counts(day, tmp_path, monkeypatch):
    split, keys, seed = day
    base = Path(tempfile.mkdtemp(dir=tmp_path))
    files, made = _write_day(base / "$logs" / "table", keys, seed)
    reads = {"whole": files, "early": files[:split], "late": files[split:]}
    for name, given_files in reads.items():
        code, out, err = in_process(monkeypatch, "traffic", *map(str, given_files), "--no-report", "--out", str(base / name))
        assert code in (0, 3), out + err
    code, out, err = in_process(
        monkeypatch, "merge", str(base / "early"), str(base / "late"), "--no-report", "--out", str(base / "merged")
    )
    assert code in (0, 3), out + err

    one, merged = _rows(base / "whole"), _rows(base / "merged")
    assert one.keys() == merged.keys() and one, (sorted(one.keys() ^ merged.keys()), split)
    for (key, op_class), row in one.items():
        if op_class == "ALL":
            continue
        throttled, served = made[(key, op_class, True)], made[(key, op_class, False)]
        truth = {"requests": throttled + served, "attempts": throttled + served, "throttled": throttled, "entities": served}
        for results in (row, merged[(key, op_class)]):
            assert {name: results[name] for name in truth} == truth, (key, op_class, split, results.get("partial"))
        if not (row.get("partial") or merged[(key, op_class)].get("partial")):  # every second of it kept apart in both
            assert row["peak_eps"] == merged[(key, op_class)]["peak_eps"], (key, op_class, split)
    if day == HALVES:  # the shape: keys among the heaviest in one half, folded in the other, are whole and said
        folded = [row for row in merged.values() if row.get("partial")]
        assert folded, "no key folded in either half: the shape no longer tests the merge"
        results = json.loads((base / "merged" / "results.json").read_text())
        assert results["keys"]["partial"] == len({row["partition"] for row in folded})
