"""Credentials never leave the process: not in results, run records, failure reasons or stderr.

Two rules, applied to any text about to be written or printed:

- In a URL, the password of ``user:password@`` and the value of a query parameter named like a
  credential (``api-key``, ``key``, ``token``, ``sig``, ...) become ``***``.
- Any run of 8 or more characters of a known secret becomes ``***``, so a server that echoes a
  part of a key ("Incorrect API key provided: sk-abc...1234") does not get it into results.
  So does any run of 16 base64 characters of a known secret's base64 form, at whichever byte
  it starts (an echoed ``Authorization: Basic ...`` header, a key inside an encoded token).

Known secrets are ``OPENAI_API_KEY``, the credentials in ``OPENAI_BASE_URL``, and whatever was
passed to :func:`register_secret` (the judge registers its key and its base URL's credentials).
With no known secret and no URL in a text, ``redact`` returns it unchanged at the cost of a
substring test.

What a person reads (the HTML report, the labelling page) gets two more nets on top,
:func:`redact_everywhere` and :func:`redact_tree`: the whole value of any environment variable
whose name names a secret (``HF_TOKEN``, ``AWS_SECRET_ACCESS_KEY``...), strings shaped like keys
(``sk-...``, ``hf_...``, ``Bearer ...``, ``?token=...`` in URLs, URL user info), and the string
values of mapping keys that name a secret. Every rule masks with the same ``***``.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = [
    "MASK",
    "MIN_SECRET_PART",
    "redact",
    "redact_everywhere",
    "redact_tree",
    "redact_url",
    "redact_value",
    "register_secret",
    "secret_env_values",
    "strip_credentials",
]

#: The shortest run of a secret's characters that is redacted wherever it appears.
MIN_SECRET_PART = 8
#: Secrets shorter than this are only redacted inside URLs (a 3-letter password would
#: otherwise blank out every word that contains it).
_MIN_SECRET = 4
MASK = "***"
#: The run of a secret's base64 form that is masked (a base64 text is only ever matched
#: at its 4-character groups, so any echo of 19 or more of its characters is caught).
_BASE64_PART = 16

_CREDENTIAL_PARAM = re.compile(
    r"(?i)^(api[-_]?key|key|token|access[-_]?token|auth|authorization|secret|client[-_]?secret"
    r"|password|passwd|pwd|sig|signature|x-api-key|subscription[-_]?key)$"
)
#: A URL; its scheme starts only after a character no scheme has, so that each character of a
#: long token is read by at most one attempt (unanchored, every letter of a token started an
#: attempt that read to its end: quadratic time).
_URL = re.compile(r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>`]+")

_registered: set[str] = set()


def url_secrets(url: str | None) -> list[str]:
    """The credentials a URL carries: its password and credential-like query values."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return []
    found = [password] if password else []
    if password:  # as an HTTP client would send it: Basic base64(user:password)
        found.append(f"{parts.username or ''}:{password}")
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if _is_credential(k)]
    return [s for s in found if s]


def _is_credential(name: str) -> bool:
    return bool(_CREDENTIAL_PARAM.match(name.strip()))


def redact_url(url: str) -> str:
    """``url`` with its password and credential query values replaced by ``***``."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url
    netloc = parts.netloc
    if password is not None:
        userinfo, _, host = netloc.rpartition("@")
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:{MASK}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(_is_credential(k) for k, _ in pairs):
            query = urlencode([(k, MASK if _is_credential(k) else v) for k, v in pairs], safe="*")
    if netloc == parts.netloc and query == parts.query:
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def strip_credentials(url: str) -> str:
    """``url`` without its ``user:password@`` part.

    An HTTP client given a URL with credentials sends them as ``Authorization: Basic
    base64(user:password)``, in place of the Bearer key: a server then sees (and may echo) the
    password instead of the key. Callers send the key as a Bearer token and strip the rest.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def register_secret(*values: str | None) -> None:
    """Make ``values`` (keys, passwords) known secrets for the rest of the process."""
    for value in values:
        if value and len(value) >= _MIN_SECRET:
            _registered.add(value)


def known_secrets() -> frozenset[str]:
    env = _env_secrets(os.environ.get("OPENAI_API_KEY"), os.environ.get("OPENAI_BASE_URL"))
    return env | frozenset(_registered) if _registered else env


@lru_cache(maxsize=8)
def _env_secrets(key: str | None, base_url: str | None) -> frozenset[str]:
    return frozenset(s for s in (key, *url_secrets(base_url)) if s and len(s) >= _MIN_SECRET)


@lru_cache(maxsize=32)
def _windows(secrets: frozenset[str]) -> tuple[str, ...]:
    """The substrings whose every occurrence is masked: each secret's 8-character runs (a
    shorter secret whole)."""
    out: set[str] = set()
    for secret in secrets:
        if len(secret) <= MIN_SECRET_PART:
            out.add(secret)
        else:
            out.update(
                secret[i : i + MIN_SECRET_PART] for i in range(len(secret) - MIN_SECRET_PART + 1)
            )
        for form in _base64_forms(secret):
            out.update(
                form[i : i + _BASE64_PART] for i in range(0, len(form) - _BASE64_PART + 1, 4)
            )
    return tuple(sorted(out))


def _base64_forms(secret: str) -> set[str]:
    """The characters of ``secret``'s base64 encoding (standard and URL-safe) that do not
    depend on the bytes around it, for each of the three positions it may start at in a
    group: ``base64("user:" + password)`` holds one of them whole."""
    raw = secret.encode("utf-8")
    forms: set[str] = set()
    for shift, lead in ((0, 0), (1, 2), (2, 3)):
        size = shift + len(raw)
        text = base64.b64encode(b"\0" * shift + raw).decode("ascii")[lead : size // 3 * 4]
        if len(text) >= _BASE64_PART:
            forms.add(text)
            forms.add(text.replace("+", "-").replace("/", "_"))
    return forms


def redact(
    text: str, extra: Iterable[str | None] = (), *, secrets: frozenset[str] | None = None
) -> str:
    """``text`` without URL credentials or any 8+ character run of a known secret (``extra``
    adds secrets for this call; ``secrets`` replaces :func:`known_secrets`)."""
    if "://" in text:
        text = _URL.sub(lambda m: redact_url(m.group()), text)
    if secrets is None:
        secrets = known_secrets()
    more = {s for s in extra if s and len(s) >= _MIN_SECRET}
    if more:
        secrets = secrets | more
    if not secrets:
        return text
    windows = [w for w in _windows(secrets) if w in text]
    if not windows:
        return text
    masked = bytearray(len(text))
    for window in windows:
        start = text.find(window)
        while start != -1:
            masked[start : start + len(window)] = b"\x01" * len(window)
            start = text.find(window, start + 1)
    out: list[str] = []
    i = 0
    while i < len(text):
        if masked[i]:
            while i < len(text) and masked[i]:
                i += 1
            out.append(MASK)
        else:
            j = masked.find(1, i)
            j = len(text) if j == -1 else j
            out.append(text[i:j])
            i = j
    return "".join(out)


def redact_value(value: Any, *, secrets: frozenset[str] | None = None) -> Any:
    """``value`` with :func:`redact` applied to every string in it (dicts, lists, tuples)."""
    if secrets is None:
        secrets = known_secrets()
    if isinstance(value, str):
        return redact(value, secrets=secrets)
    if isinstance(value, dict):
        return {k: redact_value(v, secrets=secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v, secrets=secrets) for v in value]
    return value


# What a person reads: the report and the labelling page.

_SECRET_KEY = re.compile(r"key|token|secret|authori[sz]ation|password|passwd|credential", re.I)
_SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|AUTH|PASSWORD|PASSWD|CREDENTIAL", re.I)
_KEY_SHAPES = (
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
#: user and password are bounded, so the time is linear in the text (as :data:`_URL`).
_URL_USERINFO = re.compile(
    r"(?i)(?<![a-z0-9+.\-])([a-z][a-z0-9+.\-]*://)[^/\s@:]{1,512}:[^/\s@]{1,512}@"
)
#: Environment values shorter than this are not treated as secrets (too many false hits).
_MIN_ENV_SECRET = 6


def secret_env_values() -> list[str]:
    """Values of environment variables whose name names a secret, longest first (so that a
    secret containing another is replaced whole)."""
    values = {
        v
        for k, v in os.environ.items()
        if _SECRET_ENV.search(k) and len(v) >= _MIN_ENV_SECRET and not v.isdigit()
    }
    return sorted(values, key=len, reverse=True)


def redact_everywhere(text: str, *, env: list[str] | None = None) -> str:
    """:func:`redact`, then every secret environment value (``env``, default
    :func:`secret_env_values`) and every key-shaped string masked with ``***``."""
    text = redact(text)
    for value in secret_env_values() if env is None else env:
        if value in text:
            text = text.replace(value, MASK)
    for pattern in _KEY_SHAPES:
        text = pattern.sub(MASK, text)
    text = _URL_QUERY.sub(lambda m: m.group(1) + MASK, text)
    return _URL_USERINFO.sub(lambda m: m.group(1) + MASK + "@", text)


def redact_tree(obj: Any, *, keep_keys: frozenset[str] = frozenset({"prompts"})) -> Any:
    """A copy of ``obj`` (JSON-like) with :func:`redact_everywhere` on every string and the
    string values under a secret-sounding key masked (numbers and booleans are kept:
    ``max_tokens`` is not a secret). Subtrees under ``keep_keys`` (prompt ids -> hashes) skip
    the key rule but not the text rules."""
    env = secret_env_values()

    def walk(value: Any, *, by_key: bool) -> Any:
        if isinstance(value, Mapping):
            out: dict[str, Any] = {}
            for k, v in value.items():
                key = str(k)
                secret_key = by_key and _SECRET_KEY.search(key)
                if secret_key and not isinstance(v, bool | int | float | type(None)):
                    out[redact_everywhere(key, env=env)] = MASK
                else:
                    sub = by_key and key not in keep_keys
                    out[redact_everywhere(key, env=env)] = walk(v, by_key=sub)
            return out
        if isinstance(value, list | tuple):
            return [walk(v, by_key=by_key) for v in value]
        if isinstance(value, str):
            return redact_everywhere(value, env=env)
        return value

    return walk(obj, by_key=True)
