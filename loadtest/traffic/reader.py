"""The sources ``loadtest traffic`` reads (files, folders, globs, ``-``), each into a ``Tally``: its form given or told
by its first line; the forms written in bulk a block of whole lines at a time (``columns``), the rest a line at a time
(``forms``). Memory holds a few blocks, never a whole source.
"""

from __future__ import annotations

import glob
import io
import sys
from collections import Counter, deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import chain
from pathlib import Path
from typing import BinaryIO

import pyarrow as pa

from ..exit_codes import UsageError
from .attribution import attribute
from .classic import HourSeen
from .columns import NOT_FAST, classic_block, diagnostic_block
from .forms import detect, records
from .records import LogRecord, Unreadable
from .tally import Tally

__all__ = ["BLOCK_BYTES", "NO_FORM", "paths", "read"]

BLOCK_BYTES = 1 << 24  # whole lines read together by the bulk forms' readers
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


def _blocks(stream: BinaryIO, head: bytes) -> Iterator[memoryview]:
    """The stream's whole lines, ``BLOCK_BYTES`` or so at a time, ``head`` first: each read once into a buffer of its
    own (the copy from the file is the only one), a block's last part line carried into the next."""
    rest = head
    while True:
        buffer = bytearray(len(rest) + BLOCK_BYTES)
        buffer[: len(rest)] = rest
        view, filled = memoryview(buffer), len(rest)
        while filled < len(buffer) and (got := stream.readinto(view[filled:])):  # a pipe or a download gives less
            filled += got
        cut = buffer.rfind(b"\n", 0, filled) + 1
        if filled < len(buffer):  # the stream's end
            if filled:
                yield view[:filled]
            return
        if cut:
            yield view[:cut]
        rest = buffer[cut:filled]


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
            _bulk(_blocks(stream, first), chosen, tally, forms)
            return
        lines = io.TextIOWrapper(stream, encoding="utf-8", errors="replace", newline="")
        _lines(chain((text,), lines), chosen, None, tally, forms)
    finally:
        if own:
            stream.close()


Read = tuple[pa.Table | None, list[LogRecord | Unreadable]]  # a block's records as columns (None: read a line at a time)
Attributed = tuple[pa.Table | None, pa.Table | None, list[LogRecord | Unreadable]]  # with what attribute said of them
AHEAD = 2  # blocks read and attributed before the one being counted: the three stages keep both cores busy


def _bulk(blocks: Iterator[memoryview], form: str, tally: Tally, forms: Counter[str]) -> None:
    """Blocks as columns: each one read by a thread (in their order, one at a time: the hour's records it has seen,
    ``HourSeen``, are its own), attributed by another, and counted here, the three at once on different blocks
    (Arrow's, DuckDB's and numpy's work lets go of the interpreter). A block where a line is not a clean record is
    read a line at a time (each one counted)."""
    seen = HourSeen()

    def read(block: memoryview) -> Read:
        try:
            table, repeated = (diagnostic_block(block), []) if form == "diagnostic" else classic_block(block, seen)
        except NOT_FAST:
            return None, list(records(form, bytes(block).decode("utf-8", errors="replace").splitlines(True), seen))
        return table, list(repeated)

    def attributed(read: Future[Read]) -> Attributed:
        table, items = read.result()
        return table, None if table is None else attribute(table, tally.entity_bytes), items

    def count(table: pa.Table | None, said: pa.Table | None, items: list[LogRecord | Unreadable]) -> None:
        for item in items:
            tally.add(item)
            forms[form] += isinstance(item, LogRecord)
        if table is not None:
            tally.count(table, said)
            forms[form] += table.num_rows

    with (
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="traffic-read") as reader,
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="traffic-attribute") as attributer,
    ):
        pending: deque[Future[Attributed]] = deque()
        for block in blocks:
            pending.append(attributer.submit(attributed, reader.submit(read, block)))
            if len(pending) > AHEAD:
                count(*pending.popleft().result())
        while pending:
            count(*pending.popleft().result())


def _lines(lines: Iterator[str] | list[str], form: str, seen: HourSeen | None, tally: Tally, forms: Counter[str]) -> None:
    for item in records(form, lines, seen):
        tally.add(item)
        if isinstance(item, LogRecord):
            forms[form] += 1
