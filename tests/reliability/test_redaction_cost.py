"""Redaction takes time linear in the text (issue 29, item 5).

A URL's scheme is found only where a scheme can start: after a character that cannot be part
of one. Before, the URL patterns tried a match at every letter of a long token, each attempt
reading to the token's end (``redact('http://h ' + 'y' * 40000)`` took 3 s; 1 MB half an hour,
on the event loop). These tests check that property of every URL pattern of the redaction
code, and that long texts around URLs come back unchanged apart from their credentials.
"""

from __future__ import annotations

import pytest

from ragmeter.io import redact as io_redact
from ragmeter.io.redact import redact

PATTERNS = {
    "io.redact URL": io_redact._URL,
    "io.redact URL userinfo": io_redact._URL_USERINFO,
}


@pytest.mark.parametrize("name", PATTERNS)
@pytest.mark.parametrize("run", ["y" * 200, "a." * 100, "x-1+" * 50])
def test_a_url_pattern_never_starts_inside_a_run_of_scheme_characters(name: str, run: str) -> None:
    pattern = PATTERNS[name]
    text = f"{run}://user:pw@host/v1"
    assert pattern.match(text, 0) is not None  # the whole run is the scheme
    for pos in range(1, len(run)):
        assert pattern.match(text, pos) is None, (name, pos)


def test_a_url_after_a_long_token_keeps_its_text_and_loses_its_password() -> None:
    token = "y" * 1_000_000
    assert redact("http://h " + token) == "http://h " + token
    assert redact(f"{token} see https://u:secret123@host/v1 ok") == (
        f"{token} see https://u:***@host/v1 ok"
    )


def test_display_redaction_keeps_a_long_dotted_token_and_hides_url_credentials() -> None:
    token = "a." * 500_000
    text = f"{token}://u:secret123@host/x {token}"
    assert io_redact.redact_everywhere(text, env=[]) == f"{token}://***@host/x {token}"
