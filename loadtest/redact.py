"""Secrets out of every log line, result and page: account keys, SAS signatures, connection strings.

Imported by the report and by logging, so nothing heavy stands behind it (no SDK, no processes).
"""

from __future__ import annotations

import logging
import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["AZURITE_ACCOUNT", "AZURITE_KEY", "RedactingFilter", "public_url", "redact", "redact_every_handler"]

AZURITE_ACCOUNT = "devstoreaccount1"
#: Azurite's well-known development key (public, documented by Microsoft); still redacted in every output.
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

_SECRET_PATTERNS = (
    re.compile(r"(AccountKey=)[^;\s'\"]+", re.I),
    re.compile(r"(SharedAccessSignature=)[^;\s'\"]+", re.I),
    re.compile(r"(\bsig=)[^&\s'\"]+", re.I),
)


def redact(text: str) -> str:
    """Remove account keys and SAS signatures from text bound for a log, result or report."""
    text = text.replace(AZURITE_KEY, "***")
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(r"\1***", text)
    return text


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
        return True


def redact_every_handler() -> None:
    """Put one ``RedactingFilter`` on every handler configured so far (the console, a log file, Locust's web UI log
    view), whichever logger it hangs on: urllib3's and azure's debug lines pass through them too."""
    loggers = [logging.getLogger(), *(v for v in logging.Logger.manager.loggerDict.values() if isinstance(v, logging.Logger))]
    for logger in loggers:
        for handler in logger.handlers:
            if not any(isinstance(f, RedactingFilter) for f in handler.filters):
                handler.addFilter(RedactingFilter())
