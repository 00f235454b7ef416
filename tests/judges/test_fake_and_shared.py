from __future__ import annotations

import asyncio

import pytest

from ragmeter.errors import ConfigError
from ragmeter.judges.base import Analysis, AnalyzeRequest, ClaimBlock, Judge
from ragmeter.judges.factory import make_judge
from ragmeter.judges.fake import FakeJudge, all_entailed, none_entailed
from ragmeter.judges.shared_analysis import SharedJudge
from ragmeter.metrics.base import Settings
from ragmeter.types import Usage

REQ = AnalyzeRequest(
    question="q?",
    answer="a.",
    references=("r.",),
    contexts=("c.",),
    wants=frozenset({"answer_claims"}),
)


def test_fake_judge_is_a_judge_and_records_requests() -> None:
    fake = FakeJudge(analyze=[Analysis(answer_claims=("x",)), Analysis()], verify=none_entailed)
    assert isinstance(fake, Judge)

    async def go():
        first = await fake.analyze(REQ)
        second = await fake.analyze(REQ)
        v = await fake.verify([ClaimBlock(("x", "y"), ("p",))])
        return first, second, v

    first, second, v = asyncio.run(go())
    assert first.answer_claims == ("x",) and second.answer_claims == ()
    assert v.matrices == (((False,), (False,)),)
    assert fake.analyze_requests == [REQ, REQ] and fake.calls == 3
    with pytest.raises(RuntimeError, match="ran out"):
        asyncio.run(fake.analyze(REQ))


def test_fake_judge_scripts_can_be_callables_or_errors() -> None:
    fake = FakeJudge(
        analyze=lambda r: Analysis(answer_claims=(r.answer,)), verify=ValueError("boom")
    )
    assert asyncio.run(fake.analyze(REQ)).answer_claims == ("a.",)
    with pytest.raises(ValueError, match="boom"):
        asyncio.run(fake.verify([]))
    with pytest.raises(RuntimeError, match="no analyze script"):
        asyncio.run(FakeJudge().analyze(REQ))
    assert all_entailed([ClaimBlock(("a",), ("p", "q"))]).matrices == (((True, True),),)


def test_shared_judge_sends_one_widened_request_for_all_families() -> None:
    fake = FakeJudge(analyze=lambda r: Analysis(answer_claims=("x",), questions=("q",)))
    shared = SharedJudge(fake)
    shared.register(["answer_claims", "reference_claims"])
    shared.register(["questions"])
    shared.register(["entities"])

    async def go():
        a = AnalyzeRequest("q?", "a.", ("r.",), ("c.",), wants=frozenset({"answer_claims"}))
        b = AnalyzeRequest("q?", "a.", ("r.",), ("c.",), wants=frozenset({"questions"}))
        c = AnalyzeRequest("q?", "a.", ("r.",), ("c.",), wants=frozenset({"entities"}))
        return await asyncio.gather(shared.analyze(a), shared.analyze(b), shared.analyze(c))

    results = asyncio.run(go())
    assert len(fake.analyze_requests) == 1
    assert fake.analyze_requests[0].wants == {
        "answer_claims",
        "reference_claims",
        "entities",
        "questions",
    }
    assert results[0] is results[1] is results[2]


def test_shared_judge_widens_only_to_parts_the_fields_allow() -> None:
    fake = FakeJudge(analyze=Analysis())
    shared = SharedJudge(fake)
    shared.register(["answer_claims", "reference_claims", "entities", "questions"])
    request = AnalyzeRequest(None, "a.", (), (), wants=frozenset({"answer_claims"}))
    asyncio.run(shared.analyze(request))
    assert fake.analyze_requests[0].wants == {"answer_claims"}


def test_shared_judge_forgets_failed_requests() -> None:
    fake = FakeJudge(analyze=[RuntimeError("down"), Analysis(answer_claims=("x",))])
    shared = SharedJudge(fake)
    with pytest.raises(RuntimeError):
        asyncio.run(shared.analyze(REQ))
    assert asyncio.run(shared.analyze(REQ)).answer_claims == ("x",)


def test_factory_builds_each_kind_and_rejects_unknown(tmp_path, monkeypatch) -> None:
    fake = FakeJudge()
    judge = make_judge(Settings(judge=fake), Usage())
    assert isinstance(judge, SharedJudge) and judge.inner is fake
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    judge = make_judge(Settings(judge="openai:gpt-x", cache_path=str(tmp_path / "c")), Usage())
    assert judge.name == "openai:gpt-x"
    described = judge.describe()
    assert described["endpoint"] == "http://127.0.0.1:1/v1"
    assert "sk-test-not-real" not in repr(described)
    assert make_judge(Settings(judge="openai:m", use_cache=False), Usage()).inner.cache is None
    with pytest.raises(ConfigError, match="Unknown judge 'gpt-4'"):
        make_judge(Settings(judge="gpt-4"), Usage())
    with pytest.raises(ConfigError, match="must be 'offline'"):
        make_judge(Settings(judge=42), Usage())
    with pytest.raises(ConfigError, match=">= 1"):
        make_judge(Settings(judge=fake, max_concurrency=0), Usage())
