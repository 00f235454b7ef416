"""Worker processes for the offline judge: every core busy on the GIL-bound part.

The offline judge's per-row work is spaCy's parse, the lexical features (Python, under the
GIL) and the entailment model (onnxruntime). Threads in one process give about 1.2x on two
cores, so with ``workers >= 2`` the judge runs its chunks of rows in ``workers`` processes
(:mod:`ragmeter.judges.offline.worker`), each with its own judge, spaCy pipeline and a
one-thread model session, loaded once per process.

The workers are started as plain subprocesses, not through :mod:`multiprocessing`: a script
that calls ``ragmeter.evaluate`` at module level (no ``if __name__ == "__main__"`` guard) is
not imported again in the workers. They start isolated (``python -I``): neither the working
directory nor ``PYTHON*`` variables reach their ``sys.path``, which is this process's own
without the working directory, so a ``pickle.py`` beside the data is never imported.

A worker that cannot start, dies, is stopped (SIGSTOP: ``T`` in ``/proc/PID/stat`` for
:data:`STOPPED_GRACE_S`) or does not answer a chunk by its deadline (:data:`CHUNK_TIMEOUT_S`,
or :data:`SLOW_FACTOR` times the slowest chunk so far when that is longer) leaves its chunk,
and every chunk after it, to the judge's threads in this process: the workers are killed, the
run goes on and the reason is logged as a warning.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import sys
import tempfile
import time
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, Any, TypeVar

from ragmeter.judges.offline.frames import HEADER, encode_frame, portable

__all__ = ["JudgeProcesses", "WorkerFailed", "worker_command"]

log = logging.getLogger("ragmeter")
T = TypeVar("T")

#: The module a worker process runs.
WORKER_MODULE = "ragmeter.judges.offline.worker"
#: Chunks sent to one worker before its reply to the first: the next chunk waits in its pipe,
#: so the worker does not idle while this process reads a reply and sends more.
DEPTH = 2
#: Seconds a worker has to start (import, load spaCy and the model).
START_TIMEOUT_S = 300.0
#: Seconds a chunk may wait for its answer at least (from when it is sent: a chunk queued
#: behind another waits for both) ...
CHUNK_TIMEOUT_S = 120.0
#: ... or this many times the slowest chunk answered so far, when that is longer.
SLOW_FACTOR = 10.0
#: Seconds a worker may stay stopped (SIGSTOP, a debugger) while chunks wait for it.
STOPPED_GRACE_S = 3.0
#: How often a waiting chunk looks at its worker.
POLL_S = 0.5
#: Run by ``python -I -c``: sys.path is set from the arguments (no working directory on
#: it), then the worker module runs as ``__main__``.
_BOOT = (
    "import runpy, sys; module = sys.argv[1]; sys.path[:] = sys.argv[2:]; del sys.argv[1:]; "
    "runpy.run_module(module, run_name='__main__', alter_sys=True)"
)


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
                    future = self.waiting.popleft()
                    if not future.done():  # a chunk given up on at its deadline
                        future.set_result(reply)
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
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(encode_frame(value))
        await stdin.drain()

    async def receive(self) -> Any:
        stdout = self.process.stdout
        assert stdout is not None
        (size,) = HEADER.unpack(await stdout.readexactly(HEADER.size))
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


def worker_command(module: str = WORKER_MODULE) -> list[str]:
    """The command line of a worker: ``python -I`` (isolated: no working directory, user
    site or ``PYTHON*`` variables) with this process's ``sys.path`` less the working
    directory (``''``, ``.``, its absolute path), and the folder ragmeter was imported from
    last, so that the same packages are found and nothing from the user's folder."""
    cwd = os.path.abspath(os.getcwd())
    package_root = str(Path(__file__).resolve().parents[3])  # the folder holding ragmeter/
    paths = [os.path.abspath(p) for p in sys.path if p and p != "."]
    paths = [p for p in paths if p != cwd]
    if package_root not in paths:
        paths.append(package_root)
    return [sys.executable, "-I", "-c", _BOOT, module, *dict.fromkeys(paths)]


def is_stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped (SIGSTOP, SIGTSTP, a debugger): its state in
    ``/proc/PID/stat``; False where there is no ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    # "PID (COMMAND) STATE ...": the command may hold spaces and parentheses
    state = stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3]
    return state in (b"T", b"t")


class _Stalled(Exception):
    """A worker did not answer in time, or is stopped."""


def _environment() -> dict[str, str]:
    """The worker's environment: this one, with one thread for each numeric library (the
    workers are the parallelism)."""
    env = dict(os.environ)
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
    clock : callable, optional
        Seconds on a monotonic clock (the deadlines read it; tests give a fake one).
    stopped : callable, optional
        Whether a process id is stopped (default :func:`is_stopped`).
    """

    #: See :data:`CHUNK_TIMEOUT_S`, :data:`SLOW_FACTOR`, :data:`STOPPED_GRACE_S`.
    chunk_timeout_s = CHUNK_TIMEOUT_S
    slow_factor = SLOW_FACTOR
    stopped_grace_s = STOPPED_GRACE_S
    poll_s = POLL_S
    start_timeout_s = START_TIMEOUT_S

    def __init__(
        self,
        spec: dict[str, Any],
        workers: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        stopped: Callable[[int], bool] = is_stopped,
    ) -> None:
        self.spec = spec
        self.workers = workers
        self._clock = clock
        self._stopped = stopped
        #: Seconds the slowest chunk took to be answered (from when it was sent).
        self.slowest_s = 0.0
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
            sent = self._clock()
            try:
                status, payload = await self._watch(
                    worker.call((op, items)), [worker], self.chunk_deadline(), "a chunk"
                )
            except _Stalled as exc:
                self._fail(str(exc))
                raise WorkerFailed(self.failed or "") from None
            except (OSError, EOFError, asyncio.IncompleteReadError, pickle.PickleError) as exc:
                tail = worker.stderr_tail()
                self._fail(f"an offline judge worker stopped ({exc!r}): {tail}")
                raise WorkerFailed(self.failed or "") from None
            self.slowest_s = max(self.slowest_s, self._clock() - sent)
        if status != "ok":
            self._fail(f"an offline judge worker refused the chunk: {payload}")
            raise WorkerFailed(self.failed or "")
        outcomes, pairs = payload
        return [portable(o) for o in outcomes], int(pairs)

    def chunk_deadline(self) -> float:
        """Seconds a chunk may wait for its answer: :attr:`chunk_timeout_s`, or
        :attr:`slow_factor` times the slowest chunk so far when that is longer."""
        return max(self.chunk_timeout_s, self.slow_factor * self.slowest_s)

    async def _watch(
        self, work: Awaitable[T], workers: list[_Worker], deadline: float, what: str
    ) -> T:
        """``work``'s result; raises _Stalled when it is not done ``deadline`` seconds from
        now, or when one of ``workers`` stays stopped :attr:`stopped_grace_s` seconds (the
        work is then cancelled)."""
        task = asyncio.ensure_future(work)
        started = self._clock()
        stopped_since: dict[int, float] = {}
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=self.poll_s)
                if done:
                    return task.result()
                now = self._clock()
                for worker in workers:
                    pid = worker.process.pid
                    if worker.process.returncode is not None or not self._stopped(pid):
                        stopped_since.pop(pid, None)
                        continue
                    since = stopped_since.setdefault(pid, now)
                    if now - since >= self.stopped_grace_s:
                        raise _Stalled(
                            f"an offline judge worker (pid {pid}) is stopped (SIGSTOP?) and "
                            f"{what} has waited {now - started:.0f} s for it"
                        )
                if now - started >= deadline:
                    raise _Stalled(
                        f"an offline judge worker (pid {workers[0].process.pid}"
                        f"{' and others' if len(workers) > 1 else ''}) did not answer {what} "
                        f"in {deadline:.0f} s"
                    )
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

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
        command = worker_command(WORKER_MODULE)
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
            replies = await self._watch(
                asyncio.gather(*(w.receive() for w in self._all)),
                self._all,
                self.start_timeout_s,
                "the start",
            )
        except _Stalled as exc:
            self._fail(str(exc))
            return
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
