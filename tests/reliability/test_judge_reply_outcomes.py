"""What a judge's odd replies and errors turn into (issue 29, items 12, 13, 17): a reply nested
past any parser's depth is an invalid reply (asked again, then a judge failure), a 400 that is
not about ``response_format`` keeps structured output on, and prices and token counts that
cannot be real never make a cost.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from ragmeter.errors import JudgeReplyError
from ragmeter.judges import schemas as S
from ragmeter.judges.base import ClaimBlock
from ragmeter.judges.openai_judge import OpenAIJudge
from ragmeter.types import Usage

BLOCKS = [ClaimBlock(claims=("Paris is in France.", "Paris is big."), premises=("P1", "P2"))]
GOOD = json.dumps(
    {"verdicts": [{"claim": 1, "entailed_by": [1]}, {"claim": 2, "entailed_by": []}]}
)
DEEP = "[" * 100_000


def scripted_judge(replies: list[str], sent: list[list[dict[str, str]]]) -> OpenAIJudge:
    judge = OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", usage=Usage())

    async def request(messages: list[dict[str, str]], name: str, schema: dict) -> str:
        sent.append(messages)
        judge.usage.calls += 1
        return replies.pop(0)

    judge._request = request  # type: ignore[method-assign]
    return judge


def test_a_deeply_nested_reply_is_an_invalid_reply_asked_again() -> None:
    sent: list[list[dict[str, str]]] = []
    judge = scripted_judge([DEEP, GOOD], sent)
    verification = asyncio.run(judge.verify(BLOCKS))
    assert verification.matrices == (((True, False), (False, False)),)
    assert judge.usage.retries == 1
    assert "nested" in sent[1][-1]["content"], sent[1][-1]


def test_two_deeply_nested_replies_are_a_judge_reply_error() -> None:
    judge = scripted_judge([DEEP, "{" * 100_000], [])
    with pytest.raises(JudgeReplyError, match="nested"):
        asyncio.run(judge.verify(BLOCKS))


def test_the_schema_parser_names_nesting_it_cannot_read() -> None:
    plan = S.plan_verify(BLOCKS)
    with pytest.raises(S.ReplyInvalid, match="nested"):
        S.parse_verify(DEEP, plan, BLOCKS)
