"""A storage connection string, parsed strictly: the table endpoint it names (never a public one it does not
name) and its key or SAS. Judged without the network, so a bad string is a usage error before anything is sent.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from typing import Any, NoReturn
from urllib.parse import urlsplit

from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential

from ..exit_codes import UsageError
from ..redact import AZURITE_ACCOUNT, AZURITE_KEY, redact

__all__ = [
    "CONNECTION_STRING_ENV",
    "FROM_FLAG_ENV",
    "SECRET_ON_COMMAND_LINE",
    "CONNECTION_STRING_FORMS",
    "http_url",
    "blob_endpoint",
    "canonical_connection_string",
    "check_connection_string",
    "parse_connection_string",
]

#: The settings a connection string may hold (names match in any case). Other services' endpoints are
#: allowed, as the portal's SAS strings carry them, and ignored.
_SETTINGS = (
    *"DefaultEndpointsProtocol AccountName AccountKey SharedAccessSignature EndpointSuffix UseDevelopmentStorage".split(),
    *(f"{service}{kind}Endpoint" for service in ("Table", "Blob", "Queue", "File", "Dfs") for kind in ("", "Secondary")),
)
CONNECTION_STRING_FORMS = (
    "TableEndpoint=URL, or AccountName and EndpointSuffix (as the portal's Access keys show), with AccountKey and "
    "AccountName, or SharedAccessSignature; or UseDevelopmentStorage=true alone"
)
_DEVELOPMENT_ENDPOINT = f"http://127.0.0.1:10002/{AZURITE_ACCOUNT}"  # UseDevelopmentStorage=true: Azurite's default
_DEVELOPMENT_BLOB_ENDPOINT = f"http://127.0.0.1:10000/{AZURITE_ACCOUNT}"

CONNECTION_STRING_ENV = "AZURE_STORAGE_CONNECTION_STRING"
FROM_FLAG_ENV = "PARTITION_STRESS_CONNECTION_STRING_FROM_FLAG"  # loadtest run passes --connection-string this way
SECRET_ON_COMMAND_LINE = (
    f"--connection-string on the command line is visible to other local users (ps); set ${CONNECTION_STRING_ENV} instead"
)


def http_url(flag: str, value: Any, *, example: str, query: bool = False) -> str:
    """An http(s) URL with a host (and a valid port); ``query``: it may carry one (a SAS). Shown redacted."""
    url = ("" if value is None else str(value)).strip()
    try:
        parts = urlsplit(url)
        ok = (
            parts.scheme in ("http", "https")
            and bool(parts.hostname)
            and parts.port != 0  # .port raises ValueError when out of range or not a number
            and "@" not in parts.netloc
            and not parts.fragment
            and (query or not parts.query)
            and not re.search(r"[\s\x00-\x1f\x7f]", url)
        )
    except ValueError:  # an invalid IPv6 address, a port out of range
        ok = False
    if not ok:
        shown = redact(url)[:120]
        rule = "an http(s) URL with a host" + ("" if query else ", no query")
        raise UsageError(f"{flag} {shown!r}: must be {rule}; valid: a URL like {example}")
    return url


def parse_connection_string(
    connection_string: str, flag: str = "--connection-string"
) -> tuple[str, AzureNamedKeyCredential | AzureSasCredential]:
    """Strictly: the table endpoint the string names (never a public one it does not name) and its key or SAS.
    Errors are ``UsageError``s naming ``flag`` and the rule, never the key or the SAS."""

    def refuse(rule: str) -> NoReturn:
        raise UsageError(f"{flag}: {rule}; valid: {CONNECTION_STRING_FORMS}")

    found = _settings(connection_string, refuse)
    protocol, account = found.get("DefaultEndpointsProtocol", "https").lower(), found.get("AccountName", "")
    suffix = found.get("EndpointSuffix", "")
    if protocol not in ("http", "https"):
        refuse("DefaultEndpointsProtocol must be http or https")
    if account and not re.fullmatch(r"[A-Za-z0-9-]{1,63}", account):
        refuse(f"AccountName {account[:40]!r} must be letters, digits and hyphens")
    if suffix and not re.fullmatch(r"[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:[0-9]{1,5})?", suffix):
        refuse(f"EndpointSuffix {suffix[:60]!r} must be a host name such as core.windows.net")
    if "TableEndpoint" not in found and not (account and suffix):
        refuse("it names no table endpoint (the tool never guesses a public one)")
    endpoint = found.get("TableEndpoint") or f"{protocol}://{account}.table.{suffix}"
    try:
        endpoint = http_url("TableEndpoint", endpoint, example="https://<account>.table.core.windows.net")
    except UsageError as err:
        raise UsageError(f"{flag}: {err}") from None
    key, sas = found.get("AccountKey"), found.get("SharedAccessSignature")
    if bool(key) == bool(sas) or (key and not account):
        refuse("it needs one credential: AccountKey with AccountName, or SharedAccessSignature")
    if sas:
        if "sig=" not in sas:
            refuse("SharedAccessSignature must hold sig=: copy the SAS token whole")
        return endpoint.rstrip("/"), AzureSasCredential(sas.lstrip("?"))
    try:
        base64.b64decode(key, validate=True)
    except ValueError:  # binascii.Error, or a character that is not ASCII
        refuse("AccountKey must be base64: copy the key whole")
    return endpoint.rstrip("/"), AzureNamedKeyCredential(account, key)


def _settings(connection_string: str, refuse: Callable[[str], NoReturn]) -> dict[str, str]:
    """The string's settings by their canonical names (UseDevelopmentStorage spelled out); ``refuse`` on a bad one."""
    known, found = {name.lower(): name for name in _SETTINGS}, {}
    for number, part in enumerate(connection_string.split(";"), 1):
        key, sep, value = (p.strip() for p in part.partition("="))
        name = known.get(key.lower())
        if not (key or sep or value):
            continue
        if not sep or name is None:
            shown = repr(key) if sep and re.fullmatch(r"[A-Za-z]{1,40}", key) else f"part {number}"  # no secret is shown
            refuse(f"{shown} is not one of its settings (NAME=VALUE)")
        if name in found or not value:
            refuse(f"{name} is {'given twice' if name in found else 'empty'}")
        found[name] = value
    if "UseDevelopmentStorage" in found:
        if found["UseDevelopmentStorage"].lower() != "true" or len(found) > 1:
            refuse("UseDevelopmentStorage=true stands alone (Azurite's well-known account on 127.0.0.1:10002)")
        found = {
            "AccountName": AZURITE_ACCOUNT,
            "AccountKey": AZURITE_KEY,
            "TableEndpoint": _DEVELOPMENT_ENDPOINT,
            "BlobEndpoint": _DEVELOPMENT_BLOB_ENDPOINT,
        }
    return found


def blob_endpoint(connection_string: str, flag: str = "--upload") -> str:
    """The blob endpoint of the connection string's account: its BlobEndpoint, or the one AccountName and
    EndpointSuffix name; never a public one it does not name (an explicit TableEndpoint alone names none)."""

    def refuse(rule: str) -> NoReturn:
        raise UsageError(f"{flag}: the connection string {rule}")

    found = _settings(connection_string, refuse)
    if "BlobEndpoint" in found:
        return http_url("BlobEndpoint", found["BlobEndpoint"], example="https://<account>.blob.core.windows.net").rstrip("/")
    account, suffix = found.get("AccountName", ""), found.get("EndpointSuffix", "")
    if "TableEndpoint" in found or not (account and suffix):
        refuse(
            "names no blob endpoint: add BlobEndpoint=<the account's blob URL> (Azurite's: http://127.0.0.1:10000/devstoreaccount1)"
        )
    return f"{found.get('DefaultEndpointsProtocol', 'https').lower()}://{account}.blob.{suffix}"


def check_connection_string(connection_string: str, flag: str = "--connection-string") -> str:
    """The string, if it names a table endpoint and a credential (judged without the network); else ``UsageError``."""
    parse_connection_string(connection_string, flag)
    return connection_string


def canonical_connection_string(endpoint: str, credential: AzureNamedKeyCredential | AzureSasCredential) -> str:
    """The parsed string as the SDK must read it: the endpoint spelled out, so it cannot derive another."""
    if isinstance(credential, AzureSasCredential):
        return f"TableEndpoint={endpoint};SharedAccessSignature={credential.signature}"
    name, key = credential.named_key
    return f"AccountName={name};AccountKey={key};TableEndpoint={endpoint}"
