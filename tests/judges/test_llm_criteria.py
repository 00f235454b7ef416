"""The user's criteria through the LLM judge: one call per row, strict schema, validated,
cached, counted, retried once, failures as data (issue 26, part 1)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ragmeter import evaluate
from ragmeter.config.criteria import CriteriaRequest, Criterion
from ragmeter.errors import JudgeReplyError
from ragmeter.judges.llm import criteria as C
from ragmeter.judges.llm.openai_judge import OpenAIJudge
from ragmeter.prompts import load_prompt
from ragmeter.settings import Settings
from ragmeter.testing.server import TestServer
from ragmeter.types import Usage

CITES = Criterion(name="cites_policy", question='Does the answer cite "policy R-12"?')
TONE = Criterion(
    name="tone",
    question="How courteous is the answer?",
    levels={"curt": "Cold and dismissive.", "warm": "Courteous: thanks for asking."},
)
GROUNDED = Criterion(name="grounded", kind="entailment", premise="contexts", hypothesis="answer")
REQUEST = CriteriaRequest(
    criteria=(CITES, TONE),
    texts={"answer": "Under policy R-12 returns are accepted.\nThanks!"},
)
ROWS = [
    {
        "question": "Can I return shoes?",
        "answer": "Under policy R-12 returns are accepted within 30 days. Thanks for asking!",
        "contexts": ["Policy R-12: returns are accepted within 30 days."],
    },
    {
        "question": "Can I return shoes?",
        "answer": "No.",
        "contexts": ["Policy R-12: returns are accepted within 30 days."],
    },
]


def reply(**items: dict) -> str:
    return json.dumps(items)


def test_the_schema_is_strict_with_each_criterions_answers() -> None:
    schema = C.criteria_schema(REQUEST)
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["cites_policy", "tone"]
    tone = schema["properties"]["tone"]
    assert tone["required"] == ["reason", "quote", "answer"]
    assert tone["properties"]["answer"]["enum"] == ["curt", "warm"]
    assert schema["properties"]["cites_policy"]["properties"]["answer"]["enum"] == ["yes", "no"]


def test_the_request_sends_each_text_once_and_every_criterion() -> None:
    messages = C.criteria_messages(load_prompt("criteria"), REQUEST)
    sent = json.loads(messages[-1]["content"])
    assert list(sent["texts"]) == ["answer"]
    assert [c["name"] for c in sent["criteria"]] == ["cites_policy", "tone"]
    assert sent["criteria"][1]["answer_with"] == {
        "curt": "Cold and dismissive.",
        "warm": "Courteous: thanks for asking.",
    }


def test_a_valid_reply_gives_scores_reasons_and_quotes() -> None:
    verdicts = C.parse_criteria(
        reply(
            cites_policy={"reason": "Names it.", "quote": "under  policy R-12", "answer": "yes"},
            tone={"reason": "Thanks.", "quote": "“Thanks!”", "answer": "warm"},
        ),
        REQUEST,
    )
    assert [(v.name, v.answer, v.score) for v in verdicts] == [
        ("cites_policy", "yes", 1.0),
        ("tone", "warm", 1.0),
    ]
    assert verdicts[0].quote == "under  policy R-12"


@pytest.mark.parametrize(
    ("items", "words"),
    [
        ({"cites_policy": {"reason": "r", "quote": "", "answer": "yes"}}, "lacks the criteria"),
        (
            {
                "cites_policy": {"reason": "r", "quote": "", "answer": "maybe"},
                "tone": {"reason": "r", "quote": "", "answer": "warm"},
            },
            "answer must be one of",
        ),
        (
            {
                "cites_policy": {"reason": "r", "quote": "policy R-99", "answer": "yes"},
                "tone": {"reason": "r", "quote": "", "answer": "warm"},
            },
            "is not in the texts",
        ),
        (
            {
                "cites_policy": {"reason": "r", "answer": "yes"},
                "tone": {"reason": "r", "quote": "", "answer": "warm"},
            },
            "quote must be strings",
        ),
    ],
)
def test_a_reply_that_does_not_fit_is_invalid(items: dict, words: str) -> None:
    with pytest.raises(C.ReplyInvalid, match=words):
        C.parse_criteria(json.dumps(items), REQUEST)


def test_a_bad_reply_is_sent_back_once_then_the_call_fails() -> None:
    judge = OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", usage=Usage())
    good = reply(
        cites_policy={"reason": "r", "quote": "", "answer": "no"},
        tone={"reason": "r", "quote": "", "answer": "curt"},
    )
    sent: list[list[dict[str, str]]] = []
    replies = ["{}", good]

    async def request(messages: list[dict[str, str]], name: str, schema: dict) -> str:
        sent.append(messages)
        return replies.pop(0)

    judge._request = request  # type: ignore[method-assign]
    out = asyncio.run(judge.judge_criteria(REQUEST))
    assert [v.answer for v in out.verdicts] == ["no", "curt"]
    assert "lacks the criteria" in sent[1][-1]["content"]
    assert out.meta["prompt"]["id"] == "ragmeter.criteria" and out.meta["cached"] is False
    replies[:] = ["{}", "{}"]
    with pytest.raises(JudgeReplyError, match="invalid ragmeter.criteria reply twice"):
        asyncio.run(judge.judge_criteria(REQUEST))


def settings_for(server: TestServer, tmp_path: Path, **more: object) -> Settings:
    return Settings(
        judge="openai:test-model",
        base_url=server.base_url,
        cache_path=str(tmp_path / "cache.sqlite3"),
        criteria=(CITES, TONE, GROUNDED),
        **more,
    )


def test_all_criteria_of_a_row_go_in_one_call_cached_and_counted(tmp_path: Path) -> None:
    with TestServer() as server:
        settings = settings_for(server, tmp_path)
        result = evaluate(ROWS, ["cites_policy"], settings=settings, progress=False)
        stats = server.stats()
        assert stats["chat_calls"] == stats["criteria_calls"] == len(ROWS)
        assert result.usage.calls == len(ROWS) and result.usage.prompt_tokens > 0
        first, second = result.rows
        assert first.scores == {"cites_policy": 1.0, "tone": 1.0, "grounded": 0.0}
        assert second.scores == {"cites_policy": 0.0, "tone": 0.0, "grounded": 0.0}
        assert first.reasons["cites_policy"].startswith("yes: ")
        assert first.details["cites_policy"]["quote"].startswith("Under policy R-12")
        assert first.details["tone"]["answer"] == "warm"
        assert first.details["grounded"]["prompt"]["id"] == "ragmeter.criteria"
        assert result.summary["cites_policy"].mean == 0.5
        assert result.info["metrics"]["tone"]["family"] == "criteria"
        server.reset()
        again = evaluate(ROWS, ["cites_policy"], settings=settings, progress=False)
        assert server.stats()["chat_calls"] == 0 and again.usage.cache_hits == len(ROWS)
        assert [r.scores for r in again.rows] == [r.scores for r in result.rows]


def test_a_short_reply_is_retried_and_a_broken_one_fails_only_the_criteria(
    tmp_path: Path,
) -> None:
    with TestServer(faults=("wrong_count",), fault_on_calls=(1,)) as server:
        settings = settings_for(server, tmp_path)
        result = evaluate(ROWS[:1], ["cites_policy"], settings=settings, progress=False)
        assert server.stats()["criteria_calls"] == 2 and result.usage.retries == 1
        assert result.rows[0].scores["cites_policy"] == 1.0
    with TestServer(faults=("malformed",), fault_rate=1.0) as server:
        settings = settings_for(server, tmp_path, use_cache=False)
        result = evaluate(ROWS, ["k_precision"], settings=settings, progress=False)
        for row in result.rows:
            assert row.scores["k_precision"] is not None
            assert set(row.failures) == {"cites_policy", "tone", "grounded"}
            assert "invalid ragmeter.criteria reply twice" in row.failures["tone"]
            assert row.failure_causes["tone"] == "judge"
