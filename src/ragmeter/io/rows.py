"""An input row as read, a stream of them, and the checks every reader makes of one row:
nesting past :data:`MAX_DEPTH` fails that row (Python's JSON reader and writer recurse), and
a file's bytes are hashed as its rows are read (:class:`ReadHash`)."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from itertools import chain, islice
from pathlib import Path
from typing import Any

from ragmeter.errors import DataError

__all__ = [
    "DEEP_ITEM",
    "MAX_DEPTH",
    "TOO_DEEP",
    "ReadHash",
    "Row",
    "RowSource",
    "hashed_open",
    "peeked",
    "shallow_row",
    "too_deep",
]

#: Containers nested deeper than this in one row make that row a failure: Python's JSON reader
#: and writer recurse, so a line nested ~1,000 deep would otherwise stop the whole run.
MAX_DEPTH = 100


@dataclass(frozen=True, slots=True)
class Row:
    """One input row as a reader read it: its index, its data (None when it could not be
    read: ``problem`` says why) and where it came from. An input, not a result: a scored
    row is a :class:`~ragmeter.types.RowResult`."""

    index: int
    data: Mapping[str, Any] | None
    #: Where the row came from, for messages ("line 12").
    where: str
    problem: str | None = None


class ReadHash:
    """The sha256 of the bytes a reader took from its file, known once it read to the end.

    A file that grows while it is read is hashed as read: the hash matches the rows.
    """

    __slots__ = ("_digest", "_done")

    def __init__(self) -> None:
        self._digest = hashlib.sha256()
        self._done = False

    def update(self, data: bytes) -> None:
        self._digest.update(data)

    def finish(self) -> None:
        self._done = True

    def hexdigest(self) -> str | None:
        """The digest of every byte read, or None before the reader reached the end."""
        return self._digest.hexdigest() if self._done else None


class _HashingFile(io.RawIOBase):
    """A binary file whose bytes go through ``seen`` as they are read (once each)."""

    def __init__(self, raw: Any, seen: ReadHash) -> None:
        self._raw = raw
        self._seen = seen

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self._raw.readinto(buffer)
        if n:
            self._seen.update(bytes(memoryview(buffer)[:n]))
        return n or 0

    def close(self) -> None:
        self._raw.close()
        super().close()


#: Bytes read from the file at a time through the hashing layer (few Python calls a file).
_HASH_BUFFER = 1 << 20


def hashed_open(path: Path, seen: ReadHash) -> io.BufferedReader:
    """``path`` opened for reading in binary, its bytes hashed into ``seen`` as read."""
    return io.BufferedReader(_HashingFile(path.open("rb", buffering=0), seen), _HASH_BUFFER)


@dataclass(slots=True)
class RowSource:
    """A stream of rows plus what is known up front about the columns and size."""

    rows: Iterator[Row]
    columns: list[str]
    total: int | None
    name: str
    #: The hash of the file's bytes as the rows were read (text files), else None.
    read_hash: ReadHash | None = None

    def __iter__(self) -> Iterator[Row]:
        return self.rows

    def peek(self, n: int) -> list[Row]:
        """The next ``n`` rows, left in the stream (iterating yields them again)."""
        head = list(islice(self.rows, n))
        self.rows = chain(head, self.rows)
        return head


def peeked(
    rows: Iterator[Row], peek: int, name: str, total: int | None, *, empty: Callable[[], str]
) -> RowSource:
    head = list(islice(rows, peek))
    if not head:
        raise DataError(empty())
    if all(row.data is None and row.problem for row in head):
        # No column can be found in rows none of which could be read: say why they could not.
        shown = "; ".join(str(row.problem) for row in head[:3])
        more = f"; and {len(head) - 3} more" if len(head) > 3 else ""
        what = (
            f"none of the {len(head)} rows"
            if len(head) < peek
            else f"none of the first {peek} rows"
        )
        raise DataError(
            f"{name}: {what} can be read ({shown}{more}). Check that the file is in the "
            "format its suffix says, one sample per row."
        )
    columns: dict[str, None] = {}
    for row in head:
        if isinstance(row.data, Mapping):
            columns.update(dict.fromkeys(map(str, row.data)))

    def chained() -> Iterator[Row]:
        yield from head
        yield from rows

    return RowSource(chained(), list(columns), total, name)


TOO_DEEP = f"is nested deeper than {MAX_DEPTH} levels of lists and objects; flatten it"


#: An item of a .json list too deep to parse.
DEEP_ITEM = object()


#: What nests, and (checked first, by exact type: the common case) what never does.
_NESTING = (Mapping, list, tuple)


_FLAT_TYPES = frozenset({str, int, float, bool, type(None)})


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests mappings, lists or tuples more than ``limit`` levels deep."""
    stack = [(value, 1)]
    while stack:
        obj, depth = stack.pop()
        if depth > limit:
            return True
        for child in obj.values() if type(obj) is dict or isinstance(obj, Mapping) else obj:
            kind = type(child)
            if kind in _FLAT_TYPES:
                continue
            if kind is list and depth < limit and _FLAT_TYPES.issuperset(map(type, child)):
                continue  # a list of flat values (a row's contexts) within the limit: a leaf
            if isinstance(child, _NESTING):
                stack.append((child, depth + 1))
    return False


def _flat_row(data: dict[Any, Any]) -> bool:
    """Whether every value of ``data`` is flat or a list of flat values: two levels, never
    too deep (:data:`MAX_DEPTH` is above 2)."""
    flat = _FLAT_TYPES
    for child in data.values():
        kind = type(child)
        if kind not in flat and not (kind is list and flat.issuperset(map(type, child))):
            return False
    return True


def shallow_row(index: int, data: Any, where: str, what: str | None = None) -> Row:
    """``Row(index, data, where)``, or a failed row when ``data`` nests too deep to handle."""
    if type(data) is dict and _flat_row(data):
        return Row(index, data, where)  # the common row, as too_deep finds it
    if (type(data) is dict or isinstance(data, _NESTING)) and too_deep(data):
        return Row(index, None, where, f"{what or where} {TOO_DEEP}")
    return Row(index, data, where)
