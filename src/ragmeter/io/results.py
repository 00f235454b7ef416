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
however long the file), the second yields the lines that count, in file order
(:func:`scan_results`, :func:`read_results`). :func:`read_score_lines` is the same reader's
fast path for what ``ragmeter calibrate`` reads of a large run (every row's index, id and
scores): one pass, the start of each line as ragmeter writes it taken with one regular
expression and all the lines' scores parsed by one ``json.loads`` call, then checked as every
line is checked; a line that does not start that way, or that records failure causes, or
whose whole object the caller asks for, is parsed and checked whole.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.errors import DataError
from ragmeter.types import RETRIED_CAUSES

__all__ = [
    "Expect",
    "ResultsScan",
    "ScoreLines",
    "check_record",
    "check_scores",
    "read_record_at",
    "read_results",
    "read_score_lines",
    "scan_results",
]

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


def check_scores(scores: Any, where: str, expect: Expect) -> None:
    """``DataError`` naming ``where`` and the field when ``scores`` is not an object of
    metric -> number (finite, in the metric's range) or null."""
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
    check_scores(obj.get("scores"), where, expect)
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


def _repeated(path: Path, lineno: int, index: int, earlier: int) -> DataError:
    """The error of a row written again where only a resumed run may write it again."""
    return DataError(
        f"{path}, line {lineno}, field 'index': row {index} is already on line {earlier}. A row "
        "is written again only by a resumed run, after it failed on the judge or to add "
        "metrics; was the file appended to by hand or by another tool?"
    )


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
                raise _repeated(scan.path, lineno, index, earlier[0])
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


# -- the fast path: index, id and scores of every row ------------------------------------
#: The start of a line as ragmeter writes it: index, id (null, printable ASCII text without
#: escapes, or an integer) and the flat scores object, whose keys are printable ASCII without
#: escapes or braces and whose values are bare JSON literals. A line that matches and is valid
#: JSON has its scores object here whole; one that does not match is parsed whole.
_KEY = rb'"[ !#-\[\]-z|~]*": [-+.0-9A-Za-z]+'
_START = re.compile(
    rb'\{"index": (0|[1-9][0-9]*), "id": (null|"[ !#-\[\]-~]*"|-?(?:0|[1-9][0-9]*)), '
    rb'"scores": (\{(?:' + _KEY + rb", )*" + _KEY + rb"\}|\{\})"
)
_CAUSES_KEY = b'"failure_causes"'
_NOT_PARSED: Mapping[str, Any] = {}


@dataclass(slots=True)
class ScoreLines:
    """The rows of a results file in the order of their first line, each in its last version."""

    indexes: list[int] = field(default_factory=list)
    ids: list[str | None] = field(default_factory=list)
    scores: list[Mapping[str, Any]] = field(default_factory=list)
    #: Position -> the row's whole object, for the rows the caller asked to keep.
    kept: dict[int, dict[str, Any]] = field(default_factory=dict)


def _whole(path: Path, lineno: int, raw: bytes, expect: Expect) -> dict[str, Any] | None:
    """The line parsed and checked as the two-pass reader checks it; ``None`` for a blank
    line or a last line cut off by a killed run (no newline)."""
    if not raw.endswith(b"\n") or not raw.strip():
        return None
    return _record(path, lineno, raw, expect)


def _parse_scores(path: Path, texts: list[bytes], lines: list[int]) -> list[dict[str, Any]]:
    """Every line's scores object, in one ``json.loads`` call; line by line to name the line
    when that fails."""
    try:
        parsed = json.loads(b"[" + b",".join(texts) + b"]")
    except ValueError:
        parsed = []
        for text, lineno in zip(texts, lines, strict=True):
            try:
                parsed.append(json.loads(text))
            except ValueError as exc:
                msg = getattr(exc, "msg", str(exc))
                raise DataError(f"{path}, line {lineno}: not valid JSON ({msg}).") from None
    return parsed


def _check_all_scores(
    path: Path,
    parsed: Sequence[Mapping[str, Any]],
    lines: list[int],
    expect: Expect,
    more_bounds: Callable[[], Mapping[str, tuple[float, float]]] | None = None,
) -> None:
    """What ``_check_scores`` checks, on every line at once; on any doubt line by line, which
    raises naming the line and the field. A metric without bounds in ``expect`` takes them
    from ``more_bounds()`` (called only then)."""
    names = {name for scores in parsed for name in scores}
    if more_bounds is not None and not names <= expect.bounds.keys():
        expect = Expect({**more_bounds(), **expect.bounds}, expect.n_rows)
    values = [v for scores in parsed for v in scores.values()]
    ok = set(map(type, values)) <= {float, int, type(None)}
    if ok:
        numbers = [v for v in values if v is not None]
        ok = all(map(math.isfinite, numbers))
    if ok:
        for name in names & expect.bounds.keys():
            low, high = expect.bounds[name]
            column = [v for s in parsed if (v := s.get(name)) is not None]
            if column and (min(column) < low or max(column) > high):
                ok = False
                break
    if not ok:
        for scores, lineno in zip(parsed, lines, strict=True):
            check_scores(scores, f"{path}, line {lineno}", expect)


def read_score_lines(
    path: str | os.PathLike[str],
    expect: Expect | None = None,
    *,
    keep_ids: Collection[str] = (),
    keep_indexes: Collection[int] = (),
    more_bounds: Callable[[], Mapping[str, tuple[float, float]]] | None = None,
) -> ScoreLines:
    """Index, id and scores of every row of ``path`` (see the module docstring); the whole
    object of each row whose id is in ``keep_ids`` or index in ``keep_indexes``. A metric
    without bounds in ``expect`` takes them from ``more_bounds()``, called only then (so that
    the metric registry is read only for metrics a run record does not describe). Errors name
    the line and the field."""
    path = Path(path)
    expect = expect or Expect()
    keep_ids, keep_indexes = frozenset(keep_ids), frozenset(keep_indexes)

    out = ScoreLines()
    # Per row position: its scores text while not parsed yet, and the line that counts.
    texts: list[bytes | None] = []
    lines: list[int] = []
    pos_of: dict[int, int] = {}
    retried: set[int] = set()  # positions whose line a resumed run may replace
    match, n_rows = _START.match, expect.n_rows
    with _open(path) as f:
        for lineno, raw in enumerate(f, start=1):
            found = match(raw)
            obj = None
            if found is not None and raw.endswith(b"}\n") and _CAUSES_KEY not in raw:
                index_text, id_text, text = found.groups()
                index = int(index_text)
                if id_text == b"null":
                    row_id = None
                elif id_text[0] == 34:  # '"'
                    row_id = id_text[1:-1].decode("ascii")
                else:
                    row_id = id_text.decode("ascii")
                if index in keep_indexes or row_id in keep_ids:
                    found = None
                elif n_rows is not None and index >= n_rows:
                    check_record({"index": index}, f"{path}, line {lineno}", expect)
            else:
                found = None
            if found is None:
                obj = _whole(path, lineno, raw, expect)
                if obj is None:
                    if raw.strip():
                        break  # the cut-off last line
                    continue
                index, row_id, text = obj["index"], obj.get("id"), None
                row_id = None if row_id is None else str(row_id)
            pos = pos_of.get(index)
            if pos is None:
                pos = pos_of[index] = len(texts)
                out.indexes.append(index)
                out.ids.append(row_id)
                out.scores.append(_NOT_PARSED)
                texts.append(text)
                lines.append(lineno)
            else:
                now = (obj.get("scores") or {}) if obj is not None else text
                _replace(path, expect, out, pos, texts, lines, retried, lineno, now)  # type: ignore[arg-type]
                out.ids[pos], texts[pos] = row_id, text
            if obj is None:
                retried.discard(pos)
            else:
                out.scores[pos], texts[pos] = obj.get("scores") or {}, None
                causes = obj.get("failure_causes") or {}
                if any(c in RETRIED_CAUSES for c in causes.values()):
                    retried.add(pos)
                else:
                    retried.discard(pos)
                if index in keep_indexes or row_id in keep_ids:
                    out.kept[pos] = obj
    fast = [pos for pos, text in enumerate(texts) if text is not None]
    fast_lines = [lines[pos] for pos in fast]
    parsed = _parse_scores(path, [texts[pos] for pos in fast], fast_lines)  # type: ignore[misc]
    for pos, scores in zip(fast, parsed, strict=True):
        out.scores[pos] = scores
    _check_all_scores(path, out.scores, lines, expect, more_bounds)
    return out


def _replace(
    path: Path,
    expect: Expect,
    out: ScoreLines,
    pos: int,
    texts: list[bytes | None],
    lines: list[int],
    retried: set[int],
    lineno: int,
    now: Mapping[str, Any] | bytes,
) -> None:
    """Row ``pos`` written again on line ``lineno`` (its scores ``now``, an object or the text
    of one): allowed where a resumed run wrote it (the earlier line failed on the judge or the
    infrastructure, or the later one adds metrics); the earlier line's scores are still
    checked, as every line's are."""
    earlier = texts[pos]
    if earlier is None:
        had = out.scores[pos]
    else:
        had = _parse_scores(path, [earlier], [lines[pos]])[0]
        _check_all_scores(path, [had], [lines[pos]], expect)
    if isinstance(now, bytes):
        now = _parse_scores(path, [now], [lineno])[0]
    if pos not in retried and now.keys() <= had.keys():
        raise _repeated(path, lineno, out.indexes[pos], lines[pos])
    lines[pos] = lineno
    out.kept.pop(pos, None)
