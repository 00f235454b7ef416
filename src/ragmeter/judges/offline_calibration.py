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

from ragmeter.judges.offline_conflicts import CONFLICT_RULE_FEATURES
from ragmeter.judges.offline_features import ALL_LEXICAL_FEATURES
from ragmeter.judges.offline_nli import NLI_FEATURES

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

    def __post_init__(self) -> None:
        if len(self.features) != len(self.weights):
            raise ValueError(
                f"A calibration needs one weight per feature: {len(self.features)} features, "
                f"{len(self.weights)} weights."
            )
        if not 0.0 < self.threshold < 1.0:
            raise ValueError(f"The threshold must be in (0, 1). Got {self.threshold!r}.")

    def as_dict(self) -> dict[str, Any]:
        return {
            "features": dict(zip(self.features, self.weights, strict=True)),
            "bias": self.bias,
            "threshold": self.threshold,
            "min_content_share": self.min_content_share,
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
        1.7198,
        -0.2586,
        0.2694,
        -0.6108,
        -0.2461,
        -1.5304,
        -0.5266,
        -0.2417,
        0.4874,
        0.5181,
        1.2669,
        -0.8698,
        1.3533,
        -0.0106,
        -0.1289,
        0.2289,
        0.5386,
        2.1529,
        -0.2594,
        -0.3925,
        -0.2551,
    ),
    bias=-2.6224,
    threshold=0.47,
    min_content_share=0.5,
    data=_SOURCES,
    note="fitted by bench/meta/fit_verifier_sources.py",
)

#: Features that block entailment when positive (hard conflicts).
CONFLICT_FEATURES: tuple[str, ...] = (
    "missing_numbers",
    "missing_dates",
    "negation_mismatch",
    *CONFLICT_RULE_FEATURES,
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
    :mod:`ragmeter.judges.offline_conflicts` (polarity, antonym, roles). (Other
    capitalised words, a noisy sign of names, only lower the support: as a hard rule they
    lowered agreement with humans on LFQA and on RAGChecker's data.)"""
    columns = [ALL_FEATURES.index(name) for name in CONFLICT_FEATURES]
    content = features[..., ALL_FEATURES.index(GATE_FEATURE)]
    return (features[..., columns] > 0).any(axis=-1) | (content <= min_content_share)


#: Bump when the claim splitter, the features or the calibration change.
VERSION = "verifier-v6"
