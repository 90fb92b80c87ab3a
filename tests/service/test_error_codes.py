"""Each failure's class, from its status where the logs give it, else from its code: the ERRORS remedy follows it
(issue #64: a 500 ServerOtherError and a NetworkError read "never retry a 4xx answer")."""

from __future__ import annotations

import pytest

from loadtest.service.error_codes import CLASS_REMEDIES, CONNECTION_ERROR, TIMEOUT, error_class


@pytest.mark.parametrize(
    ("code", "status", "expected"),
    [
        ("ResourceNotFound", None, "application"),
        ("ResourceNotFound", 404, "application"),
        ("SomethingNew", 409, "application"),
        ("ServerOtherError", 500, "service"),
        ("ServerOtherError", None, "service"),
        ("InternalError", None, "service"),
        ("HTTP502", None, "service"),
        ("HTTP400", None, "application"),
        ("NetworkError", None, "network"),
        ("NetworkError", 200, "network"),
        ("SASClientTimeoutError", 500, "network"),
        (CONNECTION_ERROR, None, "network"),
        (TIMEOUT, None, "network"),
        ("SomethingNew", None, ""),
    ],
)
def test_a_failure_is_classed_by_its_status_else_its_code(code, status, expected):
    assert error_class(code, status) == expected


def test_only_the_application_class_is_told_never_to_retry():
    assert "never retry a 4xx" in CLASS_REMEDIES["application"]
    assert all("never retry" not in CLASS_REMEDIES[c] for c in ("service", "network"))
    assert "backoff" in CLASS_REMEDIES["service"] and "client's path" in CLASS_REMEDIES["network"]
