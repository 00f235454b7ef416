"""What a judge's odd replies and errors turn into (issue 29, items 12, 13, 17): a reply nested
past any parser's depth is an invalid reply (asked again, then a judge failure), a 400 that is
not about ``response_format`` keeps structured output on, and prices and token counts that
cannot be real never make a cost.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.errors import ConfigError, JudgeError, JudgeReplyError
from ragmeter.judges.base import ClaimBlock
from ragmeter.judges.llm import schemas as S
from ragmeter.judges.llm.openai_judge import OpenAIJudge
from ragmeter.settings import Settings
from ragmeter.types import Usage

BLOCKS = [ClaimBlock(claims=("Paris is in France.", "Paris is big."), premises=("P1", "P2"))]
GOOD = json.dumps({"verdicts": [{"claim": 1, "entailed_by": [1]}, {"claim": 2, "entailed_by": []}]})
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


class _Answer400(BaseHTTPRequestHandler):
    """Answers every chat request 400 with ``message``; records the response formats sent."""

    message = ""
    formats: ClassVar[list[Any]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
        type(self).formats.append(body.get("response_format", {}).get("type"))
        payload = json.dumps({"error": {"message": self.message}}).encode()
        self.send_response(400)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def _serve_400(message: str) -> Iterator[tuple[str, list[Any]]]:
    handler = type("Answer400", (_Answer400,), {"message": message, "formats": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", handler.formats
    finally:
        httpd.shutdown()
        httpd.server_close()


async def _verify_and_close(judge: OpenAIJudge) -> Any:
    try:
        return await judge.verify(BLOCKS)
    finally:
        await judge.aclose()


def test_a_400_about_another_field_keeps_structured_output_on() -> None:
    with _serve_400("messages[3].content: invalid format") as (base_url, formats):
        judge = OpenAIJudge("m", base_url=base_url, usage=Usage())
        with pytest.raises(JudgeError, match="invalid format"):
            asyncio.run(_verify_and_close(judge))
        assert formats == ["json_schema"]
        assert judge.describe()["response_format"] == "json_schema"


def test_a_400_about_response_format_steps_down_once() -> None:
    message = "Invalid parameter: 'response_format' of type 'json_schema' is not supported."
    with _serve_400(message) as (base_url, formats):
        judge = OpenAIJudge("m", base_url=base_url, usage=Usage())
        with pytest.raises(JudgeError):
            asyncio.run(_verify_and_close(judge))
        assert formats[:2] == ["json_schema", "json_object"]


@pytest.mark.parametrize("price", [float("nan"), float("inf"), -1.0])
@pytest.mark.parametrize("name", ["price_in", "price_out"])
def test_a_price_that_is_not_a_finite_number_is_refused(name: str, price: float) -> None:
    with pytest.raises(ConfigError, match=f"'{name}'.*Got {price}"):
        Settings(**{name: price})
    with pytest.raises(ConfigError, match=name):
        OpenAIJudge("m", **{name: price})


def test_the_cli_refuses_a_nan_price_naming_the_flag(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"answer": "Paris.", "contexts": ["Paris."]}) + "\n")
    res = CliRunner().invoke(
        app, ["evaluate", str(data), "-m", "k_precision", "--price-in", "nan", "--no-progress"]
    )
    assert res.exit_code == 2, res.output
    assert "--price-in" in res.output and "nan" in res.output, res.output


def test_token_counts_no_model_could_use_are_left_out_and_flagged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    judge = OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", price_in=2.0, price_out=8.0)
    judge._record_tokens({"usage": {"prompt_tokens": 1000, "completion_tokens": 10}})
    judge._record_tokens({"usage": {"prompt_tokens": 10**30, "completion_tokens": 10}})
    usage = judge.usage
    assert (usage.prompt_tokens, usage.completion_tokens) == (1000, 10)
    assert usage.cost == pytest.approx(1000 * 2.0 / 1e6 + 10 * 8.0 / 1e6)
    assert usage.implausible_usage == 1
    assert usage.as_dict()["implausible_usage"] == 1
    assert str(10**30) in caplog.text and "not counted" in caplog.text, caplog.text
