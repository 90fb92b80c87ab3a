"""What one open-loop lane costs in memory: N table sessions, each with its connection open and one read in flight at
once against a stalled Azurite (SIGSTOP), the process's RSS before and after. ``--max-in-flight``'s default rests on it.

    .venv/bin/python bench/in_flight_memory.py [N]
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import os  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402

import gevent  # noqa: E402
import psutil  # noqa: E402
from locust.event import EventHook  # noqa: E402

from loadtest.account.azurite import EmbeddedAzurite  # noqa: E402
from loadtest.account.endpoint import resolve_target  # noqa: E402
from loadtest.session.table_session import TableSession  # noqa: E402
from loadtest.testbed.table import TestTable  # noqa: E402


def main(lanes: int) -> None:
    with EmbeddedAzurite() as azurite:
        target = resolve_target(connection_string=azurite.connection_string)
        table = TestTable(target=target, name="lanesbench")
        table.create()
        event = EventHook()
        process = psutil.Process()
        before = process.memory_info().rss
        sessions = [TableSession(target=target, table=table.name, request_event=event) for _ in range(lanes)]
        for session in sessions:  # each opens its connection
            session.read("p", "r")
        opened = process.memory_info().rss
        os.kill(azurite.pid, signal.SIGSTOP)  # every read now waits in flight
        waiting = [gevent.spawn(s.read, "p", "r") for s in sessions]
        gevent.sleep(2.0)
        in_flight = process.memory_info().rss
        os.kill(azurite.pid, signal.SIGCONT)
        gevent.joinall(waiting, timeout=60)
        for session in sessions:
            session.close()
        per_lane = (in_flight - before) / lanes / 1024
        print(f"{lanes:,} lanes: RSS {before / 2**20:.0f} MB -> {opened / 2**20:.0f} MB connected -> {in_flight / 2**20:.0f} MB")
        print(f"each lane in flight: {per_lane:.1f} KB; 5,000 lanes: {per_lane * 5000 / 1024:.0f} MB")
        table.drop()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
