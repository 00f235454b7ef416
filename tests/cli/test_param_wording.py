"""Errors name what the caller gave (issue 30): a Python caller reads the parameter
(``timeout=``, "the 'workers' setting"), a command-line user the flag (``--timeout``).

Lower layers word their messages through :func:`ragmeter.errors.param` (and
:func:`~ragmeter.errors.keyword`); the ``evaluate`` command maps the names to its flags with
``param_names(EVALUATE_FLAGS)``. Each case below runs once through the Python API and once
through the command.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import click
import pytest
import typer
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.cli.evaluate import EVALUATE_FLAGS
from ragmeter.errors import ConfigError, JudgeUnavailableError, MissingColumnError
from ragmeter.settings import Settings
from ragmeter.testing.server import TestServer

ROW = {
    "question": "Where is Paris?",
    "answer": "Paris is in France.",
    "contexts": ["Paris is in France."],
}


def one_row(tmp_path: Path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps(ROW) + "\n")
    return path


def evaluate_cli(*args: str) -> tuple[int, str]:
    """``ragmeter evaluate ARGS``: the exit code and the output, its lines joined."""
    res = CliRunner().invoke(app, ["evaluate", *args])
    return res.exit_code, " ".join(res.output.split())


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on: every connection is refused."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    sock.close()
    return port


def test_every_flag_the_mapping_names_is_an_option_of_evaluate() -> None:
    command = typer.main.get_command(app)
    evaluate = command.get_command(click.Context(command), "evaluate")  # type: ignore[attr-defined]
    assert evaluate is not None
    options = {opt for p in evaluate.params for opt in (*p.opts, *p.secondary_opts)}
    flags = {v.split()[0] for v in EVALUATE_FLAGS.values() if v.startswith("--")}
    assert flags and flags <= options, flags - options
    # Each setting with a flag of its own name is mapped (a new one is not forgotten).
    for field in Settings.__dataclass_fields__:
        if f"--{field.replace('_', '-')}" in options:
            assert EVALUATE_FLAGS.get(field) == f"--{field.replace('_', '-')}", field


@pytest.mark.parametrize(
    ("field", "value", "python", "flag"),
    [
        ("workers", "0", "The 'workers' setting must be an integer >= 1", "--workers must be"),
        ("timeout", "0", "The 'timeout' setting must be a number of seconds > 0", "--timeout must"),
        ("max_no_reply", "-1", "The 'max_no_reply' setting must be", "--max-no-reply must be"),
    ],
)
def test_a_settings_error_names_the_setting_in_python_and_the_flag_on_the_command_line(
    tmp_path: Path, field: str, value: str, python: str, flag: str
) -> None:
    with pytest.raises(ConfigError) as info:
        Settings(**{field: int(value)})
    assert python in str(info.value) and "--" not in str(info.value)
    code, output = evaluate_cli(
        str(one_row(tmp_path)), "-m", "k_precision", f"--{field.replace('_', '-')}", value
    )
    assert code == 2 and flag in output, output
    assert f"'{field}' setting" not in output


def test_an_unreachable_judge_names_base_url_in_python_and_the_flag_on_the_command_line(
    tmp_path: Path,
) -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    data = one_row(tmp_path)
    settings = Settings(judge="openai:m", base_url=base_url, use_cache=False)
    with pytest.raises(JudgeUnavailableError) as info:
        ragmeter.evaluate(data, ["faithfulness"], settings=settings, progress=False)
    assert "fix base_url= / OPENAI_BASE_URL" in str(info.value)
    assert "--" not in str(info.value)
    code, output = evaluate_cli(
        str(data), "-m", "faithfulness", "--judge", "openai:m", "--base-url", base_url, "--no-cache"
    )
    assert code == 2 and "fix --base-url / OPENAI_BASE_URL" in output, output


@pytest.mark.timeout(120)
def test_a_silent_judge_names_timeout_in_python_and_the_flags_on_the_command_line(
    tmp_path: Path,
) -> None:
    data = one_row(tmp_path)
    # Every chat call is dropped unanswered; two in a row stop the run.
    with TestServer(faults=("drop",), fault_on_calls=tuple(range(1, 100))) as server:
        settings = Settings(
            judge="openai:m", base_url=server.base_url, use_cache=False, max_no_reply=2
        )
        with pytest.raises(JudgeUnavailableError) as info:
            ragmeter.evaluate(data, ["faithfulness"], settings=settings, progress=False)
        server.reset()
        code, output = evaluate_cli(
            str(data),
            "-m",
            "faithfulness",
            "--judge",
            "openai:m",
            "--base-url",
            server.base_url,
            "--no-cache",
            "--max-no-reply",
            "2",
        )
    assert "gave no reply to 2 requests in a row" in str(info.value)
    assert "raise timeout= or max_no_reply=" in str(info.value)
    assert "Pass out=PATH to keep the rows scored" in str(info.value)
    assert code == 2 and "raise --timeout or --max-no-reply" in output, output
    assert "Pass --out to keep the rows scored" in output, output


def test_an_embedder_without_a_key_names_base_url_in_python_and_the_flag_on_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    data = one_row(tmp_path)
    with pytest.raises(ConfigError) as info:
        ragmeter.evaluate(
            data, ["response_relevancy"], settings=Settings(embedder="openai:m"), progress=False
        )
    assert "point base_url= at a local OpenAI-compatible server" in str(info.value)
    code, output = evaluate_cli(
        str(data), "-m", "response_relevancy", "--embedder", "openai:m", "--no-cache"
    )
    assert code == 2 and "point --base-url at a local OpenAI-compatible server" in output, output


def test_a_missing_column_names_column_map_in_python_and_the_flag_on_the_command_line(
    tmp_path: Path,
) -> None:
    data = one_row(tmp_path)
    with pytest.raises(MissingColumnError) as info:
        ragmeter.evaluate(data, ["mrr"], progress=False)
    assert "Map it with column_map={'contexts_ids': COLUMN}" in str(info.value)
    code, output = evaluate_cli(str(data), "-m", "mrr")
    assert code == 2 and "Map it with --column contexts_ids=COLUMN" in output, output


def test_the_ray_engines_worker_count_names_num_workers_in_python_and_workers_on_the_cli(
    tmp_path: Path,
) -> None:
    from ragmeter.engines import RayEngine

    data = one_row(tmp_path)
    with pytest.raises(ConfigError, match="The 'num_workers' option must be >= 1. Got 0"):
        ragmeter.evaluate(data, ["k_precision"], engine=RayEngine(num_workers=0))  # no Ray yet
    out = str(tmp_path / "o.jsonl")
    code, output = evaluate_cli(
        str(data), "-m", "k_precision", "--engine", "ray", "--workers", "0", "-o", out
    )
    assert code == 2 and "--workers must be >= 1. Got 0" in output, output


def test_the_labelling_page_names_metric_in_python_and_the_flag_on_the_command_line(
    tmp_path: Path,
) -> None:
    from ragmeter.report.labels.page import build_label_page

    results = tmp_path / "r.jsonl"
    results.write_text('{"index": 0, "scores": {"mrr": 1.0}}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="Name the metric to label with metric;"):
        build_label_page(results, sample=2)
    res = CliRunner().invoke(
        app, ["label", str(results), "--sample", "2", "--out", str(tmp_path / "p.html")]
    )
    output = " ".join(res.output.split())
    assert res.exit_code == 2 and "Name the metric to label with --metric;" in output, output
