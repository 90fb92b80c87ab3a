"""``loadtest traffic``'s options: where the account's request logs are, which of their records count, what is written
besides a run's outputs."""

from __future__ import annotations

from dataclasses import replace

from ..account.connection_string import CONNECTION_STRING_ENV
from ..service.log_forms import FORMS
from . import rules
from .option import Option, of, only
from .stress import OPTIONS
from .values import switch, texts, whole

__all__ = ["DIAGNOSTIC_CONTAINERS", "TRAFFIC_OPTIONS"]

#: Where a diagnostic setting archives a storage account's logs, by category.
DIAGNOSTIC_CONTAINERS = ("insights-logs-storageread", "insights-logs-storagewrite", "insights-logs-storagedelete")

#: The shared options' meaning here: the account only holds the archived logs.
_SHARED_HELP = {
    "partition_target": "entities/s per partition the logs are judged against (default: --profile's)",
    "account_target": "entities/s per account the logs are judged against (default: --profile's)",
    "connection_string": f"with --from-container: connection string of the account that archives the logs (or "
    f"${CONNECTION_STRING_ENV}); its blob endpoint is read",
    "account_url": "with --from-container: https://<account>.table.core.windows.net of the account that archives the "
    "logs (its blob endpoint), signed in with DefaultAzureCredential",
    "timeout": "with --from-container: seconds a blob request waits for the service's answer",
    "run_id": "a read of the logs several processes or machines share, each of a part of them (a day's, an hour's): "
    "results carry it, and outputs go to reports/<run-id>/<engine>/ (--upload: CONTAINER/<run-id>/<engine>/), for "
    "loadtest merge",
    "engine": "this part's name within --run-id (default: the host name; give each part its own, e.g. its day)",
    "upload": "blob container in the account of --connection-string or --account-url that receives the outputs as "
    "CONTAINER/<run-id>/<engine>/, for loadtest merge --from-container CONTAINER --run-id ID",
    "no_report": "write results.json and the series, not report.html: a shard of the logs for loadtest merge, which "
    "draws the report of them all (--jobs gives its shards this)",
}
#: ``loadtest traffic``'s own, then the stress test's it shares (those marked for it): the targets, the outputs.
TRAFFIC_OPTIONS: tuple[Option, ...] = only(
    "traffic",
    (
        Option(
            ("sources",),
            "the account's request logs: files, folders (read whole), globs, or - for standard input; Azure Monitor's "
            "diagnostic logs as archived (PT1H.json), a Log Analytics export of StorageTableLogs (CSV or JSON), or "
            "Storage Analytics' $logs/table (*.log)",
            parse=texts,
            locust=False,
            many=True,
        ),
        Option(
            ("--from-container",),
            "read the logs where the account archives them instead (comma list): a diagnostic setting's "
            + ",".join(DIAGNOSTIC_CONTAINERS)
            + ", or Storage Analytics' $logs; through the connection's blob endpoint, a blob at a time",
            "",
            rules.log_containers,
            locust=False,
        ),
        Option(
            ("--prefix",),
            "with --from-container: read only the blobs whose names start with this (e.g. resourceId=/subscriptions/…/"
            "storageAccounts/NAME/ or table/2026/11/24/); --since/--until pass by the hours outside them",
            "",
            locust=False,
        ),
        Option(
            ("--format",),
            "the logs' form: auto (each source's first line tells), " + ", ".join(FORMS),
            "auto",
            rules.log_form,
            locust=False,
        ),
        Option(
            ("--client-request-id",),
            "count only requests whose x-ms-client-request-id starts with this (a partition-stress run's: <run-id>-)",
            "",
            locust=False,
        ),
        Option(
            ("--since",),
            "count records from this UTC time on, ISO 8601 (e.g. 2026-11-24T14:00:00Z)",
            "",
            rules.utc_time,
            locust=False,
        ),
        Option(("--until",), "count records before this UTC time, ISO 8601", "", rules.utc_time, locust=False),
        Option(
            ("--hash-keys",),
            "replace every PartitionKey by a stable hash in every output (production keys can be personal data); "
            "unreadable lines are counted, never shown",
            False,
            switch,
            locust=False,
        ),
        Option(
            ("--kql",),
            "print the Log Analytics query that exports the columns this command reads, for --since/--until (default: "
            "the last day), and exit",
            False,
            switch,
            locust=False,
        ),
        Option(
            ("--profile-out",),
            "also write the workload the logs describe to this file (a traffic profile, JSON), for simulate --traffic",
            "",
            rules.file_to_write,
            locust=False,
        ),
        Option(
            ("--jobs",),
            "read the logs in N processes, each a shard of whole folders (an hour's: Storage Analytics' hh00, a "
            "diagnostic archive's h=HH), merged as one read (loadtest merge's sum); 1: all in this one",
            1,
            whole(minimum=1, maximum=64),
            locust=False,
        ),
        Option(
            ("--entity-bytes",),
            "an entity's size in bytes: a batch's entities are estimated from its request's size, and a query's from its "
            "answer's where the logs hold no point read (else at an entity's size as their point reads' answers carry it)",
            1024,
            whole(minimum=1, maximum=1024 * 1024),
            locust=False,
        ),
    ),
) + tuple(replace(opt, help=_SHARED_HELP.get(opt.dest, opt.help)) for opt in of("traffic", OPTIONS))
