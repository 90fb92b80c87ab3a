"""Each ``loadtest`` command's one-line help and its description, declared once: ``command_line.dispatch`` builds its
parser from them, the options reference (``docs/gen_reference.py``) shows them.
"""

from __future__ import annotations

__all__ = ["COMMAND_HELP"]

#: command -> (help, description); in the order ``loadtest --help`` lists them. A description of "" is the help.
COMMAND_HELP: dict[str, tuple[str, str]] = {
    "run": (
        "stress-test one PartitionKey and write a hot-partition report",
        "The docs' partition stress test: create a test table, seed it, load one partition, "
        "compare GET/PUT entities/s with the target. Unknown options go to Locust.",
    ),
    "ceiling": (
        "step the offered load up until the partition gives way: its sustained ceiling and what limited it",
        "Open-loop steps of offered load on one workload and key design, each --step-time long, until a step "
        "serves under 95%% of what it offered, throttles over 1%% of its attempts or its corrected p99 passes --max-p99. "
        "Each user offers a fixed share; the steps add users. Unknown options go to Locust.",
    ),
    "simulate": (
        "the same workload at any --arrival-rate through the partition layer's model: a verdict in seconds",
        "Runs the workload (key strategy, skew, mix, retries) in virtual time through the throttling "
        "emulator's model (--emulator-* budgets), per tick over every key: no table, no requests. Writes the outputs of "
        "a run (results.json, timeseries.csv, report.html), marked simulated; --fail-on gates CI on it.",
    ),
    "advise": (
        "the key design that fits a workload: searched, sized, costed on the application's operations, as code",
        "Searches the designs the Azure docs name (write sharding, a hash prefix, finer keys, seconds-first time keys, "
        "GUIDs, more storage accounts) for the smallest N of each that keeps every partition under 80%% of its target "
        "at the peak x --growth, costs each on the workload's own operations, and recommends the cheapest with its key "
        "function in Python and C#. The workload: the options, --traffic PROFILE, or --from results.json. --verify "
        "proves it on a real table through the throttling emulator.",
    ),
    "compare": (
        "run the same workload once per PartitionKey strategy and rank them",
        "Runs `loadtest run` once per strategy (fresh table, fresh embedded Azurite), with every other "
        "option given here, and writes comparison.html. Use --rate for the same offered load in each run; with "
        "--simulate, `loadtest simulate` instead (give --arrival-rate).",
    ),
    "emulator": (
        "serve the throttling emulator in front of a table service",
        "",
    ),
    "traffic": (
        "read the account's request logs into a hot-partition report: which partitions production ran hot",
        "Reads Azure Monitor's table logs (archived by a diagnostic setting, or exported from Log Analytics) "
        "or Storage Analytics' $logs, counts every request per partition, op class and second as a run counts its "
        "operations, and writes a run's outputs (results.json, timeseries.csv, report.html). "
        "Writes nothing to the account (--from-container reads its archived logs through the blob endpoint).",
    ),
    "merge": (
        "merge the results of a run's engines (--run-id) into one run's results and report",
        "Engines of one run (Azure Load Testing's, several machines) each wrote their own results; merged, "
        "partitions are judged on the load of all of them together, seconds aligned by wall clock, latency from the "
        "merged histograms. Give their folders or results.json files, or --from-container C --run-id ID for what they "
        "uploaded with --upload C.",
    ),
    "cleanup": (
        "remove the shared table a --run-id run left (once all its engines are done)",
        "Engines of one run (--run-id) share a table and none deletes it. This deletes it, named from the "
        "run id (or --table, as the run was given it), when every row in it is the run's; beside other rows, it removes "
        "only the run's. A table without the run's rows is never touched.",
    ),
    "report": (
        "re-render report.html from a run's results.json",
        "",
    ),
    "locustfile": (
        'print the path of the locustfile this package carries: locust -f "$(loadtest locustfile)"',
        "",
    ),
}
