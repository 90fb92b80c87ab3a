"""Where the table lives and how to sign in: an embedded Azurite, a connection string, or an
account URL with Azure AD; and what a failure to reach or sign in to it means, in one line.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from azure.core.credentials import AccessToken, AzureNamedKeyCredential, AzureSasCredential
from azure.core.exceptions import (
    ClientAuthenticationError,
    HttpResponseError,
    ServiceRequestError,
    ServiceRequestTimeoutError,
    ServiceResponseError,
    ServiceResponseTimeoutError,
)
from azure.data.tables import TableClient, TableServiceClient

from .azurite import EmbeddedAzurite, EmulatorProcess
from .connection_string import canonical_connection_string, parse_connection_string
from .errors import CONNECTION_ERROR, TIMEOUT, RunError, ServiceError, service_code
from .redact import AZURITE_ACCOUNT, redact
from .transport import CONNECT_TIMEOUT_S, TIMEOUT_S

if TYPE_CHECKING:
    from azure.core.credentials import TokenCredential

    from .emulator import Budgets

__all__ = ["Target", "TargetKind", "error_code_of", "explain", "resolve_target"]

STORAGE_SCOPE = "https://storage.azure.com/.default"
TOKEN_RENEW_S = 300

#: What the SDK raises when the service answered with an error, or never answered.
SDK_ERRORS = (HttpResponseError, ServiceRequestError, ServiceResponseError)


class TargetKind(StrEnum):
    AZURITE_EMBEDDED = "azurite-embedded"
    CONNECTION_STRING = "connection-string"
    AZURE_AD = "azure-ad"


@dataclass(kw_only=True)
class Target:
    """A table service to test, and how to sign in. ``endpoint`` is safe to show; the secret is not."""

    kind: TargetKind
    endpoint: str
    connection_string: str = field(default="", repr=False)
    account_url: str = ""
    timeout: float = TIMEOUT_S  # seconds an attempt waits for an answer (--timeout)
    azurite: EmbeddedAzurite | None = field(default=None, repr=False)
    emulator: EmulatorProcess | None = field(default=None, repr=False)
    direct: Target | None = field(default=None, repr=False)  # behind an emulator: the service itself
    _credential: TokenCredential | None = field(default=None, repr=False)
    _token: AccessToken | None = field(default=None, repr=False)

    @property
    def is_emulator(self) -> bool:
        """Azurite (embedded, or a loopback/devstore connection string): it never throttles, and saturates early."""
        host = urlparse(self.endpoint).hostname or ""
        return (
            self.kind == TargetKind.AZURITE_EMBEDDED
            or AZURITE_ACCOUNT in self.endpoint
            or host in ("127.0.0.1", "localhost", "::1")
        )

    @property
    def connect_timeout(self) -> float:
        return min(self.timeout, CONNECT_TIMEOUT_S)

    def client_kwargs(self, retries: int) -> dict[str, Any]:
        """The SDK's retries and timeouts, set explicitly: its defaults (10 tries, 0.8 s exponential, 300-s reads)
        stall and hide 503s. A read that timed out is not retried: set-up fails within about one ``timeout``."""
        return {
            "retry_total": retries,
            "retry_connect": min(retries, 1),
            "retry_read": 0,
            "retry_backoff_factor": 0.2,
            "retry_backoff_max": 5,
            "connection_timeout": self.connect_timeout,
            "read_timeout": self.timeout,
        }

    def service(self, retries: int = 1, **kwargs: Any) -> TableServiceClient:
        kwargs = {**self.client_kwargs(retries), **kwargs}
        if self.connection_string:
            return TableServiceClient.from_connection_string(self.connection_string, **kwargs)
        return TableServiceClient(endpoint=self.account_url, credential=self.credential(), **kwargs)

    def table(self, name: str, retries: int = 1, **kwargs: Any) -> TableClient:
        kwargs = {**self.client_kwargs(retries), **kwargs}
        if self.connection_string:
            return TableClient.from_connection_string(self.connection_string, table_name=name, **kwargs)
        return TableClient(endpoint=self.account_url, table_name=name, credential=self.credential(), **kwargs)

    def credential(self) -> TokenCredential:
        if self._credential is None:
            from azure.identity import DefaultAzureCredential

            try:
                self._credential = DefaultAzureCredential()
            except ValueError as err:  # e.g. an AZURE_CLIENT_ID that is not an application id
                raise RunError(f"Azure AD sign-in (DefaultAzureCredential) is misconfigured: {redact(str(err))}") from err
        return self._credential

    def sdk_credential(self) -> AzureNamedKeyCredential | AzureSasCredential | TokenCredential:
        """The connection string's key or SAS, else the Azure AD credential."""
        return parse_connection_string(self.connection_string)[1] if self.connection_string else self.credential()

    def token(self) -> str:
        """An Azure AD access token for storage, shared by every user of this process, renewed 5 minutes early."""
        if self._token is None or self._token.expires_on - TOKEN_RENEW_S < time.time():
            self._token = self.credential().get_token(STORAGE_SCOPE)
        return self._token.token

    @property
    def admin(self) -> Target:
        """Where the table is created, seeded, read back and deleted: past any emulator (that is not the load)."""
        return self.direct or self

    def close(self) -> None:
        if self.emulator:
            self.emulator.stop()
        if self.azurite:
            self.azurite.stop()

    def behind_emulator(self, budgets: Budgets) -> Target:
        """This target with the throttling emulator in front (a child process on a free loopback port)."""
        if not self.is_emulator or not self.connection_string:
            raise RunError("--emulate-throttling goes in front of Azurite only (embedded, or a loopback connection string)")
        upstream, account = self.endpoint.rsplit("/", 1)
        emulator = EmulatorProcess(upstream=upstream, budgets=budgets).start()
        endpoint = f"http://127.0.0.1:{emulator.port}/{account}"
        connection_string = re.sub(r"TableEndpoint=[^;]*", f"TableEndpoint={endpoint}", self.connection_string)
        return Target(
            kind=self.kind,
            endpoint=endpoint,
            connection_string=connection_string,
            timeout=self.timeout,
            azurite=self.azurite,
            emulator=emulator,
            direct=self,
        )


def resolve_target(*, connection_string: str = "", account_url: str = "", timeout: float = TIMEOUT_S) -> Target:
    """No settings: start an embedded Azurite. Otherwise the named account or emulator."""
    if connection_string:
        endpoint, credential = parse_connection_string(connection_string)
        canonical = canonical_connection_string(endpoint, credential)
        return Target(kind=TargetKind.CONNECTION_STRING, endpoint=endpoint, connection_string=canonical, timeout=timeout)
    if account_url:
        return Target(kind=TargetKind.AZURE_AD, endpoint=account_url.rstrip("/"), account_url=account_url, timeout=timeout)
    azurite = EmbeddedAzurite().start()
    return Target(
        kind=TargetKind.AZURITE_EMBEDDED,
        endpoint=azurite.endpoint,
        connection_string=azurite.connection_string,
        timeout=timeout,
        azurite=azurite,
    )


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
