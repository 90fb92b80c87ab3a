"""Secrets out of every log line, result and page: account keys, SAS signatures, connection strings.

Imported by the report and by logging, so nothing heavy stands behind it (no SDK, no processes).
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "AZURITE_ACCOUNT",
    "AZURITE_KEY",
    "RedactingFilter",
    "public_url",
    "redact",
    "redact_every_handler",
    "redact_values",
]

AZURITE_ACCOUNT = "devstoreaccount1"
#: Azurite's well-known development key (public, documented by Microsoft); still redacted in every output.
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

#: A quote around a mapping's key or value: as typed, backslash-escaped at any depth (JSON text inside JSON text), or
#: ``\u0022`` / ``\u0027`` (an HTML-safe JSON encoder's).
_QUOTE = r"""(?:\\*["']|\\u00(?:22|27))"""
#: How a name meets its value: ``=`` as typed or spaced (the connection-string parser accepts ``AccountKey = …``),
#: percent-encoded once or twice, JSON-escaped, the value quoted or not; or a JSON or Python mapping's key and its value
#: (``"AccountKey": "…"``).
_MEETS = rf"""(?:(?:\s*=\s*|%(?:25)?3D|\\u003d)|{_QUOTE}\s*:\s*){_QUOTE}?"""
#: Before ``sig``: not a letter or digit, or ``&`` / ``?`` encoded (``%26``, ``%3F``, twice encoded, ``\u0026``).
_SIG_START = r"(?:(?<![A-Za-z0-9_])|(?<=%26)|(?<=%3F)|(?<=%2526)|(?<=%253F)|(?<=\\u0026))"
#: A value: up to a separator, a quote, a backslash or markup (never taking a quote or a backslash, redacted JSON text
#: stays JSON); a whole SAS runs on over its fields' ``&``.
_VALUE = r"""[^\s;&'"\\<>]+"""
_SAS = r"""[^\s;'"\\<>]+"""

_SECRET_PATTERNS = (
    re.compile(rf"(AccountKey{_MEETS}){_VALUE}", re.I),
    re.compile(rf"(SharedAccessSignature{_MEETS}){_SAS}", re.I),
    re.compile(rf"(?=sig)({_SIG_START}sig{_MEETS}){_VALUE}", re.I),  # (?=sig) first: a quick miss at most places
    re.compile(rf"(SharedKey(?:Lite)?\s+[A-Za-z0-9-]+:){_VALUE}"),  # the REST transport's Authorization header
)


def redact(text: str) -> str:
    """Remove account keys and SAS signatures from text bound for a log, result or report."""
    text = text.replace(AZURITE_KEY, "***")
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(r"\1***", text)
    return text


def redact_values(value: Any) -> Any:
    """``value`` (JSON's kinds: mappings, lists, strings, numbers) with every string in it redacted, keys too: data
    bound for a page or a JSON answer, redacted before it is encoded (an encoder may write a SAS's ``&`` as ``\\u0026``,
    a page's as ``&amp;``)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_values(k): redact_values(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_values(v) for v in value]
    return value


def public_url(url: str) -> str:
    """``url`` without its query, fragment or user info: an endpoint as shown where no redaction follows (Locust's
    host, on its web UI, its ``/swarm`` answers and its HTML report), so a SAS given in ``--account-url`` never is."""
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL at all: nothing of it is shown
        return ""
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class RedactingFilter(logging.Filter):
    """On a handler: every record it emits, from any logger at any level, leaves without a secret."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:  # a traceback's text is its exception's message too
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def redact_every_handler() -> None:
    """Put one ``RedactingFilter`` on every handler configured so far (the console, a log file, Locust's web UI log
    view), whichever logger it hangs on: urllib3's and azure's debug lines pass through them too."""
    loggers = [logging.getLogger(), *(v for v in logging.Logger.manager.loggerDict.values() if isinstance(v, logging.Logger))]
    for logger in loggers:
        for handler in logger.handlers:
            if not any(isinstance(f, RedactingFilter) for f in handler.filters):
                handler.addFilter(RedactingFilter())
