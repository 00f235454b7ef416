"""The outcome of a run: per-row results, per-metric summaries, usage and configuration; the
run record (``<results>.run.json``) written and read back.

A run writes its record when its first row is written (the input's fingerprint, the metrics)
and again at its end (summaries, usage); reports and a resumed run read it back.
:class:`RunResult` is the one model of a run: what :func:`ragmeter.evaluate` returns, and what
a results file and its record read back into (:func:`ragmeter.results.read_run`), which the
report, ``compare``, ``label`` and ``calibrate`` take.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragmeter.errors import DataError, OutputError, require_extra, unknown_metric
from ragmeter.io.paths import sidecar_path
from ragmeter.io.redact import redact_value
from ragmeter.io.results import Expect
from ragmeter.metrics.registry import all_specs
from ragmeter.scoring.statistics import Summary
from ragmeter.types import FIELDS, MetricSpec, RowResult, Usage

#: Input fields ``to_pandas(inputs=True)`` adds, in this order (``id`` is already there).
INPUT_COLUMNS: tuple[str, ...] = tuple(name for name in FIELDS if name != "question_id")


#: Draws :meth:`RunResult.plot`'s figure. Reports sit above results (a result never imports
#: them), so the public API installs :func:`ragmeter.report.figure_for` here.
_PLOTTER: Callable[[RunResult, str], Any] | None = None


def install_plotter(plotter: Callable[[RunResult, str], Any]) -> None:
    """Make ``plotter(result, metric)`` draw :meth:`RunResult.plot`'s figures."""
    global _PLOTTER
    _PLOTTER = plotter


def spec_record(spec: MetricSpec) -> dict[str, Any]:
    """A metric as the run record holds it (``version`` only for a metric that has one)."""
    return {
        "family": spec.family,
        "requires": list(spec.requires),
        "higher_is_better": spec.higher_is_better,
        "lower": spec.lower,
        "upper": spec.upper,
        "description": spec.description,
        **({"version": spec.version} if spec.version is not None else {}),
    }


@dataclass(slots=True)
class Column:
    """One metric over a run's rows, by position in ``RunResult.rows``: the scored rows and
    their values, and the rows without a score (undefined; failed, whether or not a null is
    recorded)."""

    positions: list[int] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    undefined: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)


@dataclass(slots=True)
class RunResult:
    """Scores, reasons and failures of every row, with summaries and the run's record.

    ``rows`` is empty when the run streamed to a file without keeping rows in memory.
    ``result["faithfulness"]`` is the metric's score for every row (see :meth:`scores`).
    A results file read back (:func:`ragmeter.results.read_run`) is a RunResult too: its
    summaries and metric specs are the run record's.
    """

    rows: list[RowResult]
    summary: dict[str, Summary]
    usage: Usage
    info: dict[str, Any]
    specs: dict[str, MetricSpec] = field(default_factory=dict)
    #: The data and column map the run read, so ``to_pandas(inputs=True)`` can read the
    #: inputs again; None when not known.
    source: tuple[Any, Any] | None = field(default=None, repr=False, compare=False)
    #: The results file the rows were read back from; None for a run in memory.
    results_file: Path | None = field(default=None, compare=False)
    #: Input texts (question, answer, contexts, reference_answers) by row index, where known:
    #: the results lines carried them, or the input was read again (:meth:`with_inputs`).
    texts: dict[int, dict[str, Any]] = field(default_factory=dict, repr=False, compare=False)
    #: Metrics whose direction no record gave (a results file without its run record): it
    #: was guessed from the name.
    directions_inferred: list[str] = field(default_factory=list)
    #: What reports derive from the rows, kept (:meth:`memo`); a copy starts without it.
    _memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def metrics(self) -> list[str]:
        return list(self.specs)

    def metric(self, name: str) -> MetricSpec:
        """The spec of metric ``name``; :class:`~ragmeter.errors.UnknownMetricError` naming
        close ones when the run has no such metric."""
        self._check_metric(name)
        return self.specs[name]

    def memo(self, key: str, make: Callable[[], Any]) -> Any:
        """``make()``, computed once per run and kept (what reports derive from the rows)."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    def column(self, metric: str) -> Column:
        """``metric`` over the rows, read in one pass for every metric and kept."""
        columns: dict[str, Column] = self.memo("columns", self._columns)
        return columns.get(metric) or Column()

    def _columns(self) -> dict[str, Column]:
        cols: dict[str, Column] = {}
        for pos, row in enumerate(self.rows):
            for name, value in row.scores.items():
                col = cols.get(name) or cols.setdefault(name, Column())
                if value is None:
                    col.undefined.append(pos)
                else:
                    col.positions.append(pos)
                    col.values.append(value)
            for name in row.failures:
                if name not in row.scores or row.scores[name] is None:
                    col = cols.get(name) or cols.setdefault(name, Column())
                    if name in row.scores:
                        col.undefined.pop()  # this row's, appended just above
                    col.failed.append(pos)
        return cols

    def values(self, metric: str) -> list[float]:
        """Defined scores of ``metric``, in row order."""
        return list(self.column(metric).values)

    def counts(self, metric: str) -> tuple[int, int]:
        """(undefined, failed) counts of ``metric``: rows where the score is missing."""
        col = self.column(metric)
        return len(col.undefined), len(col.failed)

    def with_rows(self, rows: list[RowResult], summary: dict[str, Summary]) -> RunResult:
        """The same run (record, specs, texts) over ``rows`` with their ``summary``."""
        return replace(self, rows=rows, summary=summary)

    def with_inputs(self, inputs: Mapping[int, Mapping[str, Any]]) -> RunResult:
        """A copy that knows the input texts of the rows at the given indices (question,
        answer, contexts, reference_answers), beside the texts it knew."""
        if not inputs:
            return self
        texts = dict(self.texts)
        for index, given in inputs.items():
            texts[index] = {**texts.get(index, {}), **input_texts(given)}
        return replace(self, texts=texts)

    def with_details(self, details: Mapping[int, Mapping[str, Any]]) -> RunResult:
        """A copy whose rows at the given indices carry ``details`` (read again in full)."""
        rows = [
            replace(row, details=dict(details[row.index])) if row.index in details else row
            for row in self.rows
        ]
        return replace(self, rows=rows)

    def __iter__(self) -> Iterator[RowResult]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, metric: str) -> list[float | None]:
        """``result["faithfulness"]``: the same as ``result.scores("faithfulness")``."""
        if not isinstance(metric, str):
            raise TypeError(
                f"Index a RunResult by metric name, e.g. result['faithfulness']. Got "
                f"{type(metric).__name__}; for rows use result.rows[i]."
            )
        return self.scores(metric)

    def scores(self, metric: str) -> list[float | None]:
        """The metric's value for every row, ``None`` where undefined or failed."""
        self._check_metric(metric)
        return [row.scores.get(metric) for row in self.rows]

    def failures(self) -> list[tuple[int, str, str]]:
        """``(row index, metric, message)`` for every failure."""
        return [(r.index, m, msg) for r in self.rows for m, msg in r.failures.items()]

    def _check_metric(self, metric: str) -> None:
        if metric not in self.specs:
            raise unknown_metric(metric, self.metrics)

    def to_pandas(self, *, inputs: bool = False) -> Any:
        """One row per sample: index, id, one column per metric, reasons and failures.

        With ``inputs=True`` the input fields each row was scored on (question, contexts,
        answer, reference_answers, ...) come after ``id``, read again from the run's data.
        """
        require_extra("data", ("pandas",), "RunResult.to_pandas()")
        import pandas as pd

        given = self._inputs() if inputs else {}
        input_columns = [f for f in INPUT_COLUMNS if any(f in v for v in given.values())]
        records = []
        for row in self.rows:
            rec: dict[str, Any] = {"index": row.index, "id": row.id}
            rec.update(given.get(row.index, {}))
            for metric in self.specs:
                rec[metric] = row.scores.get(metric)
            rec["reasons"] = dict(row.reasons)
            rec["failures"] = dict(row.failures)
            records.append(rec)
        columns = ["index", "id", *input_columns, *self.specs, "reasons", "failures"]
        return pd.DataFrame.from_records(records, columns=columns)

    def _inputs(self) -> dict[int, dict[str, Any]]:
        """Input fields of the kept rows by row index, read again from ``source``."""
        from ragmeter.io.columns import ColumnMap, to_sample
        from ragmeter.io.readers import open_rows

        if self.source is None:
            raise ValueError(
                "This result does not know its input data, so inputs=True cannot add it. "
                "Results from ragmeter.evaluate() know it; else join on 'index' yourself."
            )
        data, column_map = self.source
        if isinstance(data, Iterator):
            raise ValueError(
                "inputs=True reads the data again, and the run consumed it (an iterator or "
                "generator). Pass evaluate() a list, a path, a DataFrame or a Dataset."
            )
        wanted = {row.index for row in self.rows}
        cmap = ColumnMap.from_any(column_map)
        out: dict[int, dict[str, Any]] = {}
        for row in open_rows(data):
            if row.index in wanted and isinstance(row.data, Mapping):
                sample, _ = to_sample(row.data, cmap)
                out[row.index] = {
                    name: list(value) if isinstance(value, tuple) else value
                    for name in INPUT_COLUMNS
                    if (value := getattr(sample, name)) is not None
                }
        return out

    def summary_frame(self) -> Any:
        require_extra("data", ("pandas",), "RunResult.summary_frame()")
        import pandas as pd

        return pd.DataFrame({m: s.as_dict() for m, s in self.summary.items()}).T

    def to_jsonl(self, path: str | Path) -> Path:
        """Write one JSON line per row (input order) and the run record beside it."""
        path = Path(path)
        with path.open("w", encoding="utf-8") as fh:
            for row in self.rows:
                fh.write(json_record(row.to_json()) + "\n")
        write_sidecar(path, self.info)
        return path

    def plot(self, metric: str) -> Any:
        """A matplotlib figure (histogram and box plot) of one metric, for notebooks."""
        self._check_metric(metric)
        require_extra("report", ("matplotlib",), "RunResult.plot()")
        if _PLOTTER is None:  # importing ragmeter.result imports ragmeter, which installs it
            raise RuntimeError("No plotter installed: import ragmeter first.")
        return _PLOTTER(self, metric)

    def __repr__(self) -> str:
        parts = ", ".join(
            f"{m}={s.mean:.3f}" if s.mean is not None else f"{m}=undefined"
            for m, s in self.summary.items()
        )
        return f"RunResult(n={self.info.get('n_rows', len(self.rows))}, {parts})"


#: The input fields a report shows beside the scores, and their types.
TEXT_FIELDS: tuple[str, ...] = ("question", "answer", "contexts", "reference_answers")


def input_texts(given: Mapping[str, Any]) -> dict[str, Any]:
    """The texts among ``given`` (a results line or input fields): ``question`` and ``answer``
    as text, ``contexts`` and ``reference_answers`` as tuples of texts; others left out."""
    out: dict[str, Any] = {}
    for name in TEXT_FIELDS:
        value = given.get(name)
        if name in ("question", "answer"):
            if isinstance(value, str):
                out[name] = value
        elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            out[name] = tuple(value)
    return out


def json_record(record: dict[str, Any]) -> str:
    """One results line (no newline) for whatever users' rows hold, always valid UTF-8.

    Values JSON has no type for (a date in ``metadata``, say) are written as their ``str``,
    and so are NaN and infinities (standard JSON has none); lone surrogates (legal in a JSON
    escape such as ``"\\ud800"``, not in UTF-8) are kept as JSON escapes, so the line reads
    back to the same text.
    """
    try:
        text = json.dumps(record, ensure_ascii=False, default=str, allow_nan=False)
    except ValueError:
        record = _finite(record)
        text = json.dumps(record, ensure_ascii=False, default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(record, default=str)
    return text


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def write_sidecar(results_path: str | Path, info: dict[str, Any]) -> Path:
    """Write the run record of ``results_path`` (whole or not at all: through a temporary
    file); :class:`~ragmeter.errors.OutputError` naming it when it cannot be written."""
    path = sidecar_path(results_path)
    tmp = path.with_name(path.name + ".tmp")
    record = redact_value(info)
    text = json.dumps(record, indent=2, ensure_ascii=False, default=str)
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise OutputError(f"The run record {path} cannot be written: {_os_problem(exc)}.") from exc
    return path


def _os_problem(exc: OSError) -> str:
    """An OS error in words, without the path (the caller names the file)."""
    return exc.strerror or str(exc) or type(exc).__name__


def read_sidecar(results_path: str | Path) -> dict[str, Any] | None:
    """The run record of ``results_path``, or ``None`` when there is none."""
    path = sidecar_path(results_path)
    if not path.exists():
        return None
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(
            f"{path}: not valid JSON ({exc}). Delete it to report without run information, "
            "or run again to write it."
        ) from None
    if not isinstance(info, dict):
        raise DataError(f"{path}: expected a JSON object. Got {type(info).__name__}.")
    return info


def results_expect(info: Mapping[str, Any] | None, *, registry: bool = True) -> Expect:
    """What the rows of a results file must satisfy, from its run record: each metric's range
    (the record's, else the registry's; the record's only with ``registry=False``, which
    imports no metric module) and the input's row count (when recorded)."""
    bounds = {}
    if registry:
        bounds = {name: (spec.lower, spec.upper) for name, spec in all_specs().items()}
    info = info or {}
    declared = info.get("metrics")
    for name, spec in declared.items() if isinstance(declared, Mapping) else ():
        if not isinstance(spec, Mapping):
            continue
        lower, upper = spec.get("lower"), spec.get("upper")
        if _is_number(lower) and _is_number(upper):
            bounds[str(name)] = (float(lower), float(upper))
    recorded = info.get("input")
    rows = recorded.get("rows") if isinstance(recorded, Mapping) else None
    return Expect(bounds, rows if isinstance(rows, int) and not isinstance(rows, bool) else None)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
