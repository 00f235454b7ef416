"""Read a results file back: the lines that count, for ``--resume`` and for reports alike.

A results file is append-only: one JSON object per scored row. A row that failed because of
the judge or the infrastructure (its ``failure_causes``) is scored again by ``--resume``, and
its new line, further down, replaces it. Any other repeated index is an error, and so is a
line that is not a JSON object with an integer ``index``: the file was not written by ragmeter
or was edited. A last line without its newline was cut off by a killed run; it is not a row
(``--resume`` cuts it off before appending).

Reading takes two passes: the first keeps one line number per row index (flat memory however
long the file), the second yields the lines that count, in file order.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.errors import DataError
from ragmeter.types import RETRIED_CAUSES

__all__ = ["ResultsScan", "read_results", "scan_results"]


@dataclass(slots=True)
class ResultsScan:
    """What the first pass found."""

    path: Path
    #: Row index -> line number (1-based) of the line that counts.
    final: dict[int, int] = field(default_factory=dict)
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


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, raw line) of every complete line; stops at a torn last line."""
    with _open(path) as fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.endswith(b"\n"):
                return
            yield lineno, raw


def _record(path: Path, lineno: int, raw: bytes) -> dict[str, Any]:
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
    if not isinstance(obj, dict):
        raise DataError(
            f"{where}: expected a JSON object (a row of results). Got {type(obj).__name__}."
        )
    index = obj.get("index")
    if index is None:
        raise DataError(f"{where}: the row has no 'index'. Is this a ragmeter results file?")
    if isinstance(index, bool) or not isinstance(index, int):
        raise DataError(f"{where}, field 'index': must be an integer. Got {index!r:.80}.")
    return obj


def _retried(obj: dict[str, Any]) -> bool:
    causes = obj.get("failure_causes")
    return isinstance(causes, dict) and any(c in RETRIED_CAUSES for c in causes.values())


def scan_results(path: str | os.PathLike[str]) -> ResultsScan:
    """First pass: which line counts for each row index; raises ``DataError`` naming the line."""
    scan = ResultsScan(Path(path))
    retried: set[int] = set()
    for lineno, raw in _lines(scan.path):
        scan.good_bytes += len(raw)
        if not raw.strip():
            continue
        obj = _record(scan.path, lineno, raw)
        index = obj["index"]
        earlier = scan.final.get(index)
        if earlier is not None and index not in retried:
            raise DataError(
                f"{scan.path}, line {lineno}, field 'index': row {index} is already on line "
                f"{earlier}. A results file holds each row once (a row is written again only "
                "after it failed on the judge); was it appended to by hand or by another tool?"
            )
        scan.final[index] = lineno
        if _retried(obj):
            retried.add(index)
        else:
            retried.discard(index)
    scan.torn = scan.path.stat().st_size > scan.good_bytes
    return scan


def read_results(
    path: str | os.PathLike[str], scan: ResultsScan | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) of every line that counts, in file order (second pass)."""
    scan = scan or scan_results(path)
    wanted = set(scan.final.values())
    for lineno, raw in _lines(scan.path):
        if lineno in wanted:
            yield lineno, _record(scan.path, lineno, raw)
