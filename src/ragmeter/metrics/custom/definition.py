"""``@ragmeter.metric``: a function of a :class:`~ragmeter.types.Sample` becomes a metric.

The function (sync or ``async``) returns a float in the declared range, a
:class:`~ragmeter.types.Score`, or ``None`` (undefined for that row). It is registered under
its name when decorated and returned unchanged, so it stays callable as written; the run
scores it through :mod:`ragmeter.metrics.custom.family` with the guarantees of every metric
(:func:`outcome_of`): an exception, NaN, an infinity, a value outside the range or of
another type becomes a failure of that row naming the metric, and the run goes on.

>>> import ragmeter
>>> @ragmeter.metric(name="answer_is_short", needs=("answer",))
... def answer_is_short(sample):
...     return 1.0 if len(sample.answer.split()) <= 20 else 0.0
>>> answer_is_short.__ragmeter_metric__.spec.requires
('answer',)
>>> from ragmeter.metrics import registry
>>> registry.undefine("answer_is_short")
"""

from __future__ import annotations

import hashlib
import inspect
import json
import marshal
import math
import numbers
import re
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ragmeter.errors import ConfigError, cap_text, did_you_mean
from ragmeter.metrics import registry
from ragmeter.types import FIELDS, Failure, MetricSpec, Sample, Score

__all__ = ["PythonMetric", "metric", "outcome_of"]

F = TypeVar("F", bound=Callable[..., Any])

#: A metric name: the registry key, the CLI value and the results column.
_NAME = re.compile(r"[a-z][a-z0-9_]*")


@dataclass(frozen=True, slots=True)
class PythonMetric:
    """A metric defined in Python: its spec and the function that scores one sample."""

    spec: MetricSpec
    function: Callable[[Sample], Any]
    #: The module that defined it: a name defined again from it replaces the metric.
    module: str

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.function)


def metric(
    name: str | None = None,
    *,
    needs: Sequence[str] | str,
    higher_is_better: bool = True,
    description: str | None = None,
    optional: Sequence[str] = (),
    lower: float = 0.0,
    upper: float = 1.0,
    version: str | None = None,
) -> Callable[[F], F]:
    """Make ``function(sample)`` a metric named ``name`` (default: the function's name).

    Parameters
    ----------
    name : str, optional
        snake_case, not a name of ragmeter's own metrics.
    needs : sequence of str
        The sample fields the metric reads (``"answer"``, ``"contexts"``, ...): a row
        without one of them fails for this metric, and without ``metrics=`` the metric runs
        only on data that has them all.
    higher_is_better : bool
        The direction that summaries, gates, reports and comparisons read.
    description : str, optional
        One line for ``ragmeter metrics`` and the run record (default: the docstring's first
        line).
    optional : sequence of str
        Fields read when present but not required.
    lower, upper : float
        The range every score must lie in (default [0, 1]).
    version : str, optional
        What a resumed run (``resume=True``) checks to tell whether the metric changed since
        its results file was written: change it when the scores change. Default: a hash of
        the decorated function's source (with its decorator), so any edit of it is a change;
        declare a version when the scores depend on code outside it (helpers, a model file).

    Returns the function unchanged, with the metric at ``function.__ragmeter_metric__``.
    """
    required = _fields(needs, "needs")
    extra = _fields(optional, "optional")
    if not isinstance(higher_is_better, bool):
        raise ConfigError(
            f"higher_is_better of @ragmeter.metric must be True or False. Got {higher_is_better!r}."
        )
    if version is not None and (not isinstance(version, str) or not version.strip()):
        raise ConfigError(
            f"version of @ragmeter.metric must be a non-empty string. Got {version!r}."
        )
    if not all(_is_real(x) and math.isfinite(x) for x in (lower, upper)) or lower >= upper:
        raise ConfigError(
            f"lower and upper of @ragmeter.metric must be finite numbers with lower < upper. "
            f"Got lower={lower!r}, upper={upper!r}."
        )

    def decorate(function: F) -> F:
        if not callable(function):
            raise ConfigError(
                f"@ragmeter.metric decorates a function of a sample. Got {function!r}."
            )
        metric_name = function.__name__ if name is None else name
        if not isinstance(metric_name, str) or not _NAME.fullmatch(metric_name):
            raise ConfigError(
                f"A metric name is snake_case (lower-case letters, digits, '_', starting with "
                f"a letter). Got {metric_name!r}; pass name='...' to @ragmeter.metric."
            )
        doc = inspect.getdoc(function) or ""
        where = f"{function.__module__}.{function.__qualname__}"
        spec = MetricSpec(
            metric_name,
            registry.PYTHON_FAMILY,
            required,
            description or (doc.splitlines()[0] if doc else f"Python metric {where}."),
            higher_is_better=higher_is_better,
            lower=float(lower),
            upper=float(upper),
            optional=extra,
            version=version if version is not None else source_version(function),
        )
        defined = PythonMetric(spec, function, function.__module__)
        registry.define(spec, defined)
        function.__ragmeter_metric__ = defined  # type: ignore[attr-defined]
        return function

    return decorate


def source_version(function: Callable[..., Any]) -> str:
    """``"source sha256:HEX"``: the hash of ``function``'s source text (a callable object's
    class's), or of its compiled code where no source can be read (a function defined in a
    REPL)."""
    digest = hashlib.sha256()
    for target in (function, type(function)):
        try:
            digest.update(inspect.getsource(target).encode("utf-8"))
        except (OSError, TypeError):
            continue
        break
    else:
        code = getattr(function, "__code__", None)
        named = f"{type(function).__module__}.{type(function).__qualname__}"
        digest.update(marshal.dumps(code) if code is not None else named.encode("utf-8"))
    return f"source sha256:{digest.hexdigest()[:16]}"


def outcome_of(metric: PythonMetric, value: Any) -> Score | Failure:
    """What a Python metric's return ``value`` records: a score in range, an undefined score,
    or a failure that says what came back and what is expected."""
    spec = metric.spec
    name = spec.name
    if value is None:
        return Score.undefined(f"{name} returned None: undefined for this row.")
    if isinstance(value, Score):
        if value.value is not None and not spec.lower <= value.value <= spec.upper:
            return Failure(name, f"{name} returned {_range_problem(spec, value.value)}")
        problem = _unwritable(value)
        if problem is not None:
            return Failure(
                name,
                f"{name} returned a Score whose {problem}. Details are a dict of JSON values "
                "(text keys; text, numbers, lists and dicts, no cycle).",
            )
        return value
    if isinstance(value, bool) or not _is_real(value):
        shown = cap_text(repr(value), 200)
        return Failure(
            name,
            f"{name} returned {type(value).__name__} {shown}; a metric returns a float in "
            f"[{spec.lower:g}, {spec.upper:g}], a ragmeter.Score, or None (undefined).",
        )
    number = float(value)
    if math.isnan(number):
        return Failure(
            name,
            f"{name} returned NaN; return None (or Score(None, reason=...)) for a row where "
            "the metric is undefined.",
        )
    if not spec.lower <= number <= spec.upper:
        return Failure(name, f"{name} returned {_range_problem(spec, number)}")
    return Score(number)


def failure_of(metric: PythonMetric, exc: BaseException) -> Failure:
    """A failure for an exception raised by ``metric``'s function: its type, its message and
    the line that raised it."""
    frames = traceback.extract_tb(exc.__traceback__)
    at = ""
    if frames:
        last = frames[-1]
        at = f" (at {Path(last.filename).name}, line {last.lineno}, in {last.name})"
    try:
        message = str(exc) or "(no message)"
    except Exception:  # an exception whose __str__ raises
        message = "(its message could not be read)"
    return Failure(
        metric.spec.name, cap_text(f"{metric.spec.name} raised {type(exc).__name__}: {message}{at}")
    )


def _unwritable(score: Score) -> str | None:
    """What of ``score`` cannot be written to a results line (its details or reason), or
    None. Checked as the row writer writes (``default=str``): a value JSON has no type for is
    written as text, but a key that is not text or a number, or a cycle, cannot be."""
    details = score.details
    if details is not None and not isinstance(details, Mapping):
        return f"details are a {type(details).__name__}, not a dict"
    if score.reason is not None and not isinstance(score.reason, str):
        return f"reason is a {type(score.reason).__name__}, not text"
    try:
        json.dumps(details, default=str)
    except (TypeError, ValueError, RecursionError) as exc:
        return f"details cannot be written to the results: {cap_text(str(exc), 200)}"
    return None


def _range_problem(spec: MetricSpec, value: float) -> str:
    return (
        f"{value!r}, outside its range [{spec.lower:g}, {spec.upper:g}]; return a value in "
        "the range, or declare another range with @ragmeter.metric(lower=..., upper=...)."
    )


def _fields(names: Sequence[str] | str, what: str) -> tuple[str, ...]:
    names = (names,) if isinstance(names, str) else tuple(names)
    for field_name in names:
        if field_name not in FIELDS:
            hint = did_you_mean(str(field_name), FIELDS)
            raise ConfigError(
                f"{what} of @ragmeter.metric names {field_name!r}, which is not a sample "
                f"field.{hint} Fields: {', '.join(FIELDS)}."
            )
    return names


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real)
