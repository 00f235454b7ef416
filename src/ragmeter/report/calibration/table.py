"""What calibration reads of a run (:class:`ScoreTable`): every row's index, id and scores,
the claim details of the labelled rows, and the metrics' ranges and directions; from a
:class:`~ragmeter.result.RunResult` or a
results file read in one pass (:func:`read_run_for_labels`). :func:`row_lookup` finds the row
a label names.
"""

from __future__ import annotations

import difflib
import os
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmeter.errors import DataError
from ragmeter.io.labels import LabelSet
from ragmeter.io.results import read_score_lines
from ragmeter.report.load import as_run, read_details
from ragmeter.result import Column, RunResult, read_sidecar, results_expect
from ragmeter.results import infer_higher_is_better, no_details, read_run, specs_of
from ragmeter.types import MetricSpec

__all__ = ["ScoreTable", "details_of", "read_run_for_labels", "row_lookup", "score_table"]


@dataclass(slots=True)
class ScoreTable:
    """What calibration reads of a run: per row (by position) its index, id and scores, and
    the details of the rows labels name; with the run record's metric information."""

    indexes: list[int]
    ids: list[str | None]
    scores: list[Mapping[str, Any]]
    #: Position -> the row's details (only rows whose details were kept).
    details: dict[int, Mapping[str, Any]]
    info: Mapping[str, Any]
    source: Path | None = None
    #: The metrics as the run declared them (their specs), when known: else read from
    #: ``info``.
    declared: dict[str, MetricSpec] | None = None
    _metrics: dict[str, MetricSpec] | None = None

    @classmethod
    def from_result(cls, result: RunResult) -> ScoreTable:
        """A run in memory: its rows, its record, and each metric's direction and range from
        its spec."""
        declared = dict(result.specs)
        rows = result.rows
        return cls(
            indexes=[r.index for r in rows],
            ids=[None if r.id is None else str(r.id) for r in rows],
            scores=[r.scores for r in rows],
            details={pos: r.details for pos, r in enumerate(rows) if r.details},
            info=result.info,
            source=result.results_file,
            declared=declared or None,
        )

    @property
    def metrics(self) -> dict[str, MetricSpec]:
        """The run's metrics (its specs, else its record's), then any other a row scores
        (direction inferred)."""
        if self._metrics is None:
            declared = self.declared
            found = dict(declared) if declared is not None else specs_of(self.info, [])[0]
            for scores in self.scores:
                for name in scores:
                    if name not in found:
                        found[name] = MetricSpec(
                            name, "", (), "", higher_is_better=infer_higher_is_better(name)
                        )
            self._metrics = found
        return self._metrics

    def metric(self, name: str) -> MetricSpec:
        return self.metrics[name]

    def key(self, pos: int) -> str:
        """The row's id, or its index (as text) when it has none."""
        row_id = self.ids[pos]
        return str(self.indexes[pos]) if row_id is None else row_id

    def column(self, metric: str) -> Column:
        """The rows with a score of ``metric``: their positions and values."""
        out = Column()
        for pos, scores in enumerate(self.scores):
            value = scores.get(metric)
            if value is not None and type(value) is not bool and isinstance(value, int | float):
                out.positions.append(pos)
                out.values.append(float(value))
        return out


def score_table(run: RunResult | ScoreTable | str | os.PathLike[str]) -> ScoreTable:
    """``run`` as calibration reads it: a :class:`~ragmeter.result.RunResult`, a results file
    (read without the claim details), or anything with ``.rows`` and ``.info``."""
    if isinstance(run, ScoreTable):
        return run
    if isinstance(run, RunResult):
        return ScoreTable.from_result(run)
    if isinstance(run, str | os.PathLike):
        return ScoreTable.from_result(read_run(run, details=no_details))
    return ScoreTable.from_result(as_run(run))


def row_lookup(run: ScoreTable, key: str | None = None) -> Callable[[str, str], int]:
    """A function from a label's id (and line) to the row's position in the run: by the rows'
    ids for ``key="id"``, by their indexes for ``key="index"``, else by id first and by index
    for an id no row has."""
    n = len(run.indexes)
    by_id: dict[str | None, int] = {}
    shared: dict[str, list[int]] = {}
    if key != "index":
        # The first row with an id wins: filled from the last row back.
        by_id = dict(zip(reversed(run.ids), range(n - 1, -1, -1), strict=True))
        by_id.pop(None, None)
        if len(by_id) < sum(i is not None for i in run.ids):
            counts = Counter(i for i in run.ids if i is not None)
            for pos, row_id in enumerate(run.ids):
                if row_id is not None and counts[row_id] > 1:
                    shared.setdefault(row_id, []).append(run.indexes[pos])
    by_index = dict(zip(map(str, run.indexes), range(n), strict=True)) if key != "id" else {}

    def find(row_id: str, where: str) -> int:
        pos = by_id.get(row_id)
        if row_id in shared:
            rows = shared[row_id]
            raise DataError(
                f"{where}: {len(rows)} rows of the results have the id {row_id!r} (indexes "
                f"{', '.join(map(str, rows[:5]))}{', ...' if len(rows) > 5 else ''}), so the "
                "label cannot say which it is. Name rows by index: a first line "
                '{"selection": ..., "key": "index"} and each row\'s index as its id (what '
                "ragmeter label writes for such a run)."
            )
        if pos is None:
            pos = by_index.get(row_id)
        if pos is None:
            shown = by_index if key == "index" else by_id
            close = difflib.get_close_matches(row_id, list(shown)[:100_000], n=3)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            said = {
                "id": " The labels file says its ids are the rows' ids ('key': 'id').",
                "index": " The labels file says its ids are the rows' indexes ('key': 'index').",
            }.get(key or "", " Give the row's id as the results have it (its id, or its index).")
            raise DataError(
                f"{where}: row {row_id!r} is not in the results ({n} rows).{hint}{said}"
            )
        return pos

    return find


def details_of(run: ScoreTable, positions: set[int]) -> dict[int, Mapping[str, Any]]:
    """Claim details of the rows at ``positions``: kept in memory, else read from the file."""
    out = {pos: run.details[pos] for pos in positions if run.details.get(pos)}
    missing = {run.indexes[pos]: pos for pos in positions if pos not in out}
    if missing and run.source is not None:
        for index, found in read_details(run.source, missing).items():
            out[missing[index]] = found
    return out


def read_run_for_labels(path: str | os.PathLike[str], labels: LabelSet) -> ScoreTable:
    """A results file read in one pass for calibration: every row's index, id and scores, and
    the claim details of the rows that claim labels name (by id or index, as the labels'
    ``key`` says) only.

    Lines are read by :func:`ragmeter.io.results.read_score_lines`: the start of each
    line (index, id, scores) is checked as :func:`ragmeter.results.read_run` checks it
    (scores in their metrics' ranges, indexes in the input's); a row written again by
    a resumed run counts in its last version, any other repeated index is an error; a cut-off
    last line is not a row. Only the lines of labelled rows are parsed whole.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"Results file {str(path)!r} not found (or not a file).")
    info = read_sidecar(path) or {}
    wanted = {label.id for label in labels.claims}
    indexes = set()
    if labels.key != "id":
        indexes = {int(w) for w in wanted if w.isascii() and w.isdigit()}
    lines = read_score_lines(
        path,
        results_expect(info, registry=False),
        keep_ids=wanted if labels.key != "index" else (),
        keep_indexes=indexes,
        more_bounds=lambda: results_expect(None).bounds,
    )
    details = {}
    for pos, obj in lines.kept.items():
        found = obj.get("details")
        if isinstance(found, Mapping):
            details[pos] = found
    return ScoreTable(
        indexes=lines.indexes,
        ids=lines.ids,
        scores=lines.scores,
        details=details,
        info=info,
        source=path,
    )
