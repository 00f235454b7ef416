"""Settings are checked once, where they are made (issue 18: one home, one message)."""

from __future__ import annotations

import dataclasses

import pytest

from ragmeter.errors import ConfigError
from ragmeter.metrics.base import Settings as ReExported
from ragmeter.settings import Settings


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("max_concurrency", 0, "'max_concurrency' setting must be >= 1. Got 0"),
        ("batch_size", 0, "'batch_size' setting must be >= 1"),
        ("timeout", 0.0, "'timeout' setting must be a number of seconds > 0"),
        ("timeout", float("inf"), "'timeout' setting must be a number of seconds > 0"),
        ("max_retries", -1, "'max_retries' setting must be >= 0"),
        ("max_reply_bytes", 0, "'max_reply_bytes' setting must be >= 1"),
        ("max_claims", 0, "'max_claims' setting must be >= 1"),
        ("ks", (1, 0), "'ks' setting must hold integers >= 1"),
    ],
)
def test_a_bad_value_is_refused_where_the_settings_are_made(field, value, message):
    with pytest.raises(ConfigError, match=message):
        Settings(**{field: value})
    with pytest.raises(ConfigError, match=message):
        dataclasses.replace(Settings(), **{field: value})


def test_metrics_base_re_exports_the_same_class():
    assert ReExported is Settings
    assert Settings().max_concurrency == 16


# -- the table of settings (issue 39): one description each, from which the rest is made -------


def test_every_setting_is_in_the_table_with_its_help():
    from ragmeter.settings import settings_table

    table = settings_table()
    assert list(table) == [item.name for item in dataclasses.fields(Settings)]
    assert all(info.help for info in table.values())


def test_each_flag_of_the_table_is_an_option_of_evaluate_with_the_tables_help():
    import click
    import typer

    from ragmeter.cli import app
    from ragmeter.settings import setting_flags, setting_info

    command = typer.main.get_command(app)
    evaluate = command.get_command(click.Context(command), "evaluate")  # type: ignore[attr-defined]
    options = {opt: p for p in evaluate.params for opt in p.opts}
    for name, flag in setting_flags().items():
        assert flag in options, flag
        assert options[flag].help == setting_info(name).help, flag


def test_the_settings_that_change_scores_are_the_tables():
    from ragmeter.runner.resume import SCORING_SETTINGS
    from ragmeter.settings import scoring_settings

    assert SCORING_SETTINGS.keys() == scoring_settings().keys()
    assert set(SCORING_SETTINGS) == {
        "judge",
        "judge_id",
        "verifier",
        "verifier_label",
        "verifier_threshold",
        "embedder",
        "response_relevancy_n",
        "relevance_model",
        "relevance_dtype",
        "reward_model",
        "criteria",
        "repeats",
    }
    assert "max_concurrency" not in SCORING_SETTINGS and "timeout" not in SCORING_SETTINGS


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_concurrency", 0),
        ("timeout", float("nan")),
        ("max_no_reply", -1),
        ("max_reply_bytes", 0),
        ("max_claims", 0),
        ("price_in", -1.0),
    ],
)
def test_the_openai_judge_refuses_a_bad_limit_with_the_settings_words(field, value):
    from ragmeter.judges.llm.openai_judge import OpenAIJudge

    with pytest.raises(ConfigError) as made:
        Settings(**{field: value})
    with pytest.raises(ConfigError) as judged:
        OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", **{field: value})
    # The same check: the words after the name are the same.
    python = f"The {field!r} setting "
    assert str(made.value).startswith(python)
    assert str(judged.value) == f"{field} " + str(made.value).removeprefix(python)


def test_check_options_names_the_option_as_the_caller_does():
    from ragmeter.errors import param_names
    from ragmeter.settings import check_options

    check_options(timeout=1.0, max_no_reply=0, workers=None)  # fine values pass
    with param_names({"timeout": "--timeout"}), pytest.raises(ConfigError) as info:
        check_options(timeout=0)
    assert str(info.value) == "--timeout must be a number of seconds > 0. Got 0."
