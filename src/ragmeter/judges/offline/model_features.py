"""The trained entailment model's part in the offline verifier: which cells it checks, and
the features it adds.

The model (:mod:`ragmeter.models.claim_verifier`) is a contradiction and paraphrase
detector on top of lexical support, not the main signal, and it is gated: it checks a
(claim, premise) cell only when more than the calibration's ``min_content_share`` of the
claim's content words occur in the premise. Below that a cell is never entailed (a hard
rule), and a typical RAG sample's claims meet most of its contexts there, so the offline
judge stays fast. A cell the model did not check has all :data:`NLI_FEATURES` at 0.

The model reads the claim against its evidence window (:func:`evidence_window`): the
:data:`WINDOW_SENTENCES` consecutive premise sentences sharing most of the claim's content
words, not the whole premise (the lexical features cover the
whole premise). A premise that is an answer read with its question (a ``Premise`` with one) is
given as the question's first words followed by the answer (its best window of
:data:`ANSWER_WINDOW_SENTENCES` sentences when longer), with the whole claim
(the lexical features see only the claim's words beyond the question).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ragmeter.judges.offline.features import PremiseText

__all__ = [
    "ANSWER_WINDOW_SENTENCES",
    "NLI_FEATURES",
    "WINDOW_SENTENCES",
    "evidence_window",
    "fill_nli_features",
]

#: Features the model adds, in order: entailment and contradiction probabilities of the
#: premise window that entails the claim most, the highest contradiction probability of any
#: window, and 1 for a cell the model checked.
NLI_FEATURES: tuple[str, ...] = (
    "nli_entailment",
    "nli_contradiction",
    "nli_max_contradiction",
    "nli_checked",
)
#: Sentences in an evidence window: the two consecutive sentences that hold most of the
#: claim's content (3 gave the same agreement on every source and costs more per pair; 1
#: lost on LFQA and SNLI; measured with ``bench/meta/fit_verifier_sources.py``).
WINDOW_SENTENCES = 2


#: Sentences of an answer read with its question (a reference answer) the model reads:
#: short answers whole, long ones in their best window.
ANSWER_WINDOW_SENTENCES = 8


def evidence_window(
    claim_content: Sequence[str], premise: PremiseText, *, width: int = WINDOW_SENTENCES
) -> str:
    """The ``width`` consecutive sentences of ``premise`` that hold most of the claim's
    content stems (ties: the earliest), joined; the whole text when it is short.

    Examples
    --------
    >>> from ragmeter.judges.offline.features import prepare_premise
    >>> p = prepare_premise("A is big. B is red. C is blue. D is green. E is tall.")
    >>> evidence_window(["e", "tall"], p)
    'D is green. E is tall.'
    """
    sentences = premise.sentences
    if len(sentences) <= width:
        return premise.text
    wanted = frozenset(claim_content)
    hits = [len(wanted & stems) for stems in premise.sentence_stems]
    spans = range(len(sentences) - width + 1)
    best = max(spans, key=lambda i: (sum(hits[i : i + width]), -i))
    return " ".join(sentences[best : best + width])


def fill_nli_features(
    feats: Sequence[np.ndarray],
    cells: Sequence[Sequence[tuple[int, int, str, str]]],
    model: Any,
    *,
    columns: Sequence[int],
) -> int:
    """Run ``model`` on every cell of ``cells`` (per block: claim index, premise index,
    premise text for the model, claim text for the model) in one call, and write the
    :data:`NLI_FEATURES` into ``feats`` (per block: claims x premises x features) at
    ``columns``. Returns the number of pairs checked."""
    flat = [(premise, claim) for block in cells for _, _, premise, claim in block]
    if not flat:
        return 0
    unique = list(dict.fromkeys(flat))
    probs = model.probabilities(unique)
    index = {pair: k for k, pair in enumerate(unique)}
    entail, contra, max_contra = probs.entailment, probs.contradiction, probs.max_contradiction
    for block_feats, block_cells in zip(feats, cells, strict=True):
        for i, j, premise, claim in block_cells:
            k = index[(premise, claim)]
            block_feats[i, j, columns] = (entail[k], contra[k], max_contra[k], 1.0)
    return len(unique)
