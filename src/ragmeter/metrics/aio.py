"""``gather`` that stops at the first error: the other awaitables are cancelled, not orphaned.

``asyncio.gather`` leaves its other children running when one raises; after a run stops on a
judge that refuses every call, those would go on calling it (and outlive the judge's client).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import TypeVar

__all__ = ["gather_or_cancel"]

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
