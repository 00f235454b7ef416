"""Which output of an entailment classifier means "the premise supports the claim".

Read from the model's ``config.json`` (``id2label``), never guessed from weights:

* a label whose name says support (``entailment``, ``entailed``, ``supported``, ``support``,
  ``consistent``, ``faithful``, ``factual``, ``attributable``, ``true``, ``yes``, ...; case,
  spaces, ``-`` and ``_`` ignored) is the support label, whatever the others say
  (``neutral``, ``contradiction``, ``not_entailment``, ``hallucinated``, ...); its softmax
  probability over all labels is the support, so a three-label NLI head gives
  p(entailment), as in SummaC and AlignScore's NLI baselines;
* a two-label head with generic names (``LABEL_0``, ``LABEL_1``) reads ``LABEL_1`` as
  support: MiniCheck's RoBERTa and DeBERTa checkers ship so, and their code takes the
  probability of label 1. A generic head of three or more labels has no such convention and
  needs the label named (``Settings.verifier_label``);
* a single-logit head (``num_labels=1``, a cross-encoder scored with a sigmoid, as
  HHEM-1.0 was) gives ``sigmoid(logit)``;
* ``verifier_label`` (a name or an index) overrides all of this.

>>> support_label({0: "entailment", 1: "neutral", 2: "contradiction"}).index
0
>>> support_label({0: "LABEL_0", 1: "LABEL_1"}).describe()
"label 1 'LABEL_1' (a generic two-label head: label 1 is support, MiniCheck's convention)"
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ragmeter.errors import ConfigError, did_you_mean, param

__all__ = ["NEGATIVE_LABELS", "SUPPORT_LABELS", "LabelRule", "support_label"]

#: Label names (normalised: lower case, letters and digits only) that mean support.
SUPPORT_LABELS: frozenset[str] = frozenset(
    {
        "entailment",
        "entailed",
        "entails",
        "entail",
        "supported",
        "support",
        "supports",
        "consistent",
        "faithful",
        "factual",
        "attributable",
        "grounded",
        "true",
        "yes",
    }
)
#: Label names that mean no support; listed so that a head with only these is reported as
#: one that names no support label (rather than as an unknown head).
NEGATIVE_LABELS: frozenset[str] = frozenset(
    {
        "contradiction",
        "contradicted",
        "contradicts",
        "neutral",
        "notentailment",
        "nonentailment",
        "notentailed",
        "unsupported",
        "notsupported",
        "refuted",
        "refutes",
        "hallucinated",
        "hallucination",
        "inconsistent",
        "unfaithful",
        "notattributable",
        "ungrounded",
        "false",
        "no",
    }
)

_GENERIC = re.compile(r"label\d+")


def _normalise(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


@dataclass(frozen=True, slots=True)
class LabelRule:
    """The output read as support: ``index`` into the logits (``None``: one logit, sigmoid)."""

    index: int | None
    label: str
    how: str

    def describe(self) -> str:
        if self.index is None:
            return f"sigmoid of the single logit ({self.how})"
        return f"label {self.index} {self.label!r} ({self.how})"


def _labels(id2label: Mapping[int | str, str]) -> list[str]:
    try:
        pairs = sorted((int(k), str(v)) for k, v in id2label.items())
    except (TypeError, ValueError):
        raise ConfigError(
            f"The model's config.json has an id2label whose keys are not integers: "
            f"{dict(id2label)!r}."
        ) from None
    if [k for k, _ in pairs] != list(range(len(pairs))):
        raise ConfigError(
            f"The model's config.json id2label does not number its labels 0..n-1: "
            f"{dict(id2label)!r}."
        )
    return [v for _, v in pairs]


def support_label(
    id2label: Mapping[int | str, str] | None,
    num_labels: int | None = None,
    override: str | None = None,
) -> LabelRule:
    """The :class:`LabelRule` of a classification head (see the module docstring).

    Parameters
    ----------
    id2label : mapping of int to str, optional
        ``config.json``'s ``id2label``.
    num_labels : int, optional
        The head's size when ``id2label`` is missing (default: its length).
    override : str, optional
        The support label's name or index (``Settings.verifier_label``).

    Raises
    ------
    ConfigError
        The override names no label, or the head names no support label and no rule applies.
    """
    labels = _labels(id2label or {})
    n = len(labels) if labels else (num_labels if num_labels is not None else 2)
    if not labels:
        labels = [f"LABEL_{i}" for i in range(n)]
    if n < 1:
        raise ConfigError(f"The model's classification head has {n} labels; it needs 1 or more.")
    listed = ", ".join(f"{i}={name!r}" for i, name in enumerate(labels))
    if override is not None:
        choice = override.strip()
        if choice.isdigit() and int(choice) < n:
            index = int(choice)
            return LabelRule(index, labels[index], "chosen by the verifier_label setting")
        wanted = _normalise(choice)
        for index, name in enumerate(labels):
            if name == choice or _normalise(name) == wanted:
                return LabelRule(index, name, "chosen by the verifier_label setting")
        hint = did_you_mean(choice, labels)
        raise ConfigError(
            f"{param('verifier_label')} {override!r} names no label of the model.{hint} Its "
            f"labels are {listed}; pass one of the names or an index from 0 to {n - 1}."
        )
    if n == 1:
        return LabelRule(None, labels[0], "a single-logit head")
    found = [i for i, name in enumerate(labels) if _normalise(name) in SUPPORT_LABELS]
    if len(found) == 1:
        return LabelRule(found[0], labels[found[0]], "the model's config names it")
    if n == 2 and all(_GENERIC.fullmatch(_normalise(name)) for name in labels):
        return LabelRule(
            1, labels[1], "a generic two-label head: label 1 is support, MiniCheck's convention"
        )
    why = (
        f"names {len(found)} labels that mean support"
        if found
        else "names no label that means support (entailment, supported, consistent, ...)"
    )
    raise ConfigError(
        f"The model's classification head {why}: {listed}. Say which label means "
        f"'the premise supports the claim' with {param('verifier_label')} (a name or an index)."
    )
