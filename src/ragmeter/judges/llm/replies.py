"""What a chat endpoint's reply says, read defensively: the message text, token counts,
whether an error refuses the response format (then the judge asks in the next of
:data:`MODES`), an error's message, and a text with the key taken out."""

from __future__ import annotations

import json
import re
from typing import Any

from ragmeter.io.redact import redact

__all__ = [
    "MODES",
    "error_message",
    "format_refused",
    "redact_key",
    "reply_text",
    "token_count",
]

#: The response formats asked for, strictest first; a refusal steps down to the next.
MODES = ("json_schema", "json_object_schema", "json_object", "none")


def redact_key(text: str, secret: str | None) -> str:
    """``text`` without URL credentials, any 8+ character run of a known key or ``secret``,
    or anything shaped like an OpenAI key."""
    return re.sub(r"sk-[A-Za-z0-9_\-*.]{6,}", "sk-***", redact(text, [secret]))


def token_count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def reply_text(response: Any) -> str:
    """The first choice's message text of a chat completion body ("" when absent)."""
    if not isinstance(response, dict):
        return ""
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return ""
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) else ""


def format_refused(status: int, message: str) -> bool:
    """Whether an error answers the response format (then the next mode is tried): a 400/422
    about it, or a 500 naming the ``response_format`` field, as llama-cpp-python's server
    answers a type it does not know (its request validation error, wrapped as a 500)."""
    if status in (400, 422):
        return about_format(message)
    return status == 500 and "response_format" in message


#: Words by which a 400/422 names the response format: its field, its types, or the field
#: spelled out. A bare "format" or "schema" is not enough: "messages[3].content: invalid format"
#: is about a message, and stepping down would lose structured output for the whole run.
FORMAT_WORDS = re.compile(r"response[_ ]format|json_schema|json_object", re.IGNORECASE)


def about_format(message: str) -> bool:
    """Whether a 400/422 complains about the response format (then JSON mode is tried)."""
    return FORMAT_WORDS.search(message) is not None


def error_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        return json.dumps(body)[:300]
    return str(getattr(exc, "message", exc))[:300]
