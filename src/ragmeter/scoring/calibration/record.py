"""A calibration as a value: each labelled metric's agreement, bias and means
(:class:`MetricCalibration`), and every metric's with how the labels were chosen
(:class:`Calibration`). :meth:`Calibration.as_dict` is what ``ragmeter calibrate --json``
prints; :meth:`Calibration.as_record` what the run record keeps (``info["calibration"]``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragmeter.scoring.calibration import ppi
from ragmeter.scoring.calibration.estimates import interval_record

__all__ = ["Calibration", "MetricCalibration"]


@dataclass(frozen=True, slots=True)
class MetricCalibration:
    """One metric's calibration (see :meth:`as_dict` for the JSON shape)."""

    metric: str
    level: str  # "rows" or "claims"
    n_labels: int
    n_rows: int
    n_labelled_rows: int
    agreement: dict[str, Any]
    bias: ppi.MeanEstimate | None
    judge: ppi.MeanEstimate | None
    labels: ppi.MeanEstimate | None
    calibrated: ppi.MeanEstimate | None
    how: str
    higher_is_better: bool = True
    refused: str | None = None
    notes: tuple[str, ...] = ()
    #: The metric's range; intervals are cut to it.
    bounds: tuple[float, float] = (0.0, 1.0)
    #: The people's value of each labelled row, by the row's id (its index without one):
    #: kept in the run record so that ``compare`` can pair two runs' labels.
    labelled: dict[str, float] = field(default_factory=dict)
    #: About how many labels reach a target width (``target_width=``), else ``None``.
    budget: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        calibrated = interval_record(self.calibrated, self.bounds)
        if self.calibrated is not None:
            calibrated["tuning"] = self.calibrated.tuning
        labels = interval_record(self.labels, self.bounds)
        if self.refused:
            calibrated["refused"] = labels["refused"] = self.refused
        return {
            "n_labels": self.n_labels,
            "n_rows": self.n_rows,
            "n_labelled_rows": self.n_labelled_rows,
            "level": self.level,
            "agreement": self.agreement,
            "bias": interval_record(self.bias),
            "judge": interval_record(self.judge, self.bounds),
            "labels": labels,
            "calibrated": calibrated,
            "higher_is_better": self.higher_is_better,
            "how": self.how,
            "notes": list(self.notes),
            **({"budget": self.budget} if self.budget is not None else {}),
        }


@dataclass(frozen=True, slots=True)
class Calibration:
    """Every labelled metric's calibration, and how the labels were chosen."""

    metrics: dict[str, MetricCalibration]
    selection: str | None
    labels_path: str
    notes: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        """One JSON object keyed by metric (``ragmeter calibrate --json``)."""
        return {name: m.as_dict() for name, m in self.metrics.items()}

    def as_record(self) -> dict[str, Any]:
        """What the run record keeps (``calibration``): the labels file, the selection, the
        notes, :meth:`as_dict` per metric with the people's value of each labelled row."""
        metrics = {}
        for name, m in self.metrics.items():
            metrics[name] = {**m.as_dict(), "labelled_rows": m.labelled}
        return {
            "labels": self.labels_path,
            "selection": self.selection,
            "notes": list(self.notes),
            "metrics": metrics,
        }

    def __getitem__(self, metric: str) -> MetricCalibration:
        return self.metrics[metric]
