"""``loadtest traffic`` in shards, merged: the logs of each hour read on their own (as separate processes or machines
would), then ``loadtest merge`` of the shards' folders, equal one read of all of them: every partition's requests,
attempts and throttled, the duplicates, the records, the span."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest
from helpers import in_process
from test_classic import _hour_files


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


def test_jobs_with_a_profile_to_write_is_refused_in_one_line(tmp_path, monkeypatch):
    _hour_files(tmp_path / "$logs" / "table", random.Random(8))
    args = [
        "traffic",
        str(tmp_path / "$logs"),
        "--jobs",
        "2",
        "--profile-out",
        str(tmp_path / "p.json"),
        "--out",
        str(tmp_path / "o"),
    ]
    code, _, err = in_process(monkeypatch, *args)
    assert code == 2 and err.count("\n") == 1 and "--profile-out with --jobs" in err and not (tmp_path / "o").exists()


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
