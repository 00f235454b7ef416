"""Rendering judge requests and validating judge replies: pydantic models plus input checks.

Shared by every judge that talks JSON (the OpenAI-compatible judge, and the local test server
reads the same rendered input). A reply is accepted only when it parses, matches its schema and
fits its input: one item per reference, context and claim sent, indices in range and in order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ragmeter.judges.base import Analysis, AnalyzeRequest, ClaimBlock, Want
from ragmeter.prompts import Prompt

__all__ = [
    "ReplyInvalid",
    "VerifyPlan",
    "analyze_messages",
    "analyze_schema",
    "parse_analyze",
    "parse_verify",
    "plan_verify",
    "verify_messages",
    "verify_schema",
]

WANT_ORDER: tuple[Want, ...] = (
    "answer_claims",
    "reference_claims",
    "entities",
    "questions",
    "refusal",
)
#: What an answer may read as (the ``refusal`` part of an analysis).
REFUSAL_KINDS = ("answer", "refusal", "partial")


class ReplyInvalid(ValueError):
    """A judge reply does not fit its schema or its input; the message says how."""


class _Strict(BaseModel):
    """A reply object: every field without a default is required (no field may be left out
    and read as empty); the fields of ``AnalyzeReply`` are checked against what was asked."""

    model_config = ConfigDict(extra="ignore")


class _ReferenceClaims(_Strict):
    reference: int
    claims: list[str]


class _ContextEntities(_Strict):
    context: int
    entities: list[str]


class AnalyzeReply(_Strict):
    answer_claims: list[str] | None = None
    reference_claims: list[_ReferenceClaims] | None = None
    reference_entities: list[str] | None = None
    context_entities: list[_ContextEntities] | None = None
    questions: list[str] | None = None
    noncommittal: bool | None = None
    refusal: Literal["answer", "refusal", "partial"] | None = None
    refusal_quote: str | None = None


class _Verdict(_Strict):
    claim: int
    entailed_by: list[int]  # required: a verdict without it is invalid, not "entailed by none"


class VerifyReply(_Strict):
    verdicts: list[_Verdict]


# ---------------------------------------------------------------- analyze


def ordered_wants(wants: frozenset[str]) -> tuple[Want, ...]:
    unknown = set(wants) - set(WANT_ORDER)
    if unknown:
        raise ValueError(f"Unknown analysis parts {sorted(unknown)}. Known: {list(WANT_ORDER)}.")
    return tuple(w for w in WANT_ORDER if w in wants)


def analyze_input(request: AnalyzeRequest, wants: Sequence[str]) -> dict[str, Any]:
    """Only the fields the wanted parts need, so no token is sent for nothing."""
    data: dict[str, Any] = {}
    if request.question and (
        "questions" in wants or "answer_claims" in wants or "refusal" in wants
    ):
        data["question"] = request.question
    if "answer_claims" in wants or "questions" in wants or "refusal" in wants:
        data["answer"] = request.answer or ""
    if "reference_claims" in wants or "entities" in wants:
        data["references"] = list(request.references)
    if "entities" in wants:
        data["contexts"] = list(request.contexts)
    return data


def _example_output(example: dict[str, Any], wants: Sequence[str], n_questions: int) -> dict:
    keys = {
        "answer_claims": ("answer_claims",),
        "reference_claims": ("reference_claims",),
        "entities": ("reference_entities", "context_entities"),
        "questions": ("questions", "noncommittal"),
        "refusal": ("refusal", "refusal_quote"),
    }
    out: dict[str, Any] = {}
    for want in wants:
        for key in keys[want]:
            out[key] = example[key]
    if "questions" in out:
        questions = list(out["questions"])
        out["questions"] = (questions * n_questions)[:n_questions]
    return out


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def analyze_messages(prompt: Prompt, request: AnalyzeRequest) -> list[dict[str, str]]:
    wants = ordered_wants(request.wants)
    example = prompt.example
    example_input = analyze_input(
        AnalyzeRequest(
            question=example["input"]["question"],
            answer=example["input"]["answer"],
            references=example["input"]["references"],
            contexts=example["input"]["contexts"],
        ),
        wants,
    )
    return [
        {
            "role": "system",
            "content": prompt.system_text(wants, n_questions=request.n_questions),
        },
        {"role": "user", "content": _dumps(example_input)},
        {
            "role": "assistant",
            "content": _dumps(_example_output(example["output"], wants, request.n_questions)),
        },
        {"role": "user", "content": _dumps(analyze_input(request, wants))},
    ]


def _strings() -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def analyze_schema(wants: frozenset[str]) -> dict[str, Any]:
    props: dict[str, Any] = {}
    for want in ordered_wants(wants):
        if want == "answer_claims":
            props["answer_claims"] = _strings()
        elif want == "reference_claims":
            item = _object({"reference": {"type": "integer"}, "claims": _strings()})
            props["reference_claims"] = {"type": "array", "items": item}
        elif want == "entities":
            item = _object({"context": {"type": "integer"}, "entities": _strings()})
            props["reference_entities"] = _strings()
            props["context_entities"] = {"type": "array", "items": item}
        elif want == "questions":
            props["questions"] = _strings()
            props["noncommittal"] = {"type": "boolean"}
        else:
            props["refusal"] = {"type": "string", "enum": list(REFUSAL_KINDS)}
            props["refusal_quote"] = {"type": "string"}
    return _object(props)


def _load(content: str | None) -> Any:
    if not content or not content.strip():
        raise ReplyInvalid("the reply is empty; it must be one JSON object")
    text = content.strip()
    if text.startswith("```"):
        text = text.strip("`")
        text = text.removeprefix("json").strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReplyInvalid(
            f"the reply is not valid JSON ({exc.msg.removesuffix(' at')} at position {exc.pos})"
        ) from None
    except RecursionError:
        raise ReplyInvalid(
            "the reply is nested too deeply to read; it must be one flat JSON object as the "
            "schema describes"
        ) from None


def _validate(model: type[BaseModel], data: Any) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'reply'}: {err['msg']}"
            for err in exc.errors()[:5]
        )
        raise ReplyInvalid(f"the reply does not match the schema ({problems})") from None


def _clean(items: Sequence[str]) -> tuple[str, ...]:
    return tuple(s.strip() for s in items if s and s.strip())


def _numbered(label: str, numbers: Sequence[int], expected: int) -> None:
    if len(numbers) != expected:
        raise ReplyInvalid(
            f"{label} must have exactly {expected} items (one per input); got {len(numbers)}"
        )
    if list(numbers) != list(range(1, expected + 1)):
        raise ReplyInvalid(
            f"{label} must be numbered 1..{expected} in input order; got {list(numbers)}"
        )


def parse_analyze(content: str | None, request: AnalyzeRequest) -> Analysis:
    """The validated parts of an analyze reply (provenance ``meta`` is the caller's)."""
    reply: AnalyzeReply = _validate(AnalyzeReply, _load(content))
    wants = ordered_wants(request.wants)
    parts: dict[str, Any] = {}
    missing = []
    if "answer_claims" in wants:
        if reply.answer_claims is None:
            missing.append("answer_claims")
        else:
            parts["answer_claims"] = _clean(reply.answer_claims)
    if "reference_claims" in wants:
        if reply.reference_claims is None:
            missing.append("reference_claims")
        else:
            _numbered(
                "reference_claims",
                [r.reference for r in reply.reference_claims],
                len(request.references),
            )
            parts["reference_claims"] = tuple(_clean(r.claims) for r in reply.reference_claims)
    if "entities" in wants:
        if reply.reference_entities is None or reply.context_entities is None:
            missing.append("reference_entities and context_entities")
        else:
            _numbered(
                "context_entities",
                [c.context for c in reply.context_entities],
                len(request.contexts),
            )
            parts["reference_entities"] = _clean(reply.reference_entities)
            parts["context_entities"] = tuple(_clean(c.entities) for c in reply.context_entities)
    if "questions" in wants:
        if reply.questions is None or reply.noncommittal is None:
            missing.append("questions and noncommittal")
        else:
            questions = _clean(reply.questions)
            if len(questions) != request.n_questions:
                raise ReplyInvalid(
                    f"questions must hold exactly {request.n_questions} non-empty questions; "
                    f"got {len(questions)}"
                )
            parts["questions"] = questions
            parts["noncommittal"] = reply.noncommittal
    if "refusal" in wants:
        if reply.refusal is None or reply.refusal_quote is None:
            missing.append("refusal and refusal_quote")
        else:
            parts["refusal"] = reply.refusal
            parts["refusal_quote"] = reply.refusal_quote.strip()
    if missing:
        raise ReplyInvalid(f"the reply lacks the key(s) {', '.join(missing)}")
    return Analysis(**parts)


# ---------------------------------------------------------------- verify


@dataclass(frozen=True, slots=True)
class VerifyPlan:
    """Blocks flattened for one request: premises sent once, claims numbered globally."""

    premises: tuple[str, ...]
    #: (block index, premise numbers 1-based for that block's premises in order, claims)
    groups: tuple[tuple[int, tuple[int, ...], tuple[str, ...]], ...]

    @property
    def n_claims(self) -> int:
        return sum(len(claims) for _, _, claims in self.groups)


def plan_verify(blocks: Sequence[ClaimBlock]) -> VerifyPlan:
    premises: list[str] = []
    index: dict[str, int] = {}
    groups = []
    for b, block in enumerate(blocks):
        if not block.claims or not block.premises:
            continue
        numbers = []
        for text in block.premise_texts():
            if text not in index:
                premises.append(text)
                index[text] = len(premises)
            numbers.append(index[text])
        groups.append((b, tuple(numbers), tuple(block.claims)))
    return VerifyPlan(tuple(premises), tuple(groups))


def verify_input(plan: VerifyPlan) -> dict[str, Any]:
    groups = []
    claim_id = 0
    for _, numbers, claims in plan.groups:
        items = []
        for claim in claims:
            claim_id += 1
            items.append({"id": claim_id, "text": claim})
        groups.append({"check_against": sorted(set(numbers)), "claims": items})
    return {
        "premises": [{"id": i, "text": t} for i, t in enumerate(plan.premises, start=1)],
        "groups": groups,
    }


def verify_messages(prompt: Prompt, plan: VerifyPlan) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": prompt.system_text()},
        {"role": "user", "content": _dumps(prompt.example["input"])},
        {"role": "assistant", "content": _dumps(prompt.example["output"])},
        {"role": "user", "content": _dumps(verify_input(plan))},
    ]


def verify_schema() -> dict[str, Any]:
    verdict = _object(
        {
            "claim": {"type": "integer"},
            "entailed_by": {"type": "array", "items": {"type": "integer"}},
        }
    )
    return _object({"verdicts": {"type": "array", "items": verdict}})


def parse_verify(
    content: str | None, plan: VerifyPlan, blocks: Sequence[ClaimBlock]
) -> tuple[tuple[tuple[bool, ...], ...], ...]:
    """Matrices (one per block) from a reply; blocks that were not sent are all False."""
    reply: VerifyReply = _validate(VerifyReply, _load(content))
    _numbered("verdicts", [v.claim for v in reply.verdicts], plan.n_claims)
    matrices: list[tuple[tuple[bool, ...], ...]] = [
        tuple(tuple(False for _ in block.premises) for _ in block.claims) for block in blocks
    ]
    cursor = 0
    for b, numbers, claims in plan.groups:
        allowed = set(numbers)
        rows = []
        for _ in claims:
            verdict = reply.verdicts[cursor]
            cursor += 1
            bad = sorted(set(verdict.entailed_by) - allowed)
            if bad:
                raise ReplyInvalid(
                    f"claim {verdict.claim}: entailed_by lists premise(s) {bad}, but only "
                    f"{sorted(allowed)} may be listed for it"
                )
            chosen = set(verdict.entailed_by)
            rows.append(tuple(n in chosen for n in numbers))
        matrices[b] = tuple(rows)
    return tuple(matrices)
