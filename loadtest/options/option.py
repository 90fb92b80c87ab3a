"""One command-line option's declaration (flags, help, default, parser, the commands that take it) and its
registration with argparse and with Locust's parser: ``stress`` and ``commands`` declare every option with it.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..exit_codes import UsageError
from .values import Parse, switch, text

__all__ = ["REAL_RUN", "STRESS_TEST", "SWITCH_WORDS", "Option", "add_options", "of", "only"]

#: What Locust's parser (configargparse) takes for a switch in ``LOCUST_<OPTION>``, and refuses otherwise, empty too.
SWITCH_WORDS = ("true", "false", "yes", "no", "on", "off", "1", "0")
#: The commands a stress test's option belongs to: a run, a ceiling search, a simulation (``locust -f`` has the same
#: through Locust's parser). ``REAL_RUN``: what a simulation has no use for (it sends nothing), so it refuses them.
STRESS_TEST = frozenset({"run", "ceiling", "simulate", "advise"})  # advise: the workload a simulation has
REAL_RUN = frozenset({"run", "ceiling"})


@dataclass(frozen=True)
class Option:
    """One command-line option: flags, help, default and parser, registered alike with argparse and Locust."""

    flags: tuple[str, ...]
    help: str
    default: Any = ""
    parse: Parse = text
    show: Callable[[Any], Any] = lambda value: value  # the parsed value as a report shows it (and parses back)
    secret: bool = False  # never in the web UI's form or a report
    env: str | None = None  # read from this environment variable when not given
    blank: bool = False  # an empty value is a value (an empty PartitionKey), not "use the default"
    locust: bool = True  # a stress test's option: Locust's parser has it, as ``LOCUST_<OPTION>`` too
    required: bool = False
    many: bool = False  # a positional argument given any number of times
    commands: frozenset[str] = STRESS_TEST  # the ``loadtest`` commands that take it

    @property
    def flag(self) -> str:
        """The long flag (``-u/--users``: ``--users``), as errors name it; a positional argument's name."""
        return next((f for f in self.flags if f.startswith("--")), self.flags[0])

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")

    @property
    def positional(self) -> bool:
        return not self.flags[0].startswith("-")

    @property
    def is_switch(self) -> bool:
        return self.parse is switch

    @property
    def locust_env(self) -> str:
        """Locust's convention: ``--partition-target`` is also ``LOCUST_PARTITION_TARGET``."""
        return f"LOCUST_{self.dest.upper()}"

    def argv(self, value: Any) -> list[str]:
        """This option given ``value`` on the command line the tool hands Locust: ``--flag=value``, one argument, so a
        value that begins with ``-`` (``--partition-key=-hot``) stays a value; a switch alone when on."""
        if self.is_switch:
            return [self.flag] if value else []
        return [f"{self.flag}={value}"]

    def value(self, options: argparse.Namespace, *, environment: bool = True) -> Any:
        """This option's parsed value: given, else ``LOCUST_<OPTION>``, else its own variable, else its default
        (Locust's parser has applied its environment and config files already; ``loadtest run``'s has not).
        ``environment=False``: the variables are not this command's (a simulation's real-run options)."""
        raw, given = getattr(options, self.dest, None), self.flag
        if raw is None or (raw == "" and not self.blank):
            for name in (self.locust_env if self.locust else None, self.env) if environment else ():
                if name and (os.environ.get(name) or (self.is_switch and name in os.environ)):
                    raw, given = os.environ[name], f"${name}"  # an error names where the bad value came from
                    self._check_switch(given, raw)
                    break
            else:
                raw = self.default
        return self.parse(given, raw)

    def _check_switch(self, given: str, raw: str) -> None:
        """A switch from the environment is judged here as Locust's parser would, so that ``loadtest run`` says it
        in one line of its own (Locust's parser would refuse it after the hand-over, as ``locust: error:``)."""
        if self.is_switch and raw.lower() not in SWITCH_WORDS:
            raise UsageError(f"{given} {raw!r}: {self.flag} is a switch; valid values: {', '.join(SWITCH_WORDS)}")


def add_options(parser: argparse.ArgumentParser, options: tuple[Option, ...], title: str = "partition-stress") -> None:
    """Register options with argparse or with Locust's parser (values are parsed later, by ``Settings``).

    Locust's parser gives each its ``LOCUST_<OPTION>`` variable and reads ``locust.conf`` / ``--config``, with
    Locust's precedence (command line, environment, config file, default). ``loadtest run``'s parser leaves
    options not given at ``None``, so that only what was given reaches Locust's command line.
    """
    locust_parser = hasattr(parser, "args_included_in_web_ui")
    # Locust's parser takes its web-UI keywords on add_argument itself, not on groups
    group = parser if locust_parser else parser.add_argument_group(title)
    for opt in options:
        if any(flag in getattr(parser, "_option_string_actions", {}) for flag in opt.flags):
            continue  # Locust's own --profile has the same dest: its value is ours
        help = opt.help
        if not locust_parser and opt.default not in (None, "", False) and "default" not in help:
            help += f" (default {opt.default:g})" if isinstance(opt.default, float) else f" (default {opt.default})"
        # argparse formats help with %: a literal % (as in hotspot:OPS%,KEYS%) must be doubled
        help = help.replace("%", "%%")
        if opt.positional:
            group.add_argument(opt.flags[0], help=help, **({"nargs": "*"} if opt.many else {}))
            continue
        kwargs: dict[str, Any] = {"dest": opt.dest, "help": help, "required": opt.required}
        if opt.is_switch:
            kwargs.update(action="store_true", default=False if locust_parser else None)
        else:
            kwargs.update(type=str, default=("" if opt.default is None else str(opt.default)) if locust_parser else None)
        if locust_parser:
            # secrets stay out of the web UI's form: its page would carry the value
            kwargs.update(include_in_web_ui=not opt.secret, env_var=opt.locust_env)
        group.add_argument(*opt.flags, **kwargs)


def of(command: str, *groups: tuple[Option, ...]) -> tuple[Option, ...]:
    """The options of ``groups`` that ``loadtest <command>`` takes, in their order."""
    return tuple(opt for group in groups for opt in group if command in opt.commands)


def only(command: str, options: tuple[Option, ...]) -> tuple[Option, ...]:
    """A command's own options: each taken by that one command."""
    return tuple(replace(opt, commands=frozenset({command})) for opt in options)
