"""The verification's bounds: the served share is held within 15 % of the simulation's, or within three standard
errors of the two windows where their seconds say the window itself moves more than that."""

from __future__ import annotations

import pandas as pd
import pytest

from loadtest.advice.verify import SERVED_WITHIN, _agree, _figures


def _window(served: list[int], asked: int = 2_000) -> pd.DataFrame:
    """One partition's seconds: ``served`` entities each second of ``asked``, a quarter of attempts throttled."""
    rows = [("hot", t, s, asked, 0, 100, 25) for t, s in enumerate(served)]
    frame = pd.DataFrame(rows, columns=["partition", "t", "entities", "offered", "unsent", "attempts", "throttled"])
    return frame.set_index(["partition", "t"])


def test_a_steady_window_is_held_to_the_fixed_bound_and_a_window_whose_seconds_spread_to_their_measured_one():
    steady, sim = _figures(_window([500, 500, 500, 500]), 4, 1.2), _figures(_window([480, 480, 480, 480]), 4, 1.2)
    assert steady["served_share_se"] == 0.0 == sim["served_share_se"]
    off = _figures(_window([600, 600, 600, 600]), 4, 1.2)  # 25 % over the simulation's share, every second alike
    agrees, served_bound, _ = _agree(off, sim, 0.0)
    assert served_bound == SERVED_WITHIN and not agrees
    assert _agree(steady, sim, 0.0)[:2] == (True, SERVED_WITHIN)

    spread = _figures(_window([900, 500, 500, 500]), 4, 1.2)  # the same mean as `off`: a starting burst in one second
    assert spread["served_share"] == off["served_share"]
    assert spread["served_share_se"] == pytest.approx(pd.Series([0.45, 0.25, 0.25, 0.25]).std() / 2, abs=1e-4)
    agrees, served_bound, _ = _agree(spread, sim, 0.0)
    assert served_bound > SERVED_WITHIN
    assert served_bound == pytest.approx(3 * spread["served_share_se"] / sim["served_share"], rel=1e-6)
    assert agrees


def test_under_three_seconds_no_spread_is_read_and_the_fixed_bound_holds():
    short = _figures(_window([900, 100]), 2, 1.2)
    assert short["served_share_se"] == 0.0
    assert _agree(short, _figures(_window([300, 300]), 2, 1.2), 0.0)[1] == SERVED_WITHIN
