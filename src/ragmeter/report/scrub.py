"""Remove secrets from anything a report shows.

Three nets, applied together:

- values of mapping keys that name a secret (``api_key``, ``token``, ``secret``,
  ``authorization``, ``password``, ``credential``) are replaced when they are strings;
- any text equal to, or containing, the value of an environment variable whose name names a
  secret (``OPENAI_API_KEY``, ``HF_TOKEN``...) is replaced;
- strings shaped like keys (``sk-...``, ``Bearer ...``, ``?api_key=...`` in URLs, passwords
  in URL user info) are replaced.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["REDACTED", "scrub", "scrub_text"]

REDACTED = "[redacted]"
_SECRET_KEY = re.compile(r"key|token|secret|authori[sz]ation|password|passwd|credential", re.I)
_SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|AUTH|PASSWORD|PASSWD|CREDENTIAL", re.I)
_PATTERNS = (
    re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{12,}"),
    re.compile(r"\bhf_[A-Za-z0-9]{20,}"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{8,}"),
)
_URL_QUERY = re.compile(
    r"(?i)([?&](?:api[_-]?key|key|token|access_token|secret|sig|signature|password)=)[^&#\s\"']+"
)
#: ``scheme://user:password@``: the scheme starts after a character no scheme has and the
#: user and password are bounded, so the time is linear in the text (see ``io.redact._URL``).
_URL_USERINFO = re.compile(
    r"(?i)(?<![a-z0-9+.\-])([a-z][a-z0-9+.\-]*://)[^/\s@:]{1,512}:[^/\s@]{1,512}@"
)
#: Environment values shorter than this are not treated as secrets (too many false hits).
_MIN_ENV_SECRET = 6


def _env_secrets() -> list[str]:
    values = {
        v
        for k, v in os.environ.items()
        if _SECRET_ENV.search(k) and len(v) >= _MIN_ENV_SECRET and not v.isdigit()
    }
    # Longest first, so that a secret containing another is replaced whole.
    return sorted(values, key=len, reverse=True)


def scrub_text(text: str, *, env: list[str] | None = None) -> str:
    """``text`` with anything that looks like a secret replaced by ``[redacted]``."""
    for value in _env_secrets() if env is None else env:
        if value in text:
            text = text.replace(value, REDACTED)
    for pattern in _PATTERNS:
        text = pattern.sub(REDACTED, text)
    text = _URL_QUERY.sub(lambda m: m.group(1) + REDACTED, text)
    return _URL_USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", text)


def scrub(obj: Any, *, keep_keys: frozenset[str] = frozenset({"prompts"})) -> Any:
    """A copy of ``obj`` (JSON-like) without secrets.

    String values under a secret-sounding key are replaced; numbers and booleans are kept
    (``max_tokens`` is not a secret). Subtrees under ``keep_keys`` (prompt ids -> hashes) skip
    the key rule but not the text rules.
    """
    env = _env_secrets()

    def walk(value: Any, *, by_key: bool) -> Any:
        if isinstance(value, Mapping):
            out: dict[str, Any] = {}
            for k, v in value.items():
                key = str(k)
                if (
                    by_key
                    and _SECRET_KEY.search(key)
                    and not isinstance(v, bool | int | float | type(None))
                ):
                    out[scrub_text(key, env=env)] = REDACTED
                else:
                    out[scrub_text(key, env=env)] = walk(v, by_key=by_key and key not in keep_keys)
            return out
        if isinstance(value, list | tuple):
            return [walk(v, by_key=by_key) for v in value]
        if isinstance(value, str):
            return scrub_text(value, env=env)
        return value

    return walk(obj, by_key=True)
