"""A user's own locustfile: TableUser subclasses configured by class attributes, run by Locust's runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT

LOCUSTFILE = """
import loadtest.plugin  # noqa: F401
from loadtest.users import TableUser


class ThreeKeysUser(TableUser):
    key_strategy = "set:3"
    skew = "hotspot:90,34"
    mix = {"insert": 3, "read": 1}
"""


def test_class_attributes_configure_a_users_workload(azurite, tmp_path):
    locustfile = tmp_path / "my_locustfile.py"
    locustfile.write_text(LOCUSTFILE)
    env = {**os.environ, "AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "locust",
            "-f",
            str(locustfile),
            "--headless",
            "-u",
            "2",
            "-r",
            "2",
            "-t",
            "4s",
            "--seed-entities",
            "30",
            "--out",
            str(tmp_path / "out"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    entities = {}
    for row in results["partitions"]:
        if row["op_class"] != "ALL":
            entities[row["partition"]] = entities.get(row["partition"], 0) + row["entities"]
    assert set(entities) == {"k0000000", "k0000001", "k0000002"}
    assert entities["k0000000"] > 0.75 * sum(entities.values())  # the hotspot: 90 % on the first third
