"""Read a results file back, checked line by line: one reader for a resumed run and for reports.

A results file is append-only: one JSON object per scored row. A later line for a row replaces
an earlier one only when a resumed run wrote it: the earlier line failed because of the judge or
the infrastructure (its ``failure_causes``), or the later one adds metrics the earlier lacked
(metrics added since the first run). Any other repeated index is an error, and so is a line
that is not a row of results: not a JSON object, an index that is not an integer in the
input's range, a score that is not a number in its metric's range (NaN included), reasons or
failures that are not text. Every error names the file, the line and the field. A last line
without its newline was cut off by a killed run; it is not a row (a resumed run cuts it off
before appending, and cuts nothing else).

Reading takes two passes: the first keeps one line number and offset per row index (flat memory
however long the file), the second yields the lines that count, in file order.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.errors import DataError
from ragmeter.types import RETRIED_CAUSES

__all__ = ["Expect", "ResultsScan", "read_record_at", "read_results", "scan_results"]

_CAUSES = frozenset({"row", *RETRIED_CAUSES})


@dataclass(frozen=True, slots=True)
class Expect:
    """What the rows of a results file must satisfy beyond their shape."""

    #: Metric -> (lower, upper): a score outside fails the file. Other metrics: finite only.
    bounds: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    #: Rows of the input: an index must be below it (None: not known).
    n_rows: int | None = None


@dataclass(slots=True)
class ResultsScan:
    """What the first pass found."""

    path: Path
    expect: Expect
    #: Row index -> (line number, byte offset) of the line that counts.
    final: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: Bytes up to the end of the last complete line (a torn last line starts there).
    good_bytes: int = 0
    #: Whether the file ends in a line without its newline.
    torn: bool = False


def _open(path: Path) -> Any:
    if path.is_dir():
        raise DataError(f"{path} is a folder; give the results .jsonl file a run wrote.")
    try:
        return path.open("rb")
    except FileNotFoundError:
        raise DataError(f"Results file not found: {path}. Give the JSONL a run wrote.") from None
    except OSError as exc:
        raise DataError(f"Cannot open results file {path}: {exc.strerror or exc}.") from None


def _lines(path: Path) -> Iterator[tuple[int, int, bytes]]:
    """(line number, byte offset, raw line) of every complete line; stops at a torn last one."""
    offset = 0
    with _open(path) as fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.endswith(b"\n"):
                return
            yield lineno, offset, raw
            offset += len(raw)


def _text_map(obj: dict[str, Any], name: str, where: str) -> None:
    value = obj.get(name)
    if value is None:
        return
    if not isinstance(value, dict):
        raise DataError(f"{where}, field '{name}': must be an object. Got {type(value).__name__}.")
    for key, text in value.items():
        if not isinstance(text, str):
            raise DataError(
                f"{where}, field '{name}.{key}': must be text. Got {type(text).__name__}."
            )


def _check_scores(scores: Any, where: str, expect: Expect) -> None:
    if scores is None:
        return
    if not isinstance(scores, dict):
        raise DataError(
            f"{where}, field 'scores': must be an object of metric -> number or null. "
            f"Got {type(scores).__name__}."
        )
    for metric, value in scores.items():
        if value is None:
            continue
        at = f"{where}, field 'scores.{metric}'"
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise DataError(f"{at}: the score must be a number or null. Got {value!r:.80}.")
        if not math.isfinite(value):
            raise DataError(
                f"{at}: the score must be finite. Got {value!r}; an undefined score is written "
                "as null with a reason."
            )
        bounds = expect.bounds.get(metric)
        if bounds is not None and not bounds[0] <= value <= bounds[1]:
            raise DataError(
                f"{at}: the score {value!r} lies outside {metric}'s range "
                f"[{bounds[0]:g}, {bounds[1]:g}]."
            )


def check_record(obj: Any, where: str, expect: Expect = Expect()) -> dict[str, Any]:
    """``obj`` if it is a valid row of results, else ``DataError`` naming ``where`` and the
    field."""
    if not isinstance(obj, dict):
        raise DataError(
            f"{where}: expected a JSON object (a row of results). Got {type(obj).__name__}."
        )
    index = obj.get("index")
    if index is None:
        raise DataError(f"{where}: the row has no 'index'. Is this a ragmeter results file?")
    if isinstance(index, bool) or not isinstance(index, int):
        raise DataError(f"{where}, field 'index': must be an integer. Got {index!r:.80}.")
    if index < 0 or (expect.n_rows is not None and index >= expect.n_rows):
        rows = "" if expect.n_rows is None else f" (the input has {expect.n_rows} rows)"
        raise DataError(f"{where}, field 'index': row {index} is not a row of the input{rows}.")
    _check_scores(obj.get("scores"), where, expect)
    for name in ("reasons", "failures", "failure_causes"):
        _text_map(obj, name, where)
    for metric, cause in (obj.get("failure_causes") or {}).items():
        if cause not in _CAUSES:
            raise DataError(
                f"{where}, field 'failure_causes.{metric}': unknown cause {cause!r}; one of "
                f"{', '.join(sorted(_CAUSES))}."
            )
    return obj


def _record(path: Path, lineno: int, raw: bytes, expect: Expect) -> dict[str, Any]:
    where = f"{path}, line {lineno}"
    try:
        obj = json.loads(raw)
    except UnicodeDecodeError as exc:
        raise DataError(f"{where}: not UTF-8 text ({exc.reason}).") from None
    except RecursionError:
        raise DataError(f"{where}: JSON nested too deep for a results line.") from None
    except ValueError as exc:
        msg = getattr(exc, "msg", str(exc))
        raise DataError(
            f"{where}: not valid JSON ({msg}). Each line of a results file is one JSON object; "
            f"got {raw.strip()[:80]!r}."
        ) from None
    return check_record(obj, where, expect)


def _retried(obj: Mapping[str, Any]) -> bool:
    causes = obj.get("failure_causes") or {}
    return any(cause in RETRIED_CAUSES for cause in causes.values())


def _metrics(obj: Mapping[str, Any]) -> frozenset[str]:
    return frozenset(obj.get("scores") or ())


def scan_results(path: str | os.PathLike[str], expect: Expect = Expect()) -> ResultsScan:
    """First pass: check every line and find which line counts for each row index."""
    scan = ResultsScan(Path(path), expect)
    # Per index: whether its line may be replaced (retried), and its metrics.
    replaceable: dict[int, tuple[bool, frozenset[str]]] = {}
    for lineno, offset, raw in _lines(scan.path):
        scan.good_bytes = offset + len(raw)
        if not raw.strip():
            continue
        obj = _record(scan.path, lineno, raw, expect)
        index, metrics = obj["index"], _metrics(obj)
        earlier = scan.final.get(index)
        if earlier is not None:
            retried, had = replaceable[index]
            if not retried and metrics <= had:
                raise DataError(
                    f"{scan.path}, line {lineno}, field 'index': row {index} is already on line "
                    f"{earlier[0]}. A row is written again only by a resumed run, after it failed "
                    "on the judge or to add metrics; was the file appended to by hand or by "
                    "another tool?"
                )
        scan.final[index] = (lineno, offset)
        replaceable[index] = (_retried(obj), metrics)
    scan.torn = scan.path.stat().st_size > scan.good_bytes
    return scan


def read_results(
    path: str | os.PathLike[str], scan: ResultsScan | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) of every line that counts, in file order (second pass)."""
    scan = scan or scan_results(path)
    wanted = {lineno for lineno, _ in scan.final.values()}
    for lineno, _, raw in _lines(scan.path):
        if lineno in wanted:
            yield lineno, _record(scan.path, lineno, raw, scan.expect)


def read_record_at(scan: ResultsScan, index: int) -> dict[str, Any]:
    """The record that counts for row ``index`` (read again from its offset)."""
    lineno, offset = scan.final[index]
    with _open(scan.path) as fh:
        fh.seek(offset)
        return _record(scan.path, lineno, fh.readline(), scan.expect)
