"""``loadtest traffic`` in shards, merged: the logs of each hour read on their own (as separate processes or machines
would), then ``loadtest merge`` of the shards' folders, equal one read of all of them: every partition's requests,
attempts and throttled, the duplicates, the records, the span."""

from __future__ import annotations

import gzip
import json
import random
import re
import shlex
from pathlib import Path

import pytest
import yaml
from azure.storage.blob import BlobServiceClient
from helpers import ROOT, in_process
from test_classic import _hour_files

from loadtest.account.azurite import azurite_connection_string
from loadtest.account.blob_container import BLOB_API_VERSION


def _figures(results: dict) -> dict:
    counted = ("requests", "attempts", "throttled", "entities", "peak_eps")
    rows = {(r["partition"], r["op_class"]): [r[name] for name in counted] for r in results["partitions"]}
    logs = results["logs"]
    return {
        "rows": rows,
        "account": results["account"]["entities"],
        "logs": {key: logs[key] for key in ("records", "requests", "unreadable", "unattributed", "span", "forms")},
    }


@pytest.fixture(scope="module")
def read_whole(tmp_path_factory) -> tuple[Path, list[str], dict]:
    """Three hours' classic logs (``test_classic._hour_files``) and one read of all of them: the logs' folder, their
    files, and the read's results."""
    folder = tmp_path_factory.mktemp("logs")
    names, _ = _hour_files(folder / "$logs" / "table", random.Random(8))
    with pytest.MonkeyPatch.context() as monkeypatch:
        code, out, err = in_process(monkeypatch, "traffic", str(folder / "$logs"), "--no-report", "--out", str(folder / "whole"))
    assert code in (0, 3), out + err
    assert "Read in" not in out.split("\n")[1]  # one process
    return folder / "$logs", names, json.loads((folder / "whole" / "results.json").read_text())


def test_shards_by_hour_merged_equal_one_read_of_all_the_logs(read_whole, tmp_path, monkeypatch):
    _, names, one = read_whole
    hours = sorted({name.rsplit("/", 2)[-2] for name in names})
    assert len(hours) == 3
    shards = []
    for part in (hours[:1], hours[1:]):  # an hour, then the two after it: whole hours each
        shard = tmp_path / f"shard-{part[0]}"
        given = [n for n in names if n.rsplit("/", 2)[-2] in part]
        code, out, err = in_process(monkeypatch, "traffic", *given, "--no-report", "--out", str(shard))
        assert code in (0, 3) and not (shard / "report.html").exists(), out + err
        shards.append(str(shard))
    merged = tmp_path / "merged"
    code, out, err = in_process(monkeypatch, "merge", *shards, "--out", str(merged))
    assert code in (0, 3), out + err
    added = json.loads((merged / "results.json").read_text())
    assert _figures(added) == _figures(one)
    assert added["run"]["target_kind"] == "logs" and len(added["engines"]) == 2 and (merged / "report.html").is_file()
    assert "read in shards and merged" in added["logs"]["leaves_out"]
    said = lambda results: [(f["kind"], f["partition"], f["message"]) for f in results["findings"]]  # noqa: E731
    assert said(added) == said(one)


def test_jobs_reads_whole_hour_folders_in_processes_and_says_what_one_read_would(read_whole, tmp_path, monkeypatch):
    """``--jobs 2``: the three hours' folders in two shards, each a child ``loadtest traffic``, added: one read's
    figures, said so; the sum a read of its own (its id), each shard in ``engines``."""
    logs, _, one = read_whole
    code, said, err = in_process(monkeypatch, "traffic", str(logs), "--jobs", "2", "--out", str(tmp_path / "jobs"))
    assert code in (0, 3), said + err
    shared = json.loads((tmp_path / "jobs" / "results.json").read_text())
    assert _figures(shared) == _figures(one) and len(shared["engines"]) == 2 and "Read in 2 processes." in said
    assert shared["run"]["id"] not in {engine["engine"] for engine in shared["engines"]}


def test_jobs_write_the_traffic_profile_one_read_writes(read_whole, tmp_path, monkeypatch):
    """--profile-out with --jobs 2: each shard hands its demand's exact counts to the command, which adds them: the
    same profile as one read of all the logs, byte for byte (no file of the hand-over left beside the outputs)."""
    logs, _, _ = read_whole
    profiles = {}
    for jobs in ("1", "2"):
        profile, out = tmp_path / f"traffic-{jobs}.json", tmp_path / f"out-{jobs}"
        args = ("--jobs", jobs, "--profile-out", str(profile), "--no-report", "--out", str(out))
        code, said, err = in_process(monkeypatch, "traffic", str(logs), *args)
        assert code in (0, 3) and f"Traffic profile: {profile}" in said and ("Read in 2 processes." in said) == (jobs == "2"), err
        profiles[jobs] = profile.read_text()
        assert {p.name for p in out.iterdir()} <= {"results.json", "series.parquet", "buckets.parquet", "timeseries.csv"}
    assert profiles["2"] == profiles["1"]
    assert json.loads(profiles["1"])["requests"] > 0 and json.loads(profiles["1"])["partitions"]


def test_a_shard_that_fails_is_named_in_one_line_and_nothing_is_written(read_whole, tmp_path, monkeypatch):
    """A gzip file cut short in one hour's folder: its shard exits 2 saying so; ``--jobs`` names that shard's folder
    and its line, exit 1 (the read failed), the other shards stopped, no outputs."""
    logs, names, _ = read_whole
    copy = tmp_path / "logs"
    for name in names:
        target = copy / Path(name).relative_to(logs)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(Path(name).read_bytes())
    broken = sorted(copy.rglob("*.log"))[-1]
    broken.with_name("cut.log.gz").write_bytes(gzip.compress(broken.read_bytes())[:200])
    code, _, err = in_process(monkeypatch, "traffic", str(copy), "--jobs", "2", "--out", str(tmp_path / "out"))
    *progress, line = err.splitlines()  # before the line, the shards' progress where they took a while (a busy machine)
    assert code == 1 and line.startswith("loadtest: error: ") and all(p.startswith("traffic: shards read: ") for p in progress)
    assert "traffic --jobs: the shard of " in line and f"{broken.parent}/cut.log.gz': a gzip file cut short" in line, line
    assert not (tmp_path / "out").exists()


def test_parts_uploaded_by_hour_and_merged_from_the_container_equal_one_read(
    read_whole, azurite, blob_service, monkeypatch, tmp_path
):
    """A part of the logs a machine (a Kubernetes Job's pod, an Azure Batch task): each hour read under one --run-id,
    its outputs uploaded as CONTAINER/<run-id>/<hour>/; then ``loadtest merge --from-container``: one read's figures."""
    _, names, one = read_whole
    account = azurite_connection_string(azurite.port, blob_port=blob_service.port)
    env = {"AZURE_STORAGE_CONNECTION_STRING": account}
    hours = sorted({name.rsplit("/", 2)[-2] for name in names})
    for hour in hours:
        given = [n for n in names if n.rsplit("/", 2)[-2] == hour]
        part = ("--run-id", "logs-nov", "--engine", f"h{hour}", "--upload", "traffic-parts", "--no-report")
        code, out, err = in_process(monkeypatch, "traffic", *given, *part, "--out", str(tmp_path / hour), env=env)
        assert code in (0, 3), out + err
        assert (
            f"Uploaded: traffic-parts/logs-nov/h{hour}/ (loadtest merge --from-container traffic-parts --run-id logs-nov)" in out
        )
        assert json.loads((tmp_path / hour / "results.json").read_text())["run"]["id"] == "logs-nov"
    merged = tmp_path / "merged"
    code, out, err = in_process(
        monkeypatch, "merge", "--from-container", "traffic-parts", "--run-id", "logs-nov", "--out", str(merged), env=env
    )
    assert code in (0, 3), out + err
    added = json.loads((merged / "results.json").read_text())
    assert _figures(added) == _figures(one) and [e["engine"] for e in added["engines"]] == [f"h{h}" for h in hours]
    assert account.split("AccountKey=")[1].split(";")[0] not in out + err


@pytest.mark.parametrize(
    "args, said",
    [
        (("--upload", "parts"), "--upload parts: name the account that receives the outputs: --connection-string"),
        (("--upload", "parts", "--connection-string", "UseDevelopmentStorage=true", "--jobs", "2"), "with --jobs"),
        (("--upload", "Parts_1", "--connection-string", "UseDevelopmentStorage=true"), "--upload 'Parts_1'"),
        (("--engine", "../x"), "--engine '../x'"),
    ],
)
def test_a_part_that_cannot_be_uploaded_as_asked_is_refused_in_one_line_before_reading(
    read_whole, monkeypatch, tmp_path, args, said
):
    folder, _, _ = read_whole
    code, out, err = in_process(monkeypatch, "traffic", str(folder), *args, "--out", str(tmp_path / "out"))
    assert code == 2 and out == "" and said in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()


def _recipe_args(command: str, env: dict[str, str]) -> list[str]:
    """The ``loadtest traffic`` arguments of a recipe's shell command, its variables as its shell would expand them
    (``'$logs'`` quoted stays itself)."""
    said = command.split("loadtest traffic ", 1)[1]
    expanded = re.sub(r"(?<!')\$\(?\{?(\w+)\}?", lambda m: env.get(m[1], m[0]), said)
    return shlex.split(expanded)


def test_the_kubernetes_job_and_the_batch_task_read_their_days_into_one_merged_read(
    read_whole, azurite, blob_service, monkeypatch, tmp_path
):
    """deploy/traffic's recipes as written: the Indexed Job's command for pods 0 and 1 (a day each) and the Batch
    task's for its day, each reading $logs through the blob endpoint and uploading its part; merged from the
    container, the Job's days equal one read of the same logs, and the Batch task's day the Job's same day."""
    folder, names, one = read_whole
    account = azurite_connection_string(azurite.port, blob_port=blob_service.port)
    service = BlobServiceClient.from_connection_string(account, api_version=BLOB_API_VERSION)
    logs = service.create_container("$logs")
    days = {"10": "01", "11": "02", "12": "02"}  # 10:00 on the 1st, 11:00 and 12:00 on the 2nd: whole hours a day
    for name in names:
        blob = Path(name).relative_to(folder).as_posix()  # table/2026/11/24/HH00/NNNNNN.log
        hour = blob.split("/")[4][:2]
        logs.upload_blob(blob.replace("2026/11/24/", f"2026/11/{days[hour]}/"), Path(name).read_bytes())
    env = {"AZURE_STORAGE_CONNECTION_STRING": account}
    job = yaml.safe_load((ROOT / "deploy" / "traffic" / "job.yaml").read_text())
    (container,) = job["spec"]["template"]["spec"]["containers"]
    variables = {item["name"]: item["value"] for item in container["env"]}
    assert job["spec"]["completionMode"] == "Indexed" and container["envFrom"][0]["secretRef"]["name"]
    for index in (0, 1):
        day = f"{index + 1:02d}"  # what the pod's shell makes of JOB_COMPLETION_INDEX
        args = _recipe_args(container["args"][0], {**variables, "DAY": day})
        code, out, err = in_process(monkeypatch, "traffic", *args, "--out", str(tmp_path / f"day-{day}"), env=env)
        assert code in (0, 3) and f"Uploaded: partition-stress-logs/logs-2026-11/day-{day}/" in out, out + err
    merged = tmp_path / "merged"
    code, out, err = in_process(
        monkeypatch, "merge", "--from-container", "partition-stress-logs", "--run-id", "logs-2026-11", "--out", str(merged),
        env=env,
    )  # fmt: skip
    assert code in (0, 3), out + err
    assert _figures(json.loads((merged / "results.json").read_text())) == _figures(one)
    task = json.loads((ROOT / "deploy" / "traffic" / "batch-task.json").read_text())
    args = _recipe_args(task["commandLine"].rstrip('"'), {})
    at = args.index("--account-url")  # the pool's managed identity there; the test's account has a key
    args = args[:at] + args[at + 2 :] + ["--run-id", "logs-batch", "--out", str(tmp_path / "batch")]
    code, out, err = in_process(monkeypatch, "traffic", *args, env=env)
    assert code in (0, 3) and "Uploaded: partition-stress-logs/logs-batch/day-01/" in out, out + err
    batch, job_day = (json.loads((tmp_path / where / "results.json").read_text()) for where in ("batch", "day-01"))
    assert _figures(batch)["rows"] == _figures(job_day)["rows"] and batch["logs"]["records"] == job_day["logs"]["records"]
