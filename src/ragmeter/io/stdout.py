"""Results on standard output stay the only thing written there.

A run that writes its results to standard output (``--out -``) runs code it does not control:
users' metrics, plugins, libraries, native code, worker processes. Anything they print would
land between the JSON lines. :func:`results_on_stdout` gives the run a stream of its own onto
standard output and sends everything else written there, by ``print`` or straight to file
descriptor 1, to standard error until the run ends.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from typing import IO

__all__ = ["results_on_stdout"]


@contextlib.contextmanager
def results_on_stdout(stream: IO[str] | None) -> Iterator[IO[str] | None]:
    """Yield the stream to write results to: ``stream`` itself unless it is ``sys.stdout``.

    For ``sys.stdout``, within the block ``sys.stdout`` is ``sys.stderr``; when it is the
    process's own standard output (``sys.__stdout__``, not a notebook's or a test's stand-in),
    file descriptor 1 points at standard error too (for native code and child processes), and
    the results go to a duplicate of the original descriptor. Both are put back at the end.
    """
    if stream is None or stream is not sys.stdout:
        yield stream
        return
    stream.flush()
    fd = _fileno(stream) if stream is sys.__stdout__ else None
    err_fd = _fileno(sys.stderr)
    if fd is None or err_fd is None or fd == err_fd:
        with contextlib.redirect_stdout(sys.stderr):
            yield stream
        return
    results = os.fdopen(
        os.dup(fd),
        "w",
        encoding=getattr(stream, "encoding", None) or "utf-8",
        errors=getattr(stream, "errors", None) or "strict",
    )
    os.dup2(err_fd, fd)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield results
        results.flush()  # a reader gone (broken pipe) is reported here, as on sys.stdout
    finally:
        with contextlib.suppress(OSError, ValueError):
            stream.flush()  # what was printed to the old object meanwhile goes to stderr
        os.dup2(results.fileno(), fd)
        with contextlib.suppress(OSError, ValueError):
            results.close()


def _fileno(stream: object) -> int | None:
    try:
        return stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None
