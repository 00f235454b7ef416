"""What a run's requests and models are doing, told to the run that watches them.

Requests to judge and model endpoints: sent, in flight, answered.

:func:`~ragmeter.io.transport.http.post_json` counts each request it sends into the
:class:`Activity` the runner installed with :func:`watching` (a context variable: the tasks a run
starts see it), so the run's watch (:mod:`ragmeter.runner.watch`) can say that no reply came for a
while and what is pending. Any reply counts, an error status too; a timeout or a dropped connection
does not.

Notices: a model that does slow work once (converting itself on first use) tells the reader
with :func:`notice`; the runner shows it on its progress display (:func:`noting`); outside a
run it is logged.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["Activity", "current_activity", "notice", "noting", "watching"]

log = logging.getLogger("ragmeter")


@dataclass(slots=True)
class Activity:
    """Counts of one run's requests."""

    sent: int = 0
    in_flight: int = 0
    replies: int = 0


_ACTIVITY: ContextVar[Activity | None] = ContextVar("ragmeter_activity", default=None)


def current_activity() -> Activity | None:
    """The activity the current run counts requests into, or None outside a watched run."""
    return _ACTIVITY.get()


@contextlib.contextmanager
def watching(activity: Activity) -> Iterator[Activity]:
    """Count requests sent in this context (and the tasks started from it) into ``activity``."""
    token = _ACTIVITY.set(activity)
    try:
        yield activity
    finally:
        _ACTIVITY.reset(token)


_NOTICE: ContextVar[Callable[[str], None] | None] = ContextVar("ragmeter_notice", default=None)


def notice(text: str) -> None:
    """Tell the reader ``text`` (one line): on the run's display, else in the log."""
    hook = _NOTICE.get()
    if hook is None:
        log.info(text)
    else:
        hook(text)


@contextlib.contextmanager
def noting(hook: Callable[[str], None]) -> Iterator[None]:
    """Send :func:`notice` lines told in this context (and tasks and threads started from it
    with their context, as ``asyncio.to_thread`` does) to ``hook``."""
    token = _NOTICE.set(hook)
    try:
        yield
    finally:
        _NOTICE.reset(token)
