"""A run's output folder: checked before anything is sent, and written to atomically.

A run that has put load on a target must not lose its figures to an unusable ``--out`` found
afterwards, nor leave a truncated file beside a good one: each file is written to a temporary
name in the same folder and renamed over its own name once complete, with the mode the user's
umask gives a new file (not the temporary file's 0600).
"""

from __future__ import annotations

import json
import math
import os
import secrets
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from .exit_codes import UsageError

__all__ = [
    "BUCKETS_FILE",
    "COMPARISON_FILE",
    "COMPARISON_PAGE",
    "REPORT_FILE",
    "RESULTS_FILE",
    "SERIES_FILE",
    "SERVER_LOGS_FILE",
    "TIMESERIES_FILE",
    "TIMESERIES_GZ",
    "check_out",
    "new_run_id",
    "write_text",
    "write_whole",
]

#: What marks a folder as holding an earlier run.
RESULTS_FILE = "results.json"
#: The per-second series beside it, as columns (what ``loadtest report`` and ``merge`` read) and for spreadsheets
#: (``Results.write`` writes the three).
SERIES_FILE = "series.parquet"
TIMESERIES_FILE = "timeseries.csv"
TIMESERIES_GZ = "timeseries.csv.gz"  # the same, gzip-compressed: a series past what a spreadsheet opens at ease
#: An engine's per-second counts before its own top keys were chosen, as columns: what ``loadtest merge`` adds.
BUCKETS_FILE = "buckets.parquet"
#: The page rendered from them, and the service's own view of the run (a KQL query of its request logs).
REPORT_FILE = "report.html"
SERVER_LOGS_FILE = "server-logs.kql"
#: ``loadtest compare``'s: the strategies side by side, as data and as a page.
COMPARISON_FILE = "comparison.json"
COMPARISON_PAGE = "comparison.html"


def new_run_id() -> str:
    """A run's id, and its folder's name under reports/: when it started, and four hex digits."""
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def check_out(out: str, *, overwrite: bool = False) -> Path:
    """``--out``: a folder that can be created and written to, not holding an earlier run unless ``overwrite``."""
    path = Path(out)
    try:  # a NUL (which pathlib calls absent, and mkdir refuses), a name past the file system's length
        if "\0" in out:
            raise ValueError("embedded null byte")
        is_file = path.exists() and not path.is_dir()
        earlier = (path / RESULTS_FILE).exists()
        existing = next((p for p in (path, *path.parents) if p.exists()), None)
    except (OSError, ValueError) as err:
        why = getattr(err, "strerror", None) or err
        raise UsageError(f"--out {out!r}: not a folder name this system can write ({why})") from None
    if is_file:
        raise UsageError(f"--out {out!r}: must be a folder, and it is a file")
    if earlier and not overwrite:
        raise UsageError(f"--out {out!r}: holds an earlier run ({RESULTS_FILE}); choose another folder or pass --overwrite")
    if existing is None or not existing.is_dir():
        raise UsageError(f"--out {out!r}: cannot be created ({existing} is not a folder)")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as err:
        raise UsageError(f"--out {out!r}: must be a folder this user can create and write to ({err.strerror})") from None
    return path


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` whole or not at all (a temporary file renamed over it)."""
    return write_whole(path, lambda file: file.write(text.encode("utf-8")))


def write_whole(path: Path, write: Callable[[BinaryIO], object]) -> Path:
    """``write`` into ``path`` whole or not at all: into a temporary file beside it, renamed over it once written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(handle, _new_file_mode())  # the temporary file's 0600 would keep the report from a web server's user
        with os.fdopen(handle, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def _new_file_mode() -> int:
    """The mode the user's umask gives a new file (0644 under the usual 022), as ``open`` would."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def strict_json(value: Any, *, root: str, default: Callable[[Any], Any] | None = None) -> tuple[str, list[str]]:
    """``value`` as JSON text (indent 2) that strict parsers read: a number that is none (NaN, ±Infinity) written as
    null; and where each was (``results.retry.backoff_s: nan``). The usual case, every number finite, is one pass."""
    try:
        return json.dumps(value, default=default, indent=2, allow_nan=False), []
    except ValueError:  # not a number somewhere: found and nulled on the plain form (the rare, slow path)
        where: list[str] = []

        def walk(item: Any, at: str) -> Any:
            if isinstance(item, float) and not math.isfinite(item):
                where.append(f"{at}: {item}")
                return None
            if isinstance(item, dict):
                return {k: walk(v, f"{at}.{k}") for k, v in item.items()}
            if isinstance(item, list):
                return [walk(v, f"{at}[{i}]") for i, v in enumerate(item)]
            return item

        plain = walk(json.loads(json.dumps(value, default=default)), root)
        return json.dumps(plain, indent=2, allow_nan=False), where
