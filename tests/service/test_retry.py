"""The docs' retry strategies: what is retried, and backoff values that follow the formula."""

from __future__ import annotations

import random
from statistics import mean
from types import SimpleNamespace

import pytest

from loadtest.exit_codes import UsageError
from loadtest.service.error_codes import is_throttling
from loadtest.service.retry import parse_retry
from loadtest.transports.sdk import StrategyRetryPolicy

DRAWS = 20_000


def test_parse_retry_forms():
    assert parse_retry("none").retries == 0
    fixed = parse_retry("fixed:4,0.5")
    assert (fixed.kind, fixed.retries, fixed.delay) == ("fixed", 4, 0.5)
    exp = parse_retry("exponential:5,30,3,90")  # the docs' defaults: z=30 s, zmin=3 s, zmax=90 s
    assert (exp.retries, exp.delay, exp.minimum, exp.maximum) == (5, 30, 3, 90)
    assert exp.spec() == "exponential:5,30,3,90"


@pytest.mark.parametrize(
    "spec",
    ["sometimes", "fixed:3", "fixed:a,b", "exponential:3,1,2", "exponential:3,1,5,2", "fixed:-1,1", "exponential:2.5,1,0,9"],
)
def test_bad_retry_specs_name_the_forms(spec):
    with pytest.raises(UsageError, match="valid forms: none, fixed:N,DELAY or exponential:N,z,zmin,zmax"):
        parse_retry(spec)


def test_exponential_backoff_stays_in_the_plus_minus_20_percent_band_and_doubles():
    strategy = parse_retry("exponential:8,1,0.5,1000")
    rng = random.Random(42)
    means = {}
    for x in range(1, 7):
        draws = [strategy.backoff(x, rng) - 0.5 for _ in range(DRAWS)]  # minus zmin: the random part
        factor = 2**x - 1
        assert min(draws) >= 0.8 * factor - 1e-9 and max(draws) <= 1.2 * factor + 1e-9
        assert min(draws) < 0.81 * factor and max(draws) > 1.19 * factor  # the whole band is used
        means[x] = mean(draws)
        assert means[x] == pytest.approx(factor, rel=0.01)  # Rand(0.8z, 1.2z) averages z
    for x in range(1, 6):  # (2^(x+1) - 1) / (2^x - 1): 3, 7/3, 15/7… tends to 2
        assert means[x + 1] / means[x] == pytest.approx((2 ** (x + 1) - 1) / (2**x - 1), rel=0.02)


def test_exponential_backoff_respects_zmin_and_zmax():
    strategy = parse_retry("exponential:10,30,3,90")
    rng = random.Random(7)
    first = [strategy.backoff(1, rng) for _ in range(DRAWS)]
    assert min(first) >= 3 + 24 and max(first) <= 3 + 36  # zmin + Rand(24, 36)
    late = [strategy.backoff(x, rng) for x in range(3, 10) for _ in range(200)]
    assert max(late) == 90 and all(v <= 90 for v in late)  # capped at zmax
    assert parse_retry("fixed:3,0.25").backoff(5, rng) == 0.25
    assert parse_retry("none").backoff(1, rng) == 0.0


def answer(status, code=None):
    return SimpleNamespace(http_response=SimpleNamespace(status_code=status, headers={"x-ms-error-code": code} if code else {}))


@pytest.mark.parametrize(
    "status,code,retried",
    [
        (503, "ServerBusy", True),
        (504, None, True),
        (500, "OperationTimedOut", True),
        (500, "InternalError", False),
        (404, "ResourceNotFound", False),
        (409, "EntityAlreadyExists", False),
        (412, "UpdateConditionNotSatisfied", False),
        (429, None, False),
        (501, None, False),
        (505, None, False),
        (200, None, False),
    ],
)
def test_only_what_the_docs_say_is_retried(status, code, retried):
    policy = StrategyRetryPolicy(parse_retry("exponential:3,1,0,5"))
    assert policy.is_retry({"total": 3}, answer(status, code)) is retried
    assert policy.is_retry({"total": 0}, answer(503, "ServerBusy")) is False  # none left
    assert is_throttling(status, code) is (retried and status != 200)


def test_each_wait_is_reported_and_connection_errors_retry_at_once():
    waits, slept = [], []
    policy = StrategyRetryPolicy(parse_retry("fixed:3,0.25"), on_backoff=waits.append)
    transport = SimpleNamespace(sleep=slept.append)
    policy.sleep({"history": [1]}, transport, response=answer(503, "ServerBusy"))
    policy.sleep({"history": [1, 2]}, transport)  # no response: a connection error
    assert waits == [0.25, 0.0] and slept == [0.25]  # both retries reported, only one waited
