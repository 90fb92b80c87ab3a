"""How the lean REST client signs in: SharedKey (the Table service's string-to-sign), a SAS token
appended to the query, or an Azure AD bearer token (cached on the target, refreshed before it
expires, never fetched per request). None of them logs what it holds.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from email.utils import formatdate
from typing import Protocol

from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential

from ..account.endpoint import Target

__all__ = ["Auth", "Bearer", "Sas", "SharedKey", "auth_for"]


class _Clock:
    """The x-ms-date header, formatted once a second."""

    def __init__(self) -> None:
        self.second, self.text = 0, ""

    def date(self) -> str:
        now = int(time.time())
        if now != self.second:
            self.second, self.text = now, formatdate(now, usegmt=True)
        return self.text


class Auth(Protocol):
    def headers(self, method: str, path: str, content_type: str) -> dict[str, str]:
        """Headers that authorize one request to ``path`` (as sent, percent-encoded)."""

    def query(self, query: str) -> str:
        """The request's query string with whatever the credential adds, ``?`` included."""


class SharedKey(_Clock):
    """``Authorization: SharedKey account:signature`` over VERB, Content-MD5, Content-Type, x-ms-date and the resource."""

    def __init__(self, account: str, key: str) -> None:
        super().__init__()
        self.resource, self.prefix = f"/{account}", f"SharedKey {account}:"
        self._key = base64.b64decode(key)

    def __repr__(self) -> str:
        return f"SharedKey({self.resource[1:]}, key redacted)"

    def headers(self, method: str, path: str, content_type: str) -> dict[str, str]:
        date = self.date()
        to_sign = f"{method}\n\n{content_type}\n{date}\n{self.resource}{path}".encode()
        signature = base64.b64encode(hmac.new(self._key, to_sign, hashlib.sha256).digest()).decode()
        return {"x-ms-date": date, "Authorization": self.prefix + signature}

    def query(self, query: str) -> str:
        return f"?{query}" if query else ""


class Sas(_Clock):
    """A shared access signature: its token goes on every request's query string."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self._token = token.lstrip("?")

    def __repr__(self) -> str:
        return "Sas(token redacted)"

    def headers(self, method: str, path: str, content_type: str) -> dict[str, str]:
        return {"x-ms-date": self.date()}

    def query(self, query: str) -> str:
        return f"?{query}&{self._token}" if query else f"?{self._token}"


class Bearer(_Clock):
    """An Azure AD token for https://storage.azure.com, from the target's (shared, cached) credential."""

    def __init__(self, target: Target) -> None:
        super().__init__()
        self.target = target

    def headers(self, method: str, path: str, content_type: str) -> dict[str, str]:
        return {"x-ms-date": self.date(), "Authorization": "Bearer " + self.target.token()}

    def query(self, query: str) -> str:
        return f"?{query}" if query else ""


def auth_for(target: Target) -> Auth:
    credential = target.sdk_credential()
    if isinstance(credential, AzureNamedKeyCredential):
        return SharedKey(credential.named_key.name, credential.named_key.key)
    if isinstance(credential, AzureSasCredential):
        return Sas(credential.signature)
    return Bearer(target)
