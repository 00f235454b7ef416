"""The metric registry: a plain dict from metric name to its spec and family module.

Each family module listed in ``FAMILY_MODULES`` defines ``SPECS`` and ``build(ctx)``.
Family modules import heavy libraries lazily, so importing the registry stays cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any

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
