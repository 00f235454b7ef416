"""``FakeJudge``: a scripted judge for tests, yours and ours. It never calls a model.

Give it replies and it answers with them, recording every request::

    from ragmeter.judges.base import Analysis, Verification
    from ragmeter.judges.fake import FakeJudge

    judge = FakeJudge(
        analyze=Analysis(answer_claims=("Paris is in France.",)),
        verify=lambda blocks: Verification(
            matrices=tuple(tuple((True,) * len(b.premises) for _ in b.claims) for b in blocks)
        ),
    )
    result = ragmeter.evaluate(rows, metrics=["faithfulness"], judge=judge)
    assert judge.analyze_requests[0].answer == rows[0]["answer"]

Each script is one of: a fixed reply, a callable ``request -> reply`` (sync or async), a list of
replies used in order (an exhausted list raises), or an exception instance to raise. Without a
script, ``analyze`` and ``verify`` raise an error saying what to script. A ``criteria`` script
(the user's criteria, :mod:`ragmeter.config.criteria`) makes the judge answer them; without
one it judges no criteria, as the offline judge (``answering`` makes one from a rule).

``judged_by(rule)`` makes a verify script that gives evidence with every verdict, as the
offline judge does (``meta["support"]`` and ``meta["evidence"]``): ``rule(claim, premise)``
returns one cell, ``{"support", "decided_by", "spans", "uncertain"}``; ``verbatim`` is a
ready rule (entailed when the claim's text occurs in the premise, its span the evidence).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ragmeter.config.criteria import (
    CriteriaRequest,
    CriteriaVerdicts,
    Criterion,
    CriterionVerdict,
)
from ragmeter.judges.base import Analysis, AnalyzeRequest, ClaimBlock, Verification

__all__ = ["FakeJudge", "all_entailed", "answering", "judged_by", "none_entailed", "verbatim"]


def answering(
    rule: Callable[[Criterion, CriteriaRequest], str],
) -> Callable[[CriteriaRequest], CriteriaVerdicts]:
    """A ``criteria`` script: ``rule(criterion, request)`` gives each criterion's answer
    ("yes"/"no" or a level's name); the reason says it was scripted, the quote is empty.

    >>> script = answering(lambda c, r: "yes")
    >>> request = CriteriaRequest((Criterion(name="q", question="Q?"),), {"answer": "A."})
    >>> [(v.name, v.answer, v.score) for v in script(request).verdicts]
    [('q', 'yes', 1.0)]
    """

    def script(request: CriteriaRequest) -> CriteriaVerdicts:
        verdicts = []
        for c in request.criteria:
            answer = rule(c, request)
            if answer not in c.answers:
                raise ValueError(
                    f"answering: {c.name} may answer {list(c.answers)}. Got {answer!r}."
                )
            verdicts.append(CriterionVerdict(c.name, answer, c.score_of(answer), "scripted", ""))
        return CriteriaVerdicts(verdicts=tuple(verdicts), meta={"method": "fake"})

    return script


def all_entailed(blocks: Sequence[ClaimBlock]) -> Verification:
    """A verify script: every premise entails every claim."""
    return Verification(
        matrices=tuple(tuple((True,) * len(b.premises) for _ in b.claims) for b in blocks),
        meta={"method": "fake"},
    )


def none_entailed(blocks: Sequence[ClaimBlock]) -> Verification:
    """A verify script: no premise entails any claim."""
    return Verification(
        matrices=tuple(tuple((False,) * len(b.premises) for _ in b.claims) for b in blocks),
        meta={"method": "fake"},
    )


def verbatim(claim: str, premise: str) -> dict[str, Any]:
    """A rule for :func:`judged_by`: entailed (support 1.0, ``decided_by`` "rule:verbatim")
    when the claim, without its final period and compared case-insensitively, occurs in the
    premise, its place the span; else support 0.0 and no span.

    >>> verbatim("Paris is in France.", "Yes: paris is in France, in Europe.")
    {'support': 1.0, 'decided_by': 'rule:verbatim', 'spans': [[5, 23]], 'uncertain': False}
    """
    text = claim.strip().rstrip(".").lower()
    at = premise.lower().find(text) if text else -1
    if at < 0:
        return {"support": 0.0, "decided_by": "rule:verbatim", "spans": [], "uncertain": False}
    return {
        "support": 1.0,
        "decided_by": "rule:verbatim",
        "spans": [[at, at + len(text)]],
        "uncertain": False,
    }


def judged_by(
    rule: Callable[[str, str], Mapping[str, Any]], *, threshold: float = 0.5
) -> Callable[[Sequence[ClaimBlock]], Verification]:
    """A verify script that gives evidence with every verdict.

    ``rule(claim, premise)`` returns the cell of one claim and premise: ``support`` (a float
    in [0, 1]; required), and any of ``decided_by``, ``spans`` (``[[start, end], ...]``
    into the premise) and ``uncertain``. The verdict is ``support >= threshold``; the reply's
    ``meta`` carries ``support`` and ``evidence`` in the verdicts' shape.

    >>> script = judged_by(verbatim)
    >>> reply = script([ClaimBlock(("Paris is in France.",), ("Paris is in France.", "No."))])
    >>> reply.matrices
    (((True, False),),)
    >>> reply.meta["evidence"][0][0][0]["spans"]
    [[0, 18]]
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(
            f"The 'threshold' parameter of judged_by must be in [0, 1]. Got {threshold!r}."
        )

    def script(blocks: Sequence[ClaimBlock]) -> Verification:
        cells = [[[dict(rule(c, p.text)) for p in b.premises] for c in b.claims] for b in blocks]
        support = tuple(tuple(tuple(float(x["support"]) for x in row) for row in b) for b in cells)
        return Verification(
            matrices=tuple(tuple(tuple(x >= threshold for x in row) for row in b) for b in support),
            meta={"method": "fake", "support": support, "evidence": cells},
        )

    return script


class FakeJudge:
    """A judge that answers from a script and records what it was asked; it calls no model.

    Pass it as ``judge=`` to :func:`ragmeter.evaluate` to test a pipeline without a key::

        import ragmeter
        from ragmeter.judges.base import Analysis
        from ragmeter.judges.fake import FakeJudge, all_entailed

        judge = FakeJudge(
            analyze=Analysis(answer_claims=("Paris is in France.",)),  # claims found
            verify=all_entailed,  # every context supports every claim
        )
        rows = [{"question": "Where is Paris?", "answer": "In France.",
                 "contexts": ["Paris is in France."]}]
        result = ragmeter.evaluate(rows, ["faithfulness"], judge=judge)
        assert result["faithfulness"] == [1.0]
        assert judge.analyze_requests[0].answer == "In France."

    Parameters
    ----------
    analyze, verify : script
        How each step answers. A script is a fixed reply (an ``Analysis`` for ``analyze``,
        a ``Verification`` for ``verify``), a callable ``request -> reply`` (sync or async;
        ``verify`` gets the tuple of ``ClaimBlock`` s), a list of replies used in order (an
        exhausted list raises), or an exception instance to raise (a failing judge).
        ``all_entailed`` and ``none_entailed`` are ready-made ``verify`` scripts. A step
        without a script raises an error saying what to script.
    criteria : script, optional
        How it answers the user's criteria: a ``CriteriaVerdicts`` (or a callable of the
        ``CriteriaRequest``; ``answering(rule)`` makes one). Without it the judge judges no
        criteria: the run skips them, as with the offline judge.
    name : str
        The judge's name in the run record.

    Attributes
    ----------
    analyze_requests, verify_requests, criteria_requests : list
        Every request received, in order; ``calls`` counts them all (so does the run's usage).
    """

    def __init__(
        self,
        *,
        analyze: Any = None,
        verify: Any = None,
        criteria: Any = None,
        name: str = "fake",
    ) -> None:
        self.name = name
        self._analyze = list(analyze) if isinstance(analyze, list) else analyze
        self._verify = list(verify) if isinstance(verify, list) else verify
        self._criteria = list(criteria) if isinstance(criteria, list) else criteria
        self.analyze_requests: list[AnalyzeRequest] = []
        self.verify_requests: list[tuple[ClaimBlock, ...]] = []
        self.criteria_requests: list[CriteriaRequest] = []

    @property
    def calls(self) -> int:
        return len(self.analyze_requests) + len(self.verify_requests) + len(self.criteria_requests)

    @property
    def judges_criteria(self) -> bool:
        """Whether it answers the user's criteria: it has a ``criteria`` script."""
        return self._criteria is not None

    async def _answer(self, script: Any, request: Any, what: str) -> Any:
        if script is None:
            raise RuntimeError(
                f"FakeJudge has no {what} script. Pass {what}=<reply, list, callable or exception>."
            )
        if isinstance(script, list):
            if not script:
                raise RuntimeError(f"FakeJudge ran out of scripted {what} replies.")
            script = script.pop(0)
        if isinstance(script, BaseException):
            raise script
        if callable(script):
            reply = script(request)
            if inspect.isawaitable(reply):
                reply = await reply
            return reply
        return script

    async def analyze(self, request: AnalyzeRequest) -> Analysis:
        self.analyze_requests.append(request)
        reply = await self._answer(self._analyze, request, "analyze")
        if not isinstance(reply, Analysis):
            raise TypeError(
                f"FakeJudge analyze script returned {type(reply).__name__}, not Analysis."
            )
        return reply

    async def verify(self, blocks: Sequence[ClaimBlock]) -> Verification:
        blocks = tuple(blocks)
        self.verify_requests.append(blocks)
        reply = await self._answer(self._verify, blocks, "verify")
        if not isinstance(reply, Verification):
            raise TypeError(
                f"FakeJudge verify script returned {type(reply).__name__}, not Verification."
            )
        return reply

    async def judge_criteria(self, request: CriteriaRequest) -> CriteriaVerdicts:
        self.criteria_requests.append(request)
        reply = await self._answer(self._criteria, request, "criteria")
        if not isinstance(reply, CriteriaVerdicts):
            raise TypeError(
                f"FakeJudge criteria script returned {type(reply).__name__}, not CriteriaVerdicts."
            )
        return reply

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": "fake", "calls": self.calls}
