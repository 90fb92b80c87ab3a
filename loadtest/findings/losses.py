"""What the run lost: a Locust worker, seconds of a partition or of the target (outages), the target itself, a step
after the load, acknowledged writes."""

from __future__ import annotations

from ..bounds.run_span import target_lost
from ..results.finding_names import K
from ..results.form import Finding, Results
from ..results.wall_clock import RunClock
from .common import finding
from .outages import Outage, outages

__all__ = ["incomplete", "losses"]

OUTAGES_LISTED = 5  # outages named one by one; the rest in one more finding


def losses(results: Results) -> list[Finding]:
    """WORKER_LOST, OUTAGE, TARGET_LOST, LOST_WRITES."""
    findings: list[Finding] = []
    clock = results.clock
    for lost in results.workers.get("lost", []):
        since = lost.get("last_report_s")
        findings.append(
            finding(
                K.WORKER_LOST,
                (
                    f"worker {lost['worker']} went missing at {clock.at(lost['lost_at_s'])}"
                    + (
                        f" (last report at {clock.at(since)}): seconds from {since} s on lack its share"
                        if since is not None
                        else ": it never reported, so the whole run lacks its share"
                    )
                ),
            )
        )
    findings += _outages(results, clock)
    lost = target_lost(results)
    if lost:
        since, failed = lost
        findings.append(
            finding(
                K.TARGET_LOST,
                f"the target stopped answering at {clock.at(since)}: every one of the {failed:,} operations from then to the end "
                "failed without an answer (refused, reset or timed out)",
            )
        )
    integrity = results.integrity
    if integrity.get("lost"):
        findings.append(
            finding(
                K.LOST_WRITES,
                (
                    f"{integrity['lost']:,} of {integrity['acknowledged_writes']:,} acknowledged writes are not in the table as "
                    f"acknowledged, e.g. {integrity['lost_examples'][:2]}"
                ),
            )
        )
    return findings


def _outages(results: Results, clock: RunClock) -> list[Finding]:
    """Outages of one cause in one finding (a split's partitions, those out while the whole target was), over their
    seconds together; the first ``OUTAGES_LISTED`` by name, the rest counted."""
    groups: dict[tuple, list[Outage]] = {}
    for outage in outages(results):
        groups.setdefault(outage.shared, []).append(outage)
    findings, spans = [], [(min(o.start for o in g), max(o.end for o in g)) for g in groups.values()]
    for (start, end), group in list(zip(spans, groups.values(), strict=True))[:OUTAGES_LISTED]:
        first = group[0]
        names = ", ".join(repr(o.partition) for o in group[:3]) + (f" and {len(group) - 3} more" if len(group) > 3 else "")
        who = f"partition {names}" if len(group) == 1 else f"{len(group)} partitions ({names})"
        longest = max(o.longest_ms for o in group) / 1000.0  # none when only refusals came back (or nothing was timed)
        message = (
            f"{who} completed nothing for {end - start + 1} s, {clock.span(start, end + 1)}: "
            f"{sum(o.failed for o in group):,} attempts timed out, went unanswered or were refused meanwhile"
            + (f", the longest operation took {longest:.1f} s" if longest >= 0.1 else "")
            + f"; cause: {first.cause}"
        )
        partition = first.partition if len(group) == 1 else None
        findings.append(finding(K.OUTAGE, message, partition=partition))
    if len(groups) > OUTAGES_LISTED:
        rest = spans[OUTAGES_LISTED:]
        findings.append(finding(K.OUTAGE, f"{len(rest)} more outages {clock.span(rest[0][0], rest[-1][1] + 1)}: see the charts"))
    return findings


def incomplete(results: Results) -> list[Finding]:
    """INCOMPLETE: a step after the load that failed (a detector among them: ``assess`` runs this one last)."""
    clock = results.clock
    return [finding(K.INCOMPLETE, f"{s['step']} failed at {clock.at(s['at_s'])}: {s['error']}") for s in results.incomplete]
