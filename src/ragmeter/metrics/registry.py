"""The metric registry: a plain dict from metric name to its spec and family module.

Each family module listed in ``FAMILY_MODULES`` defines ``SPECS`` and ``build(ctx)``.
Family modules import heavy libraries lazily, so importing the registry stays cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from functools import cache
from types import ModuleType

from ragmeter.errors import ConfigError, did_you_mean
from ragmeter.types import MetricSpec

#: Family name -> module path. One line per family.
FAMILY_MODULES: dict[str, str] = {
    "lexical": "ragmeter.metrics.lexical",
    "retrieval": "ragmeter.metrics.retrieval",
    "claims": "ragmeter.metrics.claims",
    "entity_recall": "ragmeter.metrics.entity_recall",
    "response_relevancy": "ragmeter.metrics.response_relevancy",
    "context_relevance": "ragmeter.metrics.context_relevance",
    "answer_reward": "ragmeter.metrics.answer_reward",
}


@cache
def family_module(family: str) -> ModuleType:
    return importlib.import_module(FAMILY_MODULES[family])


@cache
def all_specs() -> dict[str, MetricSpec]:
    """Every registered metric, by name, in registration order."""
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


def resolve(names: Iterable[str]) -> list[MetricSpec]:
    """Specs for ``names``, in the given order, without duplicates; errors name the metric."""
    seen: dict[str, MetricSpec] = {}
    for name in names:
        name = name.strip()
        if name and name not in seen:
            seen[name] = get_spec(name)
    if not seen:
        raise ConfigError("No metric was given. Run 'ragmeter metrics' to list them.")
    return list(seen.values())
