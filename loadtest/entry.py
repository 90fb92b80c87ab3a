"""The ``loadtest`` command's entry point (and ``python -m loadtest``'s).

The commands that load Locust or run on gevent — ``run`` and ``ceiling`` (Locust's runner), ``simulate`` and
``merge`` (the metrics' counts, a Locust listener, until the summary takes plain counts), ``emulator`` (the relay
serves each connection on a greenlet) — get gevent's patches first thing, before anything imports sockets or ssl, as
Locust does on import (patching ssl after it was imported may recurse). The others (``report``, ``compare``,
``cleanup``, ``locustfile``) stay free of gevent and Locust.
"""

from __future__ import annotations

import sys

__all__ = ["GEVENT_COMMANDS", "main"]

GEVENT_COMMANDS = ("run", "ceiling", "simulate", "merge", "emulator")


def main() -> int:
    if sys.argv[1:2] and sys.argv[1] in GEVENT_COMMANDS:
        from gevent import monkey

        monkey.patch_all()
    from .cli import main as command

    return command()
