"""Families report scored samples to the run: :func:`scored`, counted by whatever hook the
runner installed with :func:`reporting_to`.

A family calls :func:`scored` as samples finish: the judge families once per sample, the
model families once per chunk of :data:`CHUNK_ROWS` rows. The runner installs a hook around
each family call with :func:`reporting_to` (a context variable: concurrent batches and the
threads of model families each see their own) and counts a row once every family has scored
it, so a slow model metric moves the bar chunk by chunk instead of batch by batch. A family
that never calls :func:`scored` still works: its rows count when its call returns. The bar
that shows the rows is the runner's (:mod:`ragmeter.runner.progress`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

__all__ = ["CHUNK_ROWS", "reporting_to", "scored"]

#: Rows a model family scores per call, reporting progress after each (scores do not depend
#: on the chunk: the model families round them).
CHUNK_ROWS = 8

_HOOK: ContextVar[Callable[[int], None] | None] = ContextVar("ragmeter_progress", default=None)


def scored(n: int = 1) -> None:
    """Tell the run that ``n`` more samples of the current family call are scored."""
    hook = _HOOK.get()
    if hook is not None and n > 0:
        hook(n)


@contextlib.contextmanager
def reporting_to(hook: Callable[[int], None] | None) -> Iterator[None]:
    """Send :func:`scored` reports made in this context (and tasks or threads started from
    it) to ``hook``."""
    token = _HOOK.set(hook)
    try:
        yield
    finally:
        _HOOK.reset(token)
