"""Access skew over a set of N items: YCSB's uniform, zipfian and hotspot distributions.

Each draws an index in ``[0, n)`` from its own seeded ``random.Random``, so a run with
``--key-seed`` is repeatable. Index 0 is the most popular. Zipfian samples the exact
distribution by inverse CDF (a bisection over cumulative weights) rather than YCSB's
Gray et al. approximation, which is exact only for the two most popular items.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import accumulate

import numpy as np

from ..exit_codes import UsageError

__all__ = ["SKEWS", "Hotspot", "Skew", "Uniform", "Zipfian", "parse_skew"]

ZIPFIAN_CONSTANT = 0.99  # YCSB's default


@dataclass
class Skew:
    """Uniform: every item equally likely."""

    n: int
    seed: int | None = None
    rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.n < 1:
            raise UsageError(f"a key set needs at least 1 key, not {self.n}")
        self.rng = random.Random(self.seed)

    def next(self) -> int:
        return self.rng.randrange(self.n)

    def probability(self, index: int) -> float:
        return 1.0 / self.n

    def probabilities(self) -> np.ndarray:
        """Every item's probability, index order: what ``next`` draws from (the simulator's demand per key)."""
        return np.full(self.n, 1.0 / self.n)


Uniform = Skew


@dataclass
class Zipfian(Skew):
    """P(i) proportional to 1 / (i + 1) ** theta."""

    theta: float = ZIPFIAN_CONSTANT

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 < self.theta < 1:
            raise UsageError("the zipfian constant (theta) must be between 0 and 1, exclusive, e.g. zipfian:0.99")
        self.cumulative = list(accumulate(1.0 / (i + 1) ** self.theta for i in range(self.n)))
        self.zetan = self.cumulative[-1]

    def next(self) -> int:
        return min(self.n - 1, bisect_right(self.cumulative, self.rng.random() * self.zetan))

    def probability(self, index: int) -> float:
        return (1.0 / (index + 1) ** self.theta) / self.zetan

    def probabilities(self) -> np.ndarray:
        return np.diff(np.asarray(self.cumulative), prepend=0.0) / self.zetan


@dataclass
class Hotspot(Skew):
    """``operations`` of the accesses go to the first ``keys`` share of the items (YCSB's hotspot)."""

    keys: float = 0.2
    operations: float = 0.8

    def __post_init__(self) -> None:
        super().__post_init__()
        if not (0 < self.keys <= 1 and 0 <= self.operations <= 1):
            raise UsageError(
                "hotspot:OPS,KEYS takes percentages: OPS from 0 to 100, KEYS above 0 up to 100, e.g. hotspot:80,20 "
                "(80 % of operations on 20 % of keys)"
            )
        self.hot = max(1, min(self.n, round(self.n * self.keys)))

    def next(self) -> int:
        if self.hot == self.n or self.rng.random() < self.operations:
            return self.rng.randrange(self.hot)
        return self.hot + self.rng.randrange(self.n - self.hot)

    def probability(self, index: int) -> float:
        if self.hot == self.n:
            return 1.0 / self.n
        return self.operations / self.hot if index < self.hot else (1 - self.operations) / (self.n - self.hot)

    def probabilities(self) -> np.ndarray:
        if self.hot == self.n:
            return np.full(self.n, 1.0 / self.n)
        cold = np.full(self.n - self.hot, (1 - self.operations) / (self.n - self.hot))
        return np.concatenate([np.full(self.hot, self.operations / self.hot), cold])


SKEWS = ("uniform", "zipfian[:theta]", "hotspot:OPS%,KEYS%")


def parse_skew(spec: str, n: int, seed: int | None = None) -> Skew:
    """``uniform``, ``zipfian``, ``zipfian:0.8``, ``hotspot:80,20``; an error names ``--skew`` and the valid skews."""
    name, _, params = str(spec).strip().partition(":")
    try:
        if name == "uniform" and not params:
            return Uniform(n, seed)
        if name == "zipfian":
            return Zipfian(n, seed, float(params) if params else ZIPFIAN_CONSTANT)
        if name == "hotspot":
            ops, keys = (float(p) / 100 for p in params.split(",")) if params else (0.8, 0.2)
            return Hotspot(n, seed, keys=keys, operations=ops)
        rule = "unknown skew"
    except ValueError:
        rule = "its parameters are numbers: zipfian:THETA, hotspot:OPS,KEYS"
    except UsageError as err:
        rule = str(err)
    raise UsageError(f"--skew {spec!r}: {rule}; valid: {', '.join(SKEWS)}")
