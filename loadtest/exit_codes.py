"""How a run ends: the contract's exit codes, and the errors shown to the user as one line, never a traceback."""

from __future__ import annotations

__all__ = [
    "ERROR_PREFIX",
    "EXIT_CHECK_FAILED",
    "EXIT_OK",
    "EXIT_RUN_FAILED",
    "EXIT_USAGE",
    "RunError",
    "ToolError",
    "UsageError",
    "error_line",
]

EXIT_OK = 0
EXIT_RUN_FAILED = 1
EXIT_USAGE = 2
EXIT_CHECK_FAILED = 3

#: What begins every error line the tool prints.
ERROR_PREFIX = "loadtest: error: "


def error_line(message: str) -> str:
    """The one line a user sees for an error: a line break inside it (a name read from input) is shown, not obeyed."""
    return ERROR_PREFIX + message.replace("\r", "\\r").replace("\n", "\\n")


class ToolError(Exception):
    """An error shown to the user as one line, never as a traceback."""

    exit_code = EXIT_RUN_FAILED


class UsageError(ToolError):
    """Bad input: the message names the rule and the valid values."""

    exit_code = EXIT_USAGE


class RunError(ToolError):
    """The run could not be done: unreachable target, refused credentials, missing Azurite."""

    exit_code = EXIT_RUN_FAILED
