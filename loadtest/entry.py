"""The ``loadtest`` command's entry point (and ``python -m loadtest``'s).

The commands that load Locust — ``run`` and ``ceiling`` (Locust's runner) — get gevent's patches first thing, before
anything imports sockets or ssl, as Locust does on import (patching ssl after it was imported may recurse). The others
stay free of Locust and patch nothing: ``report``, ``merge``, ``simulate``, ``compare``, ``cleanup`` and ``locustfile``
load neither Locust nor gevent; ``emulator`` serves on gevent's own sockets, unpatched.
"""

from __future__ import annotations

import gc
import sys

__all__ = ["GEVENT_COMMANDS", "main"]

GEVENT_COMMANDS = ("run", "ceiling")


def main() -> int:
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
