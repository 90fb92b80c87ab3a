"""The live partition view: per partition, entities/s now and their peak against the target, in an open loop the
demand, throttled attempts and the current finding; and the recent seconds for the charts.

- ``/partition-stress/data``: the view as JSON, which the Partitions tab in Locust's web UI polls (``webui/``,
  served by ``locust_ui``; without that build, a table tab in Locust's own UI filled on each ``/stats/requests``);
- Locust's HTML report (``--html``) carries the same panel, drawn from the view the test ended with;
- ``/partition-stress/report``: the last finished test's report.html; ``/partition-stress/`` leads to the tab.

The top ``TOP_N`` partitions by load are shown; the rest together as "other partitions", judged by the hottest.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from locust.env import Environment

from ..counting.buckets import OTHER
from ..counting.counts import RunCounts
from ..counting.phases import PEAK_WINDOW_S, moving_average_peak
from ..findings.levels import level
from ..options.settings import Settings
from ..outputs import REPORT_FILE
from ..redact import redact_values
from ..report.badges import badge_colours
from ..results.form import Finding, Results
from ..results.summary import demand, per_partition, series
from ..running.distributed import Cluster
from ..running.run_results import settings_info
from ..service.operations import OpClass
from . import locust_ui

__all__ = ["TOP_N", "live_view", "register"]

TOP_N = 10
NOW_WINDOW_S = 3  # "now" = the mean of the last complete seconds
CHART_SECONDS = 120
TAB_KEY = locust_ui.TAB_KEY


@dataclass(frozen=True)
class _Load:
    """A partition's (or a group's) entities in each second of the span: GET and PUT served, and the demand."""

    get: list[float]
    put: list[float]
    asked: list[float]
    throttled: list[float]
    aged: tuple[float, float] = (0.0, 0.0)  # the peaks (served, asked) of the seconds put away before these

    @property
    def both(self) -> list[float]:
        return [g + q for g, q in zip(self.get, self.put, strict=True)]

    def peak(self) -> float:
        return max(moving_average_peak(self.both, PEAK_WINDOW_S), self.aged[0])

    def asked_peak(self) -> float:
        return max(moving_average_peak(self.asked, PEAK_WINDOW_S), self.aged[1])

    def judged(self, open_loop: bool) -> float:
        """The entities/s the finding holds against one partition's target: the busier of the peak and now, served
        or (open loop, as the verdict judges) asked for."""
        if open_loop:
            return max(self.asked_peak(), _recent(self.asked))
        return max(self.peak(), _recent(self.get) + _recent(self.put))

    def scaled(self, by: float) -> _Load:
        aged = (self.aged[0] * by, self.aged[1] * by)
        return _Load(*([v * by for v in values] for values in (self.get, self.put, self.asked, self.throttled)), aged)

    @staticmethod
    def total(loads: list[_Load]) -> _Load:
        def summed(values: list[list[float]]) -> list[float]:
            return [sum(column) for column in zip(*values, strict=True)]

        return _Load(*(summed([getattr(v, name) for v in loads]) for name in ("get", "put", "asked", "throttled")))


def live_view(
    metrics: RunCounts, *, target: int, now: float | None = None, top_n: int = TOP_N, open_loop: bool = False
) -> dict[str, Any]:
    """Per partition: GET/PUT entities/s now, peak 10-s average, ratio and finding; and a chart series. In an open loop
    also the demand now and its peak, which the ratio and finding judge (as the verdict does).

    The "other partitions" row shows their load together (GET, PUT and demand now: the sums) and is judged by its
    hottest member, whose peak it shows and names: the target is one partition's, never their sum's. The untracked
    keys folded together (outside the heaviest the metrics keep apart) count as their mean partition. The load now and
    the ranking read the seconds the counts still hold as buckets (the last ``counts.AGED_AFTER_S``: the chart's two
    minutes); the peaks and throttled attempts cover the whole run, the older seconds' from ``RunCounts.aged_peaks``."""
    now = time.time() if now is None else now
    if metrics.stopped:  # a stopped test's chart ends where it stopped: no seconds of zeros drawn after it
        now = min(now, metrics.stopped)
    last = int(now) - 1  # the last complete second
    grouped = per_partition({key: b for key, b in list(metrics.buckets.items()) if key[0] <= last})
    aged = metrics.aged_peaks
    if not grouped and not aged.peaks:
        return {
            "target": target,
            "open_loop": open_loop,
            "columns": _columns(open_loop),
            "rows": [],
            "chart": _chart([], {}),
            "partitions": 0,
        }
    earliest = min((s for by_second in grouped.values() for s in by_second), default=last)  # a worker's clock behind
    first = min(int(metrics.started), earliest) if metrics.started else earliest
    # the seconds held (from the start while nothing is put away); the chart's axis counts from the start
    span = list(range(max(first, earliest) if aged.peaks else first, last + 1))
    totals: dict[str, int] = {}
    for (partition, _), by_second in grouped.items():
        if partition != OTHER:
            totals[partition] = totals.get(partition, 0) + sum(b.entities for b in by_second.values())
    for partition in aged.peaks:  # hot before the seconds held: shown after the busy ones, with its peak
        if partition != OTHER:
            totals.setdefault(partition, 0)
    ranked = sorted(totals, key=totals.get, reverse=True)
    has_other = any(partition == OTHER for partition, _ in grouped) or OTHER in aged.peaks
    untracked = max(0, round(metrics.distinct_partitions()) - len(ranked)) if has_other else 0
    shown, rest = ranked[:top_n], ranked[top_n:] + ([OTHER] if untracked else [])
    others = len(rest) - (1 if untracked else 0) + untracked  # partitions behind the "other" row
    groups = [(p, [p]) for p in shown] + ([(f"other partitions ({others})", rest)] if rest else [])

    def load(partition: str) -> _Load:
        get, put = grouped.get((partition, OpClass.GET), {}), grouped.get((partition, OpClass.PUT), {})
        asked = [g + q for g, q in zip(demand(get, span), demand(put, span), strict=True)]
        throttled = [
            sum(by_second[s].throttled for by_second in (get, put) if s in by_second) for s in span
        ]  # every throttled answer is a throttled attempt, failed or retried
        return _Load(series(get, span), series(put, span), asked, throttled, aged.peaks.get(partition, (0.0, 0.0)))

    rows, served, asked, throttled_each, heat = [], {}, {}, {}, {}
    for name, members in groups:
        loads = {p: load(p) for p in members}
        group = _Load.total(list(loads.values()))  # the row's load: its members' together
        each = {p: v.scaled(1 / untracked) if p == OTHER else v for p, v in loads.items()}  # one partition's figures
        hottest = max(members, key=lambda p: each[p].judged(open_loop))
        judged = each[hottest]
        throttled = sum(group.throttled) + sum(aged.throttled[p] for p in members)
        label = name if len(members) == 1 else f"{name}, hottest " + (hottest if hottest != OTHER else "untracked (mean)")
        row = {
            "partition": label,
            "series": name,
            "get_eps": round(_recent(group.get), 1),
            "put_eps": round(_recent(group.put), 1),
            "peak_eps": round(judged.peak(), 1),
            "target": target,
        }
        if open_loop:  # the design's question: what the schedule asked, sent or not
            row.update(demand_eps=round(_recent(group.asked), 1), demand_peak_eps=round(judged.asked_peak(), 1))
        ratio = judged.judged(open_loop) / target
        row.update(ratio=f"{ratio:.0%}", finding="THROTTLED" if throttled else level(ratio))
        rows.append(row)
        served[name] = [int(v) for v in group.both[-CHART_SECONDS:]]
        asked[name] = [int(v) for v in group.asked[-CHART_SECONDS:]]
        throttled_each[name] = [int(v) for v in group.throttled[-CHART_SECONDS:]]
        heat[name] = [int(v) for v in judged.both[-CHART_SECONDS:]]  # one partition's, as the target is
    seconds = [s - first for s in span][-CHART_SECONDS:]
    return {
        "target": target,
        "open_loop": open_loop,
        "columns": _columns(open_loop),
        "rows": rows,
        "chart": _chart(seconds, served, asked if open_loop else {}, throttled_each, heat),
        "partitions": len(ranked) + untracked,
    }


def _chart(
    seconds: list[int],
    served: dict[str, list[int]],
    asked: dict[str, list[int]] | None = None,
    throttled: dict[str, list[int]] | None = None,
    heat: dict[str, list[int]] | None = None,
) -> dict[str, Any]:
    """The charts' seconds (since the start) and per row: entities served (the row's together), asked for (open
    loop) and throttled attempts in each; and for the heat map, held against one partition's target, the entities
    served of the partition the row's finding judges (a group's hottest)."""
    return {"t": seconds, "series": served, "demand": asked or {}, "throttled": throttled or {}, "heat": heat or {}}


def _finding(finding: Finding) -> dict[str, Any]:
    """A stopped test's finding as the tab lists it (results.json's fields)."""
    return {"kind": str(finding.kind), "partition": finding.partition, "op_class": finding.op_class, "message": finding.message}


def _recent(values: list[float]) -> float:
    tail = values[-NOW_WINDOW_S:]
    return sum(tail) / len(tail) if tail else 0.0


#: The table's columns, in the tab and in Locust's own table tab (without the tool's build); the demand's in an open
#: loop only.
TABLE_STRUCTURE = [
    {"key": "partition", "title": "PartitionKey"},
    {"key": "get_eps", "title": "GET entities/s now"},
    {"key": "put_eps", "title": "PUT entities/s now"},
    {"key": "demand_eps", "title": "demand entities/s now (open loop)"},
    {"key": "demand_peak_eps", "title": "demand peak 10-s"},
    {"key": "peak_eps", "title": "peak 10-s entities/s"},
    {"key": "target", "title": "target"},
    {"key": "ratio", "title": "ratio"},
    {"key": "finding", "title": "finding"},
]
_DEMAND = {"demand_eps", "demand_peak_eps"}


def _columns(open_loop: bool) -> list[dict[str, str]]:
    return [column for column in TABLE_STRUCTURE if open_loop or column["key"] not in _DEMAND]


class LiveRun(Protocol):
    """What the live view reads of the run (``stress_run.StressRun``): settings and outputs change between tests."""

    settings: Settings
    metrics: RunCounts
    cluster: Cluster
    out: Path | None
    results: Results | None  # the last finished test's


def register(environment: Environment, run: LiveRun) -> None:
    """The partition view in Locust's web UI (if running) and in Locust's HTML report: the Partitions tab of the
    tool's build of Locust's UI (``locust_ui``), or without the build a table tab in Locust's own; its data at
    ``/partition-stress/data``; and the last finished test's report.html at ``/partition-stress/report``."""

    def view() -> dict[str, Any]:
        info = settings_info(run.settings)  # the facts its results will hold, as every other reader reads them
        data = live_view(run.metrics, target=info.partition_target, open_loop=info.recorded.arrival_rate > 0)
        data["state"] = environment.runner.state if environment.runner else "stopped"
        data["report"] = "/partition-stress/report" if run.out and (run.out / REPORT_FILE).exists() else None
        data["lost_workers"] = list(run.cluster.lost.values())
        finished = run.results if run.out and data["state"] == "stopped" else None  # its outputs written (--no-report too)
        data["findings"] = [_finding(f) for f in finished.findings] if finished else []
        data["badges"] = {kind: badge._asdict() for kind, badge in badge_colours().items()}  # as every page has them
        return redact_values(data)  # keys and messages as the tab, its table and Locust's report show them

    locust_ui.with_partitions(lambda: view() if environment.runner is not None else None)
    web_ui = environment.web_ui
    if web_ui is None:
        return
    from flask import Response, redirect, request

    if not locust_ui.serve(environment):  # Locust's own UI: the tab as a table, filled on each /stats/requests poll
        web_ui.template_args["extended_tabs"] = [{"title": "Partitions", "key": TAB_KEY}]
        web_ui.template_args["extended_tables"] = [{"key": TAB_KEY, "structure": TABLE_STRUCTURE}]

        @web_ui.app.after_request
        def _extend_stats(response: Response) -> Response:
            if request.path != "/stats/requests" or response.status_code != 200:
                return response
            body = response.get_json(silent=True) or {}
            body["extended_stats"] = [{"key": TAB_KEY, "data": view()["rows"]}]
            response.set_data(json.dumps(body))
            return response

    web_ui.template_args.setdefault("extended_csv_files", []).append(
        {"href": "/partition-stress/report", "title": "Hot-partition report of the last test (report.html)"}
    )

    @web_ui.app.route("/partition-stress/data")
    def _data() -> Response:
        return Response(json.dumps(view()), mimetype="application/json")

    @web_ui.app.route("/partition-stress/")
    def _page() -> Response:  # the side page of earlier versions: the view is the tab now
        return redirect(f"/?tab={TAB_KEY}")

    @web_ui.app.route("/partition-stress/report")
    def _report() -> Response:
        path = run.out / REPORT_FILE if run.out else None
        if path is not None and not path.exists() and run.settings.no_report:
            said = "No report: the test ran with --no-report. `loadtest report` on its folder draws it from its results.json."
            return Response(said, status=404, mimetype="text/plain")
        if path is None or not path.exists():
            return Response("No report yet: it is written when a test stops.", status=404, mimetype="text/plain")
        return Response(path.read_text(encoding="utf-8"), mimetype="text/html")
