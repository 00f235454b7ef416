"""One metric's counts and defined scores over a run, in flat memory (spilled to a temporary
file past a limit), and its summary at the end."""

from __future__ import annotations

import tempfile
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import IO, Any

import numpy as np

from ragmeter.scoring.answerability import RefusalCounts
from ragmeter.scoring.statistics import Resamples, Summary, summarize
from ragmeter.types import RowResult

#: Defined scores one metric keeps in memory before they spill to a temporary file.
SPILL_AFTER = 65_536


@dataclass(slots=True)
class Accumulator:
    """Counts and defined scores of one metric, with flat memory however long the run.

    Fewer than ``spill_after`` scores stay in memory between calls (a call adds one row, a
    batch of rows or a chunk of scores); past that they are appended to an anonymous
    temporary file (float64) that disappears when closed. ``summary()`` reads the scores of
    this one metric back (exact median and bootstrap need them all) and closes the file.
    """

    spill_after: int = field(default_factory=lambda: SPILL_AFTER)
    values: array = field(default_factory=lambda: array("d"))
    undefined: int = 0
    failed: int = 0
    spilled: int = 0
    #: Verdicts of known certainty behind the defined scores, and the uncertain ones among
    #: them (claim metrics' details ``verdict_count`` and ``uncertain_verdicts``); ``verdicts``
    #: stays ``None`` while no row has said.
    verdicts: int | None = None
    uncertain_verdicts: int = 0
    #: ``answerability_accuracy``'s refused / answered counts (its details), or None.
    refusals: RefusalCounts | None = None
    _spill: IO[bytes] | None = None

    def add(self, row: RowResult, metric: str) -> None:
        self.add_rows((row,), metric)

    def add_rows(self, rows: Iterable[RowResult], metric: str) -> None:
        """:meth:`add` of each row, in order; fewer than ``spill_after`` scores stay in memory
        after either."""
        values = self.values
        failed = undefined = 0
        for row in rows:
            if row.failures and metric in row.failures:
                failed += 1
            elif (value := row.scores.get(metric)) is None:
                undefined += 1
            else:
                values.append(value)
                details = row.details.get(metric) if row.details else None
                # Most details (a lexical or retrieval score's) count neither: a dict
                # without either key is passed over without two calls.
                if details is not None and (
                    type(details) is not dict or "verdict_count" in details or "refused" in details
                ):
                    self.count_verdicts(details)
                    self.count_refusals(details)
        self.failed += failed
        self.undefined += undefined
        if len(values) >= self.spill_after:
            self._flush()

    def count_verdicts(self, details: Any) -> None:
        """Add a defined score's verdict counts (its metric's details), when it gives them."""
        if not isinstance(details, Mapping):
            return
        count, uncertain = details.get("verdict_count"), details.get("uncertain_verdicts")
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (count, uncertain)):
            return
        self.verdicts = (self.verdicts or 0) + count
        self.uncertain_verdicts += uncertain

    def count_refusals(self, details: Any) -> None:
        """Add a row's refused / answered cell (``answerability_accuracy``'s details)."""
        if not isinstance(details, Mapping) or "refused" not in details:
            return
        found = RefusalCounts.from_details(details)
        if found is not None:
            self.refusals = found if self.refusals is None else self.refusals.merge(found)

    def add_column(self, scores: Iterable[float], *, undefined: int, failed: int) -> None:
        """Add a batch's scores in bulk (engines that send columns of scores): its defined
        scores, and how many rows had none or failed. Their verdict and refusal counts come
        from :meth:`count_details`."""
        self.extend(scores)
        self.undefined += undefined
        self.failed += failed

    def extend(self, scores: Iterable[float]) -> None:
        """Add defined scores in bulk."""
        self.values.extend(scores)
        if len(self.values) >= self.spill_after:
            self._flush()

    def count_details(self, rows: Iterable[RowResult], metric: str) -> None:
        """The verdict and refusal counts of ``rows``' defined scores of ``metric`` (what
        :meth:`add_rows` counts besides the scores)."""
        for row in rows:
            if metric in row.failures or row.scores.get(metric) is None:
                continue
            details = row.details.get(metric) if row.details else None
            self.count_verdicts(details)
            self.count_refusals(details)

    @property
    def count(self) -> int:
        return self.spilled + len(self.values)

    def _flush(self) -> None:
        if self._spill is None:
            self._spill = tempfile.TemporaryFile(prefix="ragmeter-scores-")  # noqa: SIM115
        self.values.tofile(self._spill)
        self.spilled += len(self.values)
        self.values = array("d")

    def scores(self) -> np.ndarray:
        """Every defined score added so far, in the order added."""
        memory = np.frombuffer(self.values, dtype=np.float64) if self.values else np.empty(0)
        if self._spill is None:
            return memory.copy()
        self._spill.flush()
        self._spill.seek(0)
        disk = np.fromfile(self._spill, dtype=np.float64, count=self.spilled)
        if disk.size != self.spilled:
            raise RuntimeError(
                f"The spill file of scores holds {disk.size} values; {self.spilled} were written."
            )
        return np.concatenate([disk, memory]) if memory.size else disk

    def summary(self, resamples: Resamples | None = None) -> Summary:
        """Summary of this metric; releases the spill file. ``resamples`` shares bootstrap
        draws between metrics (:class:`~ragmeter.scoring.statistics.Resamples`)."""
        try:
            summary = summarize(
                self.scores(), undefined=self.undefined, failed=self.failed, resamples=resamples
            )
        finally:
            self.close()
        if self.refusals is not None:
            summary = replace(summary, refusals=self.refusals)
        if self.verdicts is None:
            return summary
        return replace(summary, verdicts=self.verdicts, uncertain_verdicts=self.uncertain_verdicts)

    def close(self) -> None:
        if self._spill is not None:
            self._spill.close()
            self._spill = None
