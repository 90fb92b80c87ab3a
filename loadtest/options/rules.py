"""The options whose values follow a rule of their own (a finding kind, a profile, a table name, a client…), each
a parser ``(flag, value) -> value`` raising a ``UsageError`` that names the flag and the valid values. The
generic parsers (numbers, switches, mixes) are in ``values``; the declarations (``stress``, ``commands``) use both.
"""

from __future__ import annotations

import os
import re
import reprlib
import socket
from pathlib import Path
from typing import Any

from ..account.connection_string import check_connection_string, http_url
from ..counting.buckets import UNATTRIBUTED_DEMAND
from ..exit_codes import UsageError
from ..results.finding_kinds import FAIL_ON  # --fail-on takes the kinds the declaration marks
from ..results.finding_names import FindingKind
from ..service.entities import validate_key
from ..service.log_forms import FORMS, parse_time
from ..service.retry import RetryStrategy, parse_retry
from ..service.scale_targets import PROFILES
from ..transports.base import TRANSPORTS
from ..workload.arrivals import ARRIVALS
from ..workload.skew import parse_skew
from .values import text

__all__ = [
    "account_url",
    "arrivals",
    "client",
    "connection_string",
    "container",
    "engine",
    "fail_on",
    "file_to_create",
    "host_engine",
    "key",
    "log_form",
    "profile",
    "read_name",
    "retry",
    "run_id",
    "skew",
    "table",
    "utc_time",
]


def fail_on(flag: str, value: Any) -> tuple[FindingKind, ...]:
    kinds = tuple(k.strip().upper() for k in str(value).split(",") if k.strip())
    if kinds in ((), ("NEVER",)):
        return ()
    valid = [k.lower() for k in FAIL_ON]
    for kind in kinds:
        if kind.lower() not in valid:
            raise UsageError(f"{flag}: unknown finding {kind.lower()!r}; valid: never, {', '.join(valid)}")
    return tuple(FindingKind(k) for k in kinds)


def key(flag: str, value: Any) -> str:
    return validate_key(text(flag, value), flag)


def skew(flag: str, value: Any) -> str:
    parse_skew(text(flag, value), 2)  # names --skew and the valid skews
    return text(flag, value)


def profile(flag: str, value: Any) -> str:
    if value not in PROFILES:
        raise UsageError(f"{flag} {value!r}: valid profiles: {', '.join(PROFILES)}")
    return str(value)


_SHOWN = reprlib.Repr()
_SHOWN.maxstring = _SHOWN.maxother = 80


def _shown(value: Any) -> str:
    """A refused value as one line shows it: quoted, escaped (a newline or a NUL is seen, not obeyed), cut short."""
    return _SHOWN.repr(value)


def _name(flag: str, value: Any, pattern: str, rule: str) -> str:
    """A name the service (or a blob path) takes only in one form: ``rule`` says which."""
    name = text(flag, value)
    if name and not re.fullmatch(pattern, name):
        raise UsageError(f"{flag} {_shown(name)}: {rule}")
    return name


def table(flag: str, value: Any) -> str:
    return _name(flag, value, r"[A-Za-z][A-Za-z0-9]{2,62}", "table names are 3-63 letters and digits, starting with a letter")


def account_url(flag: str, value: Any) -> str:
    url = text(flag, value)
    return url and http_url(flag, url, example="https://<account>.table.core.windows.net", query=True)


def connection_string(flag: str, value: Any) -> str:
    """Judged here, without the network: a malformed string is a usage error before anything starts."""
    given = text(flag, value)
    if given:
        check_connection_string(given, flag)
    return given


def arrivals(flag: str, value: Any) -> str:
    if value not in ARRIVALS:
        raise UsageError(f"{flag} {value!r}: valid arrivals: {', '.join(ARRIVALS)}")
    return str(value)


def client(flag: str, value: Any) -> str:
    if value not in TRANSPORTS:
        raise UsageError(f"{flag} {value!r}: valid clients: {', '.join(TRANSPORTS)}")
    return str(value)


def retry(flag: str, value: Any) -> RetryStrategy:
    return parse_retry(str(value))  # names --retry and its forms


#: The one rule for a run id and an engine's name, wherever one is read (a flag, results.json, a blob's name): each
#: becomes a folder (``reports/<run-id>/<engine>``, a blob's ``<run-id>/<engine>/``), a query's text (server-logs.kql)
#: and, hashed, a RowKey prefix. No separator, no leading dot (so never ``.`` or ``..``), no quote, no control character.
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}"
NAME_RULE = "1-63 letters, digits, '.', '_' or '-', starting with a letter or digit"


def run_id(flag: str, value: Any) -> str:
    """A name engines share: it becomes a blob folder and, hashed, a RowKey prefix."""
    return _name(flag, value, NAME_PATTERN, NAME_RULE)


def engine(flag: str, value: Any) -> str:
    return run_id(flag, value)  # the same rule: an engine's name is a blob folder too


def read_name(where: str, value: Any) -> str:
    """A run id or an engine's name read from a file or a listing (``where`` names it and its field): by the flags'
    rule, or a ``UsageError`` that says so; "" is no name, refused too."""
    if not isinstance(value, str) or not re.fullmatch(NAME_PATTERN, value):
        raise UsageError(f"{where} {_shown(value)}: not a name: {NAME_RULE}")
    return value


def host_engine() -> str:
    """``--engine``'s default: this host's name, made a valid engine name."""
    name = re.sub(r"[^A-Za-z0-9._-]", "-", socket.gethostname()).strip("._-")[:63]
    return name or "engine"


def container(flag: str, value: Any) -> str:
    """The storage service's rule for container names."""
    rule = (
        "a blob container name is 3-63 lowercase letters, digits and single hyphens, starting and ending with a letter or digit"
    )
    return _name(flag, value, r"[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){2,62}", rule)


def log_containers(flag: str, value: Any) -> list[str]:
    """Blob containers that hold request logs, a comma list: names by the storage service's rule, or $logs."""
    given = text(flag, value)
    return [name if name == "$logs" else container(flag, name) for name in given.split(",")] if given else []


def file_to_write(flag: str, value: Any) -> str:
    """A file this tool will write (a request log, a traffic profile): not a folder, in a folder that exists and can
    be written; "" is none."""
    given = text(flag, value)
    if not given:
        return given
    path = Path(given).expanduser()
    if path.is_dir():
        raise UsageError(f"{flag} {given!r}: a folder; give a file to write, e.g. {flag.strip('-').replace('-', '')}.json")
    folder = path.resolve().parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise UsageError(f"{flag} {given!r}: its folder {str(folder)!r} does not exist or cannot be written")
    return given


def file_to_create(flag: str, value: Any) -> str:
    """A file this tool will write, replacing any there (a JUnit file): not a folder, in a folder that exists or can
    be created, and can be written; "" is none."""
    given = text(flag, value)
    if not given:
        return given
    try:
        path = Path(given).expanduser().resolve()
        if path.is_dir():
            raise UsageError(f"{flag} {given!r}: a folder; give a file to write, e.g. {path / 'junit.xml'}")
        existing = next(p for p in path.parents if p.exists())
    except (OSError, ValueError) as err:  # a NUL byte, a name too long
        why = getattr(err, "strerror", None) or err
        raise UsageError(f"{flag} {given!r}: not a file name this system can write ({why})") from None
    if not (existing.is_dir() and os.access(existing, os.W_OK | os.X_OK)):
        raise UsageError(
            f"{flag} {given!r}: its folder cannot be created or written ({str(existing)!r} is not a folder this user "
            "can write to)"
        )
    return given


def unattributed(flag: str, value: Any) -> str:
    if value not in UNATTRIBUTED_DEMAND:
        raise UsageError(f"{flag} {value!r}: valid values: {', '.join(UNATTRIBUTED_DEMAND)}")
    return str(value)


#: The key design families ``loadtest advise`` searches, in the order it tries and shows them.
DESIGN_FAMILIES = ("shard", "hash-prefix", "finer", "seconds-first", "guid", "accounts")


def families(flag: str, value: Any) -> tuple[str, ...]:
    """``advise --families``: one or more of ``DESIGN_FAMILIES``, comma list, each once."""
    names = [name.strip() for name in str(value).split(",") if name.strip()]
    if not names or len(set(names)) < len(names) or any(name not in DESIGN_FAMILIES for name in names):
        raise UsageError(
            f"{flag} {value!r}: one or more design families, each once, comma list; valid: {', '.join(DESIGN_FAMILIES)}"
        )
    return tuple(name for name in DESIGN_FAMILIES if name in names)


def split_ways(flag: str, value: Any) -> list[int]:
    """``compare --split-hot``: two or more ways to split the hot partitions, 1 (as logged) to 1000."""
    if value in ("", None):
        return []
    try:
        ways = [int(w) for w in str(value).split(",")]
    except ValueError:
        ways = []
    if len(ways) < 2 or len(set(ways)) < len(ways) or not all(1 <= w <= 1000 for w in ways):
        raise UsageError(f"{flag} {value!r}: two or more different whole numbers from 1 to 1000, comma list, e.g. 1,4,16")
    return ways


def log_form(flag: str, value: Any) -> str:
    """The form of the logs ``loadtest traffic`` reads, or ``auto`` (each source's first line tells)."""
    if value != "auto" and value not in FORMS:
        raise UsageError(f"{flag} {value!r}: valid forms: auto, {', '.join(FORMS)}")
    return str(value)


def utc_time(flag: str, value: Any) -> float | None:
    """A time in UTC, ISO 8601 (``2026-11-24T14:00:00Z``), as epoch seconds; "" is none."""
    if value in ("", None):
        return None
    try:
        return parse_time(str(value))
    except ValueError:
        raise UsageError(f"{flag} {value!r}: give a UTC time, ISO 8601, e.g. 2026-11-24T14:00:00Z") from None
