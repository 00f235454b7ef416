"""A run's rows split by the value at a path (``metadata.category``): the report's groups.

A path is a row field (``id``, ``index``, ``question``, ``answer``) or a dotted path into
``metadata``; a bare name that is not a row field is read from ``metadata``. Each group is a
:class:`~ragmeter.result.RunResult` of its rows, with its own summaries.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from ragmeter.errors import DataError, param
from ragmeter.result import RunResult
from ragmeter.results import summaries
from ragmeter.types import RowResult

__all__ = ["check_group_path", "group_paths", "groups", "lookup", "subset"]


def lookup(row: RowResult, path: str, texts: Mapping[str, Any] | None = None) -> Any:
    """Value at a dotted ``path`` (``metadata.category``, ``id``) of ``row``, whose input
    texts are ``texts`` when known; ``None`` if absent."""
    parts = [p for p in path.split(".") if p]
    if not parts:
        return None
    head, rest = parts[0], parts[1:]
    value: Any
    if head in ("index", "id"):
        value = getattr(row, head)
    elif head in ("question", "answer"):
        value = (texts or {}).get(head)
    elif head == "metadata":
        value = row.metadata
    else:
        value, rest = row.metadata, parts
    for part in rest:
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def group_paths(
    rows: Iterable[RowResult], texts: Mapping[int, Mapping[str, Any]] | None = None
) -> list[str]:
    """The paths a report can group ``rows`` by: row fields and ``metadata`` keys, nested."""
    found: dict[str, None] = {}
    for row in rows:
        if row.id is not None:
            found["id"] = None
        for name in (texts or {}).get(row.index, {}):
            if name in ("question", "answer"):
                found[name] = None
        stack: list[tuple[str, Any]] = [("metadata", row.metadata)]
        while stack:
            prefix, value = stack.pop()
            if isinstance(value, Mapping):
                stack.extend((f"{prefix}.{key}", item) for key, item in value.items())
            elif value is not None:
                found[prefix] = None
    return sorted(found)


def check_group_path(
    path: str,
    rows: Iterable[RowResult],
    *,
    unread: str | None = None,
    texts: Mapping[int, Mapping[str, Any]] | None = None,
) -> None:
    """Raise ``DataError`` when no row has a value at ``path``: a typo, not a group.

    Names close paths of the rows (``metadata.category`` for ``metadata.categroy``);
    ``unread`` says why some rows' metadata could not be read, when the caller knows.
    """
    rows = list(rows)
    texts = texts or {}
    if any(lookup(row, path, texts.get(row.index)) is not None for row in rows):
        return
    known = group_paths(rows, texts)
    leaves = {name.rsplit(".", 1)[-1] for name in known}
    close_leaves = difflib.get_close_matches(path.rsplit(".", 1)[-1], leaves, n=3, cutoff=0.6)
    close = [name for name in known if name.rsplit(".", 1)[-1] in close_leaves]
    hint = f" Did you mean {', '.join(map(repr, close[:3]))}?" if close else ""
    why = f" {unread}" if unread else ""
    grouped = [name for name in known if name != "id"]  # one group per row: no grouping
    if grouped:
        shown = ", ".join(grouped[:20]) + (", ..." if len(grouped) > 20 else "")
        fix = f" Paths the rows have: {shown}; give one of them as {param('group_by')}."
    else:
        fix = " The rows have no metadata to group by."
    raise DataError(f"Cannot group by {path!r}: no row has a value there.{why}{hint}{fix}")


def subset(run: RunResult, rows: list[RowResult]) -> RunResult:
    """``run`` over only ``rows``, with their own summaries."""
    return run.with_rows(rows, summaries(rows, run.specs))


def groups(run: RunResult, path: str, *, max_groups: int = 20) -> dict[str, RunResult]:
    """Rows split by the value at ``path`` (``metadata.category``), largest groups first.

    Rows without the field go to ``(missing)``; past ``max_groups`` the smallest groups
    are merged into ``(other)``. A path no row has raises ``DataError`` naming close ones.
    The split is kept: asking again returns the same sub-runs (and their statistics).
    """
    found = run.memo(f"groups:{max_groups}:{path}", lambda: _split(run, path, max_groups))
    return dict(found)


def _split(run: RunResult, path: str, max_groups: int) -> dict[str, RunResult]:
    check_group_path(path, run.rows, texts=run.texts)
    buckets: dict[str, list[RowResult]] = {}
    for row in run.rows:
        value = lookup(row, path, run.texts.get(row.index))
        label = "(missing)" if value is None else _label(value)
        buckets.setdefault(label, []).append(row)
    ordered = sorted(buckets.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    if len(ordered) > max_groups:
        kept, rest = ordered[: max_groups - 1], ordered[max_groups - 1 :]
        other = [r for _, rows in rest for r in rows]
        other.sort(key=lambda r: r.index)
        ordered = [*kept, ("(other)", other)]
    return {label: subset(run, rows) for label, rows in ordered}


def _label(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
