"""Other tools' input formats, read as they are: which column or path holds each field.

A format is a column map that applies where the data has the columns it names (an optional
column that is absent is simply not read) and a set of columns that identify it. Data whose
columns identify exactly one format is read as that format without being told
(:func:`detect_format`); ``column_map="NAME"`` (the CLI's ``--format NAME``) chooses one and
refuses data that lacks its columns.

- ``ragchecker``: RAGChecker's ``checking_inputs.json`` (``{"results": [...]}``; each result has
  ``query_id``, ``query``, ``gt_answer``, ``response`` and ``retrieved_context``, a list of
  ``{"doc_id", "text"}``).
- ``ragas``: a Ragas ``EvaluationDataset`` of single-turn samples written by ``to_jsonl`` or
  ``to_csv`` (``user_input``, ``retrieved_contexts``, ``response``, ``reference``,
  ``retrieved_context_ids``, ``reference_contexts``, ``reference_context_ids``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ragmeter.errors import ConfigError, did_you_mean

__all__ = ["FORMATS", "InputFormat", "detect_format", "get_format", "path_head"]


@dataclass(frozen=True, slots=True)
class InputFormat:
    """One tool's input format."""

    name: str
    #: What the format is, for messages ("RAGChecker's checking_inputs.json").
    title: str
    #: Field -> column or path (``retrieved_context[*].text``) in this format's rows.
    columns: Mapping[str, str]
    #: Columns every row of this format has; data with all of them is taken for this format.
    signature: frozenset[str]

    def source(self, field: str, columns: Iterable[str]) -> str | None:
        """Where ``field`` comes from in rows with these top-level ``columns``, or None."""
        path = self.columns.get(field)
        if path is None or path_head(path) not in columns:
            return None
        return path

    def missing(self, columns: Iterable[str]) -> list[str]:
        """The identifying columns that ``columns`` lacks, in order."""
        present = set(columns)
        return sorted(self.signature - present)


FORMATS: Mapping[str, InputFormat] = {
    "ragchecker": InputFormat(
        name="ragchecker",
        title="RAGChecker's checking_inputs.json",
        columns={
            "question_id": "query_id",
            "question": "query",
            "answer": "response",
            "reference_answers": "gt_answer",
            "contexts": "retrieved_context[*].text",
            "contexts_ids": "retrieved_context[*].doc_id",
        },
        signature=frozenset({"query", "retrieved_context"}),
    ),
    "ragas": InputFormat(
        name="ragas",
        title="a Ragas EvaluationDataset (single-turn samples)",
        columns={
            "question": "user_input",
            "contexts": "retrieved_contexts",
            "contexts_ids": "retrieved_context_ids",
            "answer": "response",
            "reference_answers": "reference",
            "reference_contexts": "reference_contexts",
            "reference_context_ids": "reference_context_ids",
        },
        signature=frozenset({"user_input"}),
    ),
}

_HEAD = re.compile(r"[.\[]")


def path_head(path: str) -> str:
    """The top-level column a dotted path starts from (``retrieved_context[*].text``:
    ``retrieved_context``)."""
    return _HEAD.split(path, maxsplit=1)[0]


def get_format(name: str) -> InputFormat:
    """The format called ``name``; ``ConfigError`` naming the known ones otherwise."""
    try:
        return FORMATS[name]
    except KeyError:
        hint = did_you_mean(name, FORMATS)
        raise ConfigError(
            f"Unknown input format {name!r}.{hint} Known formats: {', '.join(FORMATS)}."
        ) from None


def detect_format(columns: Iterable[str]) -> InputFormat | None:
    """The one format whose identifying columns ``columns`` all has, or None (no format,
    or more than one: ambiguous)."""
    present = set(columns)
    found = [fmt for fmt in FORMATS.values() if fmt.signature <= present]
    return found[0] if len(found) == 1 else None
