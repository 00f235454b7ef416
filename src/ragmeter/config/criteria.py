"""Criteria: the user's own yes/no questions and rubrics, judged like metrics.

A :class:`Criterion` has a name (its metric name), the question put to the judge, the sample
fields it reads, and either no levels (a yes/no question: yes scores 1, no scores 0) or a
rubric of :class:`Level` s, each with a description and a score in [0, 1] (by default evenly
spaced from the first level, 0, to the last, 1). ``higher_is_better`` states the direction:
"Does the answer give medical advice?" is a yes/no criterion with ``higher_is_better=False``.

A criterion of ``kind="entailment"`` asks whether one field (``premise``) entails another
(``hypothesis``): the LLM judge answers it as a yes/no question with the others, and a judge
that cannot judge criteria (the offline judge) has its verifier decide it.

Criteria come from a TOML file (``Settings(criteria=PATH)``, the CLI's ``--criteria``)::

    [[criteria]]
    name = "cites_policy"
    question = "Does the answer cite the number of the policy it relies on?"
    fields = ["answer", "contexts"]

    [[criteria]]
    name = "tone"
    question = "How courteous is the answer?"
    fields = ["answer"]
    levels = [
      {name = "curt", description = "Short, cold or dismissive."},
      {name = "neutral", description = "Plain and correct, neither cold nor warm."},
      {name = "warm", description = "Courteous and helpful in tone."},
    ]

or from Python: ``ragmeter.Criterion(name=..., question=..., fields=(...), levels=...)``.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any, Literal

from ragmeter.errors import ConfigError, did_you_mean

__all__ = [
    "CRITERION_FIELDS",
    "CriteriaRequest",
    "CriteriaVerdicts",
    "Criterion",
    "CriterionVerdict",
    "Level",
    "as_criteria",
    "load_criteria",
]

#: Sample fields a criterion may read (texts, or lists of texts).
CRITERION_FIELDS: tuple[str, ...] = (
    "question",
    "answer",
    "contexts",
    "reference_answers",
    "reference_contexts",
)
#: Fields an entailment criterion's hypothesis may be (one text).
HYPOTHESIS_FIELDS: tuple[str, ...] = ("answer", "question")
YES, NO = "yes", "no"
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_KEYS = (
    "name",
    "question",
    "fields",
    "levels",
    "higher_is_better",
    "kind",
    "premise",
    "hypothesis",
)
_LEVEL_KEYS = ("name", "description", "score")
CriterionKind = Literal["judge", "entailment"]


@dataclass(frozen=True, slots=True)
class Level:
    """One level of a rubric: its name (what the judge answers), what it means, its score."""

    name: str
    description: str
    score: float


def _levels(value: Any, where: str) -> tuple[Level, ...]:
    """Levels from a mapping ``{name: description}``, or a sequence of :class:`Level`,
    ``(name, description)`` pairs or dicts with ``name``, ``description`` and maybe ``score``;
    scores not given are spread evenly over [0, 1] in the order given."""
    if value is None:
        return ()
    items: list[tuple[str, str, Any]] = []
    if isinstance(value, Mapping):
        items = [(str(k), str(v), None) for k, v in value.items()]
    elif isinstance(value, Sequence) and not isinstance(value, str):
        for i, item in enumerate(value, start=1):
            if isinstance(item, Level):
                items.append((item.name, item.description, item.score))
            elif isinstance(item, Mapping):
                unknown = [k for k in item if k not in _LEVEL_KEYS]
                if unknown:
                    raise ConfigError(
                        f"{where}: level {i} has unknown key(s) {unknown}; a level has "
                        f"{', '.join(_LEVEL_KEYS)} (score optional)."
                    )
                if "name" not in item or "description" not in item:
                    raise ConfigError(
                        f"{where}: level {i} needs a name and a description. Got {dict(item)}."
                    )
                items.append((str(item["name"]), str(item["description"]), item.get("score")))
            elif isinstance(item, Sequence) and not isinstance(item, str) and len(item) == 2:
                items.append((str(item[0]), str(item[1]), None))
            else:
                raise ConfigError(
                    f"{where}: level {i} must be a Level, a (name, description) pair or a "
                    f"table with name and description. Got {item!r}."
                )
    else:
        raise ConfigError(
            f"{where}: levels must be a list of levels or a mapping name -> description. "
            f"Got {type(value).__name__}."
        )
    if not items:
        return ()
    if len(items) < 2:
        raise ConfigError(
            f"{where}: a rubric needs at least 2 levels. Got {len(items)}. Leave levels out "
            "for a yes/no question."
        )
    names = [name.strip() for name, _, _ in items]
    if any(not name for name in names) or len(set(names)) != len(names):
        raise ConfigError(f"{where}: level names must be non-empty and distinct. Got {names}.")
    out = []
    for i, (name, description, score) in enumerate(items):
        if score is None:
            score = i / (len(items) - 1)
        if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
            raise ConfigError(
                f"{where}: level {name!r} has score {score!r}; a score is a number in [0, 1]."
            )
        if not description.strip():
            raise ConfigError(f"{where}: level {name!r} has an empty description.")
        out.append(Level(name.strip(), description.strip(), float(score)))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Criterion:
    """A criterion judged per row: a metric named ``name`` with scores in [0, 1].

    >>> c = Criterion(name="cites_policy", question="Does the answer cite a policy number?")
    >>> c.fields, c.answers
    (('answer',), ('yes', 'no'))
    >>> r = Criterion(name="tone", question="How courteous is the answer?",
    ...               levels={"curt": "Cold.", "neutral": "Plain.", "warm": "Courteous."})
    >>> [(level.name, level.score) for level in r.levels]
    [('curt', 0.0), ('neutral', 0.5), ('warm', 1.0)]
    """

    name: str
    question: str = ""
    #: The sample fields the judge reads (default: the answer).
    fields: tuple[str, ...] = ("answer",)
    #: A rubric, worst first unless scores say otherwise; empty: a yes/no question.
    levels: tuple[Level, ...] = ()
    higher_is_better: bool = True
    #: "judge" (the judge answers the question) or "entailment" (premise entails hypothesis).
    kind: CriterionKind = "judge"
    premise: str | None = None
    hypothesis: str | None = None

    def __post_init__(self) -> None:
        where = f"Criterion {self.name!r}"
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ConfigError(
                f"A criterion's name must be snake_case (a-z, 0-9, _; starting with a letter; "
                f"at most 64 characters): it is the metric's name. Got {self.name!r}."
            )
        if self.kind not in ("judge", "entailment"):
            raise ConfigError(f"{where}: kind must be 'judge' or 'entailment'. Got {self.kind!r}.")
        if not isinstance(self.higher_is_better, bool):
            raise ConfigError(
                f"{where}: higher_is_better must be true or false. Got {self.higher_is_better!r}."
            )
        object.__setattr__(self, "levels", _levels(self.levels, where))
        if self.kind == "entailment":
            self._check_entailment(where)
        else:
            if self.premise is not None or self.hypothesis is not None:
                raise ConfigError(
                    f"{where}: premise and hypothesis belong to kind = 'entailment'. Add it, "
                    "or drop them."
                )
            if not isinstance(self.question, str) or not self.question.strip():
                raise ConfigError(f"{where}: the question to the judge is empty.")
            object.__setattr__(self, "question", self.question.strip())
        fields = (self.fields,) if isinstance(self.fields, str) else tuple(self.fields)
        for name in fields:
            if name not in CRITERION_FIELDS:
                hint = did_you_mean(str(name), CRITERION_FIELDS)
                raise ConfigError(
                    f"{where} reads the field {name!r}, which is not a text field.{hint} "
                    f"Criteria read {', '.join(CRITERION_FIELDS)}."
                )
        if not fields or len(set(fields)) != len(fields):
            raise ConfigError(f"{where}: fields must name at least one field, once. Got {fields}.")
        object.__setattr__(self, "fields", fields)

    def _check_entailment(self, where: str) -> None:
        if self.levels:
            raise ConfigError(f"{where}: an entailment criterion is yes/no; drop its levels.")
        if self.premise not in CRITERION_FIELDS:
            raise ConfigError(
                f"{where}: premise must be one of {', '.join(CRITERION_FIELDS)}. "
                f"Got {self.premise!r}."
            )
        if self.hypothesis not in HYPOTHESIS_FIELDS or self.hypothesis == self.premise:
            raise ConfigError(
                f"{where}: hypothesis must be one of {', '.join(HYPOTHESIS_FIELDS)}, other than "
                f"the premise. Got {self.hypothesis!r}."
            )
        object.__setattr__(self, "fields", (self.premise, self.hypothesis))
        if not (self.question or "").strip():
            question = (
                f"Does the {self.premise} entail the {self.hypothesis}: does it state or "
                f"directly imply everything the {self.hypothesis} says?"
            )
            object.__setattr__(self, "question", question)

    @property
    def answers(self) -> tuple[str, ...]:
        """What the judge may answer: "yes"/"no", or the level names."""
        return tuple(level.name for level in self.levels) if self.levels else (YES, NO)

    def score_of(self, answer: str) -> float:
        """The score of an answer the judge gave (one of :attr:`answers`)."""
        if not self.levels:
            return 1.0 if answer == YES else 0.0
        return next(level.score for level in self.levels if level.name == answer)

    @property
    def description(self) -> str:
        """The metric's description: the question and what it may answer, with a hash of
        the whole definition (a changed criterion is another metric to a run record)."""
        if self.levels:
            scale = "rubric " + ", ".join(f"{lv.name}={lv.score:g}" for lv in self.levels)
        else:
            scale = "yes=1, no=0"
        return f"Criterion: {self.question} ({scale}; definition {self.digest})"

    @property
    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.as_dict(), sort_keys=True).encode()).hexdigest()[:12]

    def as_dict(self) -> dict[str, Any]:
        """The criterion as its TOML table (and the run record) holds it."""
        out: dict[str, Any] = {
            "name": self.name,
            "question": self.question,
            "fields": list(self.fields),
            "higher_is_better": self.higher_is_better,
            "kind": self.kind,
        }
        if self.levels:
            out["levels"] = [
                {"name": lv.name, "description": lv.description, "score": lv.score}
                for lv in self.levels
            ]
        if self.kind == "entailment":
            out["premise"] = self.premise
            out["hypothesis"] = self.hypothesis
        return out


def _from_table(table: Any, where: str) -> Criterion:
    if isinstance(table, Criterion):
        return table
    if not isinstance(table, Mapping):
        raise ConfigError(
            f"{where} must be a Criterion or a table of name, question, fields... "
            f"Got {type(table).__name__}."
        )
    unknown = [k for k in table if k not in _KEYS]
    if unknown:
        hint = did_you_mean(str(unknown[0]), _KEYS)
        raise ConfigError(
            f"{where} has unknown key(s) {unknown}.{hint} A criterion has: {', '.join(_KEYS)}."
        )
    if "name" not in table:
        raise ConfigError(f"{where} has no name (its metric's name).")
    kwargs = dict(table)
    if "fields" in kwargs and isinstance(kwargs["fields"], list):
        kwargs["fields"] = tuple(kwargs["fields"])
    return Criterion(**kwargs)


def load_criteria(path: str | PathLike[str]) -> tuple[Criterion, ...]:
    """The criteria of a TOML file: an array of tables ``[[criteria]]``."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"No criteria file {path}. Give the path of a TOML file.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"Cannot read the criteria file {path}: {exc}.") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}.") from None
    tables = data.get("criteria")
    if not isinstance(tables, list) or not tables:
        raise ConfigError(
            f"{path} has no [[criteria]] tables. Write one table per criterion: "
            '[[criteria]] name = "..." question = "..." fields = ["answer"].'
        )
    out = []
    for i, table in enumerate(tables, start=1):
        name = table.get("name") if isinstance(table, Mapping) else None
        where = f"{path}: criterion {i}" + (f" ({name!r})" if name else "")
        try:
            out.append(_from_table(table, where))
        except ConfigError as exc:
            message = str(exc)
            raise ConfigError(
                message if message.startswith(str(path)) else f"{where}: {message}"
            ) from None
    return _distinct(out, str(path))


def as_criteria(value: Any) -> tuple[Criterion, ...]:
    """``Settings.criteria`` from what users give: a TOML path, a Criterion or a table, or a
    sequence of Criterion objects and tables."""
    if value is None:
        return ()
    if isinstance(value, str | PathLike):
        return load_criteria(value)
    if isinstance(value, Criterion | Mapping):
        value = [value]
    if not isinstance(value, Sequence):
        raise ConfigError(
            "criteria must be a TOML path, a Criterion, or a list of Criterion objects. "
            f"Got {type(value).__name__}."
        )
    items = [_from_table(item, f"criteria[{i}]") for i, item in enumerate(value)]
    return _distinct(items, "criteria")


def _distinct(items: Sequence[Criterion], where: str) -> tuple[Criterion, ...]:
    names = [c.name for c in items]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"{where} names {', '.join(twice)} more than once; names must differ.")
    return tuple(items)


# -- the judge's side: a request for one row's criteria, and its verdicts ---------------------


@dataclass(frozen=True, slots=True)
class CriteriaRequest:
    """One row's criteria, sent in one call: the texts of every field they read."""

    criteria: tuple[Criterion, ...]
    #: field -> its text, or its texts for a list field (only fields the criteria read).
    texts: Mapping[str, str | tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class CriterionVerdict:
    """The judge's answer to one criterion: its answer, the score, why, and the quote."""

    name: str
    answer: str
    score: float
    reason: str
    quote: str


@dataclass(frozen=True, slots=True)
class CriteriaVerdicts:
    """One verdict per criterion sent, in order; ``meta``: judge, prompt, cached."""

    verdicts: tuple[CriterionVerdict, ...]
    meta: dict[str, Any] = field(default_factory=dict)
