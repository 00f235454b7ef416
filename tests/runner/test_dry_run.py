"""``--dry-run`` plans what a run would do and cost, with no judge call and no connection
(issue 26, part 4): its call count is the real run's, its tokens within 10 % of the usage the
server reports, and a cached rerun plans no call to make."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragmeter import evaluate
from ragmeter.cli import app
from ragmeter.config.criteria import Criterion
from ragmeter.errors import ModelUnavailableError
from ragmeter.runner.dry_run import ESTIMATE, plan_run
from ragmeter.settings import Settings
from ragmeter.testing.server import TestServer

METRICS = [
    "noise_sensitivity_relevant",
    "faithfulness",
    "context_entity_recall",
    "response_relevancy",
    "claim_recall",
]
CRITERIA = (
    Criterion(name="cites_policy", question='Does the answer cite "policy R-12"?'),
    Criterion(name="tone", question="How courteous?", levels={"curt": "Cold.", "warm": "Kind."}),
)


def rows(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        out.append(
            {
                "question": f"Where did person {i} work in {1900 + i}?",
                "answer": f"Person {i} worked in Paris in {1900 + i}. They later moved to Rome.",
                "reference_answers": [f"Person {i} worked in Paris in {1900 + i}."],
                "contexts": [
                    f"In {1900 + i} person {i} worked in Paris at the institute.",
                    "The weather was cold that winter.",
                ],
            }
        )
    out.append({"question": "Empty?", "answer": "", "reference_answers": ["x"], "contexts": []})
    return out


def settings_for(server: TestServer | None, tmp_path: Path, **more: Any) -> Settings:
    base_url = server.base_url if server is not None else "http://127.0.0.1:9/v1"
    return Settings(
        judge="openai:test-model",
        base_url=base_url,
        embedder="openai:test-embed",
        cache_path=str(tmp_path / "cache.sqlite3"),
        criteria=CRITERIA,
        **more,
    )


def test_the_plan_has_the_real_runs_calls_and_tokens_and_then_finds_them_cached(
    tmp_path: Path,
) -> None:
    data = rows(12)
    with TestServer() as server:
        settings = settings_for(server, tmp_path, price_in=2.0, price_out=8.0)
        plan = plan_run(data, METRICS, settings=settings)
        assert server.stats()["chat_calls"] == 0 and server.stats()["embedding_calls"] == 0
        assert not (tmp_path / "cache.sqlite3").exists()
        result = evaluate(data, METRICS, settings=settings, progress=False)
        stats = server.stats()
    assert plan.rows == len(data)
    assert plan.judge_calls == {"cached": 0, "to_make": stats["chat_calls"]}
    assert plan.judge_calls["to_make"] == result.usage.calls
    planned = plan.prompt_tokens["to_make"]
    assert abs(planned - stats["prompt_tokens"]) <= 0.10 * stats["prompt_tokens"]
    assert plan.tokenizer == ESTIMATE and plan.estimated_tokens
    cost = plan.cost
    assert cost is not None and cost > 0
    assert cost == pytest.approx((planned * 2.0 + plan.completion_tokens["to_make"] * 8.0) / 1e6)
    assert plan.seconds > 0
    assert set(plan.metrics) == {*METRICS, "cites_policy", "tone"}
    assert set(plan.metrics.values()) == {"run"}
    again = plan_run(data, METRICS, settings=settings)
    assert again.judge_calls == {"cached": result.usage.calls, "to_make": 0}
    assert again.prompt_tokens["to_make"] == 0 and again.cost == 0.0 and again.seconds == 0.0


def test_the_plan_opens_no_connection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        opened.append(args)
        raise OSError("no connection in a dry run")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    plan = plan_run(rows(3), METRICS, settings=settings_for(None, tmp_path))
    assert opened == []
    # analyze, verify and criteria for each full row, and the empty row's
    assert plan.calls_by_prompt()["ragmeter.criteria"] == {"cached": 0, "to_make": 4}
    assert plan.calls_by_prompt()["ragmeter.verify"]["to_make"] >= 3


def test_the_offline_judge_plans_no_call_and_says_which_criteria_are_skipped(
    tmp_path: Path,
) -> None:
    plan = plan_run(rows(2), ["faithfulness"], settings=Settings(criteria=CRITERIA))
    assert plan.judge_calls == {"cached": 0, "to_make": 0} and plan.cost is None
    assert plan.metrics["faithfulness"] == "run"
    assert "cannot judge criteria" in plan.metrics["cites_policy"]
    assert plan.note is not None and "not OpenAI-compatible" in plan.note


def test_auto_mode_lists_metrics_skipped_for_missing_columns(tmp_path: Path) -> None:
    data = [{"question": "Q?", "answer": "A.", "contexts": ["C."]}]
    plan = plan_run(data, settings=settings_for(None, tmp_path))
    assert plan.metrics["claim_recall"] == "no column for reference_answers"
    assert plan.metrics["faithfulness"] == "run"


def test_the_cli_prints_one_json_object(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows(3)), encoding="utf-8")
    args = ["evaluate", str(path), "-m", "faithfulness", "--judge", "openai:test-model"]
    args += ["--base-url", "http://127.0.0.1:9/v1", "--cache", str(tmp_path / "c.sqlite3")]
    done = CliRunner().invoke(app, [*args, "--dry-run", "--json"])
    assert done.exit_code == 0, done.output
    plan = json.loads(done.stdout)
    assert {"rows", "metrics", "judge_calls", "prompt_tokens", "cost", "seconds"} <= set(plan)
    assert plan["rows"] == 4 and plan["metrics"] == {"faithfulness": "run"}
    assert plan["judge_calls"] == {"cached": 0, "to_make": 6}
    text = CliRunner().invoke(app, [*args, "--dry-run"])
    assert text.exit_code == 0 and "6 to make, 0 cached" in text.stdout
    alone = CliRunner().invoke(app, [*args, "--json"])
    assert alone.exit_code != 0 and "--dry-run" in alone.output


class _Encoding:
    name = "fake_bpe"

    def encode(self, text: str, disallowed_special: Any = ()) -> list[int]:
        return list(range(len(text)))  # one token a character: unlike the estimate


def test_tokens_are_the_judges_tokenizers_when_it_loads_without_the_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys
    import types

    fake = types.ModuleType("tiktoken")
    fake.encoding_for_model = lambda model: _Encoding()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tiktoken", fake)
    data = rows(2)
    plan = plan_run(data, ["faithfulness"], settings=settings_for(None, tmp_path))
    assert plan.tokenizer == "tiktoken:fake_bpe" and not plan.estimated_tokens
    estimated = plan_run(data, ["faithfulness"], settings=Settings(judge="offline"))
    assert estimated.tokenizer == ESTIMATE

    def fetches(model: str) -> Any:  # as tiktoken does for an encoding not on disk
        socket.create_connection(("example.org", 443))

    reached: list[Any] = []

    def connect(*args: Any, **kwargs: Any) -> Any:
        reached.append(args)
        raise OSError("no network in tests")

    monkeypatch.setattr(socket, "create_connection", connect)
    fake.encoding_for_model = fetches  # type: ignore[attr-defined]
    plan = plan_run(data, ["faithfulness"], settings=settings_for(None, tmp_path))
    assert plan.tokenizer == ESTIMATE and plan.estimated_tokens
    assert reached == []  # the tokenizer's fetch met the shut network, not the socket


def test_the_plan_skips_what_the_run_skips_answer_reward_without_torch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37, item 4: with torch "not installed" the dry run said answer_reward runs while
    the run skipped it; both now skip it with the same reason."""
    from ragmeter.models import _runtime

    monkeypatch.setattr(_runtime, "not_installed", lambda modules: list(modules))
    data = tmp_path / "d.jsonl"
    data.write_text(
        "".join(
            json.dumps({"question": f"Who wrote book {i}?", "answer": f"Author {i} wrote it."})
            + "\n"
            for i in range(3)
        ),
        encoding="utf-8",
    )
    settings = Settings(cache_path=str(tmp_path / "cache.sqlite3"))
    planned = plan_run(data, settings=settings)
    result = evaluate(data, settings=settings)
    assert "needs torch and transformers" in planned.metrics["answer_reward"]
    assert planned.metrics["answer_reward"] == result.info["skipped"]["answer_reward"]
    assert {name for name, what in planned.metrics.items() if what == "run"} == set(result.summary)
    assert {k: v for k, v in planned.metrics.items() if v != "run"} == result.info["skipped"]
    # Asked for by name, the run stops on it (exit 2 from the CLI); so does the plan.
    with pytest.raises(ModelUnavailableError, match="needs torch and transformers"):
        plan_run(data, ["answer_reward"], settings=settings)
