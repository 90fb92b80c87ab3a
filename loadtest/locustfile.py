"""The ``locust -f loadtest/locustfile.py`` entry: the users, the tool's options, its listeners.

``loadtest run`` runs this same file through Locust's own runner.
"""

from __future__ import annotations

from typing import Any

from locust import events

from loadtest.config import add_options
from loadtest.lifecycle import register
from loadtest.users import HotPartitionUser

__all__ = ["HotPartitionUser"]


@events.init_command_line_parser.add_listener
def _options(parser: Any, **_: Any) -> None:
    add_options(parser)


@events.init.add_listener
def _init(environment: Any, **_: Any) -> None:
    register(environment)
