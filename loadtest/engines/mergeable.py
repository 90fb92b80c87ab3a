"""An engine's whole count, as ``loadtest merge`` adds it: what results.json carries beside the figures.

The metrics' snapshot (per-second buckets by wall-clock second, partition and op class; the HDR
latency histograms in HdrHistogram's own encoding; the key sketches in DataSketches' own
serialization; the run's clock), the request profile's counts, the per-second samples and who
counted them. The integrity ledger's counts, the settings and the run's identity are in the
results already.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from typing import Any

from ..metrics import PartitionMetrics
from ..request_profile import RequestProfile

__all__ = ["MERGEABLE_VERSION", "capture"]

MERGEABLE_VERSION = 1


def capture(
    metrics: PartitionMetrics,
    workload: RequestProfile,
    samples: Mapping[int, Mapping[str, Any]],
    *,
    run_id: str,
    engine: str,
) -> dict[str, Any]:
    """This engine's counts at the end of its test, nothing reset."""
    return {
        "version": MERGEABLE_VERSION,
        "run_id": run_id,
        "engine": engine,
        "host": socket.gethostname(),
        "metrics": metrics.snapshot(),
        "workload": workload.snapshot(),
        "samples": [[second, dict(sample)] for second, sample in sorted(samples.items())],
    }
