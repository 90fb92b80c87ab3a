"""The results' per-second series as columns: a pandas frame with a row per second, partition and op class in memory,
series.parquet beside results.json on disk, timeseries.csv for spreadsheets.

An hour over 50 keys is some 370,000 rows: as JSON objects they were most of results.json (a dict each in memory,
tens of megabytes on disk); as columns they are a few megabytes and read in a fraction of a second. Parquet with zstd
was chosen by ``bench/series_format.py`` (size and read time side by side with JSON and Arrow IPC).

The columns are timeseries.csv's (``COLUMNS``): the counters whole numbers; ``errors`` and ``throttled_by`` (a counter
by code or reason, rare) JSON text, "" where nothing was counted, as ``bucket_frame`` keeps them; ``users`` a nullable
whole number (none where no sample was taken). A results.json written before this file held the rows as JSON objects:
``of_rows`` reads them into the same frame.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import weakref
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from pyarrow import csv

from ..counting.bucket_frame import COLUMNS as BUCKET_COLUMNS
from ..counting.bucket_frame import TALLIES, column_of, summed, tally_of, tally_text
from ..counting.buckets import COUNTERS
from ..outputs import TIMESERIES_FILE, TIMESERIES_GZ, write_whole
from ..service.operations import OpClass
from ..typed.column_checkers import shown
from .rolled_frame import BIN_COLUMN
from .schema import EPOCH_END, EPOCH_WHAT
from .series_schema import MAX_BIN_S, MAX_SPAN_S

__all__ = [
    "COLUMNS",
    "FORMULA_STARTS",
    "LATENCY",
    "check_span",
    "empty",
    "of_frame",
    "of_rows",
    "one_width",
    "read",
    "records",
    "tally",
    "write",
    "write_csv",
]

LATENCY = ("p50_ms", "p95_ms", "p99_ms", "max_ms")
COLUMNS = ("t", "second", "partition", "op_class", *COUNTERS, "longest_ms", *TALLIES, *LATENCY, "users", BIN_COLUMN)
#: Rows timeseries.csv holds plain (some 16 MB, which a spreadsheet opens at ease); a longer series' copy is gzipped,
#: as pandas, DuckDB and polars read it (an hour over 50 keys is some 370,000 rows: 27 MB plain, 2 MB gzipped).
PLAIN_CSV_ROWS = 200_000
_TEXT = ("partition", "op_class", *TALLIES)
_WHOLE = ("t", "second", *COUNTERS, "longest_ms", BIN_COLUMN)
_KIND = {name: "text" if name in _TEXT else "number" if name in LATENCY else "whole" for name in COLUMNS}  # column_of's
#: What a cell of timeseries.csv must not begin with, or a spreadsheet reads it as a formula (OWASP's CSV injection:
#: ``=``, ``+``, ``-``, ``@``, tab and carriage return); such a cell begins with a single quote, as spreadsheets advise.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_SCHEMA = pa.schema(
    [(name, pa.int64()) for name in ("t", "second")]
    + [(name, pa.string()) for name in ("partition", "op_class")]
    + [(name, pa.int64()) for name in (*COUNTERS, "longest_ms")]
    + [(name, pa.string()) for name in TALLIES]
    + [(name, pa.float64()) for name in LATENCY]
    + [("users", pa.int64()), (BIN_COLUMN, pa.int64())]
)


def of_frame(columns: Mapping[str, Any] | pd.DataFrame) -> pd.DataFrame:
    """The series of ``columns`` (every one of ``COLUMNS``, ``bin_s`` 1 where not given; others left out), each of its
    declared type."""
    frame = pd.DataFrame({name: columns[name] for name in COLUMNS if name != BIN_COLUMN})
    frame[BIN_COLUMN] = columns[BIN_COLUMN] if BIN_COLUMN in columns else 1
    for name in _WHOLE:
        frame[name] = frame[name].astype("int64")
    for name in LATENCY:
        frame[name] = frame[name].astype("float64")
    for name in _TEXT:
        frame[name] = frame[name].astype(object)
    frame["users"] = frame["users"].astype("Int64")
    return frame


def one_width(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The series with every row of its widest bins' width (``rolled_frame``: a long span's seconds kept around its
    peaks, each folded into its bin), and that width: what reads the span bin by bin (a chart, a stretch of refusals).
    Counters are the bin's sums (``bin_s`` its length: the span cuts the first and last); latency its worst row's;
    a series of seconds is given as it is. The last series asked of is answered again from memory (each throttled
    partition's finding asks of the same one: a week's, some 0.2 s each)."""
    widest = int(frame[BIN_COLUMN].max()) if len(frame) else 1
    if widest == 1:
        return frame, 1
    asked, answer = _LAST_ONE_WIDTH
    if asked is not None and asked() is frame:
        return answer
    _LAST_ONE_WIDTH[:] = [weakref.ref(frame), _one_width(frame, widest)]
    return _LAST_ONE_WIDTH[1]


_LAST_ONE_WIDTH: list = [None, None]  # (a weak reference to the series, its answer)


def _one_width(frame: pd.DataFrame, widest: int) -> tuple[pd.DataFrame, int]:
    offset = int((frame["second"] - frame["t"]).iloc[0])  # the run's first second: t is from it
    seconds = frame["second"].to_numpy(np.int64)
    start = np.maximum(offset, seconds // widest * widest)
    stop = np.minimum((seconds // widest + 1) * widest, int((frame["second"] + frame[BIN_COLUMN]).max()))
    moved = frame.assign(second=start)
    sums = summed(moved[list(BUCKET_COLUMNS)])
    worst = moved.groupby(["second", "partition", "op_class"], sort=True)[list(LATENCY)].max().reset_index()
    out = sums.merge(worst, on=["second", "partition", "op_class"], how="left")
    lengths = pd.Series(stop - start, index=start).groupby(level=0).max()
    out["t"] = out["second"] - offset
    out["users"] = None
    out[BIN_COLUMN] = out["second"].map(lengths)
    return of_frame(out), widest


def empty() -> pd.DataFrame:
    return of_frame({name: [] for name in COLUMNS})


def of_rows(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Rows as results.json held them before series.parquet (or as a test writes them): a key added later than the
    rows (``typed.reader``'s ``NotRequired``) reads as 0, or as nothing counted."""
    rows = list(rows)
    if not rows:
        return empty()
    frame = pd.DataFrame.from_records(rows)
    columns: dict[str, Any] = {}
    for name in COLUMNS:
        if name in TALLIES:  # counters, or text already
            given = frame[name] if name in frame else [""] * len(frame)
            # a row without the key, beside rows with it, reads NaN from the records: nothing counted, as a missing key
            columns[name] = [v if isinstance(v, str) else tally_text(v) if isinstance(v, Mapping) else "" for v in given]
        elif name == "users":
            columns[name] = frame[name].where(frame[name].notna(), None) if name in frame else [None] * len(frame)
        elif name == BIN_COLUMN:  # a second a row, as every series held before long spans were binned
            columns[name] = frame[name].fillna(1) if name in frame else np.ones(len(frame), dtype=np.int64)
        else:
            columns[name] = frame[name].fillna(0) if name in frame else np.zeros(len(frame), dtype=np.int64)
    return of_frame(columns)


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows as results.json held them: ``errors`` and ``throttled_by`` as counters, ``users`` None where no sample
    was taken (for a reader that walks them one by one: a short run's, a test's)."""
    out = frame.astype({"users": object}).where(frame.notna(), None).to_dict("records")
    for row in out:
        for name in TALLIES:
            row[name] = json.loads(row[name]) if row[name] else {}
    return out


def tally(frame: pd.DataFrame, name: str, codes: Iterable[str] | None = None) -> np.ndarray:
    """Each row's count in the ``errors`` or ``throttled_by`` column: of ``codes``, or of every code when none."""
    wanted = None if codes is None else frozenset(codes)
    out = np.zeros(len(frame), dtype=np.int64)
    texts = frame[name].to_numpy()
    for i in np.flatnonzero(texts != ""):
        counts = json.loads(texts[i])
        out[i] = sum(n for code, n in counts.items() if wanted is None or code in wanted)
    return out


def write(frame: pd.DataFrame, path: Path) -> None:
    """series.parquet: the frame in Parquet with zstd (partitions and op classes dictionary-encoded, as Parquet does),
    whole or not at all."""
    table = pa.Table.from_pandas(frame, schema=_SCHEMA, preserve_index=False)
    write_whole(path, lambda file: pq.write_table(table, file, compression="zstd"))


def read(path: Path) -> pd.DataFrame:
    """series.parquet's frame, each column checked as ``TimeseriesRow`` declares a row's (nulls only in ``users``, op
    classes by name, the tallies JSON objects of whole numbers, the seconds within ``check_span``); a ``ValueError``
    naming the file and the column if it is not the series' (``loadtest report`` says it in one line)."""
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as err:
        raise ValueError(f"{path.name}: not a readable Parquet file ({str(err).splitlines()[0]})") from None
    missing = [name for name in COLUMNS if name not in table.column_names and name != BIN_COLUMN]  # older: seconds
    if missing:
        raise ValueError(f"{path.name}: no column {missing[0]!r} (the per-second series has {', '.join(COLUMNS)})")
    try:
        names = [name for name in COLUMNS if name in table.column_names]
        columns = {name: column_of(table, name, _KIND[name], gaps=name == "users") for name in names}
        frame = pa.table({name: columns[name] for name in names if name != "users"}).to_pandas()
        frame["users"] = columns["users"].to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)  # no float between
        frame = of_frame(frame)
        _check_text(frame)
        check_span(frame)
    except ValueError as err:
        raise ValueError(f"{path.name}: {err}") from None
    return frame


def _check_text(frame: pd.DataFrame) -> None:
    """The op classes by name, and each tally an object of whole numbers by code (the rows' own rules)."""
    op_classes = [str(op) for op in OpClass]
    wrong = set(frame["op_class"].unique()) - set(op_classes)
    if wrong:
        raise ValueError(f"column 'op_class': {shown(min(map(str, wrong)))} is not one of {', '.join(op_classes)}")
    for name in TALLIES:
        for text in frame[name].unique():
            if text:
                tally_of(name, text)


def check_span(frame: pd.DataFrame) -> None:
    """A ``ValueError`` where a row holds other than 1 to ``MAX_BIN_S`` seconds, the series' rows span more than
    ``MAX_SPAN_S`` of its widest (from second 0, or its first before it, to its last: a chart or finding reads an
    array a row that long), or its wall-clock seconds are no dates."""
    if frame.empty:
        return
    widths = frame[BIN_COLUMN]
    if int(widths.min()) < 1 or int(widths.max()) > MAX_BIN_S:
        wrong = int(widths.min()) if int(widths.min()) < 1 else int(widths.max())
        raise ValueError(f"column {BIN_COLUMN!r}: {wrong:,} is not the seconds a row holds (1 to {MAX_BIN_S:,})")
    widest = int(widths.max())
    low, high = min(0, int(frame["t"].min())), max(0, int(frame["t"].max()))
    if high - low > MAX_SPAN_S * widest:
        raise ValueError(
            f"column 't': seconds from {low:,} to {high:,}, a span of more than {MAX_SPAN_S * widest:,} s (the most the "
            f"tool reads of one run{'' if widest == 1 else f' in rows of {widest:,} s'})"
        )
    seconds = frame["second"]
    if int(seconds.min()) < 0 or int(seconds.max()) >= EPOCH_END:
        wrong = int(seconds.min()) if int(seconds.min()) < 0 else int(seconds.max())
        raise ValueError(f"column 'second': {EPOCH_WHAT}, not {wrong:,}")


def csv_name(rows: int) -> str:
    """The spreadsheet copy's file: timeseries.csv up to ``PLAIN_CSV_ROWS`` rows, timeseries.csv.gz past them."""
    return TIMESERIES_FILE if rows <= PLAIN_CSV_ROWS else TIMESERIES_GZ


def write_csv(frame: pd.DataFrame, out: Path) -> Path:
    """timeseries.csv (or .gz: ``csv_name``) in ``out``: the same rows, ``errors`` and ``throttled_by`` as
    ``code:n;code:n`` (a spreadsheet's cell); the other name's file from an earlier run there removed."""
    table = frame.copy(deep=False)
    for name in TALLIES:  # the counters sorted by code, as the rows' keys were; none counted: an empty cell
        table[name] = [";".join(f"{k}:{n}" for k, n in sorted(json.loads(t).items())) if t else None for t in frame[name]]
    for name in _TEXT:  # no cell a formula
        table[name] = _no_formulas(table[name])
    name = csv_name(len(frame))
    (out / ({TIMESERIES_FILE, TIMESERIES_GZ} - {name}).pop()).unlink(missing_ok=True)
    return write_whole(out / name, lambda file: _csv(table, file, compressed=name == TIMESERIES_GZ))


def _no_formulas(column: pd.Series) -> pd.Series | np.ndarray:
    """A text column with each cell that begins as a formula (``FORMULA_STARTS``) after a single quote; each distinct
    text looked at once (a run's keys are few, its rows many)."""
    codes, texts = pd.factorize(column, use_na_sentinel=True)
    said = [f"'{text}" if text.startswith(FORMULA_STARTS) else text for text in texts]
    if said == list(texts):
        return column
    return np.asarray([*said, None], dtype=object)[codes]  # a code of -1 (no text): the last, None


def _csv(table: pd.DataFrame, file: BinaryIO, *, compressed: bool) -> None:
    """Arrow's CSV writer: a tenth of pandas' time for an hour's 350,000 rows (3.5 s). Text is quoted, numbers not;
    the header is the columns' names as they are."""
    columns = pa.Table.from_pandas(table, preserve_index=False)
    with gzip.GzipFile(fileobj=file, mode="wb", compresslevel=6, mtime=0) if compressed else contextlib.nullcontext(file) as raw:
        raw.write((",".join(columns.column_names) + "\n").encode("utf-8"))
        csv.write_csv(columns, raw, csv.WriteOptions(include_header=False, quoting_style="needed"))
