"""Async helpers of the families: ``gather`` that stops at the first error, and a thread a
stop can walk away from.

``asyncio.gather`` leaves its other children running when one raises; after a run stops on a
judge that refuses every call, those would go on calling it (and outlive the judge's client).

``asyncio.to_thread`` runs in the loop's default executor, which ``asyncio.run`` joins before it
returns: a function that never returns (a user's metric stuck in a loop) would hold the run
past its deadline, Ctrl-C and SIGTERM. :func:`in_daemon_thread` runs code the run does not
control in a daemon thread of its own, which a stop leaves behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import threading
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

__all__ = ["gather_or_cancel", "in_daemon_thread"]

T = TypeVar("T")


async def gather_or_cancel(aws: Iterable[Awaitable[T]]) -> list[T]:
    """Results of ``aws`` in order; on the first exception, cancel the rest and raise it.

    >>> async def one(x):
    ...     return x
    >>> asyncio.run(gather_or_cancel([one(1), one(2)]))
    [1, 2]
    """
    tasks = [asyncio.ensure_future(aw) for aw in aws]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def in_daemon_thread(function: Callable[..., T], /, *args: Any) -> T:
    """``function(*args)`` in a daemon thread of its own (with this context, as
    ``asyncio.to_thread``); its result, or what it raised.

    Cancelled (a stop: the deadline, Ctrl-C, SIGTERM), this returns at once and the thread is
    left to end on its own, its result dropped; being a daemon, it never holds the loop's
    shutdown or the interpreter's exit.

    >>> asyncio.run(in_daemon_thread(sum, [1, 2]))
    3
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()
    call = functools.partial(contextvars.copy_context().run, function, *args)

    def settle(value: Any, error: BaseException | None) -> None:
        if done.cancelled():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(value)

    def work() -> None:
        value, error = None, None
        try:
            value = call()
        except BaseException as exc:  # handed to the awaiting task, whatever it is
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits any more
            loop.call_soon_threadsafe(settle, value, error)

    name = getattr(function, "__name__", "function")
    threading.Thread(target=work, name=f"ragmeter-{name}", daemon=True).start()
    return await done
