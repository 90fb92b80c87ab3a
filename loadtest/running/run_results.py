"""What a stopped test ran, as its results: the run's facts (target, table, settings, user classes, the time it
ran and was planned), its counts summarised, a ceiling search judged, the emulator's range splits and the engine's
mergeable count; and the hand-over of its outputs to a blob container (``--upload``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from locust.env import Environment

from ..ceiling.judge import judged
from ..ceiling.shape import CeilingShape
from ..engines.blobs import upload_outputs, upload_place
from ..options.settings import Settings
from ..redact import redact
from ..results import summary
from ..results.form import Results, RunInfo
from ..results.mergeable import capture
from .stress_run import StressRun
from .user_classes import describe

__all__ = ["results_of", "settings_info", "upload_of"]


def settings_info(settings: Settings, **facts: Any) -> RunInfo:
    """The run's facts as its settings fix them (its targets, profile, entity size and settings as shown), with the
    ``facts`` the test knows by then (its id, start, target, table...; none while it runs): made here once, for its
    results and for the live view alike."""
    blank = {"id": "", "started": "", "duration_s": 0.0, "target_kind": "", "table": "", "seeded": 0}
    fixed = {"partition_target": settings.partition_target, "account_target": settings.account_target}
    fixed |= {"profile": settings.profile, "entity_bytes": settings.shape.bytes, "settings": settings.public()}
    return RunInfo(**blank | facts | fixed)


def results_of(run: StressRun, environment: Environment) -> Results:
    """The test's results from everything counted (every worker's last seconds collected first)."""
    settings = run.settings
    info = settings_info(
        settings,
        id=run.run_id,
        started=datetime.fromtimestamp(run.started, UTC).isoformat(timespec="seconds"),
        duration_s=round(time.time() - run.started, 1),
        target_kind=run.target.kind,
        table=run.table.name,
        seeded=run.seeded,
        endpoint=redact(run.target.endpoint),
        emulator=run.target.is_emulator,
        users=getattr(environment.runner, "target_user_count", 0) or 0,
        interrupted=run.interrupted,
        planned_s=_planned(environment),
        user_classes=describe(settings, environment.user_classes, _users_by_class(environment)),
    )
    shape = environment.shape_class
    search = shape.ran(time.time()) if isinstance(shape, CeilingShape) else None  # a ceiling search's steps
    gathered = run.cluster.gathered()
    buckets = run.metrics.frame()  # one frame for the summary and the mergeable count (a second was 14 MB at 10 min)
    results = summary.build(run.metrics, info, **gathered, buckets=buckets)
    if search:
        results.ceiling = judged(*search, run.metrics, info, gathered["samples"])
    if run.target.emulator is not None and len(results.timeseries):  # the emulator's range splits, on the run's clock
        first = results.timeseries.iloc[0]
        results.range_splits = run.target.emulator.splits(int(first["second"] - first["t"]))
    results.mergeable = capture(
        run.metrics, run.cluster.workload, gathered["samples"], run_id=run.run_id, engine=settings.engine, buckets=buckets
    )
    return results


def _planned(environment: Environment) -> float:
    """The run's planned duration (``-t``), 0 when it had none (a web UI test runs until stopped)."""
    return float(getattr(environment.parsed_options, "run_time", 0) or 0)


def _users_by_class(environment: Environment) -> dict[str, int]:
    """The users each class had (Locust's count once spawned, else those running as the test stops)."""
    runner = environment.runner
    return dict(getattr(runner, "target_user_classes_count", None) or getattr(runner, "user_classes_count", {}))


def upload_of(run: StressRun) -> tuple[str, Callable[[Path], object]] | None:
    """``--upload``: the step that hands the written outputs over to the blob container, and its name."""
    settings = run.settings
    if not settings.upload:
        return None
    place = upload_place(settings.upload, run.run_id, settings.engine)
    return f"the upload to {place}", lambda out: upload_outputs(
        out,
        container=settings.upload,
        run_id=run.run_id,
        engine=settings.engine,
        connection_string=settings.connection_string,
        account_url=settings.account_url,
        timeout=settings.timeout,
    )
