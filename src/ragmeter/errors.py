"""The exception tree of ragmeter.

::

    RagmeterError
    ├── ConfigError            bad options: unknown metric, bad k, bad column_map
    ├── DataError              input that cannot be read at all (file, line, column)
    │   └── MissingColumnError a metric needs a column the dataset lacks entirely
    ├── UnknownMetricError     a metric asked of a run, result or comparison that lacks it
    │                          (also a ConfigError, a DataError and a KeyError)
    ├── JudgeError             a judge could not be reached or configured
    │   ├── JudgeReplyError    a judge reply failed validation after the retry
    │   └── JudgeUnavailableError  the judge refuses or cannot be reached: the run stops
    │                          (also an UnavailableError)
    ├── UnavailableError       what every row needs is gone: the run stops, rows kept
    │   ├── ModelCacheError    the model cache dir cannot be written (RAGMETER_CACHE_DIR)
    │   ├── OutputError        the results file or its run record cannot be written (a
    │   │                      full disk, a quota): the file is named
    │   └── DeadlineError      the run's deadline passed (Settings.deadline)
    ├── EndpointError          a model's HTTP endpoint (the embedder's) failed a request
    │   └── EndpointUnavailableError  it refuses or cannot be reached: the run stops
    │                          (also an UnavailableError)
    ├── ModelUnavailableError  a local model is not installed or not found on disk
    ├── MissingExtraError      an optional dependency is not installed (also an ImportError)
    └── CacheError             the cache file is corrupt or locked

Row-level problems are never raised out of a run: they become ``Failure`` records, each with
a cause (:func:`failure_cause`). Only an :class:`UnavailableError` stops a run: a
:class:`JudgeUnavailableError` (a refused key, an unknown model or route, an endpoint that no
longer accepts connections or keeps not answering) or a :class:`ModelCacheError` (a model cache
dir that cannot be written), an :class:`EndpointUnavailableError` (the embedder's endpoint,
likewise): every later row would fail the same way.

Errors name what the caller gave: a parameter as Python spells it (``out``, ``resume=True``,
``timeout=``), through :func:`param` and :func:`keyword`. A front end that calls the API with
its own names (the CLI's flags) says so with :func:`param_names` around the call; only it
knows them (the flags of ``Settings``' fields are in the table of settings,
:func:`ragmeter.settings.setting_flags`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

from ragmeter.types import FailureCause

#: The names a front end gives parameters (``{"out": "--out"}``), for the errors of its calls.
_PARAM_NAMES: ContextVar[Mapping[str, str] | None] = ContextVar(
    "ragmeter_param_names", default=None
)


def param(name: str, python: str | None = None) -> str:
    """How an error names the parameter ``name``: what the front end calling calls it (see
    :func:`param_names`), else ``python`` (``"resume=True"``), else ``name``."""
    names = _PARAM_NAMES.get()
    return names.get(name, python or name) if names else python or name


def current_param_names() -> dict[str, str]:
    """The names of the :func:`param_names` block this runs in (``{}`` outside any), for work
    sent to another process or thread that starts with a context of its own (Ray actors)."""
    return dict(_PARAM_NAMES.get() or {})


def keyword(name: str) -> str:
    """How an error names the keyword parameter ``name`` (a setting, an option): what the
    front end calling calls it (see :func:`param_names`), else ``name=`` (``timeout=``)."""
    return param(name, f"{name}=")


@contextmanager
def param_names(names: Mapping[str, str]) -> Iterator[None]:
    """Within this block (and the tasks it starts), errors name parameters as ``names`` say:
    the CLI passes ``{"out": "--out", "resume": "--resume", ...}``."""
    token = _PARAM_NAMES.set(names)
    try:
        yield
    finally:
        _PARAM_NAMES.reset(token)


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`` Did you mean 'a', 'b'?`` for up to three close names, or ``""`` when none is close."""
    close = difflib.get_close_matches(name, list(choices), n=3, cutoff=0.5)
    return f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""


class RagmeterError(Exception):
    """Root of every error ragmeter raises on purpose."""


class ConfigError(RagmeterError, ValueError):
    """An option or argument is invalid; raised before any work starts."""


class DataError(RagmeterError, ValueError):
    """Input data cannot be read."""


class MissingColumnError(DataError):
    """A requested metric needs a field that no column of the dataset provides."""


class UnknownMetricError(ConfigError, DataError, KeyError):
    """A metric was asked of a run, a result or a comparison that does not hold it.

    The name came from the caller (a :class:`ConfigError`), the run from the data (a
    :class:`DataError`), and ``result["name"]`` is a mapping lookup (a :class:`KeyError`):
    whichever of these a caller catches, it catches this. Made by :func:`unknown_metric`.
    """

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def unknown_metric(
    name: str, known: Iterable[str], *, where: str = "this run"
) -> UnknownMetricError:
    """The error for metric ``name`` missing from ``where``: close names, then those it has.

    Examples
    --------
    >>> print(unknown_metric("mrrr", ["mrr", "map"]))
    Metric 'mrrr' is not in this run. Did you mean 'mrr'? Metrics in this run: mrr, map.
    """
    known = list(known)
    return UnknownMetricError(
        f"Metric {name!r} is not in {where}.{did_you_mean(name, known)} "
        f"Metrics in {where}: {', '.join(known) or 'none'}."
    )


#: The most characters of an error's text kept in a message, a failure record or stderr: an
#: endpoint's error body (or an exception's text) can be megabytes.
MAX_ERROR_TEXT = 2000


def cap_text(text: str, limit: int = MAX_ERROR_TEXT) -> str:
    """``text`` cut to at most ``limit`` characters, saying how long it was.

    Examples
    --------
    >>> cap_text("abc")
    'abc'
    >>> cap_text("x" * 100, 40)
    'xxxxxxxx... [cut: 100 characters in all]'
    """
    if len(text) <= limit:
        return text
    note = f"... [cut: {len(text)} characters in all]"
    return text[: max(limit - len(note), 0)] + note


class UnavailableError(RagmeterError):
    """What every row needs is unavailable (the judge, an endpoint, the model cache dir): the
    run stops; the rows scored before are kept, the rows it caught are left for a resumed run."""


class ModelCacheError(UnavailableError):
    """The model cache dir cannot be written; the message names it and ``RAGMETER_CACHE_DIR``."""


class OutputError(UnavailableError):
    """The results file or its run record cannot be written (no space left, a quota, an I/O
    error): the run stops; the rows written before are kept for a resumed run."""


class DeadlineError(UnavailableError):
    """The run's deadline (``Settings.deadline``) passed: the run stops; the
    rows scored are kept, the others are left for a resumed run."""


class JudgeError(RagmeterError):
    """A judge is unreachable, misconfigured, or refused a request. Its message is cut to
    :data:`MAX_ERROR_TEXT` characters (an endpoint's error body can be megabytes)."""

    def __init__(self, message: object = "", *args: object) -> None:
        super().__init__(cap_text(str(message)), *args)


class EndpointError(RagmeterError):
    """A model's HTTP endpoint (the ``openai:MODEL`` embedder's) failed a request after its
    retries: the rows it was for fail, and a resumed run scores them again. ``status`` is the
    HTTP status it answered, None when no reply came. The message is cut to
    :data:`MAX_ERROR_TEXT` characters."""

    def __init__(self, message: object = "", *args: object, status: int | None = None) -> None:
        super().__init__(cap_text(str(message)), *args)
        self.status = status


class EndpointUnavailableError(EndpointError, UnavailableError):
    """A model's endpoint refused (HTTP 401, 403, 404), cannot be reached any more, or gave
    no reply to ``max_no_reply`` requests in a row; the run stops."""


class JudgeReplyError(JudgeError):
    """A judge reply did not validate against its schema or its input."""


class JudgeUnavailableError(JudgeError, UnavailableError):
    """The judge refused (HTTP 401, 403, 404) or cannot be reached any more; the run stops."""


class ModelUnavailableError(RagmeterError):
    """A local model is missing; the message says how to supply it."""


class MissingExtraError(RagmeterError, ImportError):
    """A feature needs an extra that is not installed; the message names the extra."""


def not_installed(modules: Iterable[str]) -> list[str]:
    """The ``modules`` that cannot be imported, found without importing any of them."""
    import importlib.util

    missing = []
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a parent package missing, or a broken entry
            found = False
        if not found:
            missing.append(module)
    return missing


def require_extra(extra: str, modules: Iterable[str], what: str) -> None:
    """Raise :class:`MissingExtraError` when a module ``what`` needs is not installed.

    Modules are looked up without being imported (so the check is cheap and runs before
    any work); the message names the missing modules and ``pip install 'ragmeter[extra]'``.
    """
    missing = not_installed(modules)
    if missing:
        raise MissingExtraError(
            f"{what} needs {' and '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} "
            f"not installed. Install it with: pip install 'ragmeter[{extra}]'"
        )


class CacheError(RagmeterError):
    """The judge cache cannot be used."""


#: Libraries whose exceptions mean an endpoint failed (the OpenAI SDK and its HTTP stack).
_CLIENT_LIBRARIES = ("openai", "httpx", "httpx2", "httpcore")


def failure_cause(exc: BaseException) -> FailureCause:
    """Why ``exc`` failed a row: ``"judge"`` for a judge reply that did not validate,
    ``"infrastructure"`` for a judge or model endpoint that failed (HTTP errors, timeouts,
    dropped connections), ``"row"`` for everything else (the row's data, a metric's limits).

    Failures caused by the judge or the infrastructure are retried by a resumed run.
    """
    if isinstance(exc, JudgeReplyError):
        return "judge"
    if (
        isinstance(exc, JudgeError | EndpointError | UnavailableError)
        or type(exc).__module__.split(".")[0] in _CLIENT_LIBRARIES
    ):
        return "infrastructure"
    return "row"
