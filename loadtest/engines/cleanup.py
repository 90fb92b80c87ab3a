"""``loadtest cleanup --run-id ID``: the shared table a run's engines leave on purpose (none of them may delete it while
another still runs), removed once they are all done, on the account they ran on."""

from __future__ import annotations

import argparse

from ..exit_codes import EXIT_OK, UsageError
from ..options.commands import CLEANUP_OPTIONS

__all__ = ["cleanup_command"]


def cleanup_command(ns: argparse.Namespace) -> int:
    from ..account.endpoint import resolve_target
    from ..testbed.table import remove_run  # the SDK loads only for this command

    given = {opt.dest: opt.value(ns) for opt in CLEANUP_OPTIONS}
    run_id, connection_string, account_url = given["run_id"], given["connection_string"], given["account_url"]
    if connection_string and account_url:
        raise UsageError("--connection-string and --account-url name two accounts: give the one the run used")
    if not (connection_string or account_url):
        raise UsageError(
            f"cleanup --run-id {run_id}: needs the account the run used: --connection-string (or "
            "$AZURE_STORAGE_CONNECTION_STRING) or --account-url; an embedded Azurite's tables ended with its run"
        )
    target = resolve_target(connection_string=connection_string, account_url=account_url, timeout=given["timeout"])
    try:
        print(remove_run(target, run_id, table=given["table"]), flush=True)
    finally:
        target.close()
    return EXIT_OK
