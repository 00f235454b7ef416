"""One analysis request per sample for the whole run, whichever families ask.

Several metric families need parts of the same per-sample analysis (claims, entities,
generated questions). Each family registers the parts it may need when it is built; when a
family asks for an analysis, :class:`SharedJudge` widens the request to every registered part
the sample's fields allow, sends it once, and hands the same reply to the other families
(requests in flight are joined, finished ones kept in a bounded memo). ``verify`` and the rest
pass straight through to the wrapped judge.

It also counts the calls of judges that do not count their own in the run's ``Usage``
(a Python judge such as ``FakeJudge``): the steps named in ``count`` add one call each
time the wrapped judge is asked, and one failure when it raises. The OpenAI judge counts
its HTTP requests, cache hits and tokens itself, so its steps are not named there.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Sequence
from typing import Any, Literal, TypeVar

from ragmeter.config.criteria import CriteriaRequest, CriteriaVerdicts
from ragmeter.judges.base import Analysis, AnalyzeRequest, ClaimBlock, Judge, Verification, Want
from ragmeter.judges.repeat import current_repeat
from ragmeter.types import Usage

T = TypeVar("T")
Step = Literal["analyze", "verify", "criteria"]

__all__ = ["SharedJudge", "feasible_wants", "judges_criteria"]


def feasible_wants(request: AnalyzeRequest) -> frozenset[Want]:
    """The analysis parts a request's fields allow."""
    out: set[Want] = set()
    if request.answer is not None:
        out.add("answer_claims")
        out.add("refusal")
        if request.question is not None:
            out.add("questions")
    if request.references:
        out.add("reference_claims")
        out.add("entities")
    return frozenset(out)


class SharedJudge:
    """Wraps any :class:`~ragmeter.judges.base.Judge` for one run."""

    def __init__(
        self,
        inner: Judge,
        *,
        max_entries: int = 4096,
        usage: Usage | None = None,
        count: frozenset[Step] = frozenset(),
    ) -> None:
        self.inner = inner
        self.usage = usage
        self.count = count
        self.name: str = inner.name
        self.registered: frozenset[Want] = frozenset()
        self._max_entries = max_entries
        self._memo: OrderedDict[tuple, tuple[frozenset[str], asyncio.Future[Analysis]]] = (
            OrderedDict()
        )
        #: Analyses still running (a memo entry may be evicted first): cancelled by aclose.
        self._running: set[asyncio.Future[Analysis]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None

    def register(self, wants: Sequence[Want] | frozenset[Want]) -> None:
        """Declare analysis parts a family of this run may ask for."""
        self.registered = self.registered | frozenset(wants)

    @staticmethod
    def _key(request: AnalyzeRequest) -> tuple:
        return (
            current_repeat(),  # each repeat of the judge (Settings.repeats) asks on its own
            request.question,
            request.answer,
            tuple(request.references),
            tuple(request.contexts),
            request.n_questions,
        )

    async def analyze(self, request: AnalyzeRequest) -> Analysis:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._memo.clear()
            self._loop = loop
        key = self._key(request)
        entry = self._memo.get(key)
        if entry is not None and request.wants <= entry[0]:
            self._memo.move_to_end(key)
            return await asyncio.shield(entry[1])
        wants = frozenset(request.wants) | (self.registered & feasible_wants(request))
        if entry is not None:
            wants |= entry[0]
        widened = AnalyzeRequest(
            question=request.question,
            answer=request.answer,
            references=request.references,
            contexts=request.contexts,
            wants=wants,
            n_questions=request.n_questions,
        )
        task = asyncio.ensure_future(self._counted("analyze", self.inner.analyze(widened)))
        # A caller awaiting through shield() may be cancelled (a run that stops on a refused
        # judge cancels its other rows) while the task goes on and fails: its exception is
        # then read here, not logged at exit as "never retrieved".
        task.add_done_callback(_retrieve_exception)
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        self._memo[key] = (wants, task)
        self._memo.move_to_end(key)
        while len(self._memo) > self._max_entries:
            self._memo.popitem(last=False)
        try:
            return await asyncio.shield(task)
        except BaseException:
            if self._memo.get(key, (None, None))[1] is task:
                del self._memo[key]
            raise

    async def verify(self, blocks: Sequence[ClaimBlock]) -> Verification:
        return await self._counted("verify", self.inner.verify(blocks))

    @property
    def judges_criteria(self) -> bool:
        """Whether the wrapped judge answers the user's criteria (``judge_criteria``)."""
        return judges_criteria(self.inner)

    async def judge_criteria(self, request: CriteriaRequest) -> CriteriaVerdicts:
        return await self._counted("criteria", self.inner.judge_criteria(request))  # type: ignore[attr-defined]

    async def _counted(self, step: Step, call: Awaitable[T]) -> T:
        """Await one call of the wrapped judge, counted in ``usage`` when ``step`` is."""
        # The criteria go to the judge that analyzes: counted when its analyses are.
        counted = step in self.count or (step == "criteria" and "analyze" in self.count)
        if self.usage is None or not counted:
            return await call
        self.usage.calls += 1
        try:
            return await call
        except Exception:
            self.usage.failures += 1
            raise

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    async def preflight(self) -> None:
        check = getattr(self.inner, "preflight", None)
        if check is not None:
            await check()

    async def aclose(self) -> None:
        """Cancel the analyses still running (a run stopped by Ctrl-C or a refused judge
        leaves them behind its callers), then close the wrapped judge: nothing outlives its
        client, to fail at exit with "the client has been closed"."""
        self._memo.clear()
        running, self._running = list(self._running), set()
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()


def judges_criteria(judge: Any) -> bool:
    """Whether ``judge`` answers the user's criteria: it says so (``judges_criteria``), or
    it has a ``judge_criteria`` method."""
    said = getattr(judge, "judges_criteria", None)
    if isinstance(said, bool):
        return said
    return callable(getattr(judge, "judge_criteria", None))


def _retrieve_exception(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
