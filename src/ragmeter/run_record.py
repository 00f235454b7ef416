"""The run record (``<results>.run.json``) read back: for reports, and for ``--resume``, which
appends only to the results of the same input.

A run writes its record when its first row is written (the input's fingerprint, the metrics)
and again at its end (summaries, usage). ``--resume`` refuses a results file without a record
(not written by ragmeter), or whose record names another input, before it reads or cuts a byte
of it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragmeter.errors import DataError
from ragmeter.io.fingerprint import same_input
from ragmeter.io.results import Expect
from ragmeter.result import sidecar_path

__all__ = ["check_resumable", "read_sidecar", "results_expect"]


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


def results_expect(info: Mapping[str, Any] | None) -> Expect:
    """What the rows of a results file must satisfy, from its run record: each metric's range
    (the record's, else the registry's) and the input's row count (when recorded)."""
    from ragmeter.metrics.registry import all_specs

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


def check_resumable(
    results: Path, fingerprint: dict[str, Any] | None, *, data_name: str
) -> dict[str, Any]:
    """The run record of ``results`` if it was written for the input ``fingerprint`` names;
    ``DataError`` otherwise (the file is left as it is)."""
    record = sidecar_path(results)
    fresh = "Give --out a new path, or leave out --resume to start over (the file is replaced)."
    if fingerprint is None:
        raise DataError(
            f"--resume needs data that can be read twice, to check that {results} holds its "
            "results: a file path, a list, a DataFrame or a Dataset, not an iterator."
        )
    info = read_sidecar(results)
    if info is None:
        raise DataError(
            f"{results} has no run record ({record.name} beside it), so it was not written by "
            f"ragmeter, or its record was deleted; --resume appends only to results of this "
            f"input. {fresh}"
        )
    recorded = info.get("input")
    if not isinstance(recorded, Mapping):
        raise DataError(
            f"The run record {record} does not name the input {results} holds results of "
            f"(an older ragmeter, or RunResult.to_jsonl, wrote it). {fresh}"
        )
    if not same_input(recorded, fingerprint):
        raise DataError(
            f"{results} holds the results of another input: its run record names "
            f"{info.get('data')!r} (sha256 {str(recorded.get('sha256'))[:12]}...), and this "
            f"input {data_name!r} differs (sha256 {fingerprint['sha256'][:12]}...). {fresh}"
        )
    return info
