"""The HTML report's writer: collects the page, scrubs and escapes every text from data."""

from __future__ import annotations

import html
from typing import Any

from ragmeter.io.redact import redact_everywhere, secret_env_values

__all__ = ["MAX_TEXT", "Writer", "num"]

MAX_TEXT = 1200


class Writer:
    """Collects HTML; ``t()`` scrubs secrets from a text from data and escapes it."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.env = secret_env_values()

    def t(self, value: Any, *, limit: int | None = MAX_TEXT) -> str:
        text = value if isinstance(value, str) else str(value)
        text = redact_everywhere(text, env=self.env)
        if limit is not None and len(text) > limit:
            text = f"{text[:limit]}… ({len(text) - limit} more characters)"
        return html.escape(text, quote=True)

    def add(self, *chunks: str) -> None:
        self.parts.extend(chunks)

    def html(self) -> str:
        return "".join(self.parts)


def num(x: float | None, digits: int = 3) -> str:
    """A number with ``digits`` decimals; "—" for ``None``."""
    return "—" if x is None else f"{x:.{digits}f}"
