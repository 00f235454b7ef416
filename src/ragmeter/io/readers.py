"""Readers that stream rows from files and in-memory datasets.

Every reader yields ``Row`` objects (:mod:`ragmeter.io.rows`; a ``.json`` file's are
:mod:`ragmeter.io.json_array`'s): the row's position in the input, its data (a mapping),
and, when the row itself could not be read, the problem (a bad JSON line, say). A bad row never
stops the stream; an unreadable file, or one without a single row, raises ``DataError`` before
the first row.
"""

from __future__ import annotations

import csv
import io
import json
import math
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ragmeter.errors import DataError
from ragmeter.io.json_array import json_rows
from ragmeter.io.rows import (
    TOO_DEEP,
    ReadHash,
    Row,
    RowSource,
    hashed_open,
    peeked,
    shallow_row,
)

#: Text files up to this size have their rows counted first, for the progress bar's total.
COUNT_ROWS_UP_TO = 256 * 2**20


#: The longest JSONL line read as a row; a longer one fails its row (read in pieces, not whole).
MAX_LINE_BYTES = 64 * 2**20


SKIP_CHUNK = 2**20


SUFFIXES = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
}


def open_rows(data: Any, *, peek: int = 200) -> RowSource:
    """Open ``data`` as a stream of rows.

    Accepts a path (JSONL, JSON list, CSV, Parquet), a pandas DataFrame, a Hugging Face
    ``datasets.Dataset``, a list of dicts, or any iterable of mappings. Columns of
    schema-less sources are the union of the keys of the first ``peek`` rows.
    Data without a single row (an empty file, a CSV with only its header, an empty list)
    raises ``DataError``: there is nothing to score, and the missing columns are not the cause.
    """
    if isinstance(data, str | Path):
        return _open_path(Path(data), peek)
    typename = f"{type(data).__module__}.{type(data).__name__}"
    kind = type(data).__name__
    if typename.startswith("pandas.") and hasattr(data, "to_dict"):
        return _nonempty(_from_pandas(data), f"The data has no rows: got an empty {kind}.")
    if typename.startswith("datasets.") and hasattr(data, "column_names"):
        return _nonempty(_from_hf(data), f"The data has no rows: got an empty {kind}.")
    if isinstance(data, Mapping):
        raise DataError(
            "Got a single mapping. Pass a list of rows (dicts), a file path, a pandas DataFrame "
            "or a Hugging Face Dataset. For a dict of columns use pandas.DataFrame(data)."
        )
    if isinstance(data, Iterable):
        return peeked(
            (shallow_row(i, r, f"row {i}") for i, r in enumerate(data)),
            peek,
            "data",
            len(data) if hasattr(data, "__len__") else None,
            empty=lambda: f"The data has no rows: got an empty {kind}.",
        )
    raise DataError(
        f"Cannot read data of type {type(data).__name__}. Pass a path (.jsonl, .json, .csv, "
        ".parquet), a pandas DataFrame, a Hugging Face Dataset or a list of dicts."
    )


def _nonempty(source: RowSource, message: str) -> RowSource:
    """``source``, or ``DataError(message)`` when it is known to hold no rows."""
    if source.total == 0:
        columns = f" Its columns: {', '.join(source.columns)}." if source.columns else ""
        raise DataError(f"{message}{columns}")
    return source


def _empty_csv_message(path: Path) -> str:
    with path.open(newline="", encoding="utf-8-sig") as fh:
        header = next(csv.reader(fh), None)
    if header:
        return (
            f"The file {path} has no rows. It has a header line ({', '.join(header)}) but no "
            "lines under it; add one line per sample."
        )
    return (
        f"The file {path} has no rows. It is empty; a CSV file needs a header line of column "
        "names, then one line per sample."
    )


def check_regular_file(path: Path) -> None:
    """Refuse an input that is not a regular file (a FIFO, a device, a socket; through a
    symlink too) before anything opens it: a run reads its input more than once (to count,
    score and hash it), which only a regular file gives the same data each time."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise DataError(f"No such file: {str(path)!r}.") from None
    except OSError as exc:
        raise DataError(f"Cannot read {str(path)!r}: {exc.strerror or exc}.") from None
    if stat.S_ISDIR(mode):
        raise DataError(f"{str(path)!r} is a folder; give a .jsonl, .json, .csv or .parquet file.")
    if not stat.S_ISREG(mode):
        kind = (
            "a FIFO (named pipe)"
            if stat.S_ISFIFO(mode)
            else "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "not a file"
        )
        raise DataError(
            f"{str(path)!r} is not a regular file: it is {kind}. The input is read more than "
            "once (to count, score and hash its rows); copy it into a file first, e.g. "
            f"cat {path} > data{path.suffix or '.jsonl'}."
        )


def _open_path(path: Path, peek: int) -> RowSource:
    check_regular_file(path)
    fmt = SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise DataError(
            f"Cannot tell the format of {str(path)!r} from its suffix {path.suffix!r}. "
            f"Supported: {', '.join(sorted(SUFFIXES))}."
        )
    try:
        seen = ReadHash()
        if fmt == "jsonl":
            _check_utf8_start(path)
            source = peeked(
                _jsonl_rows(path, seen),
                peek,
                str(path),
                _count_rows(path, _count_jsonl),
                empty=lambda: (
                    f"The file {path} has no rows. It is empty or holds only blank lines; "
                    "a JSONL file holds one JSON object per sample, one per line."
                ),
            )
        elif fmt == "json":
            source = json_rows(path, seen)
        elif fmt == "csv":
            source = peeked(
                _csv_rows(path, seen),
                peek,
                str(path),
                _count_rows(path, _count_csv),
                empty=lambda: _empty_csv_message(path),
            )
        else:
            return _nonempty(_parquet_rows(path), f"The file {path} has no rows.")
        source.read_hash = seen
        return source
    except OSError as exc:
        raise DataError(f"Cannot read {str(path)!r}: {exc.strerror or exc}.") from None


#: Byte-order marks of the encodings a JSONL file must not be in (the longer ones first).
_OTHER_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def _check_utf8_start(path: Path) -> None:
    """Refuse a text file in UTF-16 or UTF-32 (a byte-order mark, or NUL bytes in its first
    4 KiB): read as UTF-8 line by line, it would give rows of garbage and stray failures."""
    with path.open("rb") as fh:
        start = fh.read(4096)
    bom = next(((mark, name) for mark, name in _OTHER_BOMS if start.startswith(mark)), None)
    if bom is not None:
        encoding, why = bom[1], "it starts with a byte-order mark"
    elif b"\x00" in start:
        encoding = "UTF-32" if b"\x00\x00\x00" in start else "UTF-16"
        why = "NUL bytes between its characters"
    else:
        return
    raise DataError(
        f"{str(path)!r} is not UTF-8 text: it looks like {encoding} ({why}). Save it as "
        f"UTF-8, e.g. iconv -f {encoding} -t UTF-8 {path.name} > fixed.jsonl."
    )


def _count_rows(path: Path, count: Callable[[Path], int]) -> int | None:
    """Rows of a text file counted up front when it is small enough to read twice, else None.

    Only the progress bar uses the count; a file that cannot be counted has no total.
    """
    try:
        if path.stat().st_size > COUNT_ROWS_UP_TO:
            return None
        return count(path)
    except (OSError, UnicodeDecodeError, csv.Error):
        return None


def _count_jsonl(path: Path) -> int:
    """Non-blank lines: the rows :func:`_jsonl_rows` yields."""
    with path.open("rb") as fh:
        return sum(1 for line in fh if line.strip())


def _count_csv(path: Path) -> int:
    """Records under the header: the rows :func:`_csv_rows` yields (blank lines skipped)."""
    csv.field_size_limit(1 << 30)
    with path.open(newline="", encoding="utf-8-sig") as fh:
        return max(sum(1 for record in csv.reader(fh) if record) - 1, 0)


def _jsonl_rows(path: Path, seen: ReadHash | None = None) -> Iterator[Row]:
    with path.open("rb") if seen is None else hashed_open(path, seen) as fh:
        index = 0
        lineno = 0
        while raw := fh.readline(MAX_LINE_BYTES + 1):
            lineno += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while (rest := fh.readline(SKIP_CHUNK)) and not rest.endswith(b"\n"):
                    pass  # the rest of the line, read in bounded pieces and dropped
                yield Row(
                    index,
                    None,
                    f"line {lineno}",
                    f"line {lineno} of {path.name} is longer than {MAX_LINE_BYTES} bytes "
                    "(MAX_LINE_BYTES); no sample is that long. Is this a JSONL file?",
                )
                index += 1
                continue
            if not raw.strip():
                continue
            yield jsonl_row(index, raw, where=f"line {lineno}", name=path.name)
            index += 1
    if seen is not None:
        seen.finish()


def jsonl_row(index: int, raw: bytes | str, *, where: str, name: str) -> Row:
    """One non-blank JSONL line as a Row; a bad line becomes a Row with its problem.

    Shared by every engine so that a line gives the same row (and message) everywhere.
    """
    try:
        # Decoded as UTF-8 here: json.loads would take UTF-16 or UTF-32 bytes as well.
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        data = json.loads(text.removeprefix("\ufeff"))
    except UnicodeDecodeError as exc:
        return Row(index, None, where, f"{where} of {name} is not UTF-8 text: {exc}")
    except ValueError as exc:
        return Row(index, None, where, f"{where} of {name} is not valid JSON: {exc}")
    except RecursionError:
        return Row(index, None, where, f"{where} of {name} {TOO_DEEP}")
    if isinstance(data, dict):
        return shallow_row(index, data, where, f"{where} of {name}")
    return Row(
        index,
        None,
        where,
        f"{where} of {name} holds a JSON {type(data).__name__}, expected an object",
    )


def csv_cell(value: str | None) -> Any:
    """A CSV cell's value: a cell holding a JSON list or object (a column of contexts) is
    parsed, any other cell stays text; an empty trailing cell is ``None``."""
    if value is None:
        return None
    stripped = value.strip()
    if stripped[:1] in "[{" and stripped[-1:] in "]}":
        try:
            return json.loads(stripped)
        except ValueError:
            return value
    return value


def _csv_rows(path: Path, seen: ReadHash | None = None) -> Iterator[Row]:
    csv.field_size_limit(1 << 30)
    binary = path.open("rb") if seen is None else hashed_open(path, seen)
    with io.TextIOWrapper(binary, encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        try:
            for index, record in enumerate(reader):
                where = f"line {reader.line_num}"
                if None in record:
                    yield Row(
                        index, None, where, f"{where} of {path.name} has more cells than the header"
                    )
                    continue
                try:
                    data = {k: csv_cell(v) for k, v in record.items()}
                except RecursionError:
                    yield Row(index, None, where, f"{where} of {path.name} {TOO_DEEP}")
                    continue
                yield shallow_row(index, data, where, f"{where} of {path.name}")
            if seen is not None:
                seen.finish()
        except UnicodeDecodeError as exc:
            # Decoding runs ahead by blocks, so the line is only known roughly: name the byte.
            where = f"after line {reader.line_num}" if reader.line_num else "near the start"
            raise DataError(
                f"{str(path)!r} is not UTF-8 text ({where}: {exc}). "
                "Save it as UTF-8 (e.g. iconv -f latin1 -t utf-8)."
            ) from None


def _parquet_rows(path: Path) -> RowSource:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise DataError("Reading Parquet needs pyarrow: pip install 'ragmeter[data]'.") from None
    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:
        raise DataError(f"{str(path)!r} is not a readable Parquet file: {exc}.") from None

    def rows() -> Iterator[Row]:
        index = 0
        for group in range(pf.num_row_groups):
            try:
                for batch in pf.iter_batches(batch_size=1024, row_groups=[group]):
                    for record in batch.to_pylist():
                        yield Row(index, record, f"row {index}")
                        index += 1
            except (OSError, pa.ArrowException) as exc:
                raise DataError(
                    f"{str(path)!r} is a damaged Parquet file: row group {group} of "
                    f"{pf.num_row_groups} cannot be read ({exc}). The {index} rows before it "
                    "were read; write the file again from its source."
                ) from None

    return RowSource(rows(), list(pf.schema_arrow.names), pf.metadata.num_rows, str(path))


def _clean(value: Any) -> Any:
    """pandas/numpy values to plain Python: arrays to lists, NaN/NA to None."""
    if hasattr(value, "tolist") and not isinstance(value, str):
        return value.tolist()
    if isinstance(value, float) and math.isnan(value):
        return None
    if type(value).__name__ in ("NAType", "NaTType"):
        return None
    return value


def _from_pandas(df: Any) -> RowSource:
    columns = [str(c) for c in df.columns]

    def rows() -> Iterator[Row]:
        for i, record in enumerate(df.itertuples(index=False, name=None)):
            data = {c: _clean(v) for c, v in zip(columns, record, strict=True)}
            yield shallow_row(i, data, f"row {i}")

    return RowSource(rows(), columns, len(df), "DataFrame")


def _from_hf(ds: Any) -> RowSource:
    columns = list(ds.column_names)

    def rows() -> Iterator[Row]:
        for i, record in enumerate(ds):
            yield shallow_row(i, record, f"row {i}")

    return RowSource(rows(), columns, len(ds), "Dataset")
