"""A run for a report: a :class:`~ragmeter.result.RunResult` (what ``evaluate`` returned, or a
results file and its run record read back by :func:`ragmeter.results.read_run`), and the few
things a report reads again: the claim details of the rows it shows in full, and their input
texts.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ragmeter.io.columns import ColumnMap, to_sample
from ragmeter.io.fingerprint import input_fingerprint
from ragmeter.io.readers import open_rows
from ragmeter.io.results import read_results
from ragmeter.result import TEXT_FIELDS, RunResult
from ragmeter.results import read_run, run_from_rows

__all__ = ["as_run", "read_details", "read_inputs", "recorded_input"]


def read_details(path: str | os.PathLike[str], indices: Iterable[int]) -> dict[int, dict[str, Any]]:
    """Details of the rows with the given ``index`` values, read again from ``path``."""
    wanted = set(indices)
    found: dict[int, dict[str, Any]] = {}
    if not wanted:
        return found
    for _, obj in read_results(path):
        if obj["index"] in wanted:
            details = obj.get("details")
            found[obj["index"]] = dict(details) if isinstance(details, Mapping) else {}
            if len(found) == len(wanted):
                break
    return found


def read_inputs(
    data: Any, indices: Iterable[int], *, column_map: Any = None
) -> dict[int, dict[str, Any]]:
    """The input texts (question, answer, contexts, reference answers) of the rows with the
    given indices, read again from ``data`` (a path or rows, as ``evaluate`` takes them)."""
    wanted = set(indices)
    found: dict[int, dict[str, Any]] = {}
    if not wanted:
        return found
    cmap = ColumnMap.from_any(column_map)
    for row in open_rows(data):
        if row.index in wanted and isinstance(row.data, Mapping):
            sample, _ = to_sample(row.data, cmap)
            found[row.index] = {
                name: value for name in TEXT_FIELDS if (value := getattr(sample, name)) is not None
            }
            if len(found) == len(wanted):
                break
    return found


def recorded_input(info: Mapping[str, Any], results: str | os.PathLike[str] | None) -> Path | None:
    """The input file a run record names, when it is still there and unchanged (its sha256
    is the recorded one); a relative name is looked up beside the results too."""
    name, recorded = info.get("data"), info.get("input")
    if not isinstance(name, str) or not isinstance(recorded, Mapping):
        return None
    if recorded.get("source") != "file" or not isinstance(recorded.get("sha256"), str):
        return None
    places = [Path(name)]
    if results is not None and not Path(name).is_absolute():
        places.append(Path(results).parent / name)
    for place in places:
        try:
            if (
                place.is_file()
                and (input_fingerprint(place) or {}).get("sha256") == (recorded["sha256"])
            ):
                return place
        except OSError:
            continue
    return None


def as_run(obj: Any) -> RunResult:
    """Accept a :class:`RunResult`, or the path of a results ``.jsonl`` (read back with its
    run record, :func:`ragmeter.results.read_run`)."""
    if isinstance(obj, RunResult):
        return obj
    if isinstance(obj, str | os.PathLike):
        return read_run(obj)
    if hasattr(obj, "rows"):  # a RunResult-like object (rows and a record)
        info = getattr(obj, "info", None)
        return run_from_rows(obj.rows, info if isinstance(info, Mapping) else {})
    raise TypeError(
        "Expected a run result (RunResult) or the path of a results .jsonl file. "
        f"Got {type(obj).__name__}."
    )
