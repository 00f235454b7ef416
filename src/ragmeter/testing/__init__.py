"""Helpers for users' test suites."""

from ragmeter.testing.assertions import assert_scores

__all__ = ["assert_scores"]
