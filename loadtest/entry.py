"""The ``loadtest`` command's entry point (and ``python -m loadtest``'s).

The commands that load Locust — ``run`` and ``ceiling`` (Locust's runner) — get gevent's patches first thing, before
anything imports sockets or ssl, as Locust does on import (patching ssl after it was imported may recurse). The others
stay free of Locust and patch nothing: ``report``, ``merge``, ``simulate``, ``compare``, ``cleanup`` and ``locustfile``
load neither Locust nor gevent; ``emulator`` serves on gevent's own sockets, unpatched.
"""

from __future__ import annotations

import gc
import os
import sys

__all__ = ["GEVENT_COMMANDS", "main"]

GEVENT_COMMANDS = ("run", "ceiling")
#: Arrow's allocator for the tool's commands and the processes they start: the system's, which hands freed memory
#: back. mimalloc, Arrow's default here, kept what a run's put-away buckets and its results once used: a real
#: 10-minute run peaked at 295.8 MB with it, 274.1 MB with the system's (bench/run_memory.py). A user's own
#: ARROW_DEFAULT_MEMORY_POOL stands; Arrow reads it when it is first imported, so this comes before any import of it.
ARROW_POOL = "system"


def main() -> int:
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", ARROW_POOL)
    if sys.argv[1:2] and sys.argv[1] in GEVENT_COMMANDS:
        from gevent import monkey

        monkey.patch_all()
    from .cli import main as command

    try:
        return command()
    finally:
        # the interpreter's last collection walks every object of Locust, pandas and matplotlib: 0.2 s of a command's
        # exit (bench/command_exit.py). Nothing it would free outlives the process, and what must be done at the end
        # is done before (outputs written, children stopped by PID); the exit handlers still run
        gc.freeze()
