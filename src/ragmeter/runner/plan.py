"""What a run computes: the metrics asked for (or every metric whose fields the data has),
grouped by family, the families built, and the metrics skipped with their reason."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from ragmeter.config.criteria import Criterion
from ragmeter.errors import (
    ConfigError,
    DataError,
    ModelUnavailableError,
    param,
)
from ragmeter.io.columns import ColumnMap
from ragmeter.io.rows import RowSource
from ragmeter.metrics import registry
from ragmeter.metrics.base import MetricFamily, RunContext
from ragmeter.metrics.registry import MetricRef
from ragmeter.types import MetricSpec

log = logging.getLogger("ragmeter")


#: Rows a mapped path is looked up in before scoring: a path none of them has is a typo.
PATH_CHECK_ROWS = 20
#: Families that need neither a judge nor a model.
EXACT_FAMILIES = frozenset({"lexical", "retrieval"})


@dataclass(slots=True)
class Plan:
    """Which metrics run, grouped by family, and which were skipped (auto mode)."""

    specs: list[MetricSpec]
    auto: bool
    skipped: dict[str, str] = field(default_factory=dict)
    families: dict[str, MetricFamily] = field(default_factory=dict)

    @classmethod
    def make(
        cls,
        metrics: Sequence[MetricRef] | str | None,
        cmap: ColumnMap,
        source: RowSource,
        *,
        criteria: Sequence[Criterion] = (),
    ) -> Plan:
        """Metrics by name or as Python metrics (``@ragmeter.metric`` functions); ``None``:
        every registered metric whose fields the data has. The user's ``criteria`` are
        metrics of the family "criteria", always asked for (skipped in auto mode when their
        fields are missing)."""
        if isinstance(metrics, str):
            metrics = [m.strip() for m in metrics.split(",") if m.strip()]
        if metrics is not None and not metrics:
            raise ConfigError(
                "The metrics list is empty. Name metrics (e.g. 'k_precision,mrr'; "
                "`ragmeter metrics` lists them) or leave it out to run every metric whose "
                "fields are present."
            )
        own = _criteria_specs(criteria)
        if metrics:
            named = [m for m in metrics if not (isinstance(m, str) and m.strip() in own)]
            specs = registry.resolve(named) if named or not own else []
            specs += [spec for spec in own.values() if spec.name not in {s.name for s in specs}]
            needed: dict[str, list[str]] = {}
            for spec in specs:
                for fld in spec.requires:
                    needed.setdefault(fld, []).append(spec.name)
            cmap.check_columns(needed, source.columns)
            cmap.check_paths(row.data for row in source.peek(PATH_CHECK_ROWS))
            return cls(specs, auto=False)
        cmap.check_paths(row.data for row in source.peek(PATH_CHECK_ROWS))
        present = {f for f in _all_fields() if cmap.source_for(f, source.columns) is not None}
        specs, skipped = [], {}
        for spec in [*registry.all_specs().values(), *own.values()]:
            lacking = [f for f in spec.requires if f not in present]
            if lacking:
                skipped[spec.name] = f"no column for {', '.join(lacking)}"
            else:
                specs.append(spec)
        if not specs:
            raise DataError(
                "No metric can run on this data: none of the fields the metrics need were found. "
                f"Columns found: {', '.join(source.columns) or '(none)'}. Map columns with "
                f"{param('column_map', 'column_map={FIELD: COLUMN}')}; see 'ragmeter metrics' "
                "for what each metric needs."
            )
        return cls(specs, auto=True, skipped=skipped)

    def exact_only(self) -> bool:
        """Whether every metric is arithmetic on the data (no judge, no model)."""
        return all(spec.family in EXACT_FAMILIES for spec in self.specs)

    def by_family(self) -> dict[str, list[MetricSpec]]:
        out: dict[str, list[MetricSpec]] = {}
        for spec in self.specs:
            out.setdefault(spec.family, []).append(spec)
        return out

    def build_families(self, ctx: RunContext) -> None:
        ctx.requested = frozenset(spec.name for spec in self.specs)
        for family, specs in self.by_family().items():
            try:
                built = self.families[family] = registry.family_module(family).build(ctx)
            except (ModelUnavailableError, ImportError) as exc:
                if not self.auto:
                    if isinstance(exc, ImportError):
                        raise ModelUnavailableError(
                            f"Metrics {', '.join(s.name for s in specs)} need a package that is "
                            f"not installed ({exc}). Install the extra: pip install "
                            "'ragmeter[local]'."
                        ) from exc
                    raise
                for spec in specs:
                    self.skipped[spec.name] = str(exc)
                log.info("Skipping %s: %s", ", ".join(s.name for s in specs), exc)
                continue
            # A family may decline some of its metrics with this run's resources (criteria
            # with a judge that cannot judge them): skipped with its reason.
            for name, reason in getattr(built, "skipped", {}).items():
                self.skipped[name] = reason
                log.info("Skipping %s: %s", name, reason)
        self.specs = [
            s for s in self.specs if s.family in self.families and s.name not in self.skipped
        ]
        if not self.specs:
            raise ModelUnavailableError(
                "No metric can run: " + "; ".join(f"{k}: {v}" for k, v in self.skipped.items())
            )


def _criteria_specs(criteria: Sequence[Criterion]) -> dict[str, MetricSpec]:
    """The metric of each criterion, by name; a name of a registered metric is refused."""
    if not criteria:
        return {}
    from ragmeter.metrics.criteria import specs_for

    registered = registry.all_specs()
    taken = [c.name for c in criteria if c.name in registered]
    if taken:
        raise ConfigError(
            f"A criterion cannot be named {', '.join(map(repr, taken))}: ragmeter has a metric "
            f"of that name. Rename the criterion, e.g. 'my_{taken[0]}'."
        )
    return {spec.name: spec for spec in specs_for(criteria)}


def _all_fields() -> tuple[str, ...]:
    from ragmeter.types import FIELDS

    return FIELDS
