"""A results file and its run record read back into the :class:`~ragmeter.result.RunResult`
the run returned: the one model of a run that reports, ``compare``, ``label`` and
``calibrate`` take.

A results file holds one JSON object per input row, in input order::

    {"index": 0, "id": "q1", "scores": {"faithfulness": 0.5}, "reasons": {...},
     "failures": {...}, "details": {...}, "metadata": {...}}

Its lines are read and checked by :mod:`ragmeter.io.results` (the one reader of results
files). Beside it, ``<results>.run.json`` (the run record) holds the run's configuration,
usage, metric specs and summaries: a metric's direction and range are its recorded spec's,
and its summary the recorded one (never computed again) while it counts the rows read. Rows
without a record (an old file, a run stopped before its first row was written) get their
summaries computed as the run computes them (:class:`~ragmeter.runner.accumulator.Accumulator`)
and their directions guessed from the name, which the run says
(:attr:`~ragmeter.result.RunResult.directions_inferred`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ragmeter.errors import DataError
from ragmeter.io.results import check_record, read_results, scan_results
from ragmeter.result import RunResult, input_texts, read_sidecar, results_expect
from ragmeter.runner.accumulator import Accumulator
from ragmeter.scoring.answerability import RefusalCounts
from ragmeter.scoring.statistics import Summary
from ragmeter.types import MetricSpec, RowResult, Usage

__all__ = [
    "infer_higher_is_better",
    "no_details",
    "read_run",
    "run_from_rows",
    "summaries",
]

#: Metrics whose best score is 0, for results without a run record to say so.
_LOWER_IS_BETTER_PREFIXES: tuple[str, ...] = ("noise_sensitivity",)
_LOWER_IS_BETTER_NAMES: frozenset[str] = frozenset({"hallucination"})

#: What a row's details become while reading (``read_run(details=...)``).
DetailsFilter = Callable[[dict[str, Any]], dict[str, Any]]


def no_details(details: dict[str, Any]) -> dict[str, Any]:
    """A details filter for :func:`read_run` that keeps none (scores only)."""
    return {}


def infer_higher_is_better(metric: str) -> bool:
    """Direction of a metric known only by name (results without a run record)."""
    if metric in _LOWER_IS_BETTER_NAMES:
        return False
    return not metric.startswith(_LOWER_IS_BETTER_PREFIXES)


def _guessed_spec(name: str) -> MetricSpec:
    return MetricSpec(
        name=name,
        family="",
        requires=(),
        description="",
        higher_is_better=infer_higher_is_better(name),
    )


def _number(value: Any, default: float) -> float:
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if is_number else default


def recorded_spec(name: str, entry: Any) -> tuple[MetricSpec, bool]:
    """The spec of metric ``name`` from its run record entry, and whether its direction was
    guessed from the name (an entry without ``higher_is_better``)."""
    if not isinstance(entry, Mapping):
        return _guessed_spec(name), True
    direction = entry.get("higher_is_better")
    requires = entry.get("requires")
    version = entry.get("version")
    spec = MetricSpec(
        name=name,
        family=str(entry.get("family") or ""),
        requires=tuple(map(str, requires)) if isinstance(requires, list | tuple) else (),
        description=str(entry.get("description") or ""),
        higher_is_better=(
            bool(direction) if direction is not None else infer_higher_is_better(name)
        ),
        lower=_number(entry.get("lower"), 0.0),
        upper=_number(entry.get("upper"), 1.0),
        version=None if version is None else str(version),
    )
    return spec, direction is None


def specs_of(
    info: Mapping[str, Any], rows: Iterable[RowResult]
) -> tuple[dict[str, MetricSpec], list[str]]:
    """Every metric of a run, the record's first, then any other a row scores; and the
    names whose direction was guessed."""
    specs: dict[str, MetricSpec] = {}
    guessed: list[str] = []
    declared = info.get("metrics")
    for name, entry in declared.items() if isinstance(declared, Mapping) else ():
        specs[str(name)], inferred = recorded_spec(str(name), entry)
        if inferred:
            guessed.append(str(name))
    for row in rows:
        for name in row.scores:
            if name not in specs:
                specs[name] = _guessed_spec(name)
                guessed.append(name)
    return specs, guessed


def summaries(rows: Iterable[RowResult], metrics: Iterable[str]) -> dict[str, Summary]:
    """Each metric's summary over ``rows``, computed as the run computes it (its
    :class:`~ragmeter.runner.accumulator.Accumulator`: the 95 % bootstrap interval, claim
    metrics' verdict counts, refusal counts)."""
    rows = list(rows)
    out: dict[str, Summary] = {}
    for name in metrics:
        acc = Accumulator()
        acc.add_rows(rows, name)
        out[name] = acc.summary()
    return out


_SUMMARY_FIELDS = frozenset(f.name for f in dataclasses.fields(Summary)) - {"refusals"}


def _recorded_summary(entry: Any) -> Summary | None:
    """A summary as the run record holds it (:meth:`Summary.as_dict`), or None."""
    if not isinstance(entry, Mapping):
        return None
    try:
        found = Summary(**{k: v for k, v in entry.items() if k in _SUMMARY_FIELDS})
    except TypeError:
        return None
    refusals = RefusalCounts.from_dict(entry.get("refusals"))
    return dataclasses.replace(found, refusals=refusals) if refusals is not None else found


def _summaries_of(run: RunResult) -> dict[str, Summary]:
    """The record's summary of each metric while it counts the rows read (the record of a
    finished run); else computed from the rows."""
    recorded = run.info.get("summary")
    recorded = recorded if isinstance(recorded, Mapping) else {}
    out: dict[str, Summary] = {}
    missing: list[str] = []
    for name in run.specs:
        found = _recorded_summary(recorded.get(name))
        col = run.column(name)
        seen = (len(col.values), len(col.undefined), len(col.failed))
        if found is not None and (found.count, found.undefined, found.failed) == seen:
            out[name] = found
        else:
            missing.append(name)
    if missing:
        out.update(summaries(run.rows, missing))
    return {name: out[name] for name in run.specs}


def _usage_of(info: Mapping[str, Any]) -> Usage:
    recorded = info.get("usage")
    if not isinstance(recorded, Mapping):
        return Usage()
    names = {f.name for f in dataclasses.fields(Usage)}
    try:
        return Usage(**{k: v for k, v in recorded.items() if k in names})
    except TypeError:
        return Usage()


def _text_map(value: Any) -> dict[str, str]:
    return {str(k): v for k, v in value.items() if v is not None} if value else {}


def _row_of(obj: Mapping[str, Any]) -> RowResult:
    """A checked results line (:func:`ragmeter.io.results.check_record`) as a RowResult."""
    rid, details, metadata = obj.get("id"), obj.get("details"), obj.get("metadata")
    return RowResult(
        index=obj["index"],
        id=None if rid is None else str(rid),
        scores={
            str(k): None if v is None else float(v) for k, v in (obj.get("scores") or {}).items()
        },
        reasons=_text_map(obj.get("reasons")),
        failures=_text_map(obj.get("failures")),
        details=dict(details) if isinstance(details, Mapping) else {},
        metadata=dict(metadata) if isinstance(metadata, Mapping) else None,
        failure_causes=_text_map(obj.get("failure_causes")),
    )


def run_from_rows(
    rows: Iterable[RowResult | Mapping[str, Any]],
    info: Mapping[str, Any] | None = None,
    *,
    results_file: str | os.PathLike[str] | None = None,
) -> RunResult:
    """A RunResult of ``rows`` (RowResults, or results lines as dicts) and a run record
    ``info``: specs and summaries from the record where it has them (see the module
    docstring). Input texts a line carries (``question``, ``answer``, ...) are kept."""
    parsed: list[RowResult] = []
    texts: dict[int, dict[str, Any]] = {}
    for i, row in enumerate(rows):
        if isinstance(row, RowResult):
            parsed.append(row)
            continue
        if not isinstance(row, Mapping):
            raise DataError(
                f"A run row must be a dict or a RowResult. Got {type(row).__name__}: {row!r:.80}."
            )
        parsed.append(_row_of(check_record(dict(row), f"row {i}")))
        if found := input_texts(row):
            texts[row["index"]] = found
    return _run(parsed, texts, info or {}, results_file)


def _run(
    rows: list[RowResult],
    texts: dict[int, dict[str, Any]],
    info: Mapping[str, Any],
    results_file: str | os.PathLike[str] | None,
) -> RunResult:
    record = dict(info)
    specs, guessed = specs_of(record, rows)
    run = RunResult(
        rows=rows,
        summary={},
        usage=_usage_of(record),
        info=record,
        specs=specs,
        results_file=None if results_file is None else Path(results_file),
        texts=texts,
        directions_inferred=guessed,
    )
    run.summary.update(_summaries_of(run))
    return run


def read_run(path: str | os.PathLike[str], *, details: DetailsFilter | None = None) -> RunResult:
    """Read a results JSONL and its run record into a :class:`RunResult`.

    Reads line by line, checking each (:mod:`ragmeter.io.results`: scores in their metrics'
    ranges, indexes in the input's; a row written again by a resumed run counts once, in its
    last version; a cut-off last line is not a row). ``details``, when given, makes each
    row's details what it returns as they are read (a report keeps what its statistics need
    and reads the few rows it shows in full again).
    """
    path = Path(path)
    info = read_sidecar(path)
    scan = scan_results(path, results_expect(info))
    rows: list[RowResult] = []
    texts: dict[int, dict[str, Any]] = {}
    for _, obj in read_results(path, scan):
        if details is not None:
            found = obj.get("details")
            obj["details"] = details(found) if isinstance(found, dict) else {}
        rows.append(_row_of(obj))
        if found := input_texts(obj):
            texts[obj["index"]] = found
    return _run(rows, texts, info or {}, path)
