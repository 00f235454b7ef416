"""Rendering a row's criteria as one judge request, and validating the reply.

Every criterion of a row goes in one request: the texts of the fields they read (each sent
once), then the criteria with their questions and what each may answer. The reply schema is
strict: one key per criterion, each holding ``reason``, ``quote`` and ``answer`` (``yes`` /
``no``, or one of the criterion's level names). A reply is accepted when it has exactly the
criteria sent, each answer is one allowed, and each quote is empty or found in a text the
criterion reads (case, spacing and quote marks aside).
"""

from __future__ import annotations

import re
from typing import Any

from ragmeter.config.criteria import CriteriaRequest, Criterion, CriterionVerdict
from ragmeter.judges.llm.schemas import ReplyInvalid, _dumps, _load, _object
from ragmeter.prompts import Prompt

__all__ = ["criteria_input", "criteria_messages", "criteria_schema", "parse_criteria"]

_SPACES = re.compile(r"\s+")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _criterion_item(criterion: Criterion) -> dict[str, Any]:
    answers: Any = (
        {level.name: level.description for level in criterion.levels}
        if criterion.levels
        else list(criterion.answers)
    )
    return {
        "name": criterion.name,
        "question": criterion.question,
        "reads": list(criterion.fields),
        "answer_with": answers,
    }


def criteria_input(request: CriteriaRequest) -> dict[str, Any]:
    """The user message of a request: the texts read, then the criteria."""
    texts = {
        name: list(value) if isinstance(value, tuple) else value
        for name, value in request.texts.items()
    }
    return {"texts": texts, "criteria": [_criterion_item(c) for c in request.criteria]}


def criteria_messages(prompt: Prompt, request: CriteriaRequest) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": prompt.system_text()},
        {"role": "user", "content": _dumps(prompt.example["input"])},
        {"role": "assistant", "content": _dumps(prompt.example["output"])},
        {"role": "user", "content": _dumps(criteria_input(request))},
    ]


def criteria_schema(request: CriteriaRequest) -> dict[str, Any]:
    """One property per criterion: reason, quote, and an answer from its allowed ones."""
    return _object(
        {
            c.name: _object(
                {
                    "reason": {"type": "string"},
                    "quote": {"type": "string"},
                    "answer": {"type": "string", "enum": list(c.answers)},
                }
            )
            for c in request.criteria
        }
    )


def _normal(text: str) -> str:
    return _SPACES.sub(" ", text.translate(_QUOTES)).strip().casefold()


def _quoted_from(quote: str, texts: list[str]) -> bool:
    wanted = _normal(quote).strip(" .\"'")
    return not wanted or any(wanted in _normal(text) for text in texts)


def parse_criteria(content: str | None, request: CriteriaRequest) -> tuple[CriterionVerdict, ...]:
    """One verdict per criterion of ``request``, in its order; :class:`ReplyInvalid` says
    what does not fit."""
    reply = _load(content)
    if not isinstance(reply, dict):
        raise ReplyInvalid(f"the reply must be a JSON object; got {type(reply).__name__}")
    names = [c.name for c in request.criteria]
    missing = [n for n in names if n not in reply]
    if missing:
        raise ReplyInvalid(f"the reply lacks the criteria {missing}; it must hold {names}")
    verdicts = []
    for criterion in request.criteria:
        item = reply[criterion.name]
        if not isinstance(item, dict):
            raise ReplyInvalid(f"{criterion.name}: must be an object with reason, quote, answer")
        lacking = [k for k in ("reason", "quote", "answer") if not isinstance(item.get(k), str)]
        if lacking:
            raise ReplyInvalid(f"{criterion.name}: {', '.join(lacking)} must be strings")
        answer = item["answer"].strip()
        if answer not in criterion.answers and answer.lower() in criterion.answers:
            answer = answer.lower()
        if answer not in criterion.answers:
            raise ReplyInvalid(
                f"{criterion.name}: answer must be one of {list(criterion.answers)}; "
                f"got {item['answer']!r}"
            )
        texts: list[str] = []
        for name in criterion.fields:
            value = request.texts.get(name)
            texts.extend(value if isinstance(value, tuple) else [value or ""])
        quote = item["quote"].strip()
        if not _quoted_from(quote, texts):
            raise ReplyInvalid(
                f"{criterion.name}: the quote {quote[:80]!r} is not in the texts it reads "
                f'({", ".join(criterion.fields)}); copy it verbatim, or give ""'
            )
        verdicts.append(
            CriterionVerdict(
                name=criterion.name,
                answer=answer,
                score=criterion.score_of(answer),
                reason=item["reason"].strip(),
                quote=quote,
            )
        )
    return tuple(verdicts)
