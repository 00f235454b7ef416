"""The metric registry: a plain dict from metric name to its spec and family module.

Each family module listed in ``FAMILY_MODULES`` defines ``SPECS`` and ``build(ctx)``.
Family modules import heavy libraries lazily, so importing the registry stays cheap.

Metrics defined in Python (``@ragmeter.metric``, :mod:`ragmeter.metrics.custom`) join at run
time through :func:`define`: their family is ``python``, and the objects that score them are
kept here by name. Those of installed packages (the entry point group ``ragmeter.metrics``)
are loaded the first time the registry is read.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any

from ragmeter.errors import ConfigError, did_you_mean
from ragmeter.metrics.custom.entry_points import load_entry_points
from ragmeter.types import MetricSpec

#: The family of every metric defined in Python (``@ragmeter.metric``).
PYTHON_FAMILY = "python"
#: A metric as callers name it: its registry name, or a function decorated with
#: ``@ragmeter.metric``.
MetricRef = str | Callable[..., Any]
#: Family name -> module path. One line per family.
FAMILY_MODULES: dict[str, str] = {
    "lexical": "ragmeter.metrics.lexical",
    "retrieval": "ragmeter.metrics.retrieval",
    "claims": "ragmeter.metrics.claims",
    "entity_recall": "ragmeter.metrics.entity_recall",
    "response_relevancy": "ragmeter.metrics.response_relevancy",
    "context_relevance": "ragmeter.metrics.context_relevance",
    "answer_reward": "ragmeter.metrics.answer_reward",
    "answerability": "ragmeter.metrics.answerability",
    # The user's criteria: no metric in advance; the plan adds those of Settings.criteria.
    "criteria": "ragmeter.metrics.criteria",
    PYTHON_FAMILY: "ragmeter.metrics.custom.family",
}

#: Metrics defined in Python, by name: their spec and the object that scores them.
_DEFINED: dict[str, tuple[MetricSpec, Any]] = {}
#: Whether the entry points of the group ``ragmeter.metrics`` were loaded.
_ENTRY_POINTS_LOADED = False


@cache
def family_module(family: str) -> ModuleType:
    return importlib.import_module(FAMILY_MODULES[family])


def all_specs() -> dict[str, MetricSpec]:
    """Every registered metric, by name, in registration order: ragmeter's, then those
    defined in Python."""
    _load_entry_points()
    if not _DEFINED:
        return builtin_specs()
    return {**builtin_specs(), **{name: spec for name, (spec, _) in _DEFINED.items()}}


@cache
def builtin_specs() -> dict[str, MetricSpec]:
    """ragmeter's own metrics, by name, in registration order."""
    specs: dict[str, MetricSpec] = {}
    for family in FAMILY_MODULES:
        for spec in family_module(family).SPECS:
            if spec.name in specs:
                raise RuntimeError(f"Metric {spec.name!r} is registered twice.")
            if spec.family != family:
                raise RuntimeError(f"Metric {spec.name!r} declares family {spec.family!r}.")
            specs[spec.name] = spec
    return specs


def get_spec(name: str) -> MetricSpec:
    specs = all_specs()
    try:
        return specs[name]
    except KeyError:
        hint = did_you_mean(name, specs)
        raise ConfigError(
            f"Unknown metric {name!r}.{hint} Run 'ragmeter metrics' to list them."
        ) from None


def define(spec: MetricSpec, scorer: Any) -> None:
    """Register a metric defined in Python: ``spec`` (family ``python``) and ``scorer``, the
    object its family calls. A name of ragmeter's own metrics is refused; a name defined
    again from the same module (a notebook cell run twice, a module reloaded) is replaced;
    from another module, refused."""
    if spec.family != PYTHON_FAMILY:
        raise ValueError(f"A metric defined in Python has family {PYTHON_FAMILY!r}. Got {spec}.")
    if spec.name in builtin_specs():
        raise ConfigError(
            f"A Python metric cannot be named {spec.name!r}: ragmeter has a metric of that "
            "name. Give it another name, e.g. @ragmeter.metric(name='my_" + spec.name + "')."
        )
    old = _DEFINED.get(spec.name)
    module = getattr(scorer, "module", None)
    if old is not None and getattr(old[1], "module", None) != module:
        raise ConfigError(
            f"Two Python metrics are named {spec.name!r}: one from "
            f"{getattr(old[1], 'module', '?')}, one from {module}. Rename one of them."
        )
    _DEFINED[spec.name] = (spec, scorer)


def undefine(name: str) -> None:
    """Remove the Python metric ``name`` (for tests and notebooks); a name not defined is
    ignored."""
    _DEFINED.pop(name, None)


def defined(name: str) -> Any:
    """The object that scores the Python metric ``name``."""
    try:
        return _DEFINED[name][1]
    except KeyError:
        raise ConfigError(
            f"No Python metric is named {name!r}. Defined: {', '.join(_DEFINED) or 'none'}."
        ) from None


def metric_name(metric: MetricRef) -> str:
    """The registry name of ``metric``: a name, or a function decorated with
    ``@ragmeter.metric`` (defined again here when it was removed)."""
    if isinstance(metric, str):
        return metric.strip()
    scorer = getattr(metric, "__ragmeter_metric__", None)
    if scorer is None:
        what = getattr(metric, "__qualname__", None) or type(metric).__name__
        raise ConfigError(
            f"metrics holds {what!r}, which is neither a metric name nor a Python metric. "
            "Give a name (see 'ragmeter metrics') or decorate the function with "
            "@ragmeter.metric(needs=(...))."
        )
    if _DEFINED.get(scorer.spec.name, (None, None))[1] is not scorer:
        define(scorer.spec, scorer)
    return scorer.spec.name


def _load_entry_points() -> None:
    """Import what installed packages declare in the entry point group ``ragmeter.metrics``
    (a module or a decorated function: importing it defines its metrics), once."""
    global _ENTRY_POINTS_LOADED
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED = True  # set first: a plugin's import reads the registry
    try:
        load_entry_points()
    except BaseException:
        _ENTRY_POINTS_LOADED = False  # the next read raises the same error again
        raise


def resolve(names: Iterable[MetricRef]) -> list[MetricSpec]:
    """Specs for ``names`` (metric names or Python metrics), in the given order, without
    duplicates; errors name the metric."""
    seen: dict[str, MetricSpec] = {}
    for metric in names:
        name = metric_name(metric)
        if name and name not in seen:
            seen[name] = get_spec(name)
    if not seen:
        raise ConfigError("No metric was given. Run 'ragmeter metrics' to list them.")
    return list(seen.values())


@dataclass(frozen=True, slots=True)
class MeaningChange:
    """A metric name whose formula changed: what it meant before, and its name now."""

    #: The description run records of the old formula hold (``<out>.run.json``).
    old_description: str
    #: What the old formula was, in a few words.
    old: str
    #: What the name means now, in a few words.
    new: str
    #: The name the old formula has now.
    renamed_to: str

    def message(self, name: str, where: str) -> str:
        return (
            f"{where} holds {name} as an older ragmeter computed it ({self.old}); {name} is now "
            f"{self.new}, and the old formula is named {self.renamed_to}."
        )


#: Names that Ragas and RAGChecker both use with different formulas: they now mean Ragas'
#: (average precision over per-context verdicts); RAGChecker's formulas were renamed.
CHANGED_MEANING: dict[str, MeaningChange] = {
    "context_precision": MeaningChange(
        old_description="Share of contexts that entail at least one reference claim.",
        old="RAGChecker's share of contexts that entail a reference claim",
        new="Ragas' average precision over the ranked contexts",
        renamed_to="context_claim_precision",
    ),
    "context_utilization": MeaningChange(
        old_description=(
            "Of the reference claims found in the contexts, the share the answer states."
        ),
        old="RAGChecker's share of the retrieved reference claims that the answer states",
        new="Ragas' average precision over the ranked contexts that the answer uses",
        renamed_to="context_claim_utilization",
    ),
}


def changed_meanings(
    recorded: Any, *, where: str, names: Collection[str] | None = None
) -> list[str]:
    """Messages for each metric that the run record's ``metrics`` (``recorded``) declares with
    a formula whose name has changed since; only ``names`` when given. A record written
    before the change holds the old description; one written after, the new."""
    if not isinstance(recorded, Mapping):
        return []
    out = []
    for name, change in CHANGED_MEANING.items():
        spec = recorded.get(name)
        if names is not None and name not in names:
            continue
        if isinstance(spec, Mapping) and spec.get("description") == change.old_description:
            out.append(change.message(name, where))
    return out
