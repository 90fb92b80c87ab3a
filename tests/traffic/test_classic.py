"""The classic form's repeats within an hour (``HourSeen``): found as a set of every record's key would find them,
in batches of any size, while holding a hash a record; across an hour's files read in any order, and a request
logged in the hour after the one it began in (``loadtest traffic`` on such files: every partition's figures exact)."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from helpers import in_process
from test_forms import classic_line

from loadtest.traffic.classic import DUPLICATE, HourSeen


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_repeats_are_those_a_set_of_every_key_finds_in_batches_of_any_size(seed):
    draw = random.Random(seed)
    hours = sorted(draw.choice(["2026-11-27T10", "2026-11-27T11", "2026-11-27T12"]) for _ in range(20_000))
    records = [(hour, f"req-{draw.randrange(6_000)}", str(draw.choice([1, 1, 1, 2]))) for hour in hours]
    truth, held = [], set()
    for i, record in enumerate(records):
        if record[0] != (records[i - 1][0] if i else None):
            held = set()  # a new hour: what the last one held is let go
        truth.append(record in held)
        held.add(record)
    seen, found, start = HourSeen(), [], 0
    while start < len(records):
        batch = records[start : start + draw.choice([1, 7, 500, 3_000])]
        found += [start + i for i in seen.repeated(*zip(*batch, strict=True))]
        start += len(batch)
    assert found == [i for i, repeat in enumerate(truth) if repeat] and 1_000 < len(found) < 15_000
    runs = seen._hours[hours[-1]]
    assert len(runs) <= 12 and sum(map(len, runs)) == len({r for r in records if r[0] == hours[-1]})


def test_a_record_read_one_at_a_time_is_a_repeat_only_within_its_hour():
    seen = HourSeen()
    assert not seen.repeat("2026-11-27T10", "a", "1") and seen.repeat("2026-11-27T10", "a", "1")
    assert not seen.repeat("2026-11-27T10", "a", "2") and not seen.repeat("2026-11-27T11", "a", "1")


@pytest.mark.parametrize("seed", [4, 5])
def test_the_hours_held_match_repeats_whatever_order_their_records_come_in(seed):
    """Records of three hours, shuffled (a file of one hour, then another's, then the first's again): a repeat is one
    the hour's set of keys held already, whichever of the hours came between."""
    draw = random.Random(seed)
    records = [(draw.choice([10, 11, 12]), f"req-{draw.randrange(3_000)}", "1") for _ in range(12_000)]
    held: dict[int, set] = {10: set(), 11: set(), 12: set()}
    truth = []
    for record in records:
        truth.append(record[1:] in held[record[0]])
        held[record[0]].add(record[1:])
    seen, found, start = HourSeen(), [], 0
    while start < len(records):
        batch = records[start : start + draw.choice([1, 50, 2_000])]
        found += [start + i for i in seen.repeated(*zip(*batch, strict=True))]
        start += len(batch)
    assert found == [i for i, repeat in enumerate(truth) if repeat] and len(found) > 1_000
    seen.repeated([13], ["x"], ["1"])  # a fourth hour: the one read longest ago is let go
    assert sorted(seen._hours) == [11, 12, 13]


def _hour_files(folder, draw: random.Random) -> tuple[list[str], Counter]:
    """Storage Analytics' folders for 10:00 to 12:00 (``$logs/table/2026/11/24/HH00/NNNNNN.log``), three files an
    hour; about one record in eight written again in another of its hour's files (or the same one), and requests
    begun in the last seconds of an hour logged in the next hour's folder, some of them twice. Answers the files and
    each (partition, status) as the requests were made, once each."""
    files: dict[str, list[str]] = {}
    made: Counter = Counter()
    for hour in (10, 11, 12):
        for i in range(300):
            second = 3599 - i % 3 if i % 50 == 0 else draw.randrange(3600)  # a few in the hour's last seconds
            logged_in = hour + 1 if second >= 3597 and hour < 12 else hour
            at = f"2026-11-24T{hour:02d}:{second // 60:02d}:{second % 60:02d}.1000000Z"
            key, throttled = f"k{i % 7}", i % 5 == 0
            url = f"http://127.0.0.1:10002/acct/orders(PartitionKey='{key}',RowKey='r{i}')"
            status, text = ("503", "ServerBusy") if throttled else ("200", "Success")
            line = classic_line(time=at, url=url, status=status, text=text, request_id=f"id-{hour}-{i}", client=f"c-{hour}-{i}")
            made[(key, status)] += 1
            copies = 2 if i % 8 == 0 else 1
            for _ in range(copies):
                files.setdefault(f"{logged_in:02d}00/{draw.randrange(3):06d}.log", []).append(line)
    names = []
    for name, lines in files.items():
        path = folder / "2026" / "11" / "24" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(draw.sample(lines, len(lines))))
        names.append(str(path))
    return names, made


def test_duplicates_in_any_of_their_hours_files_read_in_any_order_are_counted_once(tmp_path, monkeypatch):
    draw = random.Random(6)
    names, made = _hour_files(tmp_path / "$logs" / "table", draw)
    copies = sum(1 for name in names for _ in open(name)) - sum(made.values())
    assert copies > 50
    for given in (draw.sample(names, len(names)), [str(tmp_path / "$logs")]):  # files in any order; their folder
        out = tmp_path / f"out-{len(given)}"
        code, stdout, stderr = in_process(monkeypatch, "traffic", *given, "--no-report", "--out", str(out))
        assert code in (0, 3), stdout + stderr
        results = json.loads((out / "results.json").read_text())
        assert results["logs"]["unreadable"] == {DUPLICATE: copies}, results["logs"]["unreadable"]
        rows = {r["partition"]: r for r in results["partitions"] if r["op_class"] == "GET"}
        for key in {k for k, _ in made}:
            requests = made[(key, "200")] + made[(key, "503")]
            assert (rows[key]["requests"], rows[key]["attempts"], rows[key]["throttled"]) == (
                requests, requests, made[(key, "503")],
            ), (key, rows[key])  # fmt: skip
