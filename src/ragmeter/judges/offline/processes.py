"""Worker processes for the offline judge: every core busy on the GIL-bound part.

The offline judge's per-row work is spaCy's parse, the lexical features (Python, under the
GIL) and the entailment model (onnxruntime). Threads in one process give about 1.2x on two
cores, so with ``workers >= 2`` the judge runs its chunks of rows in ``workers`` processes
(``python -m ragmeter.judges.offline.worker``), each with its own judge, spaCy pipeline and
a one-thread model session, loaded once per process.

The workers are started as plain subprocesses, not through :mod:`multiprocessing`: a script
that calls ``ragmeter.evaluate`` at module level (no ``if __name__ == "__main__"`` guard) is
not imported again in the workers. A worker that cannot start or dies leaves its chunk, and
every chunk after it, to the judge's threads in this process: the run goes on (and the
reason is logged).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import struct
import sys
import tempfile
from collections import deque
from pathlib import Path
from typing import IO, Any

from ragmeter.judges.offline.worker import portable

__all__ = ["JudgeProcesses", "WorkerFailed"]

log = logging.getLogger("ragmeter")

_HEADER = struct.Struct("<Q")
#: The module a worker process runs.
WORKER_MODULE = "ragmeter.judges.offline.worker"
#: Chunks sent to one worker before its reply to the first: the next chunk waits in its pipe,
#: so the worker does not idle while this process reads a reply and sends more.
DEPTH = 2
#: Seconds a worker has to start (import, load spaCy and the model) and answer a chunk.
START_TIMEOUT_S = 300.0


class WorkerFailed(RuntimeError):
    """A worker process could not start, or died; the caller computes the chunk itself."""


class _Worker:
    """One worker process and its pipes; its replies come in the order of the requests."""

    def __init__(self, process: asyncio.subprocess.Process, stderr: IO[bytes]) -> None:
        self.process = process
        self.stderr = stderr
        #: Requests sent and not answered yet, oldest first.
        self.waiting: deque[asyncio.Future[Any]] = deque()
        self._reader: asyncio.Task[None] | None = None

    async def call(self, value: Any) -> Any:
        """Send ``value`` and wait for its reply (several calls may be in flight)."""
        if self._reader is not None and self._reader.done():
            raise EOFError("the worker's replies ended")
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting.append(future)
        if self._reader is None:
            self._reader = asyncio.ensure_future(self._read_replies())
        await self.send(value)
        return await future

    async def _read_replies(self) -> None:
        try:
            while True:
                reply = await self.receive()
                if self.waiting:
                    self.waiting.popleft().set_result(reply)
        except BaseException as exc:
            while self.waiting:
                future = self.waiting.popleft()
                if not future.done():
                    if isinstance(exc, asyncio.CancelledError):
                        future.cancel()
                    else:
                        future.set_exception(exc)
            if isinstance(exc, asyncio.CancelledError):
                raise

    def stop_reading(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            self._reader = None

    async def send(self, value: Any) -> None:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(_HEADER.pack(len(data)) + data)
        await stdin.drain()

    async def receive(self) -> Any:
        stdout = self.process.stdout
        assert stdout is not None
        (size,) = _HEADER.unpack(await stdout.readexactly(_HEADER.size))
        return pickle.loads(await stdout.readexactly(size))

    def stderr_tail(self, chars: int = 1500) -> str:
        try:
            self.stderr.seek(0)
            text = self.stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        return text[-chars:].strip()

    async def close(self) -> None:
        self.stop_reading()
        process = self.process
        if process.returncode is None:
            if process.stdin is not None:
                process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), timeout=5)
            except TimeoutError:
                process.kill()
                await process.wait()
        self.stderr.close()


def _environment() -> dict[str, str]:
    """The worker's environment: this one, ragmeter importable from where it was imported,
    and one thread for each numeric library (the workers are the parallelism)."""
    package_root = str(Path(__file__).resolve().parents[3])  # the folder holding ragmeter/
    env = dict(os.environ)
    paths = [package_root, *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = "1"
    env["RAGMETER_THREADS"] = "1"
    return env


class JudgeProcesses:
    """``workers`` worker processes, each holding a judge built from ``spec``.

    Parameters
    ----------
    spec : dict
        Keyword arguments of the workers' :class:`OfflineJudge` (picklable).
    workers : int
        How many processes.
    """

    def __init__(self, spec: dict[str, Any], workers: int) -> None:
        self.spec = spec
        self.workers = workers
        #: Chunks in flight, at most :data:`DEPTH` per worker.
        self._slots = asyncio.Semaphore(workers * DEPTH)
        self._all: list[_Worker] = []
        self._starting: asyncio.Task[None] | None = None
        #: Why the processes are not used (None while they are).
        self.failed: str | None = None

    async def run(self, op: str, items: list[Any]) -> tuple[list[Any], int]:
        """Outcomes of ``op`` on ``items`` from one worker, and the model pairs it checked.

        Raises
        ------
        WorkerFailed
            The workers could not start, or this one died (the caller computes the chunk).
        """
        if self.failed is not None:
            raise WorkerFailed(self.failed)
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start())
        await asyncio.shield(self._starting)
        if self.failed is not None:
            raise WorkerFailed(self.failed)
        async with self._slots:
            if self.failed is not None:
                raise WorkerFailed(self.failed)
            worker = min(self._all, key=lambda w: len(w.waiting))
            try:
                status, payload = await worker.call((op, items))
            except (OSError, EOFError, asyncio.IncompleteReadError, pickle.PickleError) as exc:
                tail = worker.stderr_tail()
                self._fail(f"an offline judge worker stopped ({exc!r}): {tail}")
                raise WorkerFailed(self.failed or "") from None
        if status != "ok":
            self._fail(f"an offline judge worker refused the chunk: {payload}")
            raise WorkerFailed(self.failed or "")
        outcomes, pairs = payload
        return [portable(o) for o in outcomes], int(pairs)

    def _fail(self, reason: str) -> None:
        if self.failed is None:
            self.failed = reason
            log.warning("%s; the offline judge goes on in this process (threads).", reason)
            for worker in self._all:
                if worker.process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        worker.process.kill()

    async def _start(self) -> None:
        env = _environment()
        command = [sys.executable, "-m", WORKER_MODULE]
        try:
            for _ in range(self.workers):
                stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by _Worker.close)
                process = await asyncio.create_subprocess_exec(
                    *command,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=stderr,
                    env=env,
                )
                self._all.append(_Worker(process, stderr))
            for worker in self._all:
                await worker.send(self.spec)
            replies = await asyncio.wait_for(
                asyncio.gather(*(w.receive() for w in self._all)), timeout=START_TIMEOUT_S
            )
        except Exception as exc:  # any reason, e.g. no subprocesses on this event loop
            tails = "; ".join(filter(None, (w.stderr_tail(600) for w in self._all)))
            self._fail(f"the offline judge's worker processes did not start ({exc!r}) {tails}")
            return
        for status, payload in replies:
            if status != "ready":
                self._fail(f"an offline judge worker could not build its judge: {payload}")
                return

    def kill(self) -> None:
        """Stop the workers at once, without an event loop (a run on another loop left
        them)."""
        workers, self._all = self._all, []
        self._starting = None
        for worker in workers:
            worker.stop_reading()
            if worker.process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    worker.process.kill()
            worker.stderr.close()

    async def aclose(self) -> None:
        """Stop the workers (a later ``run`` starts new ones)."""
        starting, self._starting = self._starting, None
        if starting is not None and not starting.done():
            starting.cancel()
            await asyncio.gather(starting, return_exceptions=True)
        workers, self._all = self._all, []
        await asyncio.gather(*(w.close() for w in workers), return_exceptions=True)
