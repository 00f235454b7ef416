"""Reading a question and its answer without a model: the question's parts, the answer type
each part asks for, and whether an answer sentence holds a value of that type.

These are the text heuristics of ``response_relevancy``'s offline variant (see
:mod:`ragmeter.metrics.response_relevancy` and
:func:`ragmeter.scoring.typed_coverage.typed_completeness`).
"""

from __future__ import annotations

import re

from ragmeter.text.sentences import split_sentences
from ragmeter.text.squad import tokens
from ragmeter.text.words import DATE_WORDS, NUMBER_RE, SENTENCE_OPENERS

__all__ = [
    "ANSWER_TYPES",
    "answer_sentences",
    "expected_answer_type",
    "holds_answer_type",
    "question_parts",
]

#: The answer types :func:`expected_answer_type` tells apart.
ANSWER_TYPES: tuple[str, ...] = ("number", "time", "name", "place")

_WH = r"(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|does|do|did|can|will)"
_PART_SPLIT_RE = re.compile(rf"(?:,\s*|\s+)(?:and|or)\s+(?={_WH}\b)|,\s*(?={_WH}\b)|[;?]\s*", re.I)
#: "cost.The" (no space after the period) ends a sentence too; "J. Robert" or "3.5" do not.
_GLUED_SENTENCE_RE = re.compile(r"(?<=[a-z0-9)][a-z0-9)][.!?])(?=[A-Z][a-z])")
_NUMBER_WORDS_RE = re.compile(
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|"
    r"fifty|hundred|thousand|million|billion|dozen|half|several)\b",
    re.I,
)
#: Words that hold a time: dates (:data:`~ragmeter.text.words.DATE_WORDS`) and these.
_TIME_WORDS = DATE_WORDS | {
    *("century", "decade", "ago", "today", "yesterday", "tomorrow"),
    *("spring", "summer", "autumn", "winter"),
}
_TIME_WORDS_RE = re.compile(r"\b(?:" + "|".join(sorted(_TIME_WORDS)) + r")\b", re.I)
_NAME_RE = re.compile(r"\b[A-Z][\w'’-]*")
_NUMBER_QUESTION_RE = re.compile(
    r"^how\s+(?:many|much|long|old|far|often|big|large|tall|high|fast)\b|"
    r"^(?:what|which)\s+(?:year|date|time|day|month|age|number|percentage|amount)\b",
    re.I,
)
_WH_TYPES = {"when": "time", "who": "name", "whom": "name", "whose": "name", "where": "place"}


def question_parts(question: str) -> tuple[str, ...]:
    """The sub-questions of ``question``: cut at "and"/"or"/"," before a wh-word and at "?"/";".

    Examples
    --------
    >>> question_parts("When was PharmaCann founded and what is its headquarters location?")
    ('When was PharmaCann founded', 'what is its headquarters location')
    >>> question_parts("What is the capital of France?")
    ('What is the capital of France',)
    """
    parts = [p.strip(" ,?;") for p in _PART_SPLIT_RE.split(question)]
    return tuple(p for p in parts if p) or (question.strip(),)


def answer_sentences(answer: str) -> tuple[str, ...]:
    """The answer's sentences, also where a period is glued to the next sentence ("a.The").

    Examples
    --------
    >>> answer_sentences("It cost five francs.The tower opened in 1889.")
    ('It cost five francs.', 'The tower opened in 1889.')
    """
    sentences = split_sentences(_GLUED_SENTENCE_RE.sub(" ", answer))
    return tuple(s for s in sentences if s.strip()) or (answer.strip(),)


def expected_answer_type(part: str) -> str | None:
    """The answer type a sub-question asks for: "number", "time", "name", "place" or None.

    Examples
    --------
    >>> expected_answer_type("When was it founded"), expected_answer_type("who directed it")
    ('time', 'name')
    >>> expected_answer_type("How many moons does Mars have"), expected_answer_type("Why")
    ('number', None)
    """
    text = part.strip().lower()
    if _NUMBER_QUESTION_RE.match(text):
        return "number"
    first = text.split(" ", 1)[0] if text else ""
    return _WH_TYPES.get(first)


def holds_answer_type(kind: str, sentence: str, question: str) -> bool:
    """Whether ``sentence`` holds a value of type ``kind`` that ``question`` does not already hold.

    A number or a time is a number the question lacks (or a number word, a month, a weekday,
    "century"...); a name is a capitalised word that is not in
    :data:`~ragmeter.text.words.SENTENCE_OPENERS` and whose tokens the question lacks; a place is
    a name or a new number (an address).

    Examples
    --------
    >>> holds_answer_type("time", "It opened in 1889.", "When did the tower open?")
    True
    >>> holds_answer_type("name", "The tower is in Paris.", "Who built the tower in Paris?")
    False
    """
    asked = set(tokens(question))
    new_numbers = [n for n in NUMBER_RE.findall(sentence) if n not in question]
    if kind in ("number", "time") and new_numbers:
        return True
    if kind == "number":
        return _NUMBER_WORDS_RE.search(sentence) is not None
    if kind == "time":
        return _TIME_WORDS_RE.search(sentence) is not None
    names = [
        w
        for w in _NAME_RE.findall(sentence)
        if w not in SENTENCE_OPENERS and not set(tokens(w)) <= asked
    ]
    if kind == "name":
        return bool(names)
    return bool(names) or bool(new_numbers)  # place: a name or an address number
