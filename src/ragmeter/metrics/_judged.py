"""Helpers shared by the judge-backed families (claims, entity recall, response relevancy)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any

from ragmeter.errors import RagmeterError, UnavailableError, cap_text, failure_cause
from ragmeter.judges.base import AnalyzeRequest, Judge, Want
from ragmeter.metrics.aio import gather_or_cancel
from ragmeter.metrics.base import Outcome, RunContext
from ragmeter.metrics.progress import scored
from ragmeter.types import Failure, Sample

log = logging.getLogger(__name__)

#: Where the run collects the judges' stops (see :func:`noting_stops`); None: raise them.
_STOPS: ContextVar[list[UnavailableError] | None] = ContextVar("ragmeter_stops", default=None)


@contextlib.contextmanager
def noting_stops() -> Iterator[list[UnavailableError]]:
    """Collect the :class:`UnavailableError` of rows scored inside (tasks started inside
    included) instead of raising it: each such row fails with the cause ``infrastructure``,
    and the rows scored before the stop keep their scores. The caller stops the run."""
    stops: list[UnavailableError] = []
    token = _STOPS.set(stops)
    try:
        yield stops
    finally:
        _STOPS.reset(token)


def note_stop(exc: UnavailableError) -> None:
    """Hand ``exc`` to the collector of :func:`noting_stops`, or raise it when there is none."""
    stops = _STOPS.get()
    if stops is None:
        raise exc
    stops.append(exc)


def judge_for(ctx: RunContext, wants: Sequence[Want]) -> Judge:
    """The run's judge, told which analysis parts this family may ask for."""
    judge = ctx.judge()
    register = getattr(judge, "register", None)
    if register is not None:
        register(frozenset(wants))
    return judge


def request_for(sample: Sample, wants: Sequence[Want], n_questions: int = 3) -> AnalyzeRequest:
    """An analysis request carrying every field of the sample (the judge sends what it needs)."""
    return AnalyzeRequest(
        question=sample.question,
        answer=sample.answer,
        references=tuple(sample.reference_answers or ()),
        contexts=tuple(sample.contexts or ()),
        wants=frozenset(wants),
        n_questions=n_questions,
    )


def judge_ref(meta: dict[str, Any] | None) -> dict[str, Any]:
    """Provenance kept in details: judge, method, prompt id and hash, cached."""
    meta = meta or {}
    return {k: meta[k] for k in ("judge", "method", "prompt", "cached") if k in meta}


def failure_message(exc: BaseException) -> str:
    """What a row's failure record says of ``exc``, cut to ``MAX_ERROR_TEXT`` characters."""
    if isinstance(exc, RagmeterError):
        return cap_text(str(exc))
    return cap_text(f"{type(exc).__name__}: {exc}")


async def score_all(
    samples: Sequence[Sample],
    metrics: Sequence[str],
    one: Callable[[Sample, Sequence[str]], Awaitable[dict[str, Outcome]]],
    *,
    report: bool = True,
) -> list[dict[str, Outcome]]:
    """Score samples concurrently; an exception in one sample fails only that sample's row
    (with its cause), except a judge that is unavailable: that stops the whole run (noted by
    :func:`note_stop`; the rows scored before it keep their scores). Each
    sample is reported scored (:func:`~ragmeter.metrics.progress.scored`) as it finishes,
    unless ``report`` is False (the caller has more to do before a row is done)."""

    async def guarded(sample: Sample) -> dict[str, Outcome]:
        try:
            out = await one(sample, metrics)
        except asyncio.CancelledError:
            raise
        except UnavailableError as exc:
            note_stop(exc)  # raises it unless the run collects stops
            out = failed_outcomes(metrics, exc)
        except Exception as exc:
            log.debug("Judge-backed metric failed on a row", exc_info=True)
            out = failed_outcomes(metrics, exc)
        if report:
            scored(1)
        return out

    return await gather_or_cancel(guarded(s) for s in samples)


def failed_outcomes(metrics: Sequence[str], exc: BaseException) -> dict[str, Outcome]:
    """A failure of every metric in ``metrics``, with the message and cause of ``exc``."""
    message, cause = failure_message(exc), failure_cause(exc)
    return {name: Failure(name, message, cause=cause) for name in metrics}
