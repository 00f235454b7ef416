"""The frames the offline judge and its worker processes exchange: a pickled value, its
length first (8 bytes, little-endian), and outcomes made fit to cross.

The parent (:mod:`~ragmeter.judges.offline.processes`) writes and reads them on asyncio
pipes, the worker (:mod:`~ragmeter.judges.offline.worker`, started by name, imported by
nothing) on its standard streams.
"""

from __future__ import annotations

import pickle
import struct
from typing import IO, Any

__all__ = ["HEADER", "encode_frame", "portable", "read_frame", "write_frame"]

#: A frame's length, before its bytes.
HEADER = struct.Struct("<Q")


def encode_frame(value: Any) -> bytes:
    """One frame's bytes: ``value`` pickled, its length first."""
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(data)) + data


def write_frame(stream: IO[bytes], value: Any) -> None:
    """One frame of ``value`` on ``stream``, flushed."""
    stream.write(encode_frame(value))
    stream.flush()


def read_frame(stream: IO[bytes]) -> Any:
    """The next value :func:`write_frame` wrote; EOFError when the stream has ended."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        raise EOFError
    (size,) = HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


def portable(outcome: Any) -> Any:
    """``outcome`` as it can cross to the parent: an exception that does not pickle
    becomes a RuntimeError with its type and message."""
    if not isinstance(outcome, BaseException):
        return outcome
    try:
        pickle.loads(pickle.dumps(outcome))
    except Exception:
        return RuntimeError(f"{type(outcome).__name__}: {outcome}")
    return outcome
