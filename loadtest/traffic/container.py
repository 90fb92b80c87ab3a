"""``loadtest traffic --from-container``: the request logs read where the account archives them — a diagnostic
setting's ``insights-logs-storageread`` / ``-storagewrite`` / ``-storagedelete`` containers (``…/tableServices/default/
y=YYYY/m=MM/d=DD/h=HH/m=00/PT1H.json``) or Storage Analytics' ``$logs`` (``table/YYYY/MM/DD/hh00/NNNNNN.log``) —
through the connection's blob endpoint, a blob streamed at a time. The blobs of other services are passed by; with
``--since``/``--until`` so are the hours outside the window, told by the blob's name.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import BinaryIO

from azure.core.exceptions import AzureError

from ..account.blob_container import failed, open_container
from ..exit_codes import UsageError

__all__ = ["LogBlobs", "hour_of", "of_tables", "plain_name"]

_HOURS = (
    re.compile(r"/y=(\d{4})/m=(\d\d)/d=(\d\d)/h=(\d\d)/"),  # a diagnostic archive's PT1H.json
    re.compile(r"^table/(\d{4})/(\d\d)/(\d\d)/(\d\d)00/"),  # $logs
)
_OTHER_SERVICES = ("/blobServices/", "/queueServices/", "/fileServices/")
_OTHER_CLASSIC = ("blob/", "queue/", "file/")


def hour_of(name: str) -> float | None:
    """The UTC hour (epoch seconds) a log blob's name says it holds; None for a name in neither form."""
    for pattern in _HOURS:
        if found := pattern.search(name):
            year, month, day, hour = (int(part) for part in found.groups())
            try:
                return datetime(year, month, day, hour, tzinfo=UTC).timestamp()
            except ValueError:
                return None
    return None


def of_tables(name: str) -> bool:
    """Whether a log blob may hold the table service's records (a diagnostic setting on the blob service, or $logs,
    keeps the other services' beside them)."""
    return not (any(part in name for part in _OTHER_SERVICES) or name.startswith(_OTHER_CLASSIC))


def plain_name(name: str) -> bool:
    """Whether a listed blob's name is fetched as itself: a ``.`` or ``..`` segment is resolved away in its URL
    (``table/../../other/x`` fetches blob ``x`` of container ``other``), and a control character breaks the one line
    that names it. No archive's name has either."""
    return name.isprintable() and not {".", ".."} & set(name.split("/"))


class _Download(io.RawIOBase):
    """A blob download as a raw stream, so a buffered reader reads it a line or a block at a time."""

    def __init__(self, download) -> None:
        self._download = download

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self._download.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class LogBlobs:
    """The log blobs of ``containers`` under ``prefix`` within [``since``, ``until``), listed, then opened one at a
    time; ``passed`` counts the blobs left unread by reason."""

    def __init__(
        self,
        containers: list[str],
        *,
        prefix: str,
        since: float | None,
        until: float | None,
        connection_string: str,
        account_url: str,
        timeout: float,
    ) -> None:
        self.where = f"--from-container {','.join(containers)}"
        self.clients = {
            name: open_container(
                name, connection_string=connection_string, account_url=account_url, timeout=timeout, flag=self.where
            )
            for name in containers
        }
        self.prefix, self.since, self.until = prefix, since, until
        self.passed: Counter[str] = Counter()

    def _wanted(self, name: str) -> bool:
        if not plain_name(name):
            self.passed["named with a '.' or '..' segment or a control character (no archive's name)"] += 1
            return False
        if not of_tables(name):
            self.passed["of another service"] += 1
            return False
        hour = hour_of(name)
        outside = hour is not None and (
            (self.until is not None and hour >= self.until) or (self.since is not None and hour + 3600 <= self.since)
        )
        if outside:
            self.passed["outside --since/--until"] += 1
        return not outside

    def names(self) -> list[str]:
        """``container/blob`` of every log blob to read, in order (a container that does not exist is refused)."""
        found: list[str] = []
        for container, client in self.clients.items():
            try:
                if not client.exists():
                    raise UsageError(f"{self.where}: the account has no container {container!r}")
                found += [
                    f"{container}/{blob.name}"
                    for blob in client.list_blobs(name_starts_with=self.prefix or None)
                    if blob.size and self._wanted(blob.name)
                ]
            except AzureError as err:
                raise failed(err, self.where) from None
        if not found:
            passed = "; ".join(f"{n:,} {why}" for why, n in self.passed.items())
            raise UsageError(
                f"{self.where}: no log blob of the table service there"
                + (f" under --prefix {self.prefix!r}" if self.prefix else "")
                + (f" ({passed})" if passed else "")
            )
        return found

    @contextmanager
    def open(self, name: str) -> Iterator[BinaryIO]:
        """``container/blob`` as a buffered binary stream, downloaded as it is read."""
        container, blob = name.split("/", 1)
        try:
            download = self.clients[container].download_blob(blob)
            yield io.BufferedReader(_Download(download), buffer_size=1 << 20)
        except AzureError as err:
            raise failed(err, f"{self.where}: {name}") from None

    def __enter__(self) -> LogBlobs:
        return self

    def __exit__(self, *exc: object) -> None:
        for client in self.clients.values():
            client.close()
