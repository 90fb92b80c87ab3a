"""Import this in a locustfile to get the tool's options and listeners (the users are yours)::

import loadtest.plugin  # noqa: F401
from loadtest.users import TableUser

class OrdersUser(TableUser):
    key_strategy = "hash-prefix:16"
    mix = {"read": 80, "upsert": 20}
"""

from __future__ import annotations

from typing import Any

from locust import events
from locust.argument_parser import LocustArgumentParser
from locust.env import Environment

from .lifecycle import register
from .options import CEILING_OPTIONS, add_options

__all__: list[str] = []


@events.init_command_line_parser.add_listener
def _options(parser: LocustArgumentParser, **_: Any) -> None:
    add_options(parser)
    add_options(parser, CEILING_OPTIONS)  # read by the ceiling search's shape, when a locustfile has it


@events.init.add_listener
def _init(environment: Environment, **_: Any) -> None:
    register(environment)
