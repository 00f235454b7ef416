"""A judge reply that leaves out a field is invalid, never read as a default (issue 15, item 5).

Every field of a reply schema is required: a verdict without ``entailed_by`` is not "entailed
by nothing". Such a reply is sent back once with the problem stated; a second one fails the
row, which then has no score.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter.errors import JudgeReplyError
from ragmeter.judges.base import ClaimBlock
from ragmeter.judges.llm import schemas as S
from ragmeter.judges.llm.openai_judge import OpenAIJudge
from ragmeter.metrics.base import Settings
from ragmeter.testing.server import HashingEmbedder, TestServer
from ragmeter.types import Usage

BLOCKS = [ClaimBlock(claims=("Paris is in France.", "Paris is big."), premises=("P1", "P2"))]
PLAN = S.plan_verify(BLOCKS)
GOOD = {"verdicts": [{"claim": 1, "entailed_by": [1]}, {"claim": 2, "entailed_by": []}]}
LACKING = {"verdicts": [{"claim": 1, "entailed_by": [1]}, {"claim": 2}]}


def test_a_verdict_without_entailed_by_does_not_validate() -> None:
    with pytest.raises(S.ReplyInvalid, match="entailed_by"):
        S.parse_verify(json.dumps(LACKING), PLAN, BLOCKS)
    assert S.parse_verify(json.dumps(GOOD), PLAN, BLOCKS) == (((True, False), (False, False)),)


def test_every_field_of_every_reply_model_is_required() -> None:
    for model in (S.VerifyReply, S._Verdict, S._ReferenceClaims, S._ContextEntities):
        optional = [name for name, f in model.model_fields.items() if not f.is_required()]
        assert optional == [], (model.__name__, optional)


def scripted_judge(replies: list[dict[str, Any]], sent: list[list[dict[str, str]]]) -> OpenAIJudge:
    judge = OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", usage=Usage())

    async def request(messages: list[dict[str, str]], name: str, schema: dict) -> str:
        sent.append(messages)
        judge.usage.calls += 1
        return json.dumps(replies.pop(0))

    judge._request = request  # type: ignore[method-assign]
    return judge


def test_a_reply_lacking_a_field_is_retried_once_with_the_problem() -> None:
    sent: list[list[dict[str, str]]] = []
    judge = scripted_judge([LACKING, GOOD], sent)
    verification = asyncio.run(judge.verify(BLOCKS))
    assert verification.matrices == (((True, False), (False, False)),)
    assert judge.usage.calls == 2 and judge.usage.retries == 1
    assert "entailed_by" in sent[1][-1]["content"]


def test_a_second_reply_lacking_a_field_fails() -> None:
    judge = scripted_judge([LACKING, LACKING], [])
    with pytest.raises(JudgeReplyError, match="entailed_by"):
        asyncio.run(judge.verify(BLOCKS))


def test_rows_whose_verdicts_lack_entailed_by_fail_instead_of_scoring_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = OpenAIJudge._request

    async def drop_entailed_by(self: OpenAIJudge, messages: Any, name: str, schema: Any) -> str:
        content = await original(self, messages, name, schema)
        if name != "ragmeter_verify":
            return content
        reply = json.loads(content)
        for verdict in reply["verdicts"]:
            verdict.pop("entailed_by", None)
        return json.dumps(reply)

    monkeypatch.setattr(OpenAIJudge, "_request", drop_entailed_by)
    rows = [
        {"answer": f"Paris is in France. It has {n} bridges.", "contexts": ["Paris is in France."]}
        for n in range(4)
    ]
    with TestServer() as server:
        settings = Settings(
            judge="openai:test-model",
            base_url=server.base_url,
            use_cache=False,
            embedder=HashingEmbedder(),
        )
        result = ragmeter.evaluate(rows, ["faithfulness"], settings=settings, progress=False)
    assert result.scores("faithfulness") == [None] * 4
    for row in result.rows:
        assert "entailed_by" in row.failures["faithfulness"], row.failures
