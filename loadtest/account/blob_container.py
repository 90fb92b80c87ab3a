"""A blob container in the target's storage account, as the tool reaches it: azure-storage-blob at its blob endpoint
with its credential, bounded in time and retries, and a failed request said in one line with no secret. The engines'
hand-over (``engines/blobs.py``) and the archived request logs (``traffic/container.py``) both go through here."""

from __future__ import annotations

from azure.core.exceptions import AzureError, ClientAuthenticationError, HttpResponseError
from azure.storage.blob import ContainerClient, LinearRetry

from ..exit_codes import RunError
from ..redact import redact
from .endpoint import CONNECT_TIMEOUT_S, blob_account

__all__ = ["BLOB_API_VERSION", "failed", "open_container"]

#: The Blob service version asked for: one Azure and Azurite (3.35 and later) both answer; the SDK's newest is ahead of
#: Azurite's, which refuses it (400 InvalidHeaderValue). Upload, list and download need nothing newer.
BLOB_API_VERSION = "2025-01-05"


def open_container(name: str, *, connection_string: str, account_url: str, timeout: float, flag: str) -> ContainerClient:
    """The container ``name`` at the target's blob endpoint (a ``UsageError`` naming ``flag`` when it has none)."""
    url, credential = blob_account(connection_string=connection_string, account_url=account_url, flag=flag)
    return ContainerClient(
        url,
        name,
        credential=credential,
        api_version=BLOB_API_VERSION,
        connection_timeout=min(CONNECT_TIMEOUT_S, timeout),
        read_timeout=timeout,
        retry_policy=LinearRetry(backoff=0.5, random_jitter_range=0, retry_total=2),
    )


def failed(err: AzureError, where: str) -> RunError:
    """One line for a blob request that failed, no secret in it."""
    if isinstance(err, ClientAuthenticationError) or getattr(err, "status_code", None) == 403:
        return RunError(f"{where}: the storage account refused the credentials (403): check the key, SAS or role")
    if isinstance(err, HttpResponseError) and err.status_code:
        return RunError(f"{where}: answered {err.status_code} {err.error_code or err.reason or ''}".rstrip())
    first = (str(err).splitlines() or [type(err).__name__])[0]
    return RunError(f"{where}: cannot reach the blob service: {redact(first)[:200]}")
