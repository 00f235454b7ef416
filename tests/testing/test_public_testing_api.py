"""``ragmeter.testing`` exports the test doubles users' suites need, and says how to use them."""

from __future__ import annotations

import doctest

import ragmeter.testing


def test_every_export_is_importable_and_named_in_the_module_help():
    help_text = ragmeter.testing.__doc__ or ""
    for name in ragmeter.testing.__all__:
        assert getattr(ragmeter.testing, name) is not None
        assert name in help_text, f"{name} is exported but help(ragmeter.testing) never names it"
    assert {"FakeJudge", "assert_scores", "TestServer"} <= set(ragmeter.testing.__all__)


def test_the_module_help_example_runs():
    failed, attempted = doctest.testmod(ragmeter.testing)
    assert attempted > 0 and failed == 0
