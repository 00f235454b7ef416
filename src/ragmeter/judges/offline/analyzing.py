"""The analyze side of the offline judge: claims, entities and stand-in questions of a
request (:class:`ClaimAnalyzing`, a base of
:class:`~ragmeter.judges.offline.judge.OfflineJudge`, which holds the settings and the
spaCy pipeline these methods read), and the judge's parser, which verify reads too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ragmeter.errors import ModelUnavailableError
from ragmeter.judges.base import (
    Analysis,
    AnalyzeRequest,
)
from ragmeter.judges.offline.analysis import (
    REGEX_ENTITIES,
    SPACY_ENTITIES,
    offline_questions,
    regex_entities,
)
from ragmeter.judges.offline.claim_split import (
    ATOMIC_METHOD,
    REGEX_METHOD,
    atomic_claims,
    is_noncommittal,
)
from ragmeter.judges.offline.reference_reading import read_references

__all__ = ["ClaimAnalyzing"]


class ClaimAnalyzing:
    """The analyze methods of :class:`~ragmeter.judges.offline.judge.OfflineJudge`."""

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
                # A reference is read as the answer to its question: a leading pronoun takes
                # the question's subject ("It was completed in 1889." → "The Eiffel Tower ...").
                texts += read_references(
                    request.question, request.references, self._parser_or_none()
                )
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
        nlp = self._parser_or_none()
        if nlp is None:
            return atomic_claims(texts, None), REGEX_METHOD
        return atomic_claims(texts, nlp), ATOMIC_METHOD

    def _parser_or_none(self) -> Any:
        """spaCy's parser (for claims and the role rule), loaded once; None without it."""
        if self._parser is None:
            try:
                from ragmeter.judges.offline.claim_split import load_parser

                self._parser = load_parser()
            except (ImportError, ModelUnavailableError):
                self._parser = False
        return self._parser or None

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


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
