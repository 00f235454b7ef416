"""Small things that cost trust (issue 28, item 8): JSON lines when piped, no "<bool>" in
help, one PASS line under -q, "too few rows" for intervals, a folded summary, the
answer_reward skip reason."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.metrics.registry import all_specs

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rag_sample.jsonl"
runner = CliRunner()


def _text(res) -> str:
    return " ".join(res.output.split())


def test_metrics_json_piped_prints_one_object_per_line():
    res = runner.invoke(app, ["metrics", "--json"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    records = [json.loads(line) for line in lines]
    assert all(isinstance(r, dict) for r in records)
    assert [r["name"] for r in records] == list(all_specs())


def _commands() -> list[list[str]]:
    import typer.main

    group = typer.main.get_command(app)
    return [[], *([name] for name in group.commands)]


@pytest.mark.parametrize("command", _commands(), ids=lambda c: " ".join(c) or "ragmeter")
def test_help_shows_no_type_beside_a_flag(command):
    res = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "<bool>" not in res.stdout
    assert re.search(r"--help\s+Show this message", res.stdout)


def test_a_passing_gate_with_quiet_prints_one_pass_line():
    res = runner.invoke(
        app, ["evaluate", str(EXAMPLE), "-m", "mrr", "--fail-under", "mrr=0.5", "-q"]
    )
    assert res.exit_code == 0, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert lines == ["PASS mrr: mean 0.8333 >= 0.5"]


def test_an_interval_from_two_rows_reads_too_few_rows(tmp_path):
    rows = [json.loads(line) for line in EXAMPLE.read_text().splitlines()[:2]]
    data = tmp_path / "two.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = runner.invoke(app, ["evaluate", str(data), "-m", "token_f1,mrr"])
    assert res.exit_code == 0, res.output
    table = [line for line in res.stdout.splitlines() if "token_f1" in line or "mrr" in line]
    assert len(table) == 2 and all("too few rows" in line for line in table)
    assert not re.search(r"\d\.\d{3}–\d\.\d{3}", res.stdout)


def test_a_constant_metric_reads_constant_not_too_few_rows():
    res = runner.invoke(app, ["evaluate", str(EXAMPLE), "-m", "exact_match,mrr"])
    assert res.exit_code == 0, res.output
    line = next(line for line in res.stdout.splitlines() if "exact_match" in line)
    assert "constant" in line and "too few rows" not in line


def test_a_gate_on_a_metric_left_out_of_metrics_is_refused_before_scoring(tmp_path, monkeypatch):
    import ragmeter

    def no_scoring(*args, **kwargs):
        raise AssertionError("the run started")

    monkeypatch.setattr(ragmeter, "evaluate", no_scoring)
    out = tmp_path / "r.jsonl"
    res = runner.invoke(
        app,
        [
            "evaluate",
            str(EXAMPLE),
            "-m",
            "k_precision",
            "--fail-under",
            "mrr=0.5",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 2, res.output
    text = _text(res)
    assert "--fail-under names mrr, which --metrics does not ask for (k_precision)" in text
    assert "-m k_precision,mrr" in text
    assert not out.exists()


def test_answer_reward_without_torch_names_the_extra_and_the_model_path(monkeypatch):
    from ragmeter.models import _runtime

    monkeypatch.setattr(_runtime, "not_installed", lambda modules: list(modules))
    res = runner.invoke(app, ["evaluate", str(EXAMPLE), "-m", "answer_reward"])
    assert res.exit_code == 2
    text = _text(res)
    assert "pip install 'ragmeter[lm]'" in text and "its path given as --reward-model" in text
