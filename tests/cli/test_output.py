"""One exit-code table, one error printer, one NAME=VALUE parser for every command."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ragmeter.cli.output import parse_assignments
from ragmeter.errors import ConfigError

CLI = Path(__file__).resolve().parents[2] / "src" / "ragmeter" / "cli"


def test_exit_codes_and_error_lines_are_defined_in_one_module() -> None:
    """No command module defines an exit code or prints "Error:" itself: they import them
    from cli/output.py, so the codes and the wording cannot drift apart."""
    offenders = []
    for path in sorted(CLI.glob("*.py")):
        if path.name == "output.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                offenders += [f"{path.name}: {n}" for n in names if n.startswith("EXIT_")]
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and (node.value.startswith("Error:") or "]Error:" in node.value)
            ):
                offenders.append(f"{path.name}:{node.lineno}: prints Error: itself")
            if isinstance(node, ast.JoinedStr):
                text = "".join(v.value for v in node.values if isinstance(v, ast.Constant))
                if text.startswith("Error:") or "]Error:" in text:
                    offenders.append(f"{path.name}:{node.lineno}: prints Error: itself")
    assert offenders == []


def test_parse_assignments_names_the_option_and_the_item() -> None:
    assert parse_assignments(["a=1", " b = x "], option="--x", example="a=1") == {
        "a": "1",
        "b": "x",
    }
    for bad in ("a", "=1", "a="):
        with pytest.raises(ConfigError, match=rf"Bad --gate '{bad}': expected NAME=VALUE"):
            parse_assignments([bad], option="--gate", example="f=0.8")


@pytest.mark.parametrize(
    "args",
    [
        ["report", "missing.jsonl"],
        ["label", "missing.jsonl", "--sample", "1", "--out", "x.html"],
        ["calibrate", "missing.jsonl", "--labels", "l.jsonl"],
        ["evaluate", "missing.jsonl", "-m", "k_precision"],
    ],
)
def test_every_command_words_an_error_the_same_way(args, tmp_path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from ragmeter.cli import app

    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    assert res.output.lstrip().startswith("Error: "), res.output
