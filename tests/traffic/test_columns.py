"""The bulk forms read a block at a time (Arrow's readers) give the columns the line reader gives, and the counts do not
depend on where the blocks are cut: a retry or a duplicate across a block's edge, a broken line inside a block."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from helpers import run_info
from test_forms import ENTITY, classic_line

from loadtest.results.summary import build
from loadtest.traffic import reader
from loadtest.traffic.classic import DUPLICATE, HourSeen
from loadtest.traffic.columns import NOT_FAST, classic_block, diagnostic_block, from_records
from loadtest.traffic.forms import records
from loadtest.traffic.records import LogRecord
from loadtest.traffic.tally import Tally


def diagnostic_line(i: int, **given) -> str:
    record = {
        "time": f"2026-11-24T13:04:{5 + i // 4:02d}.{i:07d}Z", "operationName": "QueryEntity", "statusCode": 200,
        "statusText": "Success", "durationMs": 3 + i % 5, "uri": ENTITY.replace("r1", f"r{i}"),
        "properties": {"clientRequestId": f"c-{i // 2}", "responseBodySize": 900, "requestBodySize": 0},
    }  # fmt: skip
    return json.dumps({**record, **given}) + "\n"


LINES = [
    diagnostic_line(0),
    diagnostic_line(1, statusCode=503, statusText="ServerBusy", identity={"metricResponseType": "ServerBusyError"}),
    diagnostic_line(2, operationName="InsertEntity", uri="http://h/acct/orders", statusCode=204),
    diagnostic_line(3, operationName="QueryEntities", uri="http://h/acct/orders()?$filter=PartitionKey%20eq%20'q'"),
    diagnostic_line(4, uri="http://h/acct/orders(PartitionKey='a%2Fb',RowKey='1')", properties={"objectKey": "/x"}),
    diagnostic_line(5, operationName="CreateTable", uri="http://h/acct/Tables"),
    diagnostic_line(6, durationMs=None, statusText=None),
    diagnostic_line(7, operationName="EntityGroupTransaction", uri="http://h/acct/$batch", statusCode=202),
]


def lines_read(form: str, lines: list[str]) -> list[dict]:
    return from_records(r for r in records(form, lines) if isinstance(r, LogRecord)).to_pylist()


def same(block: list[dict], lines: list[dict]) -> None:
    assert len(block) == len(lines)
    for got, want in zip(block, lines, strict=True):
        assert got.pop("time") == pytest.approx(want.pop("time"), abs=1e-6)
        assert got == want


def test_a_diagnostic_block_reads_as_its_lines_do():
    same(diagnostic_block("".join(LINES).encode()).to_pylist(), lines_read("diagnostic", LINES))
    spaced = ["\n", LINES[0].replace("\n", "\r\n"), "   \n", *LINES[1:], " \t "]  # blank lines, CRLF, no last newline
    same(diagnostic_block("".join(spaced).encode()).to_pylist(), lines_read("diagnostic", spaced))


def test_a_classic_block_reads_as_its_lines_do_quoted_decoded_and_its_repeats_dropped():
    lines = [
        classic_line(),
        classic_line(status="503", text="ThrottlingError", request_id="id-2", url=ENTITY.replace("k", "k&amp;")),
        classic_line(request_id="id-2"),  # a repeat within the hour
        classic_line(status="Unknown", request_id="id-3", client='"c&#59;3"'),  # quoted: it holds a ;
    ]
    table, repeated = classic_block("".join(lines).encode(), HourSeen())
    same(table.to_pylist(), lines_read("classic", lines))
    assert [r.reason for r in repeated] == [DUPLICATE]
    assert "PartitionKey='k&%27" in table.column("uri")[1].as_py() and table.column("client_request_id")[2].as_py() == "c;3"


@pytest.mark.parametrize(
    "broken",
    ['{"time": "2026-11-24T13:04:05Z", "operationName": "QueryEntity", "statusCode": "Unknown"}\n', "not json\n"],
)
def test_a_block_with_a_line_arrows_reader_cannot_read_is_read_a_line_at_a_time(broken, tmp_path):
    if broken == "not json\n":
        with pytest.raises(NOT_FAST):
            diagnostic_block("".join([*LINES, broken]).encode())
    else:  # a status logged as text: read in the block as the line reader reads it
        same(diagnostic_block("".join([*LINES, broken]).encode()).to_pylist(), lines_read("diagnostic", [*LINES, broken]))
    clean, mixed = tally_of(tmp_path / "clean.json", LINES), tally_of(tmp_path / "mixed.json", [*LINES[:3], broken, *LINES[3:]])
    if broken == "not json\n":  # counted by why; the block's other lines as a clean block's
        assert counted(mixed) == counted(clean) and sum(mixed.unreadable.values()) == 1
    else:  # a status logged as Unknown is a record the line reader reads: one request more, naming no partition
        assert mixed.counted == clean.counted + 1 and not mixed.unreadable
        assert mixed.unattributed["QueryEntity"] == clean.unattributed["QueryEntity"] + 1


def tally_of(path, lines: list[str]) -> Tally:
    path.write_text("".join(lines))
    tally = Tally(entity_bytes=900)
    reader.read(str(path), "auto", tally, Counter())
    tally.finish()
    return tally


def counted(tally: Tally) -> dict:
    logs = tally.account(build(tally.counts, run_info()))
    return {key: bucket.to_dict() for key, bucket in tally.counts.buckets.items()} | {"logs": logs["requests"]}


@pytest.mark.parametrize("form", ["diagnostic", "classic"])
def test_where_the_blocks_are_cut_changes_nothing(form, tmp_path, monkeypatch):
    """A retry of one operation (its client request id) and a repeated classic record on both sides of a block's edge."""
    if form == "diagnostic":
        lines = [diagnostic_line(i) for i in range(40)]
    else:
        lines = [classic_line(request_id=f"id-{i % 30}", client=f"c-{i // 3}") for i in range(40)]
    whole = tally_of(tmp_path / "whole.log", lines)
    monkeypatch.setattr(reader, "BLOCK_BYTES", 500)
    cut = tally_of(tmp_path / "cut.log", lines)
    assert counted(cut) == counted(whole) and cut.unreadable == whole.unreadable
    requests = sum(b.requests for b in whole.counts.buckets.values())
    assert requests == (20 if form == "diagnostic" else 10) and cut.counted == whole.counted
