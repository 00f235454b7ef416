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
