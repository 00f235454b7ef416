from __future__ import annotations

import hashlib
import json
import re
from importlib import resources

import pytest

from ragmeter.judges.base import AnalyzeRequest, ClaimBlock
from ragmeter.judges.llm import schemas as S
from ragmeter.prompts import load_prompt, parse_prompt


@pytest.mark.parametrize("name", ["analyze", "verify"])
def test_packaged_prompts_have_an_id_and_the_hash_of_their_bytes(name: str) -> None:
    prompt = load_prompt(name)
    raw = resources.files("ragmeter.prompts").joinpath(f"{name}.md").read_bytes()
    assert prompt.id == f"ragmeter.{name}"
    assert prompt.hash == hashlib.sha256(raw).hexdigest()[:16]
    assert prompt.example["input"] and prompt.example["output"]


def test_rendered_messages_have_no_unfilled_placeholders_and_json_input() -> None:
    prompt = load_prompt("analyze")
    request = AnalyzeRequest(
        "Q {{x}}?",
        "A $1 {{n_questions}}.",
        ("R.",),
        ("C.",),
        wants=frozenset({"answer_claims", "reference_claims", "entities", "questions"}),
        n_questions=4,
    )
    messages = S.analyze_messages(prompt, request)
    assert "{{" not in messages[0]["content"]
    assert "4 different questions" in messages[0]["content"]
    data = json.loads(messages[-1]["content"])
    assert data["answer"] == "A $1 {{n_questions}}."  # data is never templated
    example = json.loads(messages[2]["content"])
    assert len(example["questions"]) == 4


def test_example_reply_of_each_prompt_validates_against_its_own_schema() -> None:
    prompt = load_prompt("analyze")
    ex = prompt.example["input"]
    request = AnalyzeRequest(
        ex["question"],
        ex["answer"],
        tuple(ex["references"]),
        tuple(ex["contexts"]),
        wants=frozenset({"answer_claims", "reference_claims", "entities", "questions"}),
    )
    parts = S.parse_analyze(json.dumps(prompt.example["output"]), request)
    assert len(parts.answer_claims) == 3 and len(parts.context_entities) == 2
    verify = load_prompt("verify")
    groups = verify.example["input"]["groups"]
    premises = [p["text"] for p in verify.example["input"]["premises"]]
    blocks = [
        ClaimBlock([c["text"] for c in g["claims"]], [premises[i - 1] for i in g["check_against"]])
        for g in groups
    ]
    plan = S.plan_verify(blocks)
    matrices = S.parse_verify(json.dumps(verify.example["output"]), plan, blocks)
    assert matrices == (((True, False), (False, True), (False, False)), ((False,),))


def test_a_prompt_file_without_front_matter_is_rejected() -> None:
    with pytest.raises(ValueError, match="front matter"):
        parse_prompt(b"## system\nhi", source="x.md")


def test_verify_rejects_out_of_group_premises() -> None:
    blocks = [ClaimBlock(("a",), ("p1",)), ClaimBlock(("b",), ("p2",))]
    plan = S.plan_verify(blocks)
    reply = {"verdicts": [{"claim": 1, "entailed_by": [2]}, {"claim": 2, "entailed_by": []}]}
    with pytest.raises(S.ReplyInvalid, match=re.escape("only [1] may be listed")):
        S.parse_verify(json.dumps(reply), plan, blocks)
