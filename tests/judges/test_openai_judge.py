"""The OpenAI-compatible judge through the real HTTP path, against the local test server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragmeter.cache import JudgeCache
from ragmeter.errors import ConfigError, JudgeError, JudgeReplyError, param_names
from ragmeter.io.transport.retry_policy import RetryPolicy
from ragmeter.judges.base import AnalyzeRequest, ClaimBlock
from ragmeter.judges.llm.openai_judge import OpenAIJudge
from ragmeter.testing.server import TestServer
from ragmeter.types import Usage

ALL_WANTS = frozenset({"answer_claims", "reference_claims", "entities", "questions"})

REQUEST = AnalyzeRequest(
    question="Who patented the telephone?",
    answer="Alexander Graham Bell patented the telephone in 1876. He lived in Boston.",
    references=("Bell received the telephone patent in 1876.", "Bell patented it."),
    contexts=("Bell lived in Boston in 1876.", "Meucci worked in New York."),
    wants=ALL_WANTS,
)

FAST = RetryPolicy(max_retries=3, base_delay=0.01, max_delay=0.05)


@pytest.fixture(scope="module")
def server() -> Iterator[TestServer]:
    with TestServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _clean(server: TestServer) -> None:
    server.configure(
        latency=0.0,
        fault_rate=0.0,
        fault_on_calls=(),
        faults=("429", "500", "503", "hang", "drop", "malformed", "wrong_count"),
        reject_json_schema=False,
        reject_json_schema_status=400,
        retry_after=0.05,
        hang_seconds=5.0,
    )
    server.reset()


def make(server: TestServer, tmp_path: Path, **kw) -> OpenAIJudge:
    kw.setdefault("cache", JudgeCache(tmp_path / "cache.sqlite3"))
    kw.setdefault("retry_policy", FAST)
    kw.setdefault("usage", Usage())
    return OpenAIJudge(kw.pop("model", "test-model"), base_url=server.base_url, **kw)


def run(coro):
    return asyncio.run(coro)


async def _analyze_and_close(judge: OpenAIJudge, request: AnalyzeRequest = REQUEST):
    try:
        return await judge.analyze(request)
    finally:
        await judge.aclose()


def test_analyze_returns_every_wanted_part_aligned_with_the_input(server, tmp_path) -> None:
    judge = make(server, tmp_path)
    analysis = run(_analyze_and_close(judge))
    assert analysis.answer_claims == (
        "Alexander Graham Bell patented the telephone in 1876.",
        "He lived in Boston.",
    )
    assert len(analysis.reference_claims) == 2
    assert len(analysis.context_entities) == 2
    assert "Boston" in analysis.context_entities[0]
    assert len(analysis.questions) == 3 and analysis.noncommittal is False
    assert analysis.meta["prompt"]["id"] == "ragmeter.analyze"
    assert len(analysis.meta["prompt"]["hash"]) == 16


def test_only_the_fields_the_wanted_parts_need_are_sent(server, tmp_path) -> None:
    judge = make(server, tmp_path)
    small = AnalyzeRequest(
        question=REQUEST.question,
        answer=REQUEST.answer,
        references=REQUEST.references,
        contexts=REQUEST.contexts,
        wants=frozenset({"answer_claims"}),
    )
    analysis = run(_analyze_and_close(judge, small))
    assert analysis.context_entities == () and analysis.questions == ()
    full_tokens = server.stats()["prompt_tokens"]
    server.reset()
    run(_analyze_and_close(make(server, tmp_path / "other")))
    assert server.stats()["prompt_tokens"] > full_tokens


def test_verify_checks_each_claim_against_its_block_premises_in_one_call(server, tmp_path) -> None:
    judge = make(server, tmp_path)
    blocks = [
        ClaimBlock(
            ("Bell lived in Boston.", "Meucci worked in Paris."),
            ("Bell lived in Boston in 1876.", "Meucci worked in New York."),
        ),
        ClaimBlock(("Meucci worked in New York.",), ("Meucci worked in New York.",)),
        ClaimBlock((), ("unused premise",)),
    ]

    async def go():
        try:
            return await judge.verify(blocks)
        finally:
            await judge.aclose()

    result = run(go())
    assert result.matrices == (((True, False), (False, False)), ((True,),), ())
    assert server.stats()["verify_calls"] == 1


def test_usage_counts_calls_and_tokens_as_the_server_reports_them(server, tmp_path) -> None:
    usage = Usage()
    judge = make(server, tmp_path, usage=usage, price_in=2.0, price_out=8.0)
    run(_analyze_and_close(judge))
    stats = server.stats()
    assert usage.calls == stats["chat_calls"] == 1
    assert usage.prompt_tokens == stats["prompt_tokens"] > 100
    assert usage.completion_tokens == stats["completion_tokens"] > 10
    expected = (usage.prompt_tokens * 2.0 + usage.completion_tokens * 8.0) / 1e6
    assert usage.cost == pytest.approx(expected)


def test_rerun_with_the_same_cache_makes_zero_server_calls(server, tmp_path) -> None:
    first = run(_analyze_and_close(make(server, tmp_path)))
    assert server.stats()["chat_calls"] == 1
    usage = Usage()
    again = run(_analyze_and_close(make(server, tmp_path, usage=usage)))
    assert server.stats()["chat_calls"] == 1
    assert usage.cache_hits == 1 and usage.calls == 0
    assert again.answer_claims == first.answer_claims
    assert again.meta["cached"] is True


def test_another_model_or_judge_id_never_reuses_a_cached_reply(server, tmp_path) -> None:
    run(_analyze_and_close(make(server, tmp_path)))
    run(_analyze_and_close(make(server, tmp_path, model="other-model")))
    run(_analyze_and_close(make(server, tmp_path, judge_id="test-model@q4")))
    assert server.stats()["chat_calls"] == 3
    assert make(server, tmp_path).describe()["judge_id"] == "test-model"


def test_an_empty_judge_id_is_refused(server, tmp_path) -> None:
    with pytest.raises(ConfigError, match="judge_id is empty"):
        make(server, tmp_path, judge_id=" ")


@pytest.mark.parametrize("status", [400, 500])
def test_a_refused_json_schema_falls_back_once_to_json_mode_with_the_schema(
    server, tmp_path, status
) -> None:
    # 500 is llama-cpp-python's answer (0.3.x): its validation error names response_format.
    server.configure(reject_json_schema=True, reject_json_schema_status=status)
    usage = Usage()
    judge = make(server, tmp_path, cache=None, usage=usage)

    async def go():
        try:
            await judge.analyze(REQUEST)
            await judge.verify([ClaimBlock(("Bell lived in Boston.",), ("Bell lived in Boston.",))])
        finally:
            await judge.aclose()

    run(go())
    stats = server.stats()
    assert stats["rejected_formats"] == 1
    assert stats["chat_calls"] == 2
    assert stats["formats"] == {"json_schema": 1, "json_object+schema": 2}
    assert usage.calls == 3 and usage.retries == 0 and usage.failures == 0
    assert judge.describe()["response_format"] == "json_object_schema"


def test_concurrent_refusals_of_json_schema_step_down_one_mode_only(server, tmp_path) -> None:
    server.configure(reject_json_schema=True, reject_json_schema_status=500, latency=0.05)
    judge = make(server, tmp_path, cache=None, max_concurrency=4)
    requests = [
        AnalyzeRequest(
            question=None,
            answer=f"Bell lived in Boston in {1870 + i}.",
            wants=frozenset({"answer_claims"}),
        )
        for i in range(6)
    ]

    async def go():
        try:
            return await asyncio.gather(*(judge.analyze(r) for r in requests))
        finally:
            await judge.aclose()

    analyses = run(go())
    assert [a.answer_claims for a in analyses] == [(r.answer,) for r in requests]
    # Up to 4 requests were in flight with json_schema; each refusal is one step at most.
    assert 1 <= server.stats()["rejected_formats"] <= 4
    assert judge.describe()["response_format"] == "json_object_schema"


def test_a_server_error_that_does_not_name_the_format_is_retried_not_stepped_down(
    server, tmp_path
) -> None:
    server.configure(fault_on_calls=(1,), faults=("500",))
    usage = Usage()
    judge = make(server, tmp_path, cache=None, usage=usage)
    run(_analyze_and_close(judge))
    assert usage.retries == 1
    assert server.stats()["formats"] == {"json_schema": 2}
    assert judge.describe()["response_format"] == "json_schema"


def test_an_invalid_reply_is_retried_once_with_the_problem_stated(server, tmp_path) -> None:
    server.configure(fault_on_calls=(1,), faults=("wrong_count",))
    usage = Usage()
    analysis = run(_analyze_and_close(make(server, tmp_path, usage=usage)))
    assert len(analysis.reference_claims) == 2
    assert server.stats()["chat_calls"] == 2
    assert usage.retries == 1 and usage.failures == 0


def test_two_invalid_replies_raise_judge_reply_error_and_cache_nothing(server, tmp_path) -> None:
    server.configure(fault_on_calls=(1, 2), faults=("malformed",))
    usage = Usage()
    judge = make(server, tmp_path, usage=usage)
    with pytest.raises(JudgeReplyError, match="not valid JSON"):
        run(_analyze_and_close(judge))
    assert usage.failures == 1
    assert len(judge.cache) == 0


def test_too_few_verdicts_are_never_turned_into_a_matrix(server, tmp_path) -> None:
    server.configure(fault_on_calls=(1, 2), faults=("wrong_count",))
    judge = make(server, tmp_path)

    async def go():
        try:
            await judge.verify([ClaimBlock(("a b c", "d e f"), ("a b c d e f",))])
        finally:
            await judge.aclose()

    with pytest.raises(JudgeReplyError, match="exactly 2 items"):
        run(go())


def test_429_waits_for_retry_after_then_succeeds(server, tmp_path) -> None:
    server.configure(fault_on_calls=(1,), faults=("429",), retry_after=0.4)
    usage = Usage()
    started = time.monotonic()
    run(_analyze_and_close(make(server, tmp_path, usage=usage)))
    assert time.monotonic() - started >= 0.4
    assert usage.retries == 1 and usage.calls == 2


@pytest.mark.parametrize("fault", ["500", "503", "drop"])
def test_server_errors_and_dropped_connections_are_retried(server, tmp_path, fault) -> None:
    server.configure(fault_on_calls=(1, 2), faults=(fault,))
    usage = Usage()
    analysis = run(_analyze_and_close(make(server, tmp_path, usage=usage)))
    assert analysis.answer_claims
    assert usage.retries == 2 and usage.calls == 3


def test_a_hang_past_the_timeout_is_retried(server, tmp_path) -> None:
    # A deadline well above an honest reply's time on a busy machine (pytest -n), well below
    # the hang's.
    server.configure(fault_on_calls=(1,), faults=("hang",), hang_seconds=6.0)
    usage = Usage()
    analysis = run(_analyze_and_close(make(server, tmp_path, usage=usage, timeout=2.0)))
    assert analysis.answer_claims and usage.retries == 1


def test_retries_are_bounded(server, tmp_path) -> None:
    server.configure(fault_rate=1.0, faults=("503",))
    usage = Usage()
    judge = make(server, tmp_path, usage=usage, retry_policy=RetryPolicy(2, 0.01, 0.02))
    with pytest.raises(JudgeError, match="HTTP 503"):
        run(_analyze_and_close(judge))
    assert server.stats()["chat_calls"] == 3 and usage.retries == 2


def test_other_4xx_fail_at_once_with_how_to_fix(server, tmp_path) -> None:
    judge = make(server, tmp_path, model="missing-model")
    with pytest.raises(JudgeError, match="HTTP 404.*model name"):
        run(_analyze_and_close(judge))
    assert server.stats()["chat_calls"] == 0  # refused before it counted as served


def test_a_rejected_key_is_reported_without_the_key(server, tmp_path) -> None:
    key = "sk-reject-0123456789abcdef"
    judge = make(server, tmp_path, api_key=key)
    with pytest.raises(JudgeError) as info:
        run(_analyze_and_close(judge))
    assert "401" in str(info.value) and key not in str(info.value)
    with pytest.raises(JudgeError) as info:
        run(judge.preflight())
    assert "OPENAI_API_KEY" in str(info.value) and key not in str(info.value)
    assert key not in repr(judge.describe())


def test_preflight_reports_an_unreachable_endpoint_with_the_fix(tmp_path) -> None:
    """The fix names the parameter as the caller spells it: ``base_url=`` in Python, the
    front end's name (the CLI's ``--base-url``) within its :func:`param_names`."""
    judge = OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", cache=None)
    with pytest.raises(JudgeError, match=r"Cannot reach.*fix base_url= / OPENAI_BASE_URL"):
        run(judge.preflight())
    cli = param_names({"base_url": "--base-url"})
    with cli, pytest.raises(JudgeError, match=r"Cannot reach.*fix --base-url / OPENAI_BASE_URL"):
        run(judge.preflight())


def test_preflight_requires_a_key_for_openai(tmp_path) -> None:
    judge = OpenAIJudge("gpt-4o-mini", cache=None)
    with pytest.raises(JudgeError, match="OPENAI_API_KEY"):
        run(judge.preflight())


def test_preflight_passes_against_a_local_server_without_key(server, tmp_path) -> None:
    run(make(server, tmp_path).preflight())
    assert server.stats()["model_calls"] == 1


def test_concurrency_limit_is_one_semaphore_counted_in_calls(tmp_path) -> None:
    own = TestServer(latency=0.3).start()  # no request left over from another test
    judge = make(own, tmp_path, cache=None, max_concurrency=4)

    async def go():
        try:
            blocks = [[ClaimBlock((f"claim {i} here",), (f"premise {i} here",))] for i in range(12)]
            await asyncio.gather(*(judge.verify(b) for b in blocks))
        finally:
            await judge.aclose()

    try:
        run(go())
        stats = own.stats()
    finally:
        own.stop()
    assert stats["chat_calls"] == 12
    assert stats["max_in_flight"] == 4


def test_bad_options_are_rejected_up_front() -> None:
    with pytest.raises(ConfigError, match="max_concurrency must be >= 1. Got 0"):
        OpenAIJudge("m", max_concurrency=0)
    with pytest.raises(ConfigError, match="price_in"):
        OpenAIJudge("m", price_in=-1)


class _SlowCommits(JudgeCache):
    """A cache whose commits lag (a loaded disk): each put waits, and records how many calls
    the judge had sent that no put had stored yet."""

    def __init__(self, path: Path, judge_usage: Usage) -> None:
        super().__init__(path)
        self.usage = judge_usage
        self.stored = 0
        self.unstored_calls: list[int] = []

    async def aput(self, key: str, reply: str, *, model: str, prompt: str) -> None:
        self.unstored_calls.append(self.usage.calls - self.stored)
        await asyncio.sleep(0.05)
        await super().aput(key, reply, model=model, prompt=prompt)
        self.stored += 1


def test_a_request_keeps_its_slot_until_its_reply_is_stored(server, tmp_path) -> None:
    """Calls answered and not yet in the cache are never more than max_concurrency, however
    late the commits: a run killed at any moment repeats at most that many calls (the bound
    tests/reliability/test_crash_resume.py checks with SIGKILL)."""
    usage = Usage()
    cache = _SlowCommits(tmp_path / "cache.sqlite3", usage)
    judge = make(server, tmp_path, cache=cache, usage=usage, max_concurrency=2)

    async def go():
        try:
            blocks = [[ClaimBlock((f"claim {i} here",), (f"premise {i} here",))] for i in range(12)]
            await asyncio.gather(*(judge.verify(b) for b in blocks))
        finally:
            await judge.aclose()

    run(go())
    assert cache.stored == usage.calls == 12
    assert max(cache.unstored_calls) <= 2, cache.unstored_calls
