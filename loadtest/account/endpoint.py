"""Where the table lives and how to sign in: an embedded Azurite, a connection string, or an
account URL with Azure AD; and how long an attempt waits for it.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from azure.core.credentials import AccessToken, AzureNamedKeyCredential, AzureSasCredential
from azure.data.tables import TableClient, TableServiceClient

from ..emulator.process import EmulatorProcess
from ..exit_codes import RunError, UsageError
from ..redact import AZURITE_ACCOUNT, redact
from .azurite import EmbeddedAzurite
from .connection_string import CONNECTION_STRING_ENV, blob_endpoint, canonical_connection_string, parse_connection_string

if TYPE_CHECKING:
    from azure.core.credentials import TokenCredential

    from ..emulator.budgets import Budgets

__all__ = [
    "CONNECT_TIMEOUT_S",
    "SERVER_AZURITE",
    "SERVER_EMULATOR",
    "TIMEOUT_S",
    "Target",
    "TargetKind",
    "blob_account",
    "blob_url",
    "resolve_target",
]

STORAGE_SCOPE = "https://storage.azure.com/.default"
TOKEN_RENEW_S = 300

#: ``--timeout``'s default: seconds an attempt waits for the service's answer (set-up and load alike).
TIMEOUT_S = 30.0
#: Connecting takes at most this long (or ``--timeout`` if shorter): a listener that is not there fails fast.
CONNECT_TIMEOUT_S = 5.0
#: The servers the tool may start for a run, as its findings name them.
SERVER_AZURITE, SERVER_EMULATOR = "Azurite", "the throttling emulator"


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

    def servers(self) -> dict[str, int | None]:
        """The local servers of the run, by name as findings say it, with their PIDs (their CPU is read each second):
        those this tool started, and a table service on this machine's loopback it was pointed at (found by its port)."""
        found = {SERVER_EMULATOR: self.emulator.pid if self.emulator else None}
        service = (self.direct or self).azurite
        if service is not None:
            return {SERVER_AZURITE: service.pid, **found}
        name, pid = _loopback_listener((self.direct or self).endpoint)
        return {name: pid, **found} if pid else found

    def close(self) -> None:
        if self.emulator:
            self.emulator.stop()
        if self.azurite:
            self.azurite.stop()

    def behind_emulator(self, budgets: Budgets, request_log: str = "") -> Target:
        """This target with the throttling emulator in front (a child process on a free loopback port), writing every
        request it relays to ``request_log`` if one is named."""
        if not self.is_emulator or not self.connection_string:
            raise RunError("--emulate-throttling goes in front of Azurite only (embedded, or a loopback connection string)")
        upstream, account = self.endpoint.rsplit("/", 1)
        emulator = EmulatorProcess(upstream=upstream, budgets=budgets, request_log=request_log).start()
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


def blob_url(*, connection_string: str = "", account_url: str = "", flag: str = "--upload") -> str:
    """The blob endpoint of the target's storage account (where ``--upload`` writes and ``merge --from-container``
    reads), judged without the network; a ``UsageError`` naming ``flag`` when the target has none."""
    if connection_string:
        return blob_endpoint(connection_string, flag)
    if account_url:
        url = urlparse(account_url)
        if ".table." not in url.netloc:
            raise UsageError(f"{flag}: --account-url {url.netloc!r} is not <account>.table.<suffix>: no blob endpoint known")
        return f"{url.scheme}://{url.netloc.replace('.table.', '.blob.', 1)}"
    raise UsageError(
        f"{flag}: the embedded Azurite has no blob service; name the storage account with --connection-string, "
        f"${CONNECTION_STRING_ENV} or --account-url"
    )


def blob_account(
    *, connection_string: str = "", account_url: str = "", flag: str = "--upload"
) -> tuple[str, AzureNamedKeyCredential | AzureSasCredential | TokenCredential]:
    """``blob_url`` and the credential to use there: the connection string's key or SAS, else Azure AD."""
    url = blob_url(connection_string=connection_string, account_url=account_url, flag=flag)
    if connection_string:
        return url, parse_connection_string(connection_string)[1]
    from azure.identity import DefaultAzureCredential

    return url, DefaultAzureCredential()


def _loopback_listener(endpoint: str) -> tuple[str, int | None]:
    """(Its name, the PID) of the process listening on a loopback endpoint's port, where this user may see it."""
    url = urlparse(endpoint)
    if url.hostname not in ("127.0.0.1", "localhost", "::1"):
        return "", None
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        import psutil

        for conn in psutil.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.pid:
                command = " ".join(psutil.Process(conn.pid).cmdline())
                return (SERVER_AZURITE if "azurite" in command.lower() else f"the table service on port {port}"), conn.pid
    except (psutil.Error, OSError):
        pass
    return "", None
