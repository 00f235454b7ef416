"""Refusing unanswerable questions, as a detector of them: counts and rates, no I/O.

A row counts when its question is labelled (``is_answerable_label``) and its answer was read
as refusing or not. The *positive* class is "refuses an unanswerable question": precision is
the share of refusals whose question was unanswerable, recall the share of unanswerable
questions refused, and the false-refusal rate the share of answerable questions refused.
A rate with nothing to divide by is ``None`` (never NaN, never a silent 0).

>>> counts = RefusalCounts(refused_unanswerable=8, answered_unanswerable=2,
...                        refused_answerable=1, answered_answerable=9)
>>> counts.precision, counts.recall, round(counts.f1, 3), counts.false_refusal_rate
(0.8888888888888888, 0.8, 0.842, 0.1)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["RefusalCounts"]


@dataclass(frozen=True, slots=True)
class RefusalCounts:
    """The four cells of refused / answered by unanswerable / answerable."""

    refused_unanswerable: int = 0
    answered_unanswerable: int = 0
    refused_answerable: int = 0
    answered_answerable: int = 0

    def add(self, *, refused: bool, answerable: bool) -> RefusalCounts:
        """These counts with one more row."""
        cell = ("refused_" if refused else "answered_") + (
            "answerable" if answerable else "unanswerable"
        )
        return RefusalCounts(**{**self.as_counts(), cell: getattr(self, cell) + 1})

    def merge(self, other: RefusalCounts) -> RefusalCounts:
        return RefusalCounts(
            **{name: value + getattr(other, name) for name, value in self.as_counts().items()}
        )

    @property
    def rows(self) -> int:
        return sum(self.as_counts().values())

    @property
    def precision(self) -> float | None:
        """Of the refusals, the share whose question was unanswerable."""
        return _share(
            self.refused_unanswerable, self.refused_unanswerable + self.refused_answerable
        )

    @property
    def recall(self) -> float | None:
        """Of the unanswerable questions, the share refused."""
        return _share(
            self.refused_unanswerable, self.refused_unanswerable + self.answered_unanswerable
        )

    @property
    def f1(self) -> float | None:
        """Harmonic mean of precision and recall; ``None`` when either is."""
        p, r = self.precision, self.recall
        if p is None or r is None:
            return None
        return 0.0 if p + r == 0 else 2 * p * r / (p + r)

    @property
    def false_refusal_rate(self) -> float | None:
        """Of the answerable questions, the share refused."""
        return _share(self.refused_answerable, self.refused_answerable + self.answered_answerable)

    def as_counts(self) -> dict[str, int]:
        return {
            "refused_unanswerable": self.refused_unanswerable,
            "answered_unanswerable": self.answered_unanswerable,
            "refused_answerable": self.refused_answerable,
            "answered_answerable": self.answered_answerable,
        }

    def as_dict(self) -> dict[str, Any]:
        """The counts and the four rates, for the run record."""
        return {
            **self.as_counts(),
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "false_refusal_rate": self.false_refusal_rate,
        }

    @classmethod
    def from_details(cls, details: Any) -> RefusalCounts | None:
        """One row's counts from ``answerability_accuracy``'s details (``refused`` and
        ``answerable``, both booleans), or None when they are not there."""
        if not isinstance(details, Mapping):
            return None
        refused, answerable = details.get("refused"), details.get("answerable")
        if not (isinstance(refused, bool) and isinstance(answerable, bool)):
            return None
        return cls().add(refused=refused, answerable=answerable)

    @classmethod
    def from_dict(cls, data: Any) -> RefusalCounts | None:
        """The inverse of :meth:`as_dict` (a run record read back), or None."""
        if not isinstance(data, Mapping):
            return None
        counts = {name: data.get(name) for name in cls().as_counts()}
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in counts.values()):
            return None
        return cls(**counts)  # type: ignore[arg-type]


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None
