"""Secrets out of every log line, result and page: account keys, SAS signatures, connection strings.

Imported by the report and by logging, so nothing heavy stands behind it (no SDK, no processes).
"""

from __future__ import annotations

import re

__all__ = ["AZURITE_ACCOUNT", "AZURITE_KEY", "redact"]

AZURITE_ACCOUNT = "devstoreaccount1"
#: Azurite's well-known development key (public, documented by Microsoft); still redacted in every output.
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

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
