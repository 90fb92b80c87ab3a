"""The sources ``loadtest traffic`` reads (files, folders, globs, ``-``), each into a ``Tally``: its form given or told
by its first line; the forms written in bulk a block of whole lines at a time (``columns``), the rest a line at a time
(``forms``). A source compressed with gzip (told by its first bytes: users gzip the archive Azure writes plain) is read
as it is decompressed. Memory holds a few blocks, never a whole source, nor a line longer than ``LONGEST_LINE``.
"""

from __future__ import annotations

import glob
import gzip
import io
import sys
import zlib
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import chain
from pathlib import Path
from typing import BinaryIO

import pyarrow as pa

from ..exit_codes import UsageError
from ..progress import Progress
from .attribution import attribute
from .classic import HourSeen
from .columns import NOT_FAST, classic_block, diagnostic_block
from .forms import detect, records
from .records import LONGEST_LINE, LogRecord, Unreadable
from .tally import Tally

__all__ = ["BLOCK_BYTES", "LONGEST_LINE", "NO_FORM", "paths", "read", "shown"]

BLOCK_BYTES = 1 << 24  # whole lines read together by the bulk forms' readers
NO_FORM = "a source in no form the tool reads"
_SUFFIXES = (".json", ".jsonl", ".log", ".csv")  # a folder's log files, each gzip-compressed too (.json.gz)
_BOM = b"\xef\xbb\xbf"
_GZIP = b"\x1f\x8b"  # the first bytes of a gzip stream
_CUT_SHORT = (gzip.BadGzipFile, EOFError, zlib.error)  # what reading a gzip stream cut short or corrupt raises


def shown(name: str) -> str:
    """A source's name as a message shows it: quoted and escaped, one line whatever it holds (a newline, a quote)."""
    return repr(name)


def _log_file(path: Path) -> bool:
    return path.is_file() and path.name.lower().removesuffix(".gz").endswith(_SUFFIXES)


def paths(sources: list[str]) -> list[str]:
    """Each source as files to read: a folder's log files (every level), a glob's matches, ``-``. In their names'
    order (without ``-``): the logs' own names (``…/2026/11/24/1300/000001.log``, ``…/h=13/m=00/PT1H.json``) sort
    by their hours, so an hour's files are read together, each hour after the one before, whatever order they were
    given in (``classic.HourSeen`` matches a duplicate in another of its hour's files)."""
    found: list[str] = []
    for source in sources:
        path = Path(source)
        try:
            if source == "-":
                found.append(source)
            elif path.is_dir():
                found += sorted(str(p) for p in path.rglob("*") if _log_file(p))
            elif path.is_file():
                found.append(source)
            elif any(c in source for c in "*?["):
                found += sorted(p for p in glob.glob(source, recursive=True) if Path(p).is_file())
            else:
                raise UsageError(f"{shown(source)}: no such file or folder, and no glob; give log files, folders, globs or -")
        except OSError as err:  # a name too long, a folder that cannot be listed
            raise UsageError(f"{shown(source)}: cannot be read ({err.strerror or err})") from None
    if "-" not in found:
        found = sorted(dict.fromkeys(found))  # a file named twice is read once
    if not found:
        names = " ".join(map(shown, sources))
        raise UsageError(f"{names}: no log files there ({', '.join('*' + s for s in _SUFFIXES)}, each also as .gz)")
    return found


class _BoundedLines(io.RawIOBase):
    """A binary stream's bytes with each line longer than ``LONGEST_LINE`` bytes left out, said to ``skipped`` (its
    first bytes) as it goes by: no reader after this holds one whole, nor recopies it block after block."""

    def __init__(self, source: BinaryIO, skipped: Callable[[bytes], None]) -> None:
        self._source, self._skipped = source, skipped
        self._ready, self._at = memoryview(b""), 0  # whole lines to hand on, and how far they were
        self._line = bytearray()  # the line being read, its end not read yet
        self._skipping = False  # within a long line, to its end

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while self._at == len(self._ready):
            chunk = self._source.read(min(LONGEST_LINE, 1 << 20))  # a line within one is short enough
            if not chunk:  # the end: the last line, without its newline
                self._ready, self._at, self._line = memoryview(bytes(self._line)), 0, bytearray()
                if not self._ready:
                    return 0
                break
            self._ready, self._at = memoryview(self._take(chunk)), 0
        size = min(len(buffer), len(self._ready) - self._at)
        buffer[:size] = self._ready[self._at : self._at + size]
        self._at += size
        return size

    def _take(self, chunk: bytes) -> bytes | memoryview:
        """The whole lines a chunk ends, the line it leaves open held (or, longer than the bound, skipped)."""
        start = 0
        if self._skipping:
            start = chunk.find(b"\n") + 1
            if not start:
                return b""
            self._skipping = False
        last = chunk.rfind(b"\n", start) + 1
        if not last:
            self._line += chunk[start:]
            self._hold()
            return b""
        first = chunk.find(b"\n", start) + 1
        if len(self._line) + first - start > LONGEST_LINE:  # the open line, ended here, is too long
            self._skipped(bytes(self._line[:200]))
            whole: bytes | memoryview = memoryview(chunk)[first:last]
        else:
            whole = bytes(self._line) + chunk[start:last] if self._line else memoryview(chunk)[start:last]
        self._line = bytearray(chunk[last:])
        self._hold()
        return whole

    def _hold(self) -> None:
        if len(self._line) > LONGEST_LINE:
            self._skipped(bytes(self._line[:200]))
            self._line, self._skipping = bytearray(), True


class _Counted(io.RawIOBase):
    """A stream's bytes as they are read, each read's size told to ``counted``."""

    def __init__(self, source: BinaryIO, counted: Callable[[float], None]) -> None:
        self._source, self._counted = source, counted

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self._source.read(len(buffer))
        buffer[: len(data)] = data
        self._counted(len(data))
        return len(data)


def _opened(stream: BinaryIO, tally: Tally) -> tuple[BinaryIO, bool]:
    """``stream`` as its lines are read: decompressed where it is gzip's (told by its first bytes), each line longer
    than ``LONGEST_LINE`` left out and counted; and whether it was compressed."""
    if not hasattr(stream, "peek"):
        stream = io.BufferedReader(stream)  # type: ignore[arg-type]
    packed = stream.peek(2)[:2] == _GZIP  # type: ignore[attr-defined]
    source: BinaryIO = gzip.GzipFile(fileobj=stream, mode="rb") if packed else stream  # type: ignore[assignment]
    long = f"a line longer than {LONGEST_LINE:,} bytes"

    def skipped(start: bytes) -> None:
        tally.add(Unreadable(long, start.decode("utf-8", errors="replace")))

    return io.BufferedReader(_BoundedLines(source, skipped), buffer_size=1 << 20), packed  # type: ignore[return-value]


def _blocks(stream: BinaryIO, head: bytes) -> Iterator[memoryview]:
    """The stream's whole lines, ``BLOCK_BYTES`` or so at a time, ``head`` first: each read once into a buffer of its
    own, a block's last part line (at most ``LONGEST_LINE``: the stream's lines are bounded) carried into the next."""
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


def read(
    name: str,
    form: str,
    tally: Tally,
    forms: Counter[str],
    stream: BinaryIO | None = None,
    seen: HourSeen | None = None,
    progress: Progress | None = None,
) -> None:
    """One source's records into ``tally`` (``forms`` counts them by form): its form given, or told by its first line.
    ``stream`` when the source is not a file (a blob being downloaded): the caller closes it. ``seen``: the classic
    records of the hours read so far, the command's across its sources (a duplicate may be in another of its hour's
    files). ``progress``: told the bytes read (as stored: a gzip file's compressed)."""
    own = stream is None and name != "-"
    if stream is None:
        try:
            stream = sys.stdin.buffer if name == "-" else open(name, "rb")  # noqa: SIM115 -- closed below
        except OSError as err:
            raise UsageError(f"{shown(name)}: cannot be read ({err.strerror or err})") from None
    packed = False
    try:
        lines, packed = _opened(stream if progress is None else _Counted(stream, progress.advance), tally)
        first = next((line for line in lines if line.strip()), b"")
        if not first:
            return
        first = first.removeprefix(_BOM)
        text = first.decode("utf-8", errors="replace")
        chosen = detect(text) if form == "auto" else form
        if chosen is None:
            tally.add(Unreadable(NO_FORM, f"{shown(name)}: {text}"))
            return
        if chosen in ("diagnostic", "classic"):
            _bulk(_blocks(lines, first), chosen, tally, forms, HourSeen() if seen is None else seen)
            return
        decoded = io.TextIOWrapper(lines, encoding="utf-8", errors="replace", newline="")  # type: ignore[arg-type]
        _lines(chain((text,), decoded), chosen, None, tally, forms)
    except _CUT_SHORT as err:
        if not packed:
            raise
        raise UsageError(f"{shown(name)}: a gzip file cut short or corrupt ({err}); give it whole, or decompressed") from None
    finally:
        if own:
            stream.close()


Read = tuple[pa.Table | None, list[LogRecord | Unreadable]]  # a block's records as columns (None: read a line at a time)
Attributed = tuple[pa.Table | None, pa.Table | None, list[LogRecord | Unreadable]]  # with what attribute said of them
AHEAD = 2  # blocks read and attributed before the one being counted: the three stages keep both cores busy


def _bulk(blocks: Iterator[memoryview], form: str, tally: Tally, forms: Counter[str], seen: HourSeen) -> None:
    """Blocks as columns: each one read by a thread (in their order, one at a time: the hours' records it has seen,
    ``seen``, are its alone while it reads), attributed by another, and counted here, the three at once on different
    blocks (Arrow's, DuckDB's and numpy's work lets go of the interpreter). A block where a line is not a clean record
    is read a line at a time (each one counted)."""

    def read(block: memoryview) -> Read:
        try:
            table, repeated = (diagnostic_block(block), []) if form == "diagnostic" else classic_block(block, seen)
        except NOT_FAST:
            return None, list(records(form, bytes(block).decode("utf-8", errors="replace").splitlines(True), seen))
        return table, list(repeated)

    def attributed(read: Future[Read]) -> Attributed:
        table, items = read.result()
        return table, None if table is None else attribute(table, tally.entity_bytes, tally.query_sizes.mean()), items

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
