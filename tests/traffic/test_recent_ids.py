"""An operation's first attempt among its retries: the ids of the last minutes held as hashes in sorted runs say what
a set of every id and its last time says, block after block, the window moving with each block's newest record."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from loadtest.traffic.recent_ids import RecentIds


def reference(blocks: list[tuple[list[str], np.ndarray]], window: float) -> list[list[bool]]:
    """Every id's last time in a dict, the window cut after each block at its newest record less ``window``."""
    seen: dict[str, float] = {}
    cutoff, answers = -np.inf, []
    for ids, times in blocks:
        here: set[str] = set()
        said = []
        for i in ids:
            said.append(not i or (i not in here and not (i in seen and seen[i] >= cutoff)))
            here.add(i)
        for i, t in zip(ids, times, strict=True):
            if i:
                seen[i] = max(seen.get(i, -np.inf), t)
        cutoff = float(times.max()) - window
        answers.append(said)
    return answers


@pytest.mark.parametrize("seed", range(4))
def test_first_attempts_are_those_of_a_set_of_every_id_and_its_last_time(seed):
    rng = random.Random(seed)
    blocks, now = [], 0.0
    for _ in range(30):
        n = rng.randint(1, 400)
        times = np.sort(np.array([now + rng.random() * 20 for _ in range(n)]))
        now = float(times.max())
        ids = ["" if rng.random() < 0.05 else f"op-{rng.randrange(300)}" for _ in range(n)]
        blocks.append((ids, times))
    recent = RecentIds(window=30.0)
    ours = [recent.first(pa.chunked_array([pa.array(ids, pa.string())]), times).tolist() for ids, times in blocks]
    assert ours == reference(blocks, 30.0)
    assert sum(map(sum, ours)) < sum(len(ids) for ids, _ in blocks)  # some retries found, across blocks too
