"""What Locust's own parser reads of a command line the tool hands over: Locust's flags, and whether the user placed
the master's address (a flag, its ``LOCUST_`` variable, a config file)."""

from __future__ import annotations

import argparse

from ..child_process import free_port

__all__ = ["locust_flags", "own_master"]

#: Where a master listens and its workers connect (Locust's option names): the user's to place.
MASTER_ADDRESS = ("master_bind_host", "master_bind_port", "master_host", "master_port")


def locust_parser() -> argparse.ArgumentParser:
    """Locust's own parser: its flags, their ``LOCUST_`` variables and its config files."""
    from locust.argument_parser import get_empty_argument_parser, setup_parser_arguments

    locust = get_empty_argument_parser(add_help=False)
    setup_parser_arguments(locust)
    return locust


def locust_flags() -> set[str]:
    """Locust's own flags, which ``run`` and ``ceiling`` hand over to it."""
    return set(locust_parser()._option_string_actions)  # noqa: SLF001


def own_master(extra: list[str]) -> list[str]:
    """``--workers``: the workers are the run's own forks, so its master listens on loopback at a free port. Locust's
    5557 on every interface let a second run on the machine fail to bind (a traceback) and exposed the master. An
    address the user placed stands, as Locust reads it: a flag, its variable (``LOCUST_MASTER_NODE_PORT`` for
    ``--master-port``), a config file."""
    locust = locust_parser()
    given, _ = locust.parse_known_args(extra)
    flags = {arg.split("=")[0] for arg in extra}
    placed = {flag for action in locust._actions if action.dest in MASTER_ADDRESS for flag in action.option_strings}  # noqa: SLF001
    if flags & placed or any(getattr(given, dest) != locust.get_default(dest) for dest in MASTER_ADDRESS):
        return []
    port = str(free_port())
    return ["--master-bind-host", "127.0.0.1", "--master-bind-port", port, "--master-port", port]
