"""Read every row's index, id and scores from a results file fast, parsing whole lines only
where needed (``ragmeter calibrate`` on large runs).

A results line as ragmeter writes it starts ``{"index": N, "id": ID, "scores": {...}``; the
scores are a flat object. :func:`read_score_lines` takes those three from the start of each
line with one regular expression and parses all the lines' scores with one ``json.loads``
call, then checks them as :func:`ragmeter.io.results.check_record` does (numbers or null,
finite, in their metric's range; the index in the input's range). The rest of such a line
(reasons, failures, details) is not parsed. A line is parsed whole with ``json.loads`` and
checked with ``check_record`` when it does not start that way, when it records failure causes
(whether a resumed run may replace it), or when the caller asks for its whole object (the rows
whose claim details are needed). Repeated indexes follow the rules of
:func:`ragmeter.io.results.scan_results`: the later line counts only where a resumed run wrote
it. A last line cut off by a killed run (no newline) is not a row.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.errors import DataError
from ragmeter.io.results import Expect, _check_scores, check_record
from ragmeter.types import RETRIED_CAUSES

__all__ = ["ScoreLines", "read_score_lines"]

#: The start of a line as ragmeter writes it: index, id (null, printable ASCII text without
#: escapes, or an integer) and the flat scores object, whose keys are printable ASCII without
#: escapes or braces and whose values are bare JSON literals. A line that matches and is valid
#: JSON has its scores object here whole; one that does not match is parsed whole.
_KEY = rb'"[ !#-\[\]-z|~]*": [-+.0-9A-Za-z]+'
_START = re.compile(
    rb'\{"index": (0|[1-9][0-9]*), "id": (null|"[ !#-\[\]-~]*"|-?(?:0|[1-9][0-9]*)), '
    rb'"scores": (\{(?:' + _KEY + rb", )*" + _KEY + rb"\}|\{\})"
)
_CAUSES = b'"failure_causes"'
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
    """The line parsed and checked; ``None`` for a blank or cut-off last line."""
    where = f"{path}, line {lineno}"
    try:
        obj = json.loads(raw)
    except RecursionError:
        raise DataError(f"{where}: JSON nested too deep for a results line.") from None
    except ValueError as exc:  # also bad UTF-8
        if not raw.strip():
            return None
        if not raw.endswith(b"\n"):
            return None  # a last line cut off by a killed run
        msg = getattr(exc, "msg", str(exc))
        raise DataError(f"{where}: not valid JSON ({msg}).") from None
    return check_record(obj, where, expect)


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
            _check_scores(scores, f"{path}, line {lineno}", expect)


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
    with path.open("rb") as f:
        for lineno, raw in enumerate(f, start=1):
            found = match(raw)
            obj = None
            if found is not None and raw.endswith(b"}\n") and _CAUSES not in raw:
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
        raise DataError(
            f"{path}, line {lineno}, field 'index': row {out.indexes[pos]} is already on line "
            f"{lines[pos]}. A row is written again only by a resumed run."
        )
    lines[pos] = lineno
    out.kept.pop(pos, None)
