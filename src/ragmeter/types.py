"""Values passed between the layers: samples, scores, failures, metric specs."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

#: Canonical sample fields, as in Unitxt's RAG task.
FIELDS: tuple[str, ...] = (
    "question",
    "question_id",
    "metadata",
    "contexts",
    "contexts_ids",
    "answer",
    "reference_answers",
    "reference_contexts",
    "reference_context_ids",
    "is_answerable_label",
)

FieldKind = Literal["text", "id", "texts", "ids", "mapping", "bool"]

#: What each canonical field must hold once coerced.
FIELD_KINDS: Mapping[str, FieldKind] = {
    "question": "text",
    "question_id": "id",
    "metadata": "mapping",
    "contexts": "texts",
    "contexts_ids": "ids",
    "answer": "text",
    "reference_answers": "texts",
    "reference_contexts": "texts",
    "reference_context_ids": "ids",
    "is_answerable_label": "bool",
}


@dataclass(frozen=True, slots=True)
class Sample:
    """One RAG interaction. Every field is optional; metrics declare what they need.

    List fields are stored as tuples. ``None`` means the field was not given.
    """

    question: str | None = None
    question_id: str | None = None
    metadata: Mapping[str, Any] | None = None
    contexts: tuple[str, ...] | None = None
    contexts_ids: tuple[str, ...] | None = None
    answer: str | None = None
    reference_answers: tuple[str, ...] | None = None
    reference_contexts: tuple[str, ...] | None = None
    reference_context_ids: tuple[str, ...] | None = None
    is_answerable_label: bool | None = None

    def has(self, name: str) -> bool:
        """True when field ``name`` was given (an empty list counts as given)."""
        return getattr(self, name) is not None


@dataclass(frozen=True, slots=True)
class Score:
    """A metric value in its declared range, or ``None`` (undefined) with a reason.

    NaN and infinities are rejected: an undefined score must say why.
    """

    value: float | None
    reason: str | None = None
    details: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if type(self.value) is float and math.isfinite(self.value):
            return  # the common case, checked first: a run builds one Score per row and metric
        if self.value is None:
            if not self.reason:
                raise ValueError("An undefined score (value=None) needs a reason.")
            return
        if isinstance(self.value, bool) or not isinstance(self.value, int | float):
            raise TypeError(f"Score value must be a float or None. Got {self.value!r}.")
        if math.isnan(self.value) or math.isinf(self.value):
            raise ValueError(f"Score value must be finite. Got {self.value!r}.")
        object.__setattr__(self, "value", float(self.value))

    @classmethod
    def undefined(cls, reason: str, **details: Any) -> Score:
        return cls(value=None, reason=reason, details=details or None)


#: Why a row failed: its data or a metric's limits ("row", final); the judge's reply ("judge")
#: or the judge's or a model's endpoint ("infrastructure"), both retried by a resumed run.
FailureCause = Literal["row", "judge", "infrastructure"]
#: Causes of failures that a resumed run scores again.
RETRIED_CAUSES: frozenset[str] = frozenset({"judge", "infrastructure"})


@dataclass(frozen=True, slots=True)
class Failure:
    """A metric could not be computed for one row; the run goes on."""

    metric: str
    message: str
    field: str | None = None
    cause: FailureCause = "row"


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """What a metric is: its name, the fields it needs, its direction and range."""

    name: str
    family: str
    requires: tuple[str, ...]
    description: str
    higher_is_better: bool = True
    lower: float = 0.0
    upper: float = 1.0
    #: Fields used when present but not required.
    optional: tuple[str, ...] = ()
    #: Needs a judge (LLM or the offline verifier).
    needs_judge: bool = False
    #: What else decides the scores of a metric defined outside ragmeter (a Python metric's
    #: declared version, or its source's hash): a resumed run refuses a change. None for
    #: ragmeter's own metrics (ragmeter's version decides them).
    version: str | None = None


@dataclass(slots=True)
class Usage:
    """Judge usage of a run (counted on the client side)."""

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    failures: int = 0
    cost: float | None = None
    #: Replies whose reported token counts no model could use (left out of tokens and cost).
    implausible_usage: int = 0

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.cache_hits += other.cache_hits
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.retries += other.retries
        self.failures += other.failures
        self.implausible_usage += other.implausible_usage
        if other.cost is not None:
            self.cost = (self.cost or 0.0) + other.cost

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "retries": self.retries,
            "failures": self.failures,
            "cost": self.cost,
            "implausible_usage": self.implausible_usage,
        }


@dataclass(slots=True)
class RowResult:
    """Everything computed for one input row."""

    index: int
    id: str | None
    scores: dict[str, float | None] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] | None = None
    #: Cause of each failure that is not the row's own ("judge", "infrastructure").
    failure_causes: dict[str, str] = field(default_factory=dict)

    def record(self, metric: str, outcome: Score | Failure) -> None:
        self.record_all(((metric, outcome),))

    def record_all(self, outcomes: Iterable[tuple[str, Score | Failure]]) -> None:
        """:meth:`record` of each ``(metric, outcome)``, in order."""
        for metric, outcome in outcomes:
            if isinstance(outcome, Failure):
                self.failures[metric] = outcome.message
                self.scores[metric] = None
                if outcome.cause != "row":
                    self.failure_causes[metric] = outcome.cause
                continue
            self.scores[metric] = outcome.value
            if outcome.reason:
                self.reasons[metric] = outcome.reason
            if outcome.details:
                self.details[metric] = dict(outcome.details)

    @classmethod
    def from_json(cls, rec: Mapping[str, Any]) -> RowResult:
        """The inverse of :meth:`to_json` (a results line read back)."""
        return cls(
            index=int(rec["index"]),
            id=rec.get("id"),
            scores=dict(rec.get("scores", {})),
            reasons=dict(rec.get("reasons", {})),
            failures=dict(rec.get("failures", {})),
            details=dict(rec.get("details", {})),
            metadata=rec.get("metadata"),
            failure_causes=dict(rec.get("failure_causes", {})),
        )

    @property
    def retried(self) -> bool:
        """Whether a resumed run scores this row again: a failure came from the judge or the
        infrastructure, not from the row."""
        return any(cause in RETRIED_CAUSES for cause in self.failure_causes.values())

    def to_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "index": self.index,
            "id": self.id,
            "scores": self.scores,
            "reasons": self.reasons,
            "failures": self.failures,
            "details": self.details,
        }
        if self.metadata:
            row["metadata"] = dict(self.metadata)
        if self.failure_causes:
            row["failure_causes"] = self.failure_causes
        return row


# -- the judge protocol (re-exported by ragmeter.judges.base) ------------------------------

Want = Literal["answer_claims", "reference_claims", "entities", "questions", "refusal"]


@dataclass(frozen=True, slots=True)
class AnalyzeRequest:
    question: str | None
    answer: str | None
    references: Sequence[str] = ()
    contexts: Sequence[str] = ()
    wants: frozenset[Want] = frozenset()
    n_questions: int = 3


@dataclass(frozen=True, slots=True)
class Analysis:
    answer_claims: tuple[str, ...] = ()
    #: One tuple of claims per reference answer.
    reference_claims: tuple[tuple[str, ...], ...] = ()
    reference_entities: tuple[str, ...] = ()
    #: One tuple of entities per context.
    context_entities: tuple[tuple[str, ...], ...] = ()
    questions: tuple[str, ...] = ()
    noncommittal: bool | None = None
    #: How the answer reads: "answer", "refusal" (it declines, or says the context does not
    #: hold the answer) or "partial" (it declines, then answers anyway); None when not asked.
    refusal: str | None = None
    #: The answer's words that decline, as the judge quotes them ("" for an answer).
    refusal_quote: str | None = None
    #: Provenance: prompt id and hash, method ("llm" / "offline-..."), cached or not.
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Premise:
    """What claims are checked against: a retrieved context, or an answer (a reference
    answer, or the generated one) read with the ``question`` it answers.

    Short answers state their fact only together with their question: "100 degrees
    Celsius." says that water boils at 100 degrees Celsius only as the answer to "What is
    the boiling point of water?" (RAGChecker's checker is given the question for the same
    reason). Judges read the question as what the answer answers, never as a fact of its
    own. Evidence spans of a premise are offsets into ``text``.

    >>> Premise("In 1889.", question="When was the tower\ncompleted?").question
    'When was the tower completed?'
    >>> Premise("In 1889.", question="  ").question is None
    True
    """

    text: str
    #: The question ``text`` answers (whitespace collapsed); None for a context.
    question: str | None = None

    def __post_init__(self) -> None:
        asked = " ".join((self.question or "").split())
        object.__setattr__(self, "question", asked or None)

    def as_text(self) -> str:
        """The premise as one text, for a judge that reads text (an LLM's prompt, a cache
        key): :func:`answer_premise` of the question and the answer; a context as it is."""
        return answer_premise(self.question, self.text)


@dataclass(frozen=True, slots=True)
class ClaimBlock:
    """Check every claim against every premise.

    ``premises`` are :class:`Premise` values (a plain string is taken as a context).
    ``question`` is the question the claims answer, when there is one: the offline verifier
    checks that a claim's answer to it is the one the premise gives (a judge may ignore it).
    """

    claims: Sequence[str]
    premises: Sequence[Premise]
    question: str | None = None

    def __post_init__(self) -> None:
        premises = tuple(p if isinstance(p, Premise) else Premise(p) for p in self.premises)
        object.__setattr__(self, "premises", premises)

    def premise_texts(self) -> tuple[str, ...]:
        """Each premise as one text (:meth:`Premise.as_text`)."""
        return tuple(p.as_text() for p in self.premises)


@dataclass(frozen=True, slots=True)
class Verification:
    #: One matrix per block: matrices[b][i][j] is True when premise j entails claim i.
    matrices: tuple[tuple[tuple[bool, ...], ...], ...]
    meta: dict[str, Any] = field(default_factory=dict)


_QUESTION_MARK = "Question: "
_ANSWER_MARK = "\nAnswer: "


def answer_premise(question: str | None, answer: str) -> str:
    """An answer read with its question, as one text (:meth:`Premise.as_text`); with no
    question the answer as it is.

    >>> answer_premise("When was the tower completed?", "In 1889.")
    'Question: When was the tower completed?\\nAnswer: In 1889.'
    """
    asked = " ".join((question or "").split())
    return f"{_QUESTION_MARK}{asked}{_ANSWER_MARK}{answer}" if asked else answer


@runtime_checkable
class Judge(Protocol):
    #: Stable identity used in cache keys and results, e.g. "openai:gpt-4o-mini".
    name: str

    async def analyze(self, request: AnalyzeRequest) -> Analysis: ...

    async def verify(self, blocks: Sequence[ClaimBlock]) -> Verification: ...

    def describe(self) -> dict[str, Any]: ...


@runtime_checkable
class Verifier(Protocol):
    """Decides entailment only: ``verify`` of a :class:`Judge`. Every judge is one, and so is
    the ``nli:`` verifier (:mod:`ragmeter.judges.hf_entailment`); ``Settings.verifier`` pairs
    one with the judge that extracts the claims (:mod:`ragmeter.judges.verified`)."""

    #: Stable identity used in cache keys and results, e.g. "nli:MiniCheck-RoBERTa-Large@...".
    name: str

    async def verify(self, blocks: Sequence[ClaimBlock]) -> Verification: ...

    def describe(self) -> dict[str, Any]: ...
