"""``loadtest traffic --jobs N``: the logs read in up to N processes, each a shard of whole folders (an hour's files are
one folder, so a record written twice is matched within its shard), then added as ``loadtest merge`` adds engines'
counts: the results of one read. Each shard is the command as a user runs it, on its files, into a folder of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..engines.engine_read import read_results
from ..engines.merge import merge
from ..exit_codes import RunError, UsageError
from ..options.traffic import TRAFFIC_OPTIONS
from ..outputs import BUCKETS_FILE, RESULTS_FILE
from ..progress import Progress
from ..results.form import Results
from .profile_counts import ProfileCounts

__all__ = ["FORWARDED", "PROFILE_STATE_ENV", "PROFILE_STATE_FILE", "ShardProfile", "read_in_shards", "shards"]

#: The options each shard is given as the command was: which records count, and how they are judged.
FORWARDED = (
    "format", "client_request_id", "since", "until", "hash_keys", "entity_bytes", "partition_target",
    "account_target", "profile",
)  # fmt: skip
_NOTHING_COUNTED = 2  # a shard whose records hold no entity operation (an hour of table operations): passed by
#: Set by the parent in a shard's environment: write the demand's exact counts (``ProfileCounts.state``) as
#: ``PROFILE_STATE_FILE`` in the shard's own --out, for the parent's --profile-out. A hand-over between the processes
#: of one command (as Locust's master and workers have their messages), not an option; it names no path.
PROFILE_STATE_ENV = "LOADTEST_TRAFFIC_SHARD_PROFILE"
PROFILE_STATE_FILE = "profile-state.json"


def shards(names: Sequence[str], jobs: int) -> list[list[str]]:
    """``names`` (in their order: their hours') as at most ``jobs`` runs of whole folders, about as many bytes each."""
    folders: dict[str, list[str]] = {}
    for name in names:
        folders.setdefault(os.path.dirname(name), []).append(name)
    groups = list(folders.values())
    if jobs < 2 or len(groups) < 2:
        return [list(names)]
    sizes = [sum(os.path.getsize(name) for name in group) for group in groups]
    total, held, out = max(sum(sizes), 1), 0, [[] for _ in range(min(jobs, len(groups)))]
    for group, size in zip(groups, sizes, strict=True):
        out[min(len(out) - 1, int((held + size / 2) / total * len(out)))] += group  # a folder to the shard its middle is in
        held += size
    return [shard for shard in out if shard]


def _forwarded(ns: argparse.Namespace) -> list[str]:
    """The command's own options a shard is given, as they were written."""
    given = []
    for option in TRAFFIC_OPTIONS:
        raw = getattr(ns, option.dest, None)
        if option.dest in FORWARDED and raw not in (None, "", False):
            given += option.argv(raw)
    return given


@dataclass
class ShardProfile:
    """The shards' demand added (``--profile-out`` with ``--jobs``): the counts, their records' first and last time,
    and how many records."""

    counts: ProfileCounts
    first: float
    last: float
    records: int


def read_in_shards(
    ns: argparse.Namespace, groups: list[list[str]], run_id: str, *, profile: bool = False
) -> tuple[Results, ShardProfile | None]:
    """Each group read by a child ``loadtest traffic`` at once, then added: one read's results, run ``run_id``; and
    (``profile``) the shards' demand added, as one read would have counted it."""
    with tempfile.TemporaryDirectory(prefix="loadtest-traffic-") as held:
        children = []
        for number, group in enumerate(groups):
            folder, log = Path(held) / f"shard-{number}", Path(held) / f"shard-{number}.log"
            argv = [sys.executable, "-m", "loadtest", "traffic", *_forwarded(ns), *group, "--no-report", "--out", str(folder)]
            env = {**os.environ, PROFILE_STATE_ENV: "1"} if profile else None
            with log.open("w") as said:  # each shard says its lines to its own file; the command says the sum
                child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=said, stderr=subprocess.STDOUT, env=env)
            children.append((folder, log, child))
        read = []
        try:
            with Progress("traffic: shards read", len(children), "shards") as progress:
                for number, (folder, log, child) in enumerate(children):
                    code = child.wait()
                    progress.advance()
                    if code in (0, 3):
                        read.append(folder)
                        continue
                    said = log.read_text(errors="replace")
                    if code == _NOTHING_COUNTED and "no entity operation counted" in said:
                        continue  # an hour of table operations alone: nothing of it to add
                    last = said.strip().splitlines()[-1:] or [""]
                    raise RunError(f"traffic --jobs: the shard of {_folders(groups[number])} failed (exit {code}): {last[0]}")
        finally:
            for _, _, child in children:  # a shard that failed, or Ctrl-C: the others stopped, by their PIDs
                if child.poll() is None:
                    child.kill()
                    child.wait()
        if not read:
            raise UsageError("traffic: no entity operation counted in any shard of the logs given")
        merged = merge(((str(f), read_results(str(f), f / RESULTS_FILE)) for f in read), _beside)
        added = _profiles(read) if profile else None
    merged.run = replace(merged.run, id=run_id)  # the sum of the shards, a read of its own (each shard's id in ``engines``)
    return merged, added


def _profiles(folders: Sequence[Path]) -> ShardProfile:
    """The shards' demand counts added: what one read of all their records would have counted."""
    counts, first, last, records = ProfileCounts(), float("inf"), float("-inf"), 0
    for folder in folders:
        begun, ended, read = counts.add_state(json.loads((folder / PROFILE_STATE_FILE).read_text()))
        first, last, records = min(first, begun), max(last, ended), records + read
    return ShardProfile(counts, first, last, records)


def _beside(sources: Sequence[str]) -> Iterator[Path]:
    for source in sources:
        yield Path(source) / BUCKETS_FILE


def _folders(group: Sequence[str]) -> str:
    folders = sorted({os.path.dirname(name) for name in group})
    more = len(folders) - 1
    return folders[0] + (f" and {more:,} more folder{'s' if more > 1 else ''}" if more else "")
