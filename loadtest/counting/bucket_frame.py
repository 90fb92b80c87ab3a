"""The buckets column by column: a pandas frame with a row per (second, partition, op class), what the summary
computes on at any length (a day's seconds over 50 keys are millions of rows: a ``Bucket`` object each would be
gigabytes), and Parquet's compressed encoding of it, how the counts hold seconds past the recent window.

The counters are integer columns; ``errors`` and ``throttled_by`` (a counter by code or reason, rare) are JSON text,
empty where nothing was counted. A frame may hold a key more than once (a late report for a second already put
away): ``summed`` adds them.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import BinaryIO

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..outputs import write_whole
from ..typed.column_checkers import INT
from .buckets import COUNTERS, Bucket, BucketKey

__all__ = [
    "COLUMNS",
    "Chunks",
    "KEYS",
    "TALLIES",
    "column_of",
    "decode",
    "encode",
    "frame_of",
    "read_table",
    "write",
    "summed",
    "tallied",
    "tally_of",
    "tally_text",
    "to_buckets",
]

KEYS = ("second", "partition", "op_class")
TALLIES = ("errors", "throttled_by")  # Counters by code or reason: JSON text, "" when empty
COLUMNS = (*KEYS, *COUNTERS, "longest_ms", *TALLIES)
#: Columns read as Parquet's dictionaries (``decode``, ``read_table``): few texts, many rows (the tallies mostly empty).
_CODED = (*KEYS[1:], *TALLIES)
_SCHEMA = pa.schema(
    [("second", pa.int64()), ("partition", pa.string()), ("op_class", pa.string())]
    + [(name, pa.int64()) for name in (*COUNTERS, "longest_ms")]
    + [(name, pa.string()) for name in TALLIES]
)


def tally_text(counter: Mapping[str, int]) -> str:
    """A counter by code or reason as its column holds it: JSON text, "" when empty."""
    return json.dumps(dict(counter), separators=(",", ":")) if counter else ""


def frame_of(buckets: Iterable[tuple[BucketKey, Bucket]]) -> pd.DataFrame:
    """A frame of ``(key, bucket)`` pairs, in their order."""
    rows = list(buckets)
    columns: dict[str, list] = {name: [key[i] for key, _ in rows] for i, name in enumerate(KEYS)}
    for name in (*COUNTERS, "longest_ms"):
        columns[name] = [getattr(bucket, name) for _, bucket in rows]
    for name in TALLIES:
        columns[name] = [tally_text(getattr(bucket, name)) for _, bucket in rows]
    return pd.DataFrame({name: pd.Series(values, dtype=_dtype(name)) for name, values in columns.items()})


def _dtype(name: str) -> str:
    return "object" if name in ("partition", "op_class", *TALLIES) else "int64"


def encode(frame: pd.DataFrame) -> bytes:
    """The frame in Parquet with zstd: a second of 50 keys' counts takes some 10 bytes a row (mostly zeros)."""
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame, schema=_SCHEMA, preserve_index=False), sink, compression="zstd")
    return sink.getvalue()


def decode(encoded: bytes) -> pd.DataFrame:
    """``encode``'s frame again, its text columns read as Parquet's dictionaries: each row refers to one of a few
    strings (a string a cell was 13 MB of a ten-minute run's frame at 50 keys, carried into its series)."""
    frame = pq.read_table(io.BytesIO(encoded), read_dictionary=_CODED).to_pandas()
    for name in _CODED:
        frame[name] = frame[name].astype(object)
    return frame


class Chunks:
    """Buckets too many for one frame, read a frame at a time (``frames`` gives them afresh each call; a key may
    repeat across them): a long span's seconds, which buckets.parquet holds whole for ``loadtest merge``. Not a
    dataclass: ``dataclasses.asdict`` would copy it into a dict."""

    __slots__ = ("frames", "rows")

    def __init__(self, frames: Callable[[], Iterable[pd.DataFrame]], rows: int) -> None:
        self.frames, self.rows = frames, rows

    def __len__(self) -> int:
        return self.rows


def write(frame: pd.DataFrame | Chunks | None, path: Path) -> None:
    """``encode``'s bytes in a file, whole or not at all (an engine's buckets.parquet; ``Chunks`` a row group each,
    never one frame); none for results of no engine (a merge, a simulation), whose folder must not keep an earlier
    run's buckets as if they were theirs."""
    if frame is None:
        path.unlink(missing_ok=True)
        return
    if isinstance(frame, Chunks):
        write_whole(path, lambda file: _write_chunks(frame, file))
        return
    encoded = encode(frame)
    write_whole(path, lambda file: file.write(encoded))


def _write_chunks(chunks: Chunks, file: BinaryIO) -> None:
    with pq.ParquetWriter(file, _SCHEMA, compression="zstd") as writer:
        for frame in chunks.frames():
            if len(frame):
                writer.write_table(pa.Table.from_pandas(frame, schema=_SCHEMA, preserve_index=False))


def read_table(source: Path | bytes) -> pa.Table:
    """What ``write`` wrote (an engine's buckets.parquet, a file or its bytes) as Arrow columns, partitions, op
    classes and tallies as Parquet's dictionaries (an adder reads their codes, no text made: reading the tallies as
    text was a third of the read); a ``ValueError`` saying what is wrong if it is not that (the columns' types are the
    adder's to check: ``engines.bucket_sum``)."""
    try:
        table = pq.read_table(io.BytesIO(source) if isinstance(source, bytes) else source, read_dictionary=_CODED)
    except (OSError, pa.ArrowException) as err:
        raise ValueError(f"not a readable Parquet file ({err})") from None
    missing = [name for name in COLUMNS if name not in table.column_names]
    if missing:
        raise ValueError(f"no column {missing[0]!r} (the buckets have {', '.join(COLUMNS)})")
    return table.select(list(COLUMNS))


#: What a column read from Parquet must hold (``column_of``), in a refusal's words, and the Arrow type it is read as.
_HOLDS = {
    "whole": ("whole numbers", pa.int64(), pa.types.is_integer),
    "number": ("numbers", pa.float64(), lambda kind: pa.types.is_integer(kind) or pa.types.is_floating(kind)),
    "text": ("text", pa.string(), lambda kind: pa.types.is_string(kind) or pa.types.is_large_string(kind)),
}


def column_of(table: pa.Table, name: str, holds: str, *, gaps: bool = False) -> pa.ChunkedArray:
    """A column of a Parquet file another made (``holds``: whole numbers, numbers or text, Parquet's dictionary of text
    kept as it is), without nulls unless ``gaps``; whole numbers and numbers as 64-bit ones. Else a ``ValueError``:
    ``column 'users' holds string, not whole numbers``."""
    column = table.column(name)
    kind = column.type.value_type if pa.types.is_dictionary(column.type) else column.type
    what, wanted, fits = _HOLDS[holds]
    if not fits(kind) or column.null_count and not gaps:
        raise ValueError(f"column {name!r} holds {column.type}{' with gaps' if column.null_count else ''}, not {what}")
    if holds == "text" or column.type == wanted:
        return column
    try:
        return column.cast(wanted)  # safe: a value the type does not hold is refused, not wrapped
    except pa.ArrowInvalid:
        raise ValueError(f"column {name!r} holds {column.type} past what {wanted} holds (from -2^63 to 2^63 - 1)") from None


def tally_of(name: str, text: object) -> dict[str, int]:
    """A row's ``errors`` or ``throttled_by`` as another wrote it: an object of whole numbers by code or reason, as
    JSON text; else a ``ValueError`` naming the column."""
    try:
        tally = json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):
        tally = None
    if not isinstance(tally, dict) or not INT.test(list(tally.values())):
        raise ValueError(f"column {name!r}: {str(text)[:40]!r} is not an object of whole numbers by code, as JSON")
    return tally


def tallied(texts: Iterable[str]) -> dict[str, int]:
    """The counters' sum of a column of ``errors`` or ``throttled_by`` texts."""
    total: Counter[str] = Counter()
    for text in texts:
        if text:
            total.update(json.loads(text))
    return dict(total)


def summed(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per key, sorted by it: counters added, ``longest_ms`` the longest, the tallies' counts added."""
    if frame.empty or not frame.duplicated(list(KEYS)).any():
        return frame.sort_values(list(KEYS), kind="stable", ignore_index=True)
    grouped = frame.groupby(list(KEYS), sort=True)
    out = grouped[list(COUNTERS)].sum()
    out["longest_ms"] = grouped["longest_ms"].max()
    for name in TALLIES:
        marked = frame[frame[name] != ""]
        again = marked.duplicated(list(KEYS), keep=False)  # a key's only tally is its sum as it stands
        added = marked[again].groupby(list(KEYS))[name].agg(lambda column: tally_text(tallied(column)))
        texts = pd.concat([marked[~again].set_index(list(KEYS))[name], added])
        out[name] = texts.reindex(out.index, fill_value="")
    return out.reset_index()


def to_buckets(frame: pd.DataFrame) -> dict[BucketKey, Bucket]:
    """The frame as buckets (a step's seconds, or a short run's: what reads one bucket at a time)."""
    out: dict[BucketKey, Bucket] = {}
    values = {name: frame[name].to_numpy() for name in COLUMNS}
    for i in range(len(frame)):
        key = (int(values["second"][i]), values["partition"][i], values["op_class"][i])
        bucket = out.get(key)
        if bucket is None:
            bucket = out[key] = Bucket()
        bucket.merge({name: int(values[name][i]) for name in (*COUNTERS, "longest_ms")})
        for name in TALLIES:
            if values[name][i]:
                getattr(bucket, name).update(json.loads(values[name][i]))
    return out
