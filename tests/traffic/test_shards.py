"""``loadtest traffic`` in shards, merged: the logs of each hour read on their own (as separate processes or machines
would), then ``loadtest merge`` of the shards' folders, equal one read of all of them: every partition's requests,
attempts and throttled, the duplicates, the records, the span."""

from __future__ import annotations

import json
import random

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


def test_shards_by_hour_merged_equal_one_read_of_all_the_logs(tmp_path, monkeypatch):
    names, _ = _hour_files(tmp_path / "$logs" / "table", random.Random(8))
    whole = tmp_path / "whole"
    code, out, err = in_process(monkeypatch, "traffic", str(tmp_path / "$logs"), "--out", str(whole))
    assert code in (0, 3), out + err
    hours = sorted({name.rsplit("/", 2)[-2] for name in names})
    assert len(hours) == 3
    shards = []
    for hour in hours:
        shard = tmp_path / f"shard-{hour}"
        code, out, err = in_process(monkeypatch, "traffic", *[n for n in names if f"/{hour}/" in n], "--out", str(shard))
        assert code in (0, 3), out + err
        shards.append(str(shard))
    merged = tmp_path / "merged"
    code, out, err = in_process(monkeypatch, "merge", *shards, "--out", str(merged))
    assert code in (0, 3), out + err
    one, added = (json.loads((folder / "results.json").read_text()) for folder in (whole, merged))
    assert _figures(added) == _figures(one)
    assert added["run"]["target_kind"] == "logs" and len(added["engines"]) == 3
    assert "read in shards and merged" in added["logs"]["leaves_out"]
    said = lambda results: [(f["kind"], f["partition"], f["message"]) for f in results["findings"]]  # noqa: E731
    assert said(added) == said(one)
