"""The embedded Azurite: its table service (or, for tests, its blob service) from node_modules, in memory, on a free
loopback port, as a child process of the tool.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from ..child_process import ChildProcess
from ..exit_codes import RunError
from ..redact import AZURITE_ACCOUNT, AZURITE_KEY

__all__ = ["EmbeddedAzurite", "azurite_connection_string"]


def azurite_connection_string(port: int, host: str = "127.0.0.1", scheme: str = "http", blob_port: int | None = None) -> str:
    """Azurite's well-known account on a table port (and a blob service's, where one runs)."""
    blob = f"BlobEndpoint={scheme}://{host}:{blob_port}/{AZURITE_ACCOUNT};" if blob_port else ""
    return (
        f"DefaultEndpointsProtocol={scheme};AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
        f"TableEndpoint={scheme}://{host}:{port}/{AZURITE_ACCOUNT};{blob}"
    )


class EmbeddedAzurite(ChildProcess):
    """Azurite's table service from node_modules, in memory, on a free loopback port.

    Optionally over HTTPS (``cert``: a PEM certificate and its key), with Azure AD tokens checked
    (``oauth``: Azurite's ``basic`` level: audience, issuer and expiry, not the signature; HTTPS only),
    and every request's headers in a debug log (``debug_log``).
    """

    def __init__(
        self,
        *,
        cert: tuple[Path, Path] | None = None,
        oauth: bool = False,
        debug_log: Path | None = None,
        service: str = "table",
        **kwargs: Any,
    ) -> None:
        """``service``: ``table`` (what the tool embeds) or ``blob`` (where engines hand results over, in tests)."""
        super().__init__(**kwargs)
        self.cert, self.oauth, self.debug_log, self.service = cert, oauth, debug_log, service
        self.name = f"Azurite {service} service"

    @property
    def scheme(self) -> str:
        return "https" if self.cert else "http"

    @property
    def connection_string(self) -> str:
        return azurite_connection_string(self.port, self.host, self.scheme)

    @property
    def endpoint(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}/{AZURITE_ACCOUNT}"

    def command(self) -> list[str]:
        if not shutil.which("node"):
            raise RunError(
                "the embedded Azurite needs Node.js 18+ and npm (https://nodejs.org, or apt-get install nodejs npm),"
                f" then `npm ci` in {self.root}; or point the tool at a table service with --connection-string"
            )
        binary = self.root / "node_modules" / ".bin" / f"azurite-{self.service}"
        if not binary.exists():
            found = shutil.which(f"azurite-{self.service}")
            if not found:
                raise RunError(f"Azurite is not installed: run `npm ci` in {self.root} (or pass --connection-string)")
            binary = Path(found)
        return [
            str(binary),
            "--inMemoryPersistence",
            "--disableTelemetry",
            "--silent",
            f"--{self.service}Host",
            self.host,
            f"--{self.service}Port",
            str(self.port),
            *(("--cert", str(self.cert[0]), "--key", str(self.cert[1])) if self.cert else ()),
            *(("--oauth", "basic") if self.oauth else ()),
            *(("--debug", str(self.debug_log)) if self.debug_log else ()),
        ]
