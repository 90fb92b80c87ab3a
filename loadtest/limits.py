"""The tool's own bounds, declared once: every limit on the options' values, and the defaults the limits are measured
against: one machine's worth of users and processes, the longest run, the largest seeding and scan, an open loop's rate
per user and its operations in flight. Below the options that take them and the forms that hold their values.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_MAX_IN_FLIGHT",
    "DEFAULT_MIX",
    "MAX_DURATION_S",
    "MAX_IN_FLIGHT",
    "MAX_SCAN_ROWS",
    "MAX_SEED_ENTITIES",
    "MAX_SIMULATED_RATE",
    "MAX_TIMEOUT_S",
    "MAX_USERS",
    "MAX_USER_ARRIVAL_RATE",
    "MAX_WORKERS",
    "MIN_RATE",
    "MIN_RATE_SAID",
    "MIN_STEP_S",
]

#: One machine's worth: each user holds its own connection. More users: Locust's --master/--worker across machines.
MAX_USERS = 10_000
MAX_WORKERS = 64  # Locust's --processes forks them all on this machine
#: The longest run: a week of per-second buckets is already a soak test, and Locust overflows on far longer spans.
MAX_DURATION_S = 7 * 24 * 3600
#: The slowest offered load (``--rate`` per user, ``--arrival-rate``, a replay's): an operation in the longest run.
#: Slower, a user sleeps past any run's end and sends nothing to measure (``--rate 1e-300`` slept 10^300 s).
MIN_RATE = 1 / MAX_DURATION_S
#: What ``MIN_RATE`` is, in words, for the lines that name it.
MIN_RATE_SAID = f"{MIN_RATE:.3g} (an operation a week, the longest run)"
MAX_TIMEOUT_S = 3600  # --timeout: an attempt waiting longer is no stress test (and sockets overflow near 1e9 s)
MAX_SEED_ENTITIES = 1_000_000
#: A scan is one operation, counted in the second it ends: 100,000 rows are 100 full pages and 50 s of a partition's
#: 2,000 entities/s. Scanning more is several scans (and its second would hold a minute's entities).
MAX_SCAN_ROWS = 100_000
MIN_STEP_S = 3  # a ceiling step: a second to settle, two whole seconds measured

DEFAULT_MIX = "read=60,upsert=20,insert=5,delete=5,batch=5,scan=5"
MAX_SIMULATED_RATE = 10**7  # operations/s a simulation takes: beyond, no table design is being asked about
#: An open loop's user starts one operation at a time and waits for its answer: no more than one a millisecond. Past
#: that its schedule only drops slots (at 10^12/s, billions a second, and the run hung enumerating them).
MAX_USER_ARRIVAL_RATE = 1000
#: An open loop's operations in flight at once per process, by default: each holds a greenlet and a keep-alive
#: connection (24 KB in flight, bench/in_flight_memory.py), so 5,000 take about 115 MB and fit within the 10,000 open
#: files Locust allows itself.
DEFAULT_MAX_IN_FLIGHT = 5_000
MAX_IN_FLIGHT = 50_000  # past this, the open files and memory of one process give out first
