"""Token bags and their overlap, exactly as Unitxt counts it: pure functions, no I/O.

Texts are compared as bags of SQuAD-normalised tokens (see :func:`ragmeter.text.tokens`).
For a prediction P and a reference R with ``c`` tokens in common (multiset intersection,
so a token repeated in P counts at most as often as it appears in R):

* precision = c / |P|, recall = c / |R|, f1 = 2·precision·recall / (precision + recall);
* when ``c`` is 0 (including an empty P or R) all three are 0, as in Unitxt.

Against several references each measure is the maximum over references, taken
separately per measure (Unitxt's rule), the first reference winning ties.

Every text argument may be a string (normalised here), a sequence of tokens already
normalised (taken as is), a :class:`Bag` or :class:`Tokens`, so that a sample's texts are
normalised once and shared by all its metrics.

>>> token_overlap(Bag.of("Einstein was born in Ulm"), "Einstein, born 1879").common
2
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ragmeter.text import ARTICLES
from ragmeter.text import tokens as _tokens
from ragmeter.text import tokens_for_lookup as _tokens_for_lookup

__all__ = [
    "Bag",
    "Measure",
    "Overlap",
    "TextLike",
    "Tokens",
    "as_reference",
    "best_index",
    "best_overlap",
    "f1_of_counts",
    "share",
    "shared_count",
    "token_overlap",
]

Measure = Literal["precision", "recall", "f1"]


@dataclass(frozen=True, slots=True)
class Bag:
    """The normalised tokens of one text and their counts: the side that is looked up in.

    Examples
    --------
    >>> bag = Bag.of("The cat saw a cat.")
    >>> bag.tokens, bag.counts["cat"], len(bag)
    (('cat', 'saw', 'cat'), 2, 3)
    """

    tokens: tuple[str, ...]
    counts: Mapping[str, int]
    #: Tokens seen once, and the others with their counts: matching splits on this.
    singles: frozenset[str] = field(init=False, repr=False, compare=False)
    repeated: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        repeated = {t: n for t, n in self.counts.items() if n > 1}
        singles = frozenset(self.counts.keys() - repeated.keys() if repeated else self.counts)
        object.__setattr__(self, "singles", singles)
        object.__setattr__(self, "repeated", repeated)

    @classmethod
    def of(cls, text: TextLike) -> Bag:
        """A bag from raw text (normalised here), from tokens, or from a Tokens/Bag."""
        if isinstance(text, Bag):
            return text
        if isinstance(text, Tokens):
            toks = tuple(text.exact)
        elif isinstance(text, str):
            toks = tuple(_tokens(text))
        else:
            toks = tuple(text)
        return cls(toks, Counter(toks))

    def __len__(self) -> int:
        return len(self.tokens)


class Tokens:
    """The normalised tokens of one text, for matching against a :class:`Bag`.

    Normalising is the costly part of every lexical metric, so a text the metrics only
    look up (a context, a reference answer) is normalised once into ``Tokens``. On plain
    ASCII text the articles are left in ``lookup`` (see
    :func:`ragmeter.text.tokens_for_lookup`); ``exact`` and ``len()`` drop them, on
    first use.

    Examples
    --------
    >>> t = Tokens.of("The cat sat on a mat")
    >>> t.exact, len(t)
    (['cat', 'sat', 'on', 'mat'], 4)
    """

    __slots__ = ("_exact", "lookup")

    def __init__(self, lookup: list[str], exact: list[str] | None = None) -> None:
        self.lookup = lookup
        self._exact = exact

    @classmethod
    def of(cls, text: str | Sequence[str] | Tokens) -> Tokens:
        """Tokens of raw text (normalised here); a sequence of str is taken as exact."""
        if isinstance(text, Tokens):
            return text
        if isinstance(text, str):
            lookup, exact = _tokens_for_lookup(text)
            return cls(lookup, lookup if exact else None)
        toks = list(text)
        return cls(toks, toks)

    @property
    def exact(self) -> list[str]:
        """Exactly :func:`ragmeter.text.tokens` of the text."""
        if self._exact is None:
            self._exact = [t for t in self.lookup if t not in ARTICLES]
        return self._exact

    def __len__(self) -> int:
        return len(self.exact)

    def __repr__(self) -> str:
        return f"Tokens({self.exact!r})"


TextLike = str | Sequence[str] | Bag | Tokens


@dataclass(frozen=True, slots=True)
class Overlap:
    """Token overlap of a prediction with one reference (Unitxt's ``TokenOverlap``)."""

    common: int
    prediction_length: int
    reference_length: int

    @property
    def precision(self) -> float:
        """Share of prediction tokens found in the reference (0 when nothing is shared)."""
        return share(self.common, self.prediction_length)

    @property
    def recall(self) -> float:
        """Share of reference tokens found in the prediction (0 when nothing is shared)."""
        return share(self.common, self.reference_length)

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall (0 when nothing is shared)."""
        return f1_of_counts(self.common, self.prediction_length, self.reference_length)

    def measure(self, name: Measure) -> float:
        return _measure(name, self.common, self.prediction_length, self.reference_length)


def share(common: int, length: int) -> float:
    """``common / length``, and 0 when nothing is shared (an empty side included)."""
    return 0.0 if common == 0 else 1.0 * common / length


def f1_of_counts(common: int, prediction_length: int, reference_length: int) -> float:
    """Token F1 from the shared count and both lengths, 0 when nothing is shared.

    Examples
    --------
    >>> round(f1_of_counts(1, 4, 1), 3)
    0.4
    """
    if common == 0:
        return 0.0
    precision = 1.0 * common / prediction_length
    recall = 1.0 * common / reference_length
    return (2 * precision * recall) / (precision + recall)


def _measure(name: Measure, common: int, prediction_length: int, reference_length: int) -> float:
    if name == "precision":
        return share(common, prediction_length)
    if name == "recall":
        return share(common, reference_length)
    return f1_of_counts(common, prediction_length, reference_length)


def as_reference(text: TextLike) -> Bag | Tokens:
    """``text`` as the looked-up side: a Bag or Tokens as is, anything else as Tokens."""
    return text if isinstance(text, Tokens | Bag) else Tokens.of(text)


def shared_count(prediction: Bag, reference: Bag | Tokens) -> int:
    """Size of the multiset intersection of the two token bags."""
    if isinstance(reference, Bag):
        counts = reference.counts
        common = 0
        for token, m in prediction.counts.items():
            n = counts.get(token)
            if n:
                common += n if n < m else m
        return common
    lookup = reference.lookup
    if lookup is not reference._exact and not ARTICLES.isdisjoint(prediction.counts):
        # A prediction tokenised elsewhere may hold an article: match exact tokens only.
        lookup = reference.exact
    # A token the prediction has once is shared once if the reference has it at all: a
    # set intersection in C. Only the few repeated tokens need counting.
    common = len(prediction.singles.intersection(lookup))
    for token, m in prediction.repeated.items():
        n = lookup.count(token)
        if n:
            common += n if n < m else m
    return common


def token_overlap(prediction: TextLike, reference: TextLike) -> Overlap:
    """Multiset token overlap of ``prediction`` with ``reference``.

    Parameters
    ----------
    prediction, reference : str, sequence of str, Bag or Tokens
        Raw text (normalised here), or normalised tokens.

    Returns
    -------
    Overlap
        Shared token count and both lengths, with ``precision``, ``recall``, ``f1``.

    Examples
    --------
    >>> o = token_overlap("yes yes yes no", "yes")
    >>> o.common, o.precision, o.recall, round(o.f1, 3)
    (1, 0.25, 1.0, 0.4)
    """
    pred = Bag.of(prediction)
    ref = as_reference(reference)
    return Overlap(shared_count(pred, ref), len(pred), len(ref))


def best_overlap(
    prediction: TextLike, references: Sequence[TextLike], *, measure: Measure
) -> tuple[int, Overlap] | None:
    """The reference that maximises ``measure`` (first one on ties), or ``None`` if none.

    Examples
    --------
    >>> best_overlap("Paris Berlin", ["Paris is in France", "Berlin"], measure="recall")
    (1, Overlap(common=1, prediction_length=2, reference_length=1))
    """
    if not references:
        return None
    pred = Bag.of(prediction)
    refs = [as_reference(r) for r in references]
    if measure == "precision":
        # The prediction's length is fixed, so the most shared tokens win; only the
        # winner's length is needed.
        commons = [shared_count(pred, ref) for ref in refs]
        index = commons.index(max(commons))
        return index, Overlap(commons[index], len(pred), len(refs[index]))
    return _pick(
        [shared_count(pred, ref) for ref in refs], len(pred), [len(ref) for ref in refs], measure
    )


def _pick(
    commons: Sequence[int], length: int, lengths: Sequence[int], measure: Measure
) -> tuple[int, Overlap]:
    """The first reference that maximises ``measure``, from shared counts and lengths."""
    index = best_index(commons, length, lengths, measure)
    return index, Overlap(commons[index], length, lengths[index])


def best_index(
    commons: Sequence[int], length: int, lengths: Sequence[int], measure: Measure
) -> int:
    """The first reference that maximises ``measure``, from the tokens each shares with
    the prediction (``commons``), the prediction's ``length`` and their ``lengths``.

    Examples
    --------
    >>> best_index([1, 1], 1, [2, 1], "recall")
    1
    """
    if measure == "precision":  # the prediction's length is fixed: most shared wins
        return commons.index(max(commons))
    if len(commons) == 1:
        return 0
    values = [
        _measure(measure, common, length, size)
        for common, size in zip(commons, lengths, strict=True)
    ]
    return values.index(max(values))
