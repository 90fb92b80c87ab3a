"""The server-side join: every attempt carries the run's client request id, and server-logs.kql selects by it."""

from __future__ import annotations

import json
import re

import pytest
from helpers import EVERY_OPERATION_RUNS, results_of, run_info

from loadtest.report.server_logs import FILE, query, request_id_prefix
from loadtest.results.form import RunInfo

# Azurite's debug log: one line per request with its headers as JSON
LOGGED_ID = re.compile(r'RequestHeaders:\{.*?"x-ms-client-request-id":"([^"]*)"')


def info(**fields) -> RunInfo:
    return run_info(**{"id": "20261122-101500-ab12", "started": "2026-11-22T10:15:00+00:00", "duration_s": 60.0, **fields})


def test_the_query_selects_the_runs_requests_in_a_window_around_the_run():
    text = query(info())
    assert 'let run = "20261122-101500-ab12-";' in text
    assert "| where ClientRequestId startswith run" in text
    # five minutes either side of the 60-s run
    assert "between (datetime(2026-11-22T10:10:00+00:00) .. datetime(2026-11-22T10:21:00+00:00))" in text
    assert "by second = bin(TimeGenerated, 1s), PartitionKey, OperationName" in text
    for column in ("ServerLatencyMs", "DurationMs", "StatusText", "ObjectKey", "Uri"):
        assert column in text
    assert query(info(id="20261122-101500-ffff")) != text


@pytest.mark.parametrize("strategy,client", list({client: (s, client) for s, client in EVERY_OPERATION_RUNS}.values()))
def test_every_attempt_carries_the_runs_client_request_id(every_operation_run, logged_azurite, strategy, client):
    """Through each client, every operation (the runs ``test_mix_operations`` reads, on an Azurite logging each
    request's headers; each test reads its own run's ids)."""
    out, done = every_operation_run(strategy, client)
    assert done.code == 0, done.output
    data = results_of(out)
    assert data["run"]["settings"]["client"] == client
    prefix = request_id_prefix(data["run"]["id"])
    ids = [m.group(1) for m in LOGGED_ID.finditer(logged_azurite.log.read_text())]
    ours = [i for i in ids if i.startswith(prefix)]
    operations = sum(row["requests"] for row in data["partitions"] if row["op_class"] != "ALL")
    assert operations > 50
    # every attempt the run counted reached the service under the run's prefix, one id per operation
    assert len(ours) == data["attempts"]
    assert len(set(ours)) == operations
    assert all(re.fullmatch(re.escape(prefix) + r"\d+\.\d+\.\d+", i) for i in ours)
    kql = (out / FILE).read_text()
    assert f'let run = "{prefix}";' in kql
    assert json.loads((out / "results.json").read_text())["run"]["id"] in (out / "report.html").read_text()


def kql_literal(text: str) -> tuple[str, str]:
    """The double-quoted KQL string literal ``text`` starts with, decoded by Kusto's rules (backslash escapes), and
    what follows it."""
    assert text[0] == '"', text
    escapes, value, i = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t", "r": "\r"}, [], 1
    while text[i] != '"':
        if text[i] == "\\":
            value.append(escapes[text[i + 1]])
            i += 2
        else:
            assert text[i] not in "\n\r", "a line break inside a literal"
            value.append(text[i])
            i += 1
    return "".join(value), text[i + 1 :]


@pytest.mark.parametrize("run_id", ['../../esc"; print x //', "a\\", 'x"\nlet y = 1;\n//', "tab\there\r", "é'quote'"])
def test_the_query_quotes_the_run_id_it_embeds(run_id):
    """However the id reads, the query is the same query: the id one string literal, the comment naming it one line."""
    lines, plain = query(info(id=run_id)).splitlines(), query(info()).splitlines()
    assert len(lines) == len(plain)
    let = next(i for i, line in enumerate(plain) if line.startswith("let run = "))
    assert [i for i, (ours, theirs) in enumerate(zip(lines, plain, strict=True)) if ours != theirs] == [0, let]
    assert kql_literal(lines[let].removeprefix("let run = ")) == (request_id_prefix(run_id), ";")
    assert kql_literal(lines[0].removeprefix("// partition-stress run "))[0] == run_id
