"""Where the table lives: an embedded Azurite, a connection string, or an account URL with Azure AD.

Also the test table's lifecycle (the docs' steps 1 and 2): a unique name, create, seed,
delete. The tool never writes to a table it did not create unless the user names it with
``--table NAME --reuse-table``.
"""

from __future__ import annotations

import ctypes
import logging
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from azure.core.exceptions import (
    ClientAuthenticationError,
    HttpResponseError,
    ResourceExistsError,
    ResourceNotFoundError,
    ServiceRequestError,
)
from azure.data.tables import TableClient, TableServiceClient

from .entities import EntityShape, batch_bytes
from .errors import RunError
from .keys import KeyStrategy

__all__ = [
    "AZURITE_ACCOUNT",
    "AZURITE_KEY",
    "EmbeddedAzurite",
    "Target",
    "TestTable",
    "azurite_connection_string",
    "free_port",
    "redact",
    "resolve_target",
]

log = logging.getLogger(__name__)

AZURITE_ACCOUNT = "devstoreaccount1"
#: Azurite's well-known development key (public, documented by Microsoft); still redacted in every output.
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
PROJECT_ROOT = Path(__file__).resolve().parent.parent
SEED_CONCURRENCY = 4

_SECRET_PATTERNS = (
    re.compile(r"(AccountKey=)[^;\s'\"]+", re.I),
    re.compile(r"(SharedAccessSignature=)[^;\s'\"]+", re.I),
    re.compile(r"([?&]sig=)[^&\s'\"]+", re.I),
)


def redact(text: str) -> str:
    """Remove account keys and SAS signatures from text bound for a log, result or report."""
    text = text.replace(AZURITE_KEY, "***")
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(r"\1***", text)
    return text


def azurite_connection_string(port: int, host: str = "127.0.0.1") -> str:
    return (
        f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
        f"TableEndpoint=http://{host}:{port}/{AZURITE_ACCOUNT};"
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    """Linux: SIGTERM the child if this process dies without stopping it (kill -9, crash)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class EmbeddedAzurite:
    """Azurite's table service from node_modules, in memory, on a free loopback port."""

    name = "Azurite table service"

    def __init__(self, *, root: Path = PROJECT_ROOT, host: str = "127.0.0.1", port: int | None = None) -> None:
        self.root = root
        self.host = host
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    @property
    def connection_string(self) -> str:
        return azurite_connection_string(self.port, self.host)

    def command(self) -> list[str]:
        if not shutil.which("node"):
            raise RunError(
                "the embedded Azurite needs Node.js 18+ and npm (https://nodejs.org, or apt-get install nodejs npm),"
                f" then `npm ci` in {self.root}; or point the tool at a table service with --connection-string"
            )
        binary = self.root / "node_modules" / ".bin" / "azurite-table"
        if not binary.exists():
            found = shutil.which("azurite-table")
            if not found:
                raise RunError(f"Azurite is not installed: run `npm ci` in {self.root} (or pass --connection-string)")
            binary = Path(found)
        return [
            str(binary), "--inMemoryPersistence", "--disableTelemetry", "--silent",
            "--tableHost", self.host, "--tablePort", str(self.port),
        ]  # fmt: skip

    def start(self, timeout: float = 20.0) -> EmbeddedAzurite:
        command = self.command()
        self.process = subprocess.Popen(
            command,
            cwd=self.root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            start_new_session=True,  # Ctrl-C reaches the tool, which stops Azurite itself
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = (self.process.stderr.read() if self.process.stderr else b"").decode(errors="replace")
                raise RunError(f"{self.name} exited at start (code {self.process.returncode}): {err.strip()[:300]}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5):
                    log.info("%s on %s:%s (pid %s)", self.name, self.host, self.port, self.pid)
                    return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RunError(f"{self.name} did not answer on {self.host}:{self.port} within {timeout:.0f} s")

    def stop(self) -> None:
        """Stop by PID: SIGTERM, then SIGKILL after 5 s."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        log.info("%s (pid %s) stopped", self.name, process.pid)

    def __enter__(self) -> EmbeddedAzurite:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class EmulatorProcess(EmbeddedAzurite):
    """``loadtest emulator`` in a child process, stopped by PID like Azurite."""

    name = "Throttling emulator"

    def __init__(self, *, upstream: str, partition_rate: float, account_rate: float, timeout_share: float,
                 server_rate: float = 0, lb_delay: float = 180.0, lb_offline: float = 5.0) -> None:  # fmt: skip
        super().__init__()
        self.args = ["--upstream", upstream, "--partition-rate", str(partition_rate), "--account-rate", str(account_rate),
                     "--timeout-share", str(timeout_share), "--server-rate", str(server_rate), "--lb-delay", str(lb_delay),
                     "--lb-offline", str(lb_offline)]  # fmt: skip

    def command(self) -> list[str]:
        return [sys.executable, "-m", "loadtest", "emulator", "--host", self.host, "--port", str(self.port), *self.args]


@dataclass(kw_only=True)
class Target:
    """A table service to test, and how to sign in. ``endpoint`` is safe to show; the secret is not."""

    kind: str  # azurite-embedded | connection-string | azure-ad
    endpoint: str
    connection_string: str = field(default="", repr=False)
    account_url: str = ""
    azurite: EmbeddedAzurite | None = field(default=None, repr=False)
    emulator: EmulatorProcess | None = field(default=None, repr=False)
    direct: Target | None = field(default=None, repr=False)  # behind an emulator: the service itself
    _credential: Any = field(default=None, repr=False)

    @property
    def is_emulator(self) -> bool:
        """Azurite (embedded, or a loopback/devstore connection string): it never throttles, and saturates early."""
        host = urlparse(self.endpoint).hostname or ""
        return self.kind == "azurite-embedded" or AZURITE_ACCOUNT in self.endpoint or host in ("127.0.0.1", "localhost", "::1")

    def client_kwargs(self, retries: int) -> dict[str, Any]:
        """The SDK's retries, set explicitly: its defaults (10 tries, 0.8 s exponential) stall and hide 503s."""
        return {"retry_total": retries, "retry_connect": min(retries, 1), "retry_backoff_factor": 0.2, "retry_backoff_max": 5}

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

    def credential(self) -> Any:
        if self._credential is None:
            from azure.identity import DefaultAzureCredential

            self._credential = DefaultAzureCredential()
        return self._credential

    @property
    def admin(self) -> Target:
        """Where the table is created, seeded, read back and deleted: past any emulator (that is not the load)."""
        return self.direct or self

    def close(self) -> None:
        if self.emulator:
            self.emulator.stop()
        if self.azurite:
            self.azurite.stop()

    def behind_emulator(self, *, partition_rate: float, account_rate: float, timeout_share: float = 0.0,
                        server_rate: float = 0, lb_delay: float = 180.0, lb_offline: float = 5.0) -> Target:  # fmt: skip
        """This target with the throttling emulator in front (a child process on a free loopback port)."""
        if not self.is_emulator or not self.connection_string:
            raise RunError("--emulate-throttling goes in front of Azurite only (embedded, or a loopback connection string)")
        upstream = self.endpoint.rsplit("/", 1)[0]
        emulator = EmulatorProcess(upstream=upstream, partition_rate=partition_rate, account_rate=account_rate,
                                   timeout_share=timeout_share, server_rate=server_rate, lb_delay=lb_delay,
                                   lb_offline=lb_offline).start()  # fmt: skip
        endpoint = f"http://127.0.0.1:{emulator.port}/{self.endpoint.rsplit('/', 1)[1]}"
        connection_string = re.sub(r"TableEndpoint=[^;]*", f"TableEndpoint={endpoint}", self.connection_string)
        return Target(kind=self.kind, endpoint=endpoint, connection_string=connection_string, azurite=self.azurite,
                      emulator=emulator, direct=self)  # fmt: skip


def _endpoint_of(connection_string: str) -> str:
    parts = dict(p.split("=", 1) for p in connection_string.split(";") if "=" in p)
    if parts.get("UseDevelopmentStorage", "").lower() == "true":
        return f"http://127.0.0.1:10002/{AZURITE_ACCOUNT}"
    if "TableEndpoint" in parts:
        return parts["TableEndpoint"].rstrip("/")
    account, suffix = parts.get("AccountName"), parts.get("EndpointSuffix", "core.windows.net")
    if not account:
        raise RunError("the connection string names no TableEndpoint or AccountName: copy it from the portal's Access keys")
    return f"{parts.get('DefaultEndpointsProtocol', 'https')}://{account}.table.{suffix}"


def resolve_target(*, connection_string: str = "", account_url: str = "") -> Target:
    """No settings: start an embedded Azurite. Otherwise the named account or emulator."""
    if connection_string:
        return Target(kind="connection-string", endpoint=_endpoint_of(connection_string), connection_string=connection_string)
    if account_url:
        return Target(kind="azure-ad", endpoint=account_url.rstrip("/"), account_url=account_url)
    azurite = EmbeddedAzurite().start()
    return Target(
        kind="azurite-embedded",
        endpoint=f"http://{azurite.host}:{azurite.port}/{AZURITE_ACCOUNT}",
        connection_string=azurite.connection_string,
        azurite=azurite,
    )


def explain(err: Exception, target: Target) -> RunError:
    """One line for a failure to reach or sign in to the target, with no secret in it."""
    if isinstance(err, ServiceRequestError):
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        return RunError(f"cannot reach {target.endpoint}: {redact(reason)[:200]}")
    if isinstance(err, ClientAuthenticationError) or getattr(err, "status_code", None) == 403:
        code = getattr(getattr(err, "error_code", None), "value", None) or getattr(err, "error_code", "") or "Forbidden"
        return RunError(f"{target.endpoint} refused the credentials (403 {code}): check the account key, SAS or role assignment")
    if isinstance(err, HttpResponseError):
        code = getattr(getattr(err, "error_code", None), "value", None) or getattr(err, "error_code", "")
        return RunError(f"{target.endpoint} answered {err.status_code} {code}: {redact(str(err).splitlines()[0])[:200]}")
    return RunError(f"{target.endpoint}: {type(err).__name__}: {redact(str(err))[:200]}")


def unique_table_name() -> str:
    """Letters and digits only, starting with a letter, unique per run."""
    return f"pstress{time.strftime('%Y%m%d%H%M%S')}{secrets.token_hex(3)}"


@dataclass(kw_only=True)
class TestTable:
    """The test table: created by this run (deleted at the end unless kept) or named and reused."""

    __test__ = False  # not a pytest class

    target: Target
    name: str
    created: bool = False
    seeded: int = 0

    @classmethod
    def open(cls, target: Target, *, name: str = "", reuse: bool = False) -> TestTable:
        """Create a new table (a unique name, or ``name`` if free) or open ``name`` with ``reuse``."""
        table = cls(target=target, name=name or unique_table_name())
        service = target.admin.service()
        try:
            if reuse:
                try:
                    service.get_table_client(table.name).get_table_access_policy()
                except ResourceNotFoundError:
                    raise RunError(f"--reuse-table: table {table.name!r} does not exist") from None
                return table
            try:
                service.create_table(table.name)
            except ResourceExistsError:
                raise RunError(
                    f"table {table.name!r} exists and this run did not create it: pass --reuse-table to write to it"
                ) from None
            table.created = True
            return table
        except RunError:
            raise
        except (HttpResponseError, ServiceRequestError) as err:
            raise explain(err, target) from err

    def seed(self, keys: KeyStrategy, count: int, shape: EntityShape, *, progress: bool = True) -> int:
        """Write the strategy's ``count`` seeded entities, in entity group transactions per PartitionKey, in parallel."""
        per_batch = 100
        while per_batch > 1 and batch_bytes(shape, per_batch) > 4 * 1024 * 1024:
            per_batch //= 2
        by_partition: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for i in range(count):
            pk, rk = keys.seeded(i, count)
            by_partition[pk].append((rk, i))
        batches = [(pk, rows[start:start + per_batch]) for pk, rows in by_partition.items()
                   for start in range(0, len(rows), per_batch)]  # fmt: skip
        client = self.target.admin.table(self.name, retries=3)
        self.seeded = 0

        def write(batch: tuple[str, list[tuple[str, int]]]) -> int:
            pk, rows = batch
            client.submit_transaction([("upsert", shape.entity(pk, rk, i % 100)) for rk, i in rows])
            return len(rows)

        try:
            with ThreadPoolExecutor(SEED_CONCURRENCY) as pool, _progress(progress, count, keys.spec) as advance:
                for written in pool.map(write, batches):
                    self.seeded += written
                    advance(written)
        except (HttpResponseError, ServiceRequestError) as err:
            raise explain(err, self.target) from err
        finally:
            client.close()
        return self.seeded

    def count(self, partition_key: str | None = None) -> int:
        """Entities in the table (or one partition), read back through the service."""
        with self.target.admin.table(self.name, retries=3) as client:
            if partition_key is None:
                rows = client.list_entities(select=["RowKey"])
            else:
                rows = client.query_entities("PartitionKey eq @pk", parameters={"pk": partition_key}, select=["RowKey"])
            return sum(1 for _ in rows)

    def keys(self) -> set[tuple[str, str]]:
        """Every (PartitionKey, RowKey) in the table: one read, for the integrity check."""
        with self.target.admin.table(self.name, retries=3) as client:
            return {(row["PartitionKey"], row["RowKey"]) for row in client.list_entities(select=["PartitionKey", "RowKey"])}

    def drop(self) -> None:
        """Delete the table if this run created it."""
        if not self.created:
            return
        try:
            self.target.admin.service().delete_table(self.name)
            self.created = False
        except (HttpResponseError, ServiceRequestError) as err:
            log.warning("could not delete test table %s: %s", self.name, explain(err, self.target))


class _progress:
    """A rich progress bar on a terminal, one log line elsewhere."""

    def __init__(self, enabled: bool, total: int, partition_key: str) -> None:
        self.enabled, self.total, self.partition_key = enabled, total, partition_key
        self.bar: Any = None

    def __enter__(self) -> Any:
        log.info("Seeding %d entities (%s)", self.total, self.partition_key)
        if self.enabled and sys.stderr.isatty() and not os.environ.get("CI"):
            from rich.progress import Progress

            self.bar = Progress(transient=True)
            self.bar.start()
            task = self.bar.add_task(f"seeding {self.partition_key!r}", total=self.total)
            return lambda n: self.bar.advance(task, n)
        return lambda n: None

    def __exit__(self, *exc: object) -> None:
        if self.bar:
            self.bar.stop()

