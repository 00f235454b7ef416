"""The offline verifier's calibrations: the features it computes, the logistic models over
them that make verdicts, and the hard conflicts no support overrides.

``MODEL_CALIBRATION`` (the default when onnxruntime is installed) and
``LEXICAL_CALIBRATION`` (the fallback without it) were fitted by
``bench/meta/fit_verifier_sources.py`` across four sources with equal weight, never on one;
rerun it and paste its output here to refit. ``VERSION`` names the verifier in results and
cache keys: bump it when the claims, the features or a calibration change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ragmeter.judges.offline.binding import BINDING_FEATURES
from ragmeter.judges.offline.conflicts import CONFLICT_RULE_FEATURES
from ragmeter.judges.offline.features import ALL_LEXICAL_FEATURES
from ragmeter.judges.offline.model_features import NLI_FEATURES

__all__ = [
    "ALL_FEATURES",
    "CONFLICT_FEATURES",
    "GATE_FEATURE",
    "LEXICAL_CALIBRATION",
    "MIN_CONTENT_SHARE",
    "MODEL_CALIBRATION",
    "SEMANTIC_CALIBRATION",
    "VERSION",
    "Calibration",
    "hard_conflicts",
]


@dataclass(frozen=True, slots=True)
class Calibration:
    """A logistic model over verifier features, and the threshold that makes verdicts."""

    features: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float
    threshold: float
    data: str
    note: str
    #: A cell is never entailed with at most this share of the claim's content words in
    #: the premise (a hard conflict); the trained model checks only the cells above it.
    min_content_share: float = 0.5
    #: How far (in support) either side of the threshold a verdict is uncertain: it still
    #: counts as the threshold decides, and its evidence says so.
    uncertain_margin: float = 0.15

    def __post_init__(self) -> None:
        if len(self.features) != len(self.weights):
            raise ValueError(
                f"A calibration needs one weight per feature: {len(self.features)} features, "
                f"{len(self.weights)} weights."
            )
        if not 0.0 < self.threshold < 1.0:
            raise ValueError(f"The threshold must be in (0, 1). Got {self.threshold!r}.")
        if not 0.0 <= self.uncertain_margin < 0.5:
            raise ValueError(
                f"The uncertain margin must be in [0, 0.5). Got {self.uncertain_margin!r}."
            )

    def uncertain(self, support: float) -> bool:
        """Whether a support is within ``uncertain_margin`` of the threshold."""
        return abs(support - self.threshold) < self.uncertain_margin

    def as_dict(self) -> dict[str, Any]:
        return {
            "features": dict(zip(self.features, self.weights, strict=True)),
            "bias": self.bias,
            "threshold": self.threshold,
            "min_content_share": self.min_content_share,
            "uncertain_margin": self.uncertain_margin,
            "data": self.data,
            "note": self.note,
        }


#: Every feature the verifier computes, in the order of :meth:`OfflineJudge.features`' last
#: axis; a calibration uses a subset of them by name.
ALL_FEATURES: tuple[str, ...] = (
    *ALL_LEXICAL_FEATURES,
    "semantic",
    *NLI_FEATURES,
    *CONFLICT_RULE_FEATURES,
    *BINDING_FEATURES,
)

_LFQA = "lfqa_verification (Chen et al. 2023), all 600 answers / 3,993 sentences"

_SOURCES = "lfqa_verification, wice (held-out half), ragchecker examples, snli (unseen pairs)"

# The lexical-only verifier (no onnxruntime): fitted by
# bench/meta/fit_verifier_sources.py --features <the lexical ones> across the same four
# sources as MODEL_CALIBRATION; rerun it and paste its output to refit.
LEXICAL_CALIBRATION = Calibration(
    features=ALL_LEXICAL_FEATURES,
    weights=(
        1.9177,
        -0.7596,
        0.4343,
        -0.5409,
        -0.2591,
        -1.6089,
        -0.5293,
        0.1032,
        0.1972,
        0.6444,
        2.0738,
        -0.7259,
        1.8375,
        -0.2429,
        0.0947,
        -0.0659,
        0.4514,
    ),
    bias=-2.6539,
    threshold=0.32,
    min_content_share=0.5,
    data=_SOURCES,
    note="fitted by bench/meta/fit_verifier_sources.py (lexical features)",
)
# The MiniLM-feature variant (semantic=True) is still the LFQA-only fit of
# bench/meta/fit_verifier.py --semantic.
SEMANTIC_CALIBRATION = Calibration(
    features=(*ALL_LEXICAL_FEATURES, "semantic"),
    weights=(
        0.7368,
        0.4352,
        0.3771,
        0.9779,
        1.0,
        -0.8815,
        -0.1624,
        -0.2075,
        0.4185,
        0.8189,
        0.8255,
        0.4133,
        0.8239,
        0.0463,
        0.4352,
        -0.183,
        0.0325,
        1.736,
    ),
    bias=-4.0663,
    threshold=0.68,
    data=_LFQA,
    note="fitted by bench/meta/fit_verifier.py --semantic",
)

# Fitted by bench/meta/fit_verifier_sources.py across four sources (equal weight each);
# rerun it and paste its output to refit.
MODEL_CALIBRATION = Calibration(
    features=(*ALL_LEXICAL_FEATURES, *NLI_FEATURES),
    weights=(
        2.3235,
        -0.1752,
        0.3780,
        -0.6141,
        -0.3951,
        -1.4481,
        -0.5107,
        -0.0774,
        0.3043,
        0.2716,
        1.0929,
        -0.6444,
        1.3848,
        -0.1111,
        0.0377,
        0.2410,
        0.3251,
        2.0960,
        -0.6032,
        -0.6069,
        -0.3051,
    ),
    bias=-2.7424,
    threshold=0.43,
    min_content_share=0.5,
    data=_SOURCES,
    note="fitted by bench/meta/fit_verifier_sources.py (verifier-v6, its retrained model)",
)

#: Features that block entailment when positive (hard conflicts).
CONFLICT_FEATURES: tuple[str, ...] = (
    "missing_numbers",
    "missing_dates",
    "negation_mismatch",
    *CONFLICT_RULE_FEATURES,
    *BINDING_FEATURES,
)
#: Entailment also needs more than this share of the claim's content words in the premise
#: (the lexical calibrations' ``min_content_share``).
MIN_CONTENT_SHARE = 0.5
#: The feature that share is read from: content words matched by their 5-letter prefix
#: ("largest" for "large", "investor" for "investments").
GATE_FEATURE = "prefix_precision"


def hard_conflicts(
    features: np.ndarray, min_content_share: float = MIN_CONTENT_SHARE
) -> np.ndarray:
    """Cells (last axis: ``ALL_FEATURES`` order) that must not be entailed, whatever the
    support: a number, month or weekday of the claim absent from the premise, at most
    half of the claim's content words present, or a conflict rule of
    :mod:`ragmeter.judges.offline.conflicts` (polarity, antonym, roles). (Other
    capitalised words, a noisy sign of names, only lower the support: as a hard rule they
    lowered agreement with humans on LFQA and on RAGChecker's data.)"""
    columns = [ALL_FEATURES.index(name) for name in CONFLICT_FEATURES]
    content = features[..., ALL_FEATURES.index(GATE_FEATURE)]
    return (features[..., columns] > 0).any(axis=-1) | (content <= min_content_share)


#: Bump when the claim splitter, the features or the calibration change.
VERSION = "verifier-v8"
