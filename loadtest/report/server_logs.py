"""server-logs.kql: the service's own view of a run, from Azure Monitor's ``StorageTableLogs``.

Every attempt the run sends carries ``x-ms-client-request-id = <run-id>-<worker>.<user>.<n>``
(``….<user>.l<lane>.<n>`` on an open loop's lanes; one id per operation, kept by its retries and result pages),
which the service logs as
``ClientRequestId``. The query selects this run's requests by that prefix and sets the server's
figures beside the report's, per second and PartitionKey: requests (attempts) and operations,
throttled answers, timeouts, and ``ServerLatencyMs`` beside ``DurationMs`` (the gap is the network
and the client). The logs have no PartitionKey column: it is parsed from the request's ``Uri``
(an entity's address or a query's filter), else from ``ObjectKey``; a batch's sub-requests name none.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from ..outputs import SERVER_LOGS_FILE, write_text
from ..results.form import Results, RunInfo

__all__ = ["FILE", "kql_string", "query", "request_id_prefix", "write"]

FILE = SERVER_LOGS_FILE
#: The logs arrive minutes late and clocks differ: the window around the run that the query reads.
MARGIN = timedelta(minutes=5)


def request_id_prefix(run_id: str) -> str:
    """What every client request id of the run starts with."""
    return f"{run_id}-"


#: What a KQL string literal in double quotes escapes with a backslash (Kusto's "string data type" page): its quote,
#: the backslash itself, and the line breaks and tab, which may not stand in a literal raw.
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def kql_string(value: str) -> str:
    """``value`` as a KQL string literal, whatever it holds: a query embeds text only this way (a run id read from a
    file is checked as a name, but the query must not depend on that). Other control characters have no escape in
    Kusto's rules and cannot be in a request id (an HTTP header): each becomes U+FFFD, as Kusto stores invalid text."""
    return '"' + "".join(_ESCAPES.get(c, c if c.isprintable() else "\ufffd") for c in value) + '"'


def query(info: RunInfo) -> str:
    started = datetime.fromisoformat(info.started)
    first, last = started - MARGIN, started + timedelta(seconds=info.duration_s) + MARGIN
    return f"""// partition-stress run {kql_string(info.id)}: the service's view of its requests, per second and PartitionKey.
// Run it in the Log Analytics workspace that receives the storage account's diagnostic settings
// (table service; categories StorageRead, StorageWrite). Logs arrive a few minutes after the run.
let run = {kql_string(request_id_prefix(info.id))};
StorageTableLogs
| where TimeGenerated between (datetime({first.isoformat()}) .. datetime({last.isoformat()}))
| where ClientRequestId startswith run
| extend Address = url_decode(tostring(Uri)), Key = url_decode(tostring(ObjectKey))
| extend PartitionKey = coalesce(
    extract(@"PartitionKey='((?:[^']|'')*)'", 1, Address),
    extract(@"PartitionKey eq '((?:[^']|'')*)'", 1, Address),
    extract(@"PartitionKey='((?:[^']|'')*)'", 1, Key),
    "(none in the request)")
| extend PartitionKey = replace_string(PartitionKey, "''", "'")
| summarize
    requests = count(),
    operations = dcount(ClientRequestId),
    throttled = countif(StatusCode == 503 or StatusText contains "Throttling" or StatusText contains "ServerBusy"),
    timeouts = countif(StatusText contains "Timeout"),
    server_latency_ms_avg = avg(ServerLatencyMs),
    server_latency_ms_p99 = percentile(ServerLatencyMs, 99),
    duration_ms_avg = avg(DurationMs),
    duration_ms_p99 = percentile(DurationMs, 99)
    by second = bin(TimeGenerated, 1s), PartitionKey, OperationName
| order by second asc, requests desc
"""


def write(results: Results, out: Path) -> Path:
    return write_text(Path(out) / FILE, query(results.run))
