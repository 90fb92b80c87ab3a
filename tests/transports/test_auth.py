"""Azure AD bearer tokens: against a real Azurite checking them (``--oauth basic``, HTTPS with a pair made here),
with the token from azure-identity's real ``DefaultAzureCredential`` (its App Service managed identity source,
served on loopback), fetched once and reused; and the token cache's renewal."""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest
from azure.core.credentials import AccessToken
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from helpers import SHORT, results_of

from loadtest.account.azurite import EmbeddedAzurite
from loadtest.account.endpoint import STORAGE_SCOPE, TOKEN_RENEW_S, Target, TargetKind
from loadtest.transports.auth import Bearer, auth_for

IDENTITY_HEADER = "test-identity-header"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(*, lifetime_s: float, audience: str = "https://storage.azure.com") -> str:
    """A token as Azure AD issues it for storage; Azurite's basic level checks audience, issuer and expiry, not the signature."""
    now = int(time.time())
    issuer = "https://sts.windows.net/72f988bf-0000-0000-0000-000000000000/"
    claims = {"aud": audience, "iss": issuer, "iat": now - 60, "nbf": now - 60, "exp": int(now + lifetime_s)}
    head = {"alg": "RS256", "typ": "JWT"}
    return f"{_b64(json.dumps(head).encode())}.{_b64(json.dumps(claims).encode())}.{_b64(b'not-checked')}"


def self_signed_pair(folder) -> tuple:
    """A certificate for 127.0.0.1 and its key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


class TokenService:
    """App Service's managed identity endpoint on loopback (IDENTITY_ENDPOINT / IDENTITY_HEADER): what
    DefaultAzureCredential asks for a token there. Counts what it was asked."""

    def __init__(self, lifetime_s: float) -> None:
        self.lifetime_s, self.resources = lifetime_s, []
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                query = parse_qs(urlparse(self.path).query)
                if self.headers.get("X-IDENTITY-HEADER") != IDENTITY_HEADER:
                    self.send_error(401)
                    return
                resource = query.get("resource", [""])[0]
                service.resources.append(resource)
                body = json.dumps(
                    {
                        "access_token": jwt(lifetime_s=service.lifetime_s),
                        "expires_on": str(int(time.time() + max(service.lifetime_s, 1))),
                        "resource": resource,
                        "token_type": "Bearer",
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def env(self) -> dict[str, str]:
        return {"IDENTITY_ENDPOINT": f"http://127.0.0.1:{self.server.server_port}/msi/token", "IDENTITY_HEADER": IDENTITY_HEADER}

    def __enter__(self) -> TokenService:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def oauth_azurite(tmp_path_factory):
    """An Azurite of its own over HTTPS, checking bearer tokens."""
    cert, key = self_signed_pair(tmp_path_factory.mktemp("tls"))
    with EmbeddedAzurite(cert=(cert, key), oauth=True) as server:
        server.cert_file = cert
        yield server


def _env(server, tokens: TokenService) -> dict[str, str]:
    """Trust the test's certificate (geventhttpclient through OpenSSL's SSL_CERT_FILE, the SDK through requests)."""
    return {
        "SSL_CERT_FILE": str(server.cert_file),
        "REQUESTS_CA_BUNDLE": str(server.cert_file),
        **tokens.env,
    }


@pytest.mark.parametrize("client", ["fast", "sdk"])
def test_a_run_with_defaultazurecredential_tokens_against_azurite_checking_them(loadtest, oauth_azurite, tmp_path, client):
    with TokenService(lifetime_s=3600) as tokens:
        done = loadtest(
            "run",
            *SHORT,
            "--client",
            client,
            "--mix",
            "read=50,upsert=30,batch=10,scan=10",
            "--out",
            str(tmp_path),
            "--no-report",
            "--account-url",
            oauth_azurite.endpoint,
            env=_env(oauth_azurite, tokens),
        )
    assert done.code == 0, done.output
    assert "with Azure AD (DefaultAzureCredential)" in done.stderr
    data = results_of(tmp_path)
    assert data["run"]["target_kind"] == "azure-ad"
    assert data["errors"] == {}
    operations = sum(row["requests"] for row in data["partitions"] if row["op_class"] != "ALL")
    assert operations >= 20  # rounds of the mix on tokens (the SDK's 3 users did 73 in the second on a slow machine)
    # the storage scope's resource, asked a few times per process (the SDK's admin client, the load's cache), never per request
    assert tokens.resources and set(tokens.resources) == {"https://storage.azure.com"}
    assert len(tokens.resources) <= 4, tokens.resources


def test_an_expired_token_is_refused_in_one_line(loadtest, oauth_azurite, tmp_path):
    with TokenService(lifetime_s=-120) as tokens:
        done = loadtest("run", *SHORT, "--account-url", oauth_azurite.endpoint, env=_env(oauth_azurite, tokens))
    assert done.code == 1, done.output
    assert "refused the credentials (403" in done.stderr
    assert "Traceback" not in done.output


class CountingCredential:
    """A TokenCredential handing out tokens of a given lifetime, counting how often it was asked."""

    def __init__(self, lifetime_s: float) -> None:
        self.lifetime_s, self.scopes = lifetime_s, []

    def get_token(self, *scopes: str, **_) -> AccessToken:
        self.scopes.append(scopes)
        return AccessToken(f"token-{len(self.scopes)}", int(time.time() + self.lifetime_s))


def test_the_load_asks_for_a_token_once_and_renews_it_before_it_expires():
    lasting = CountingCredential(lifetime_s=3600)
    target = Target(kind=TargetKind.AZURE_AD, endpoint="https://a.table.core.windows.net", _credential=lasting)
    bearer = auth_for(target)
    assert isinstance(bearer, Bearer)
    seen = {bearer.headers("GET", "/t()", "")["Authorization"] for _ in range(1000)}
    assert seen == {"Bearer token-1"} and lasting.scopes == [(STORAGE_SCOPE,)]

    # a token within TOKEN_RENEW_S of its expiry is renewed at the next request
    short = CountingCredential(lifetime_s=TOKEN_RENEW_S - 1)
    target = Target(kind=TargetKind.AZURE_AD, endpoint="https://a.table.core.windows.net", _credential=short)
    assert [auth_for(target).headers("GET", "/t()", "")["Authorization"] for _ in range(2)] == [
        "Bearer token-1",
        "Bearer token-2",
    ]
