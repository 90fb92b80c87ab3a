"""The hand-over through a blob container: an engine's outputs up to ``CONTAINER/<run-id>/<engine>/``, and every
engine's results.json of a run back down for ``loadtest merge --from-container``. azure-storage-blob, in the target's
own storage account (``blob_container``)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from azure.core.exceptions import AzureError, ResourceExistsError, ResourceNotFoundError
from azure.storage.blob import ContentSettings

from ..blob_container import failed, open_container
from ..outputs import RESULTS_FILE, TIMESERIES_FILE
from ..wrapup import OUTPUTS

__all__ = ["RUN_OUTPUTS", "download_results", "upload_outputs", "upload_place"]

log = logging.getLogger("loadtest")
#: A run's own outputs, by name: nothing else in ``--out`` leaves the machine (``--out .`` in a project folder holds
#: its locust.conf, which may carry a connection string).
RUN_OUTPUTS = (RESULTS_FILE, TIMESERIES_FILE, *(name for name, _ in OUTPUTS))
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


def download_results(
    container: str, run_id: str, *, connection_string: str, account_url: str, timeout: float
) -> list[tuple[str, str]]:
    """Each engine's results.json under ``container/<run_id>/``: (its blob name, its text)."""
    where = f"--from-container {container} --run-id {run_id}"
    client = open_container(container, connection_string=connection_string, account_url=account_url, timeout=timeout, flag=where)
    found: list[tuple[str, Any]] = []
    try:
        with client:
            for blob in client.list_blobs(name_starts_with=f"{run_id}/"):
                parts = blob.name.split("/")
                if len(parts) == 3 and parts[2] == RESULTS_FILE:
                    found.append((f"{container}/{blob.name}", client.download_blob(blob.name).readall().decode("utf-8")))
    except ResourceNotFoundError:
        return []  # no container of that name: nothing was uploaded there
    except AzureError as err:
        raise failed(err, where) from None
    return found
