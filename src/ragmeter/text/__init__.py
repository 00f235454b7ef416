"""Text normalisation, tokenisation, sentence splitting and the package's word lists.

One module per job, everything importable from here:

- :mod:`~ragmeter.text.squad`: SQuAD normalisation as Unitxt's token metrics use it
  (:func:`tokens`, :func:`normalize`, :func:`tokens_for_lookup`); the same tokens for many
  texts at once are :class:`ragmeter.scoring.lexical.token_batch.TokenBatch`;
- :mod:`~ragmeter.text.sentences`: :func:`split_sentences`;
- :mod:`~ragmeter.text.words`: word lists shared across the package (:data:`ARTICLES`,
  :data:`STOP_WORDS`, :data:`NOT_NAMES`, :data:`ANTONYMS`, ...), each defined once.
"""

from __future__ import annotations

from ragmeter.text.sentences import split_sentences
from ragmeter.text.squad import normalize, tokens, tokens_for_lookup
from ragmeter.text.words import (
    ANTONYM_OF,
    ANTONYMS,
    ARTICLES,
    DATE_WORDS,
    ENTITY_OPENERS,
    NOT_NAMES,
    NUMBER_PATTERN,
    NUMBER_RE,
    QUESTION_AUXILIARIES,
    SENTENCE_OPENERS,
    SPEAKER_WORDS,
    STOP_WORDS,
    is_polar_question,
)

__all__ = [
    "ANTONYMS",
    "ANTONYM_OF",
    "ARTICLES",
    "DATE_WORDS",
    "ENTITY_OPENERS",
    "NOT_NAMES",
    "NUMBER_PATTERN",
    "NUMBER_RE",
    "QUESTION_AUXILIARIES",
    "SENTENCE_OPENERS",
    "SPEAKER_WORDS",
    "STOP_WORDS",
    "is_polar_question",
    "normalize",
    "split_sentences",
    "tokens",
    "tokens_for_lookup",
]
