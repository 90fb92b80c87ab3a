"""The workload the logs describe, as a traffic profile (``--profile-out traffic.json``): each partition's demand per op
class (the heaviest by name, exactly; the rest as a distribution), the operation mix, the arrival rate over the span
(the day's shape) and the demand that names no partition. Small and versioned; ``simulate --traffic`` replays it.

Its form, declared once (what ``profile_counts`` writes and ``load_profile`` reads back against), and its reading.
Demand is what was asked: an operation's first attempt (its client request id's first record), with the entities it
asked for, whatever the service answered.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired, TypedDict

from ..exit_codes import UsageError
from ..results.schema import Epoch
from ..service.entities import MAX_ENTITY_BYTES
from ..service.operations import OpClass
from ..typed.column_checkers import shown
from ..typed.reader import Check, read

__all__ = [
    "FORMAT",
    "MAX_COUNT",
    "MAX_PROFILE_BYTES",
    "MAX_SPAN_S",
    "VERSION",
    "BINS",
    "BIN_SIZES",
    "TrafficProfile",
    "load_profile",
    "traffic_flag",
]

FORMAT = "partition-stress traffic profile"
VERSION = 1
BINS = 1440  # at most this many bins of the arrival rate over the span (a day in minutes)
BIN_SIZES = (1, 10, 60, 300, 600, 3600, 86_400)  # seconds a bin, the first that keeps the span in ``BINS``
#: Requests, entities and keys a profile counts: exact in a float, as a replay's shares and rates are.
MAX_COUNT = 2**53
#: A year of logs (a leap year's): a replay holds the rate of every second of the span, 8 bytes each.
MAX_SPAN_S = 366 * 86_400
#: A profile is small (``profile_counts.HEAVIEST`` keys of at most 1 KiB, ``BINS`` bins): a file past this is none the tool wrote.
MAX_PROFILE_BYTES = 64 * 2**20


# --- the form a profile is read against (``typed_reader``), its rules declared once --------------------------------


def _whole(low: int, high: int, counts: str = "") -> Any:
    """A whole number from ``low`` to ``high`` (``counts``: of what)."""
    return Annotated[int, Check(lambda n: low <= n <= high, f"a whole number{counts} from {low:,} to {high:,}")]


Count = _whole(0, MAX_COUNT)
#: A partition's share of requests or entities: whole as the logs count them, a fraction where a design splits a key
#: over several (``advice.verify``'s sharded profile).
Amount = Annotated[float, Check(lambda n: 0 <= n <= MAX_COUNT, f"a number from 0 to {MAX_COUNT:,}")]
#: The op classes a demand is counted in: the service's two targets.
Counted = Literal[OpClass.GET.value, OpClass.PUT.value]
_EPOCH = Epoch.__metadata__[0]  # a time ``datetime`` holds: the span's start and its end


class Asked(TypedDict):
    requests: Amount
    entities: Amount


Demand = dict[Counted, Asked]


class _Lived(TypedDict, total=False):  # total=False, not NotRequired: this module's annotations are postponed
    #: the first and last second of the span it was asked in, where it was asked only for a while (a minute's key)
    alive: Annotated[list[Count], Check(lambda s: len(s) == 2 and s[0] <= s[1], "two seconds, first to last")]


class NamedPartition(_Lived):
    key: str
    demand: Demand


class TailGroup(TypedDict):
    """Partitions alike in demand (their requests' power of two), counted together."""

    requests_at_least: Count
    keys: _whole(1, MAX_COUNT)
    demand: Demand


class Span(TypedDict):
    start: Annotated[int, _EPOCH]
    seconds: _whole(1, MAX_SPAN_S, " of seconds")


class Rate(TypedDict):
    bin_s: _whole(1, BIN_SIZES[-1], " of seconds")
    requests: Annotated[
        list[Count], Check(lambda bins: 0 < len(bins) <= BINS and any(bins), f"1 to {BINS:,} bins, a request in one at least")
    ]


class LoggedOperation(TypedDict):
    operation: str
    op_class: Counted
    requests: Count
    entities: Count


def _twice(rows: list[NamedPartition]) -> list[str]:
    """The step to the first partition named a second time."""
    seen: set[str] = set()
    for i, row in enumerate(rows):
        if row["key"] in seen:
            return [f"[{i}]", ".key"]
        seen.add(row["key"])
    return []


class TrafficProfile(TypedDict):
    """A traffic profile, as ``ProfileCounts.profile`` writes it and ``load_profile`` reads it."""

    format: str
    version: int
    span: Annotated[Span, Check(lambda s: _EPOCH.test(s["start"] + s["seconds"]), "a span that ends before the year 10000")]
    records: NotRequired[Count]
    requests: Count
    hashed_keys: NotRequired[bool]
    entity_bytes: NotRequired[_whole(1, MAX_ENTITY_BYTES, " of bytes") | None]
    rate: Rate
    operations: list[LoggedOperation]
    partitions: Annotated[list[NamedPartition], Check(lambda rows: not _twice(rows), "each partition named once", _twice)]
    tail: list[TailGroup]
    unattributed: Demand


def traffic_flag(path: str) -> str:
    """``--traffic PATH`` as a line names it: a name with a newline or another control character quoted, escaped."""
    return f"--traffic {path if path.isprintable() else repr(path)}"


def load_profile(path: str) -> dict[str, Any]:
    """A profile ``--traffic`` names, read against its form (``TrafficProfile``) and its rules across fields: one line
    naming the flag, the field and the rule otherwise."""
    flag = traffic_flag(path)
    file = Path(path)
    try:
        if file.stat().st_size > MAX_PROFILE_BYTES:
            raise UsageError(f"{flag}: a traffic profile is at most {MAX_PROFILE_BYTES:,} bytes; the tool wrote none this size")
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{flag}: no such file; write one with loadtest traffic LOGS --profile-out FILE") from None
    except (OSError, ValueError, RecursionError) as e:  # unreadable, not UTF-8 or JSON, a NUL in the name, nested deep
        raise UsageError(f"{flag}: not a traffic profile ({type(e).__name__}: {' '.join(str(e)[:120].split())})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UsageError(f"{flag}: not a traffic profile (its 'format' must be {FORMAT!r})")
    if type(data.get("version")) is not int or data["version"] != VERSION:
        raise UsageError(f"{flag}: profile version {shown(data.get('version'))}; this tool reads version {VERSION}")
    try:
        read(TrafficProfile, data, "profile")
    except ValueError as wrong:
        raise UsageError(f"{flag}: {wrong}") from None
    span, rate = data["span"]["seconds"], data["rate"]
    if len(rate["requests"]) != -(-span // rate["bin_s"]):
        bins = len(rate["requests"])
        raise UsageError(
            f"{flag}: profile.rate.requests: {bins:,} bins of {rate['bin_s']:,} s cover {bins * rate['bin_s']:,} s; a span of "
            f"{span:,} s takes {-(-span // rate['bin_s']):,}"
        )
    if data["requests"] <= 0:
        raise UsageError(f"{flag}: the profile holds no demand (0 requests)")
    for i, row in enumerate(data["partitions"]):
        if "alive" in row and row["alive"][1] >= span:
            raise UsageError(f"{flag}: profile.partitions[{i}].alive: {row['alive'][1]:,} is past the span's {span:,} s")
    named = sum(d["requests"] for row in (*data["partitions"], *data["tail"]) for d in row["demand"].values())
    for field, total in (
        ("rate.requests", sum(rate["requests"])),
        ("partitions, tail and unattributed", named + sum(d["requests"] for d in data["unattributed"].values())),
    ):
        if not math.isclose(total, data["requests"], rel_tol=1e-9):  # a split key's shares add up to it, nearly
            asked = f"{round(total):,}" if float(total).is_integer() else f"{total:,.2f}"
            raise UsageError(
                f"{flag}: profile.{field} ask {asked} requests, the profile's requests are {data['requests']:,}: "
                "each counts the same demand"
            )
    if not named:
        raise UsageError(
            f"{flag}: its partitions and tail ask no request: the logs named no partition (its {data['requests']:,} "
            "requests named none), so there is no key to replay"
        )
    return data
