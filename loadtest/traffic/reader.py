"""The sources ``loadtest traffic`` reads (files, folders, globs, ``-``), each into a ``Tally``: its form given or told
by its first line; the forms written in bulk a block of whole lines at a time (``columns``), the rest a line at a time
(``forms``). Memory holds a block, never a whole source.
"""

from __future__ import annotations

import glob
import io
import sys
from collections import Counter
from collections.abc import Iterator
from itertools import chain
from pathlib import Path
from typing import BinaryIO

from ..exit_codes import UsageError
from .classic import HourSeen
from .columns import NOT_FAST, classic_block, diagnostic_block
from .forms import detect, records
from .records import LogRecord, Unreadable
from .tally import Tally

__all__ = ["BLOCK_BYTES", "NO_FORM", "paths", "read"]

BLOCK_BYTES = 1 << 25  # whole lines read together by the bulk forms' readers
NO_FORM = "a source in no form the tool reads"
_SUFFIXES = (".json", ".jsonl", ".log", ".csv")
_BOM = b"\xef\xbb\xbf"


def paths(sources: list[str]) -> list[str]:
    """Each source as files to read, in order: a folder's log files (every level), a glob's matches, ``-``."""
    found: list[str] = []
    for source in sources:
        path = Path(source)
        if source == "-":
            found.append(source)
        elif path.is_dir():
            found += sorted(str(p) for p in path.rglob("*") if p.is_file() and p.suffix.lower() in _SUFFIXES)
        elif path.is_file():
            found.append(source)
        elif any(c in source for c in "*?["):
            found += sorted(p for p in glob.glob(source, recursive=True) if Path(p).is_file())
        else:
            raise UsageError(f"{source}: no such file or folder, and no glob; give log files, folders, globs or -")
    if not found:
        raise UsageError(f"{' '.join(sources)}: no log files there (*.json, *.jsonl, *.log, *.csv)")
    return found


def _blocks(stream: BinaryIO, head: bytes) -> Iterator[bytes]:
    """The stream's whole lines, ``BLOCK_BYTES`` or so at a time, ``head`` first."""
    rest = head
    while chunk := stream.read(BLOCK_BYTES):
        data = rest + chunk
        cut = data.rfind(b"\n") + 1
        rest = data[cut:]
        if cut:
            yield data[:cut]
    if rest:
        yield rest


def read(name: str, form: str, tally: Tally, forms: Counter[str], stream: BinaryIO | None = None) -> None:
    """One source's records into ``tally`` (``forms`` counts them by form): its form given, or told by its first line.
    ``stream`` when the source is not a file (a blob being downloaded): the caller closes it."""
    own = stream is None and name != "-"
    if stream is None:
        stream = sys.stdin.buffer if name == "-" else open(name, "rb")  # noqa: SIM115 -- closed below
    try:
        first = next((line for line in stream if line.strip()), b"")
        if not first:
            return
        first = first.removeprefix(_BOM)
        text = first.decode("utf-8", errors="replace")
        chosen = detect(text) if form == "auto" else form
        if chosen is None:
            tally.add(Unreadable(NO_FORM, f"{name}: {text}"))
            return
        if chosen in ("diagnostic", "classic"):
            seen = HourSeen()
            for block in _blocks(stream, first):
                _bulk(block, chosen, seen, tally, forms)
            return
        lines = io.TextIOWrapper(stream, encoding="utf-8", errors="replace", newline="")
        _lines(chain((text,), lines), chosen, None, tally, forms)
    finally:
        if own:
            stream.close()


def _bulk(block: bytes, form: str, seen: HourSeen, tally: Tally, forms: Counter[str]) -> None:
    """A block as columns, or, where a line of it is not a clean record, a line at a time (each one counted)."""
    try:
        table, repeated = (diagnostic_block(block), []) if form == "diagnostic" else classic_block(block, seen)
    except NOT_FAST:
        _lines(block.decode("utf-8", errors="replace").splitlines(keepends=True), form, seen, tally, forms)
        return
    for item in repeated:
        tally.add(item)
    tally.count(table)
    forms[form] += table.num_rows


def _lines(lines: Iterator[str] | list[str], form: str, seen: HourSeen | None, tally: Tally, forms: Counter[str]) -> None:
    for item in records(form, lines, seen):
        tally.add(item)
        if isinstance(item, LogRecord):
            forms[form] += 1
