"""The settings' options are made from the table of settings (``cli/options.py``): a command
names the settings it takes and gets their values, each made the setting's."""

from __future__ import annotations

from typing import Any

import typer
from typer.testing import CliRunner

from ragmeter.cli.options import flags_of, with_settings
from ragmeter.settings import DEFAULT_DEADLINE, Settings, setting_info


def _command(names: tuple[str, ...]) -> tuple[typer.Typer, list[dict[str, Any]]]:
    """An app with one command that takes ``names`` as options and records their values."""
    app = typer.Typer()
    seen: list[dict[str, Any]] = []

    @app.command()
    @with_settings(names, into="values")
    def run(label: str = "x", values: dict[str, Any] | None = None) -> None:
        seen.append({"label": label, **(values or {})})

    @app.command()
    def other() -> None:  # two commands: typer keeps the command's name
        """Nothing."""

    return app, seen


def test_defaults_are_the_settings_defaults_and_make_a_default_settings() -> None:
    names = ("timeout", "use_cache", "deadline", "cache_path", "criteria", "workers")
    app, seen = _command(names)
    result = CliRunner().invoke(app, ["run"])
    assert result.exit_code == 0, result.output
    values = {k: v for k, v in seen[0].items() if k != "label"}
    assert values == {
        "timeout": 60.0,
        "use_cache": True,
        "deadline": DEFAULT_DEADLINE,
        "cache_path": None,
        "criteria": None,
        "workers": None,
    }
    assert Settings(**values) == Settings()


def test_an_options_value_is_made_the_settings() -> None:
    app, seen = _command(("use_cache", "deadline", "cache_path", "max_no_reply"))
    argv = ["run", "--no-cache", "--deadline", "0", "--cache", "c.sqlite", "--max-no-reply", "3"]
    result = CliRunner().invoke(app, [*argv, "--label", "y"])
    assert result.exit_code == 0, result.output
    assert seen == [
        {
            "label": "y",
            "use_cache": False,
            "deadline": None,  # 0: no deadline
            "cache_path": "c.sqlite",
            "max_no_reply": 3,
        }
    ]


def test_help_shows_the_tables_flag_metavar_and_help() -> None:
    app, _ = _command(("max_no_reply",))
    result = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "200"})
    info = setting_info("max_no_reply")
    assert result.exit_code == 0
    assert "--max-no-reply" in result.output and info.metavar in result.output
    assert info.help.split(";")[0] in " ".join(result.output.split())


def test_flags_of_names_each_settings_flag() -> None:
    assert flags_of(["use_cache", "cache_path", "timeout"]) == {
        "use_cache": "--no-cache",
        "cache_path": "--cache",
        "timeout": "--timeout",
    }
