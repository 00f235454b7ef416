"""The offline verifier's verdict with its trained model: the model decides, the words gate.

Lexical evidence settles a (claim, premise) cell outright only where it cannot be wrong about
the meaning:

* ``rule:restates_question``: the premise is an answer read with its question and the claim
  says nothing beyond that question (no support);
* ``rule:no_shared_content``: at most :attr:`ModelDecision.min_share` of the claim's content
  words occur in the premise (by default none: not entailed);
* ``rule:verbatim``: the premise holds the claim word for word (entailed);
* ``rule:number_missing`` (only with :attr:`ModelDecision.number_rule`): a number of the claim
  (digits or a number word) is not in the premise (not entailed). Off by default: measured
  across sources by ``bench/meta/fit_model_decision.py`` (it also rejects conversions and
  rounding: "about 62 miles" for "100 km").

Every other cell is read by the entailment model (:mod:`ragmeter.models.claim_verifier`)
against the claim's evidence window (the consecutive premise sentences that hold most of its
content words); its support is a logistic model over the model's probabilities, with the
claim's content-word share as a tie-breaker (:class:`ModelDecision`). A support inside
``band`` is an *uncertain* verdict: it still counts as the threshold decides, and the
evidence says so.

Every cell carries its evidence (:func:`evidence_dict`): the support, what decided, the
character span(s) of the premise the verdict rests on, and whether it is uncertain.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragmeter.judges.offline.features import ClaimText, PremiseText

__all__ = [
    "MODEL",
    "RULE_NO_SHARED",
    "RULE_NUMBER",
    "RULE_RESTATES",
    "RULE_VERBATIM",
    "ModelDecision",
    "content_share",
    "evidence_dict",
    "sentence_spans",
    "verbatim_span",
    "window_span",
]

MODEL = "model"
RULE_NO_SHARED = "rule:no_shared_content"
RULE_VERBATIM = "rule:verbatim"
RULE_RESTATES = "rule:restates_question"
RULE_NUMBER = "rule:number_missing"
#: A short answer read with its question decided (:mod:`~ragmeter.judges.offline.answer_reading`).
RULE_ANSWER = "rule:answer"


@dataclass(frozen=True, slots=True)
class ModelDecision:
    """How the model's probabilities become a support and a verdict.

    ``support = sigmoid(w_entail * logit(p_entail) + w_contra * p_contradiction
    + w_share * content_share + bias)``; entailed when ``support >= threshold``; uncertain
    when ``band[0] <= support < band[1]``.
    """

    w_entail: float
    w_contra: float
    w_share: float
    bias: float
    threshold: float = 0.5
    band: tuple[float, float] = (0.3, 0.7)
    #: A cell with at most this share of the claim's content words in the premise is not
    #: entailed without asking the model.
    min_share: float = 0.0
    #: Whether a claim number missing from the premise makes the cell not entailed.
    number_rule: bool = False
    data: str = ""

    def __post_init__(self) -> None:
        if not 0.0 < self.threshold < 1.0:
            raise ValueError(f"The threshold must be in (0, 1). Got {self.threshold!r}.")
        lo, hi = self.band
        if not 0.0 <= lo <= self.threshold <= hi <= 1.0:
            raise ValueError(
                f"The uncertain band must lie in [0, 1] around the threshold {self.threshold}. "
                f"Got {self.band!r}."
            )
        if not 0.0 <= self.min_share < 1.0:
            raise ValueError(f"min_share must be in [0, 1). Got {self.min_share!r}.")

    def support(self, p_entail: float, p_contra: float, share: float) -> float:
        p = min(max(p_entail, 1e-6), 1 - 1e-6)
        z = (
            self.w_entail * math.log(p / (1 - p))
            + self.w_contra * p_contra
            + self.w_share * share
            + self.bias
        )
        return 1.0 / (1.0 + math.exp(-z))

    def uncertain(self, support: float) -> bool:
        lo, hi = self.band
        return lo <= support < hi

    def as_dict(self) -> dict[str, object]:
        return {
            "support": "sigmoid(w_entail * logit(p_entail) + w_contra * p_contradiction "
            "+ w_share * content_share + bias)",
            "w_entail": self.w_entail,
            "w_contra": self.w_contra,
            "w_share": self.w_share,
            "bias": self.bias,
            "threshold": self.threshold,
            "uncertain_band": list(self.band),
            "min_share": self.min_share,
            "number_rule": self.number_rule,
            "data": self.data,
        }


def content_share(claim: ClaimText, premise: PremiseText) -> float:
    """Share of the claim's content stems found in the premise (1.0 for a claim without
    content words, which only a rule or the model can judge)."""
    if not claim.content:
        return 1.0
    return sum(1 for c in claim.content if c in premise.stems) / len(claim.content)


_WORD_RE = re.compile(r"\w+")


def verbatim_span(claim: str, premise: str, *, min_words: int = 3) -> tuple[int, int] | None:
    """Where ``premise`` holds ``claim`` word for word (case and punctuation aside), or None.

    >>> verbatim_span("the tower was finished in 1889", "It opened. The tower was finished in 1889")
    (11, 41)
    >>> verbatim_span("The tower opened in 1890.", "The tower opened in 1889.") is None
    True
    """
    words = _WORD_RE.findall(claim)
    if len(words) < min_words:
        return None
    pattern = r"(?<!\w)" + r"\W+".join(map(re.escape, words)) + r"(?!\w)"
    m = re.search(pattern, premise, flags=re.IGNORECASE)
    return (m.start(), m.end()) if m else None


def sentence_spans(premise: PremiseText) -> list[tuple[int, int]]:
    """Character span of each of the premise's sentences in its text."""
    spans: list[tuple[int, int]] = []
    at = 0
    for sentence in premise.sentences:
        start = premise.text.find(sentence, at)
        if start < 0:  # not found as is: fall back to the whole text
            return [(0, len(premise.text))] * len(premise.sentences)
        spans.append((start, start + len(sentence)))
        at = start + len(sentence)
    return spans


def window_span(
    claim_content: Sequence[str], premise: PremiseText, *, width: int
) -> tuple[int, int]:
    """The sentence range ``[first, last)`` of the claim's evidence window: the ``width``
    consecutive sentences holding most of its content stems (ties: the earliest)."""
    n = len(premise.sentences)
    if n <= width:
        return 0, n
    wanted = frozenset(claim_content)
    hits = [len(wanted & stems) for stems in premise.sentence_stems]
    best = max(range(n - width + 1), key=lambda i: (sum(hits[i : i + width]), -i))
    return best, best + width


def evidence_dict(
    support: float,
    decided_by: str,
    spans: Sequence[tuple[int, int]],
    *,
    uncertain: bool = False,
) -> dict[str, object]:
    """One cell's evidence as results and reports carry it."""
    return {
        "support": round(float(support), 4),
        "decided_by": decided_by,
        "spans": [[int(a), int(b)] for a, b in spans],
        "uncertain": bool(uncertain),
    }
