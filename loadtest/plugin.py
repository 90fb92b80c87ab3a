"""The tool's options and listeners, registered with Locust's events on import.

``import loadtest`` (``from loadtest import TableUser``) imports it, so a locustfile needs nothing else;
``import loadtest.plugin`` alone does the same for a locustfile whose users are not the tool's.
"""

from __future__ import annotations

import platform
from typing import Any

from locust import events
from locust.argument_parser import LocustArgumentParser
from locust.env import Environment

from .lifecycle import register
from .options.option import add_options
from .options.stress import CEILING_OPTIONS, OPTIONS

__all__: list[str] = []

# azure-core's user agent names the platform, and finding it forks `uname -p` the first time: done now, before Locust
# sets up OpenTelemetry (--otel), whose fork hook starts a thread in a forked child, which under gevent switches to
# the hub: a master's child then ran on as a copy of the master, and the master waited for it at its first client
platform.platform()


@events.init_command_line_parser.add_listener
def _options(parser: LocustArgumentParser, **_: Any) -> None:
    add_options(parser, OPTIONS)
    add_options(parser, CEILING_OPTIONS)  # read by the ceiling search's shape, when a locustfile has it


@events.init.add_listener
def _init(environment: Environment, **_: Any) -> None:
    register(environment)
