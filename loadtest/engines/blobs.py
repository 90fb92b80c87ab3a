"""The hand-over through a blob container: an engine's outputs up to ``CONTAINER/<run-id>/<engine>/``, and every
engine's results.json of a run back down for ``loadtest merge --from-container``, then their buckets.parquet.
azure-storage-blob, in the target's own storage account (``blob_container``)."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from azure.core.exceptions import AzureError, ResourceExistsError, ResourceNotFoundError
from azure.storage.blob import ContainerClient, ContentSettings

from ..account.blob_container import failed, open_container
from ..exit_codes import UsageError
from ..options.rules import read_name
from ..outputs import BUCKETS_FILE, RESULTS_FILE, SERIES_FILE, TIMESERIES_FILE, TIMESERIES_GZ
from ..wrapup import OUTPUTS

__all__ = ["RUN_OUTPUTS", "download_buckets", "download_results", "results_blobs", "upload_outputs", "upload_place"]

log = logging.getLogger("loadtest")
DOWNLOADS_AT_ONCE = 8  # engines' results.json downloading ahead of the merge: its memory, and the container's round trips
#: A run's own outputs, by name: nothing else in ``--out`` leaves the machine (``--out .`` in a project folder holds
#: its locust.conf, which may carry a connection string). results.json last: a merge that finds it finds the files it names.
RUN_OUTPUTS = (SERIES_FILE, BUCKETS_FILE, TIMESERIES_FILE, TIMESERIES_GZ, *(name for name, _ in OUTPUTS), RESULTS_FILE)
CONTENT_TYPES = {".html": "text/html", ".json": "application/json", ".csv": "text/csv", ".kql": "text/plain"}


def upload_place(container: str, run_id: str, engine: str) -> str:
    """Where an engine's outputs go: ``container/<run-id>/<engine>/``."""
    return f"{container}/{run_id}/{engine}/"


def upload_outputs(
    out: Path, *, container: str, run_id: str, engine: str, connection_string: str, account_url: str, timeout: float
) -> str:
    """The run's outputs in ``out`` (``RUN_OUTPUTS``, by name) to ``container/<run_id>/<engine>/`` (the container
    created if absent); the place."""
    folder, place = f"{run_id}/{engine}", upload_place(container, run_id, engine)
    client = open_container(
        container, connection_string=connection_string, account_url=account_url, timeout=timeout, flag="--upload"
    )
    files = [Path(out) / name for name in RUN_OUTPUTS if (Path(out) / name).is_file()]
    try:
        with client:
            try:
                client.create_container()
            except ResourceExistsError:
                pass
            for path in files:
                settings = ContentSettings(content_type=CONTENT_TYPES.get(path.suffix, "application/octet-stream"))
                with path.open("rb") as data:
                    client.upload_blob(f"{folder}/{path.name}", data, overwrite=True, content_settings=settings)
    except AzureError as err:
        raise failed(err, f"the upload to {place}") from None
    log.info("Uploaded %d files to %s", len(files), place)
    return place


def results_blobs(container: str, run_id: str, *, connection_string: str, account_url: str, timeout: float) -> list[str]:
    """Each engine's results.json under ``container/<run_id>/``, in name order (none if there is no such container)."""
    where = f"--from-container {container} --run-id {run_id}"
    client = open_container(container, connection_string=connection_string, account_url=account_url, timeout=timeout, flag=where)
    with client:
        try:
            names = sorted(
                blob.name
                for blob in client.list_blobs(name_starts_with=f"{run_id}/")
                if len(parts := blob.name.split("/")) == 3 and parts[2] == RESULTS_FILE
            )
        except ResourceNotFoundError:
            return []  # no container of that name: nothing was uploaded there
        except AzureError as err:
            raise failed(err, where) from None
    for name in names:  # an engine's folder, as --engine named it: never '..' (its URL would reach another blob)
        read_name(f"{where}: a blob {container}/{run_id}/<engine>/{RESULTS_FILE} whose <engine> is", name.split("/")[1])
    return names


def download_results(
    container: str,
    names: Sequence[str],
    *,
    connection_string: str,
    account_url: str,
    timeout: float,
    at_once: int = DOWNLOADS_AT_ONCE,
) -> Iterator[tuple[str, str]]:
    """Each of the engines' results.json ``names`` (``results_blobs``), in their order: (``container/name``, its
    text). Read as the merge takes them, ``at_once`` downloading ahead in parallel: at most that many texts held."""
    where = f"--from-container {container}"
    client = open_container(container, connection_string=connection_string, account_url=account_url, timeout=timeout, flag=where)
    with client:
        for name, data in _ahead(client, names, at_once, where):
            yield f"{container}/{name}", data.decode("utf-8", errors="replace")


def download_buckets(
    container: str,
    results: Sequence[str],
    *,
    connection_string: str,
    account_url: str,
    timeout: float,
    at_once: int = DOWNLOADS_AT_ONCE,
) -> Iterator[bytes]:
    """The buckets.parquet beside each of the ``results`` (results.json blobs, ``<run-id>/<engine>/results.json``), in
    their order, downloading ahead as ``download_results`` does; a ``UsageError`` names one that was not uploaded."""
    where = f"--from-container {container}"
    client = open_container(container, connection_string=connection_string, account_url=account_url, timeout=timeout, flag=where)
    names = [name.rsplit("/", 1)[0] + "/" + BUCKETS_FILE for name in results]
    with client:
        yield from (data for _, data in _ahead(client, names, at_once, where))


def _ahead(client: ContainerClient, names: Sequence[str], at_once: int, where: str) -> Iterator[tuple[str, bytes]]:
    """Each blob's bytes, in order, ``at_once`` downloading ahead in parallel (at most that many held)."""
    with ThreadPoolExecutor(max_workers=at_once, thread_name_prefix="download") as pool:
        ahead: deque[tuple[str, Future[bytes]]] = deque()
        for name in names:
            ahead.append((name, pool.submit(lambda blob: client.download_blob(blob).readall(), name)))
            if len(ahead) >= at_once:
                yield _downloaded(client.container_name, *ahead.popleft(), where)
        while ahead:
            yield _downloaded(client.container_name, *ahead.popleft(), where)


def _downloaded(container: str, name: str, download: Future[bytes], where: str) -> tuple[str, bytes]:
    try:
        return name, download.result()
    except ResourceNotFoundError:
        raise UsageError(f"{where}: {container}/{name} is not there; upload each engine's outputs whole") from None
    except AzureError as err:
        raise failed(err, where) from None
