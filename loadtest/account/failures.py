"""What a failure to reach or sign in to the target means: an SDK error's code, and one line for the user with
no secret in it (an SDK error, or the lean client's ``ServiceError``).
"""

from __future__ import annotations

from typing import Any

from azure.core.exceptions import (
    ClientAuthenticationError,
    HttpResponseError,
    ServiceRequestError,
    ServiceRequestTimeoutError,
    ServiceResponseError,
    ServiceResponseTimeoutError,
)

from ..exit_codes import RunError
from ..redact import redact
from ..service.error_codes import CONNECTION_ERROR, TIMEOUT, ServiceError, service_code
from .endpoint import Target

__all__ = ["SDK_ERRORS", "error_code_of", "explain"]

#: What the SDK raises when the service answered with an error, or never answered.
SDK_ERRORS = (HttpResponseError, ServiceRequestError, ServiceResponseError)


def error_code_of(err: BaseException) -> str:
    """The service's error code (``ServerBusy``, ``ResourceNotFound``…) of an SDK error, else a name for the failure."""
    code = _service_code(err)
    if code:
        return code
    if isinstance(err, (ServiceRequestTimeoutError, ServiceResponseTimeoutError)):
        return TIMEOUT
    if isinstance(err, (ServiceRequestError, ServiceResponseError)):
        return CONNECTION_ERROR
    status = getattr(err, "status_code", None)
    return f"HTTP{status}" if status else type(err).__name__


def _service_code(err: BaseException) -> str | None:
    code = getattr(err, "error_code", None)
    code = getattr(code, "value", code) or _code_in_response(getattr(err, "response", None))
    return str(code) if code else None


def _code_in_response(response: Any) -> str | None:
    """The code from the answer itself (the SDK leaves some errors without it)."""
    return None if response is None else service_code(response.headers, response.text())


def explain(err: Exception, target: Target) -> RunError:
    """One line for a failure to reach or sign in to the target, with no secret in it (an SDK error, or the
    lean client's ``ServiceError``)."""
    if isinstance(err, ServiceError):
        unreachable, reason = err.code == CONNECTION_ERROR, str(err.__cause__ or err)
        status, code, detail = err.status, err.code, ""
    else:
        unreachable, reason = isinstance(err, ServiceRequestError), str(err) or type(err).__name__
        status, code, detail = getattr(err, "status_code", None), _service_code(err), str(err)
    if (err.code if isinstance(err, ServiceError) else error_code_of(err)) == TIMEOUT:
        return RunError(
            f"{target.endpoint} did not answer within {target.timeout:g} s (--timeout): the service is stalled, or the "
            "address is not a table service"
        )
    if unreachable:
        return RunError(f"cannot reach {target.endpoint}: {redact(reason.splitlines()[0])[:200]}")
    if status == 403 or isinstance(err, ClientAuthenticationError):
        refused = f"refused the credentials (403 {code or 'Forbidden'})"
        return RunError(f"{target.endpoint} {refused}: check the account key, SAS or role assignment")
    if status:
        first = f": {redact(detail.splitlines()[0])[:200]}" if detail else ""
        return RunError(f"{target.endpoint} answered {status} {code or ''}{first}")
    return RunError(f"{target.endpoint}: {type(err).__name__}: {redact(str(err))[:200]}")
