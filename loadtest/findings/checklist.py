"""The docs' performance checklist for tables, as findings: which of its practices the workload broke.

Read from what the request profile counted (``request_evidence``; ``Results.workload``), each with the docs' remedy.
Each rule wants some evidence first (``MIN_EVIDENCE`` operations), so a handful of requests
never makes a finding. They are advice about the design, not failures, unless ``--fail-on``
names them.
"""

from __future__ import annotations

from typing import Any

from ..counting.buckets import NEWEST, OLDEST
from ..results.finding_kinds import CHECKLIST, KINDS
from ..results.finding_names import K
from ..results.form import Finding, FindingKind, Results
from ..results.schema import KeyEnd

__all__ = ["CHECKLIST", "LOW_DENSITY", "findings", "judged_peak", "key_order", "landed", "ordered_ends", "range_words", "ranges"]

MIN_EVIDENCE = 20  # operations a rule needs before it speaks
SCAN_SHARE = 0.10  # partition range and table scans, of GET requests: "table queries sparingly"
LOW_DENSITY = 0.10  # rows returned / rows scanned, per request name
UNPROJECTED_SHARE = 0.5  # GET requests without $select ...
PROJECTION_BYTES = 512  # ... of entities at least this big (as seeded): $select would cut the payload
BATCHABLE_SHARE = 0.5  # single writes that one client sent to one partition within a second, with others
READ_BEFORE_WRITE_SHARE = 0.10  # inserts and unconditional updates of an entity the client had just read
EDGE_SHARE = 0.5  # write requests to keys at or past (before) every key written before: append-only (prepend-only)
MIN_MOVES = 3  # times the end moved to a new key, past the key set's first seconds


def findings(results: Results) -> list[Finding]:
    """The checklist's findings for this run: the key order's from the counts (a run's, a simulation's, the logs'), the
    rest from the request profile (none where it counted nothing)."""
    workload = results.workload
    if not workload:
        return key_order(results)
    names: list[dict[str, Any]] = workload.get("names", [])
    gets = [n for n in names if n["op_class"] == "GET"]
    out = [*_scans(gets), *_density(gets), *_projection(gets, results.run.entity_bytes)]
    out += _writes(names, workload, open_loop=results.open_loop)
    return out + key_order(results)


def _finding(kind: FindingKind, message: str, op_class: str | None = None) -> Finding:
    declared = KINDS[kind]
    return Finding(
        kind=kind,
        partition=None,
        op_class=op_class,  # type: ignore[arg-type]
        message=message,
        remedy=CHECKLIST[kind],
        cause=str(declared.cause),
        act=str(declared.act),
    )


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.0%} ({part:,} of {whole:,})"


def _listed(names: list[dict[str, Any]]) -> str:
    return ", ".join(repr(n["name"]) for n in names[:3]) + (", …" if len(names) > 3 else "")


def _scans(gets: list[dict[str, Any]]) -> list[Finding]:
    requests = sum(n["requests"] for n in gets)
    scans = [n for n in gets if n["reach"] in ("partitions", "table")]
    scanned = sum(n["requests"] for n in scans)
    if requests < MIN_EVIDENCE or scanned / requests <= SCAN_SHARE:
        return []
    message = f"{_share(scanned, requests)} of GET requests were partition range or full table scans: {_listed(scans)}"
    return [_finding(K.SCANS, message, "GET")]


def _density(gets: list[dict[str, Any]]) -> list[Finding]:
    out = []
    for n in gets:
        density = n.get("density")
        if density is None or n["scanned"] < MIN_EVIDENCE or density >= LOW_DENSITY:
            continue
        how = " (estimated from the rows seeded in its key range)" if n["estimated"] else ""
        message = (
            f"{n['name']!r} returned {n['returned']:,} of the {n['scanned']:,} entities it scanned{how}: "
            f"query density {density:.1%}, under {LOW_DENSITY:.0%}"
        )
        out.append(_finding(K.LOW_QUERY_DENSITY, message, "GET"))
    return out


def _projection(gets: list[dict[str, Any]], entity_bytes: int) -> list[Finding]:
    requests = sum(n["requests"] for n in gets)
    whole = [n for n in gets if n["unprojected"]]
    unprojected = sum(n["unprojected"] for n in whole)
    if requests < MIN_EVIDENCE or unprojected / requests < UNPROJECTED_SHARE or entity_bytes < PROJECTION_BYTES:
        return []
    message = f"{_share(unprojected, requests)} of GET requests read whole entities of {entity_bytes:,} bytes: {_listed(whole)}"
    return [_finding(K.NO_PROJECTION, message, "GET")]


def _writes(names: list[dict[str, Any]], workload: dict[str, Any], *, open_loop: bool) -> list[Finding]:
    """UNBATCHED_WRITES and READ_BEFORE_WRITE. UNBATCHED_WRITES is not raised in an open loop: there a user is a lane
    the schedule hands operations to, not a client of the application, so the writes one user sent to one partition in
    a second are the schedule's rate over the users (1,500/s over 30 users: 50 each), a consequence of the user count;
    in a closed loop each user is a client and its pace is the design's."""
    out = []
    single, batchable = workload.get("single_writes", 0), workload.get("batchable", 0)
    if not open_loop and single >= MIN_EVIDENCE and batchable / single >= BATCHABLE_SHARE:
        message = (
            f"{_share(batchable, single)} of single writes went from one client to one partition in a second "
            f"that took {workload.get('batchable_per_s', 0)} or more of them"
        )
        out.append(_finding(K.UNBATCHED_WRITES, message, "PUT"))
    deciding = [n for n in names if n["op"] in ("insert", "update")]
    writes, after = sum(n["requests"] for n in deciding), sum(n["after_read"] for n in deciding)
    if writes >= MIN_EVIDENCE and after / writes >= READ_BEFORE_WRITE_SHARE:
        message = (
            f"{_share(after, writes)} of inserts and unconditional updates wrote an entity the same client had just read: "
            f"{_listed([n for n in deciding if n['after_read']])}"
        )
        out.append(_finding(K.READ_BEFORE_WRITE, message, "PUT"))
    return out


def ordered_ends(results: Results) -> list[tuple[FindingKind, KeyEnd]]:
    """The ends of the key order where new keys kept landing: most write requests went to keys at or past every key
    written before them, and the end moved to a new key ``MIN_MOVES`` times or more (a fixed key set's largest key, hot
    or not, never moves past its first seconds)."""
    order = results.key_order
    out = []
    for kind, name in ((K.APPEND_ONLY, "append"), (K.PREPEND_ONLY, "prepend")):
        end = order.get(name) if order else None
        if end and end["puts"] >= MIN_EVIDENCE and end["share"] >= EDGE_SHARE and end["moves"] >= MIN_MOVES:
            out.append((kind, end))
    return out


def ranges(results: Results) -> list[tuple[str, FindingKind, KeyEnd]]:
    """``ordered_ends`` as the ranges their findings name (``NEWEST``, ``OLDEST``): (the range, its kind, its end)."""
    return [(NEWEST if kind == K.APPEND_ONLY else OLDEST, kind, end) for kind, end in ordered_ends(results)]


def landed(end: KeyEnd, partition: str) -> bool:
    """``partition`` is one of the keys that came in at ``end`` (between the first that moved it and the last)."""
    span = end.get("landed")
    return bool(span) and min(span) <= partition <= max(span)


def judged_peak(end: KeyEnd, *, open_loop: bool) -> float:
    """The range's peak as a partition's level reads it: asked for in an open loop, else served."""
    return end["offered_peak_eps"] if open_loop and end["offered_peak_eps"] else end["peak_eps"]


def range_words(end: KeyEnd, *, open_loop: bool) -> str:
    """The range where new keys land, as one range partition serves it: its peak against the partition target (what
    was throttled there is THROTTLED's, on the same range)."""
    asked = open_loop and end["offered_peak_eps"]
    figure = f"was asked for {end['offered_peak_eps']:,.0f}" if asked else f"served {end['peak_eps']:,.0f}"
    served = f" and served {end['peak_eps']:,.0f}/s" if asked else ""
    return (
        f"{figure} entities/s at peak{served}, {end['ratio']:.0%} of the {end['target']:,}/s partition target, as one "
        "range partition serves it however many keys it holds"
    )


def key_order(results: Results) -> list[Finding]:
    """APPEND_ONLY and PREPEND_ONLY, with the range where the new keys landed (a sized remedy reads them too)."""
    out = []
    for kind, end in ordered_ends(results):
        where = "at or past the largest" if kind == K.APPEND_ONLY else "at or before the smallest"
        message = (
            f"{end['share']:.0%} of write requests ({end['puts']:,}) went to a PartitionKey {where} key written before "
            f"it, and that end moved to a new key {end['moves']:,} times: the range where new keys land "
            f"{range_words(end, open_loop=results.open_loop)}"
        )
        out.append(_finding(kind, message, "PUT"))
    return out
