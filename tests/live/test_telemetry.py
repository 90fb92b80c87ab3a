"""Per-partition metrics over OpenTelemetry: a real Locust run with ``--otel`` exporting over OTLP/HTTP to a receiver
on loopback, which decodes the protobuf with OpenTelemetry's own proto package."""

from __future__ import annotations

import os
import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from helpers import ROOT, results_of, warm_start
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)

from loadtest.live.telemetry import INSTRUMENTS, MAX_PARTITIONS, OTHER_LABEL, RATIO, THROTTLED

LOCUSTFILE = str(ROOT / "loadtest" / "locustfile.py")


class Receiver:
    """An OTLP/HTTP metrics endpoint: every export request, decoded, with the resource that sent it."""

    def __init__(self) -> None:
        self.requests: list[ExportMetricsServiceRequest] = []
        received = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 -- http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.path == "/v1/metrics":
                    received.append(ExportMetricsServiceRequest.FromString(body))
                answer = ExportMetricsServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"

    def points(self, name: str, process: str | None = None) -> list[tuple[dict, float]]:
        """Every data point of metric ``name`` received, in order: (attributes, value); only ``process``'s, if given."""
        points = []
        for request in self.requests:
            for resource_metrics in request.resource_metrics:
                resource = {a.key: a.value.string_value for a in resource_metrics.resource.attributes}
                if process is not None and resource.get("test.process") != process:
                    continue
                for scope in resource_metrics.scope_metrics:
                    for metric in scope.metrics:
                        if metric.name != name:
                            continue
                        data = metric.sum if metric.HasField("sum") else metric.gauge
                        for point in data.data_points:
                            attributes = {a.key: _value(a.value) for a in point.attributes}
                            points.append((attributes, point.as_int if point.HasField("as_int") else point.as_double))
        return points

    def last(self, name: str, process: str | None = None) -> dict[tuple, float]:
        """The last value of each series (its attributes but the run's), cumulative: the run's final figure."""
        series: dict[tuple, float] = {}
        for attributes, value in self.points(name, process):
            series[tuple(sorted((k, v) for k, v in attributes.items() if k not in ("run.id", "engine", "test")))] = value
        return series

    def processes(self, name: str) -> set[str]:
        return {
            {a.key: a.value.string_value for a in rm.resource.attributes}.get("test.process", "")
            for request in self.requests
            for rm in request.resource_metrics
            if any(m.name == name for scope in rm.scope_metrics for m in scope.metrics)
        }


def _value(any_value) -> object:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


@contextmanager
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    thread = threading.Thread(target=server.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()


def otel_env(endpoint: str, azurite, process: str = "") -> dict[str, str]:
    return {
        **os.environ,
        **({"AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string} if azurite else {}),
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_TRACES_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_METRIC_EXPORT_INTERVAL": "1000",
        "OTEL_RESOURCE_ATTRIBUTES": f"test.process={process or 'local'}",
    }


def by_partition(results: dict, figure: str) -> dict[tuple, float]:
    return {
        (("op_class", r["op_class"]), ("partition", r["partition"])): r[figure]
        for r in results["partitions"]
        if r["op_class"] != "ALL"
    }


def test_a_locust_run_with_otel_exports_each_partitions_entities_as_results_json_counts_them(azurite, tmp_path):
    """Four keys, one of them hot (hotspot skew): every figure per partition and op class, as results.json says. 8 s:
    a second is exported once folded, 5 s behind (``counts.COMPACT_AFTER_S``), so a shorter run shows only its end."""
    with receiver() as otlp:
        args = ["-f", LOCUSTFILE, "--headless", "--otel", "-u", "4", "-r", "4", "-t", "8s", "--rate", "25"]
        args += ["--key-strategy", "set:4"]
        args += ["--skew", "hotspot:70,25", "--mix", "read=60,upsert=40", "--seed-entities", "40"]
        args += ["--partition-target", "50", "--out", str(tmp_path / "out"), "--no-report"]
        done = warm_start("locust", args, env=otel_env(otlp.endpoint, azurite), timeout=120)
        assert done.code in (0, 3), done.stdout + done.stderr  # 3: the hot key over its target, as asked
        assert "OpenTelemetry enabled" in done.stderr and "partition metrics on meter" in done.stderr, done.stderr
    results = results_of(tmp_path / "out")
    assert len({r["partition"] for r in results["partitions"]}) == 4
    for name, (_, _, figure) in INSTRUMENTS.items():
        assert otlp.last(name) == pytest.approx(by_partition(results, figure)), name
    # exports while it ran, each cumulative figure growing, never falling
    entities = otlp.points("partition_stress.entities")
    per_series: dict[tuple, list[float]] = defaultdict(list)
    for attributes, value in entities:
        per_series[(attributes["partition"], attributes["op_class"])].append(value)
    assert max(len(values) for values in per_series.values()) >= 3, per_series
    assert all(values == sorted(values) for values in per_series.values()), per_series
    assert {a["run.id"] for a, _ in entities} == {results["run"]["id"]}
    assert {a["engine"] for a, _ in entities} == {results["run"]["settings"]["engine"]}
    throttled = {r["partition"]: sum(r.get("throttled_by", {}).values()) for r in results["partitions"]}
    assert sum(otlp.last(THROTTLED).values()) == sum(throttled.values())
    ratios = otlp.last(RATIO)
    hot = max(results["partitions"], key=lambda r: r["ratio"])
    assert ratios[(("partition", hot["partition"]),)] == pytest.approx(hot["ratio"])


def test_a_guid_workload_keeps_the_label_set_bounded_and_its_totals_whole(azurite, tmp_path):
    """Every operation a new PartitionKey: at most ``MAX_PARTITIONS`` labels and "other partitions", which together
    add up to the run's entities."""
    with receiver() as otlp:
        env = otel_env(otlp.endpoint, azurite)
        args = ["-f", LOCUSTFILE, "--headless", "--otel", "-u", "4", "-r", "4", "-t", "3s", "--rate", "25"]
        args += ["--key-strategy", "guid"]
        args += ["--mix", "insert=100", "--out", str(tmp_path / "out"), "--no-report"]
        done = warm_start("locust", args, env=env, timeout=120)
        assert done.code in (0, 3), done.stdout + done.stderr
    results = results_of(tmp_path / "out")
    served = otlp.last("partition_stress.entities")
    labels = {dict(key)["partition"] for key in served}
    assert len(labels) <= MAX_PARTITIONS + 1 and OTHER_LABEL in labels, labels
    assert sum(served.values()) == sum(r["entities"] for r in results["partitions"] if r["op_class"] != "ALL")
    assert sum(served.values()) > 2 * MAX_PARTITIONS  # more partitions than labels


def test_a_master_with_two_workers_exports_the_partitions_once_merged(tmp_path):
    """The workers export Locust's own metrics, not the partitions': the master's merged view is the one series. The
    master starts its own Azurite: with --otel, a child forked in Python (gevent's Popen, `uname -p` for azure-core's
    user agent) once ran on as a copy of the master, which then waited for it forever."""
    from faults.test_cluster import Cluster

    with receiver() as otlp:
        cluster = Cluster(tmp_path, "")
        try:
            for name in ("master", "w0", "w1"):
                cluster.env = {k: v for k, v in otel_env(otlp.endpoint, None, name).items() if "AZURE_STORAGE" not in k}
                if name == "master":
                    master = cluster.master("--otel", "-u", "4", "-r", "4", "-t", "4s", "--rate", "25", "--key-strategy", "set:4",
                                            "--mix", "read=50,upsert=50", "--out", str(tmp_path / "out"),
                                            "--no-report")  # fmt: skip
                else:
                    cluster.start(["--worker", "--otel", "--master-host", "127.0.0.1", "--master-port", str(cluster.port)], name)
            master.wait(timeout=120)
        finally:
            cluster.stop()
        assert master.returncode == 0, cluster.log("master")
    results = results_of(tmp_path / "out")
    assert results["run"]["target_kind"] == "azurite-embedded" and len(results["workers"]["reported"]) == 2
    assert otlp.processes("partition_stress.entities") == {"master"}
    assert otlp.last("partition_stress.entities", "master") == by_partition(results, "entities")
    assert otlp.processes("locust.client.duration") >= {"w0", "w1"}  # Locust's own, from the workers


def prometheus_name(name: str, counter: bool) -> str:
    """An OpenTelemetry metric's name as the Collector's Prometheus exporter writes it (its unit in braces dropped)."""
    return name.replace(".", "_") + ("_total" if counter else "")


def test_the_docs_dashboard_and_collectors_read_what_the_tool_exports():
    """Every metric the Grafana dashboard queries is one the tool exports (by its Prometheus name), with labels it
    carries; each collector's pipeline takes OTLP/HTTP in and names only the parts it declares."""
    import json
    import re

    import yaml

    docs = ROOT / "docs" / "otel"
    exported = {prometheus_name(name, True) for name in [*INSTRUMENTS, THROTTLED]} | {prometheus_name(RATIO, False)}
    labels = {"partition", "op_class", "run_id", "engine", "test", "reason"}
    dashboard = json.loads((docs / "grafana-dashboard.json").read_text())
    queries = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    assert queries and all(set(re.findall(r"partition_stress_\w+", q)) <= exported for q in queries), queries
    assert {m for q in queries for m in re.findall(r"partition_stress_\w+", q)} == exported  # each one charted
    assert all(set(re.findall(r"by \(([\w, ]+)\)", q)[0].replace(" ", "").split(",")) <= labels for q in queries if " by (" in q)
    for config in ("collector-prometheus.yaml", "collector-azure-monitor.yaml"):
        collector = yaml.safe_load((docs / config).read_text())
        assert collector["receivers"]["otlp"]["protocols"]["http"]["endpoint"].endswith(":4318")
        pipeline = collector["service"]["pipelines"]["metrics"]
        for part in ("receivers", "processors", "exporters"):
            assert set(pipeline[part]) <= set(collector[part]), (config, part)
    assert "AccountKey" not in (docs / "collector-azure-monitor.yaml").read_text()  # its secret from the environment
