"""A worker process of the offline judge.

Started by :class:`ragmeter.judges.offline.processes.JudgeProcesses`, never by hand, as
``python -I`` with the parent's ``sys.path`` less the working directory
(:func:`~ragmeter.judges.offline.processes.worker_command`), running this module. It
reads length-prefixed pickled frames on stdin and answers on stdout:

1. the judge's spec (the keyword arguments of an :class:`OfflineJudge`): it builds the judge
   with one thread for its models, loads spaCy's parser and the entailment model, and
   answers ``("ready", None)`` (or ``("error", message)``);
2. then ``(op, items)`` with op ``"analyze"`` or ``"verify"``: it answers
   ``("ok", (outcomes, model_pairs))``: one outcome per item (a value, or the exception the
   item raised) and the model pairs the chunk checked.

The frames are :mod:`~ragmeter.judges.offline.frames`. Nothing imports this module: the
parent starts it by name (:data:`~ragmeter.judges.offline.processes.WORKER_MODULE`), so it
sits above the judge it builds. It exits when stdin closes. Anything the libraries print
goes to stderr (stdout carries the frames only).
"""

from __future__ import annotations

import os
import sys
from typing import IO

from ragmeter.judges.offline.frames import portable, read_frame, write_frame
from ragmeter.judges.offline.judge import OfflineJudge
from ragmeter.models._runtime import use_threads

__all__ = ["main", "serve"]


def serve(source: IO[bytes], sink: IO[bytes]) -> None:
    """Build the judge from the first frame, then answer chunks until ``source`` ends."""
    use_threads(1)
    try:
        spec = read_frame(source)
    except EOFError:
        return
    try:
        judge = OfflineJudge(**spec)
        judge.warm_up()
    except Exception as exc:
        write_frame(sink, ("error", f"{type(exc).__name__}: {exc}"))
        return
    write_frame(sink, ("ready", None))
    while True:
        try:
            op, items = read_frame(source)
        except EOFError:
            return
        before = judge.model_pairs
        if op == "analyze":
            outcomes = judge.analyze_many(items)
        elif op == "verify":
            outcomes = judge.verify_many(items)
        else:
            write_frame(sink, ("error", f"unknown operation {op!r}"))
            continue
        write_frame(sink, ("ok", ([portable(o) for o in outcomes], judge.model_pairs - before)))


def main() -> None:
    # The frames keep the original stdout; whatever else is printed goes to stderr.
    sink = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    source = os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    serve(source, sink)


if __name__ == "__main__":
    main()
