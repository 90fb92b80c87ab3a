"""The ``loadtest`` command's entry point (and ``python -m loadtest``'s).

The commands that load Locust — ``run`` and ``ceiling`` (Locust's runner) — get gevent's patches first thing, before
anything imports sockets or ssl, as Locust does on import (patching ssl after it was imported may recurse). The others
stay free of Locust and patch nothing: ``report``, ``merge``, ``simulate``, ``compare``, ``cleanup`` and ``locustfile``
load neither Locust nor gevent; ``emulator`` serves on gevent's own sockets, unpatched.
"""

from __future__ import annotations

import sys

__all__ = ["GEVENT_COMMANDS", "main"]

GEVENT_COMMANDS = ("run", "ceiling")


def main() -> int:
    if sys.argv[1:2] and sys.argv[1] in GEVENT_COMMANDS:
        from gevent import monkey

        monkey.patch_all()
    from .cli import main as command

    return command()
