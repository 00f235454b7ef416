"""answer_refusal with a judge other than the offline one: read in the judge's analysis call
(one call per sample with the claim metrics), its reply validated; a Python judge without a
reading falls back to the rules and says so."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import ragmeter
from ragmeter.judges.base import Analysis, AnalyzeRequest
from ragmeter.judges.fake import FakeJudge
from ragmeter.judges.llm.schemas import ReplyInvalid, analyze_schema, parse_analyze
from ragmeter.testing.server import TestServer

ROWS = [
    {
        "question": "When was the tower completed?",
        "answer": "The tower was completed in 1889.",
        "contexts": ["The tower was completed in 1889."],
        "is_answerable_label": True,
    },
    {
        "question": "Who designed the lift?",
        "answer": "The documents do not say.",
        "contexts": ["The tower was completed in 1889."],
        "is_answerable_label": False,
    },
    {
        "question": "How tall is it?",
        "answer": "I could not find it, but it may be 300 metres.",
        "contexts": ["The tower was completed in 1889."],
        "is_answerable_label": False,
    },
]
REFUSAL_METRICS = ["answer_refusal", "answerability_accuracy"]


@pytest.fixture(scope="module")
def server() -> Iterator[TestServer]:
    with TestServer() as srv:
        yield srv


def _settings(server: TestServer, cache: Path) -> ragmeter.Settings:
    return ragmeter.Settings(
        judge="openai:test-model", base_url=server.base_url, cache_path=str(cache)
    )


def test_the_refusal_is_read_in_the_same_analysis_call_as_the_claims(server, tmp_path) -> None:
    server.reset()
    alone = ragmeter.evaluate(
        ROWS, ["faithfulness"], settings=_settings(server, tmp_path / "a.db"), progress=False
    )
    claims_only = server.stats()["analyze_calls"]
    server.reset()
    both = ragmeter.evaluate(
        ROWS,
        ["faithfulness", *REFUSAL_METRICS],
        settings=_settings(server, tmp_path / "b.db"),
        progress=False,
    )
    assert server.stats()["analyze_calls"] == claims_only == len(ROWS)
    assert both["faithfulness"] == alone["faithfulness"]
    assert both["answer_refusal"] == [0.0, 1.0, 0.5]
    assert both["answerability_accuracy"] == [1.0, 1.0, 0.0]
    details = both.rows[1].details["answer_refusal"]
    assert details["kind"] == "refusal" and details["method"] == "llm"
    assert details["prompt"]["id"] == "ragmeter.analyze"
    assert "The documents do not say." in both.rows[1].reasons["answer_refusal"]


def test_a_python_judge_gives_the_reading_and_without_one_the_rules_read(tmp_path) -> None:
    judge = FakeJudge(analyze=Analysis(refusal="refusal", refusal_quote="I cannot say."))
    read = ragmeter.evaluate(ROWS[:1], REFUSAL_METRICS, judge=judge, progress=False)
    assert read["answer_refusal"] == [1.0]  # the judge's reading, not the rules' (an answer)
    assert read["answerability_accuracy"] == [0.0]
    assert judge.analyze_requests[0].wants == frozenset({"refusal"})
    no_reading = FakeJudge(analyze=Analysis(answer_claims=("Something.",)))
    silent = ragmeter.evaluate(ROWS[1:2], REFUSAL_METRICS, judge=no_reading, progress=False)
    assert silent["answer_refusal"] == [1.0]
    assert "gave no reading" in silent.rows[0].details["answer_refusal"]["method"]


def test_a_reply_without_the_reading_is_refused_and_the_schema_names_the_kinds() -> None:
    request = AnalyzeRequest(question="q", answer="a", wants=frozenset({"refusal"}))
    with pytest.raises(ReplyInvalid, match="refusal and refusal_quote"):
        parse_analyze('{"refusal_quote": ""}', request)
    with pytest.raises(ReplyInvalid, match="does not match the schema"):
        parse_analyze('{"refusal": "maybe", "refusal_quote": ""}', request)
    parsed = parse_analyze('{"refusal": "partial", "refusal_quote": " I am not sure "}', request)
    assert (parsed.refusal, parsed.refusal_quote) == ("partial", "I am not sure")
    props = analyze_schema(frozenset({"refusal"}))["properties"]
    assert props["refusal"]["enum"] == ["answer", "refusal", "partial"]
