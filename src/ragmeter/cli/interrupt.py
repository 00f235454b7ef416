"""Ctrl-C and SIGTERM during ``ragmeter evaluate``: keep the work, say how to go on.

SIGTERM (what CI services, ``timeout`` and ``kill`` send) is handled as Ctrl-C is: the run
is cancelled, the rows scored are written to ``--out`` with their run record (marked
``"stopped"``) and the command exits 143 (SIGINT: 130), saying how many rows were kept and the
exact command that continues the run with ``--resume``, its secrets masked (a password in
``--base-url``'s ``user:password@``, a key-shaped value, the value of a secret environment
variable): stderr is often kept in CI logs.
"""

from __future__ import annotations

import contextlib
import shlex
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

from ragmeter.errors import RagmeterError
from ragmeter.io.paths import sidecar_path
from ragmeter.result import read_sidecar

__all__ = [
    "continue_with",
    "exit_code",
    "interrupted_message",
    "record_since",
    "signals_as_interrupt",
]


@contextlib.contextmanager
def signals_as_interrupt() -> Iterator[list[int]]:
    """SIGTERM handled as SIGINT while the block runs (the signals received are listed).

    The handler calls the SIGINT handler of the moment: asyncio's during a run (it cancels
    the run, which then keeps its rows), else Python's (``KeyboardInterrupt``)."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def on_signal(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_signal)
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, previous)


def exit_code(received: list[int]) -> int:
    """128 + the signal: 143 after SIGTERM, 130 after Ctrl-C (SIGINT)."""
    return 128 + (received[0] if received else signal.SIGINT)


def resume_command(argv: list[str] | None = None) -> tuple[str, bool]:
    """This command line with ``--resume`` (once), and whether a secret in it was masked
    with ``***``."""
    from ragmeter.io.redact import redact_everywhere

    args = list(sys.argv[1:] if argv is None else argv)
    if "--resume" not in args:
        args.append("--resume")
    shown = [redact_everywhere(arg) for arg in args]
    return shlex.join(["ragmeter", *shown]), shown != args


def interrupted_message(
    out: Path | None,
    record: dict[str, Any] | None,
    received: list[int],
    argv: list[str] | None,
    *,
    cached: bool = False,
) -> str:
    """What an interrupted run kept and how to continue it (``cached``: the judge's replies
    and the offline judge's verdicts are in the cache, so the rows scored again do not pay
    twice for what they already got)."""
    what = signal.Signals(received[0]).name if received else "SIGINT"
    if out is None or str(out) == "-":
        went = "went to standard output" if out is not None else "are not kept"
        return (
            f"Interrupted ({what}). The rows scored so far {went}: give --out FILE to keep "
            "them in a file and continue later with --resume."
        )
    stopped = (record or {}).get("stopped") if isinstance(record, dict) else None
    if not isinstance(stopped, dict):
        return (
            f"Interrupted ({what}) before any row was written; {out} is as it was. "
            "Run the command again to start over."
        )
    kept, in_flight = stopped.get("rows_kept", 0), stopped.get("rows_in_flight", 0)
    again = ""
    if in_flight:
        replies = " (what the judge already gave them is cached)" if cached else ""
        again = f"; {in_flight} rows being scored are scored again by --resume{replies}"
    return (
        f"Interrupted ({what}): {kept} scored rows kept in {out} (its run record is marked "
        f"stopped){again}. {continue_with(argv)}"
    )


def continue_with(argv: list[str] | None = None) -> str:
    """ "Continue with:" and the command that resumes this one, on a line of its own."""
    command, masked = resume_command(argv)
    note = (
        "\n(secrets are shown as ***: put them back, or pass them in OPENAI_BASE_URL and "
        "OPENAI_API_KEY)"
        if masked
        else ""
    )
    return f"Continue with:\n  {command}{note}"


def record_since(out: Path | None, started: float) -> dict[str, Any] | None:
    """The run record of ``out`` when this command wrote it (since ``started``), else None."""
    record = None if out is None else sidecar_path(out)
    if record is None or not record.exists() or record.stat().st_mtime < started - 1:
        return None
    with contextlib.suppress(RagmeterError):
        return read_sidecar(out)
    return None
