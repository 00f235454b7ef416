"""Whether a row's reference answers are much shorter than its answer: a pure rule, no I/O.

RAGChecker's reference-based metrics (``claim_precision``, ``claim_recall``, ``claim_f1``,
``noise_sensitivity_*``, and the correctness inside ``hallucination`` and
``self_knowledge``) judge an answer claim correct only when a reference entails it. A reference
that states one fact ("Michelangelo.") cannot entail the details a longer, right answer adds
("Michelangelo painted it between 1508 and 1512."), so every such detail counts as incorrect.
The claim metrics say so in their reasons when this rule holds, and the report raises a sign
when many rows have it.

The rule counts *content words*: SQuAD tokens (:func:`ragmeter.text.tokens`: lowercased,
punctuation and articles dropped) that are not in :data:`ragmeter.text.STOP_WORDS`. The
references are much shorter when

- the answer has at least :data:`MIN_ANSWER_WORDS` content words (a short answer cannot add
  much), and
- the longest reference has fewer than :data:`SHORTER_THAN` times the answer's content words
  (with several references, the longest is the one that could cover the answer).

A row without references (or whose answer is empty) never has it.

Examples
--------
>>> content_words("It was completed in 1889.")
2
>>> reference_much_shorter(
...     "The Eiffel Tower was completed in 1889 for the World's Fair in Paris.",
...     ["It was completed in 1889."],
... )
True
>>> reference_much_shorter("Japan uses the yen.", ["The Japanese yen."])
False
"""

from __future__ import annotations

from collections.abc import Sequence

from ragmeter.text import STOP_WORDS, tokens

__all__ = [
    "MIN_ANSWER_WORDS",
    "SHORTER_THAN",
    "SHORT_REFERENCE_NOTE",
    "content_words",
    "reference_much_shorter",
]

#: The longest reference must have fewer than this share of the answer's content words.
SHORTER_THAN = 0.5
#: Answers with fewer content words than this are never "much longer" than a reference.
MIN_ANSWER_WORDS = 4

#: The sentence the claim metrics add to their reasons when the rule holds.
SHORT_REFERENCE_NOTE = (
    "The reference is much shorter than the answer: RAGChecker's reference-based metrics "
    "count every answer detail beyond the reference as incorrect."
)


def content_words(text: str) -> int:
    """The number of content words of ``text`` (SQuAD tokens that are not stop words).

    >>> content_words("The Japanese yen.")
    2
    >>> content_words("")
    0
    """
    return sum(1 for token in tokens(text) if token not in STOP_WORDS)


def reference_much_shorter(
    answer: str,
    references: Sequence[str],
    *,
    shorter_than: float = SHORTER_THAN,
    min_answer_words: int = MIN_ANSWER_WORDS,
) -> bool:
    """True when the longest of ``references`` has fewer than ``shorter_than`` times the
    content words of ``answer``, an answer of at least ``min_answer_words`` content words.

    Parameters
    ----------
    answer : str
        The generated answer.
    references : sequence of str
        The row's reference answers; none means the rule does not hold.
    shorter_than : float, keyword-only
        The share of the answer's content words the longest reference must stay below,
        in (0, 1].
    min_answer_words : int, keyword-only
        The fewest content words an answer needs for the rule to hold, >= 1.

    Examples
    --------
    >>> reference_much_shorter("Fe is the symbol for iron, element number 26.", ["Iron."])
    True
    >>> reference_much_shorter("Fe is the symbol for iron, element number 26.", [])
    False
    """
    if isinstance(shorter_than, bool) or not 0.0 < shorter_than <= 1.0:
        raise ValueError(
            f"The 'shorter_than' parameter of reference_much_shorter must be in (0, 1]. "
            f"Got {shorter_than!r}."
        )
    if isinstance(min_answer_words, bool) or min_answer_words < 1:
        raise ValueError(
            f"The 'min_answer_words' parameter of reference_much_shorter must be >= 1. "
            f"Got {min_answer_words!r}."
        )
    if not references:
        return False
    answer_words = content_words(answer)
    if answer_words < min_answer_words:
        return False
    longest = max(content_words(reference) for reference in references)
    return longest < shorter_than * answer_words
