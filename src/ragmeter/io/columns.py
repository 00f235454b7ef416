"""Column mapping (names, dotted paths, callables, Ragas aliases, other tools' formats) and
row -> Sample coercion."""

from __future__ import annotations

import ast
import dataclasses
import difflib
import io
import itertools
import json
import re
import tokenize
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

from ragmeter.errors import ConfigError, MissingColumnError, did_you_mean, param
from ragmeter.io.formats import InputFormat, detect_format, get_format, path_head
from ragmeter.types import FIELD_KINDS, FIELDS, Sample

#: Other names accepted for canonical fields (Ragas, Unitxt's docs, common variants).
ALIASES: Mapping[str, tuple[str, ...]] = {
    "question": ("user_input", "query"),
    "question_id": ("id",),
    "contexts": ("retrieved_contexts",),
    "contexts_ids": ("retrieved_context_ids", "contexts_id", "context_ids"),
    "answer": ("response",),
    "reference_answers": ("reference", "ground_truth", "ground_truths", "reference_answer"),
    "reference_contexts": (),
    "reference_context_ids": ("reference_contexts_ids",),
    "metadata": ("metadata_field",),
    "is_answerable_label": ("is_answerable",),
}

Source = str | Callable[[Mapping[str, Any]], Any]
_MISSING = object()
_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+|\*)\]")
#: A path part that maps the rest of the path over every item of a list.
_EVERY = "*"


def parse_column_spec(spec: str) -> tuple[str, str]:
    """Parse ``field=path`` (the CLI's ``--column`` spec); the field must be canonical."""
    field, sep, path = spec.partition("=")
    field, path = field.strip(), path.strip()
    if not sep or not field or not path:
        raise ConfigError(
            f"Bad column mapping {spec!r}: expected FIELD=COLUMN, e.g. "
            "'contexts=pred.retrieved_contexts'."
        )
    return _canonical(field), path


def _mapping(field: str) -> str:
    """How to map ``field`` to a column, as the caller names the option:
    ``column_map={'answer': COLUMN}`` in Python, the CLI's ``--column answer=COLUMN``."""
    python = (
        f"column_map={{{field!r}: COLUMN}}" if field != "FIELD" else "column_map={FIELD: COLUMN}"
    )
    return param("column_map", python).replace("FIELD", field)


def _canonical(field: str) -> str:
    if field in FIELDS:
        return field
    for canon, aliases in ALIASES.items():
        if field in aliases:
            return canon
    hint = did_you_mean(field, FIELDS)
    raise ConfigError(f"Unknown field {field!r} in the column mapping.{hint} Fields: {FIELDS}.")


def resolve_path(row: Mapping[str, Any], path: str) -> Any:
    """Value at a dotted path (``pred.contexts``, ``pred.contexts.0``, ``a[1].b``).

    ``[*]`` (or ``.*``) maps the rest of the path over every item of a list:
    ``retrieved_context[*].text`` is the list of each item's ``text``.
    An exact top-level key wins (flattened columns such as ``"pred.contexts"``).
    Returns a sentinel-free result: raises ``KeyError`` naming the part that failed.
    """
    if path in row:
        return row[path]
    parts = [name or index for name, index in _PATH_PART.findall(path)]
    return _walk(row, parts, path, [])


def _walk(value: Any, parts: list[str], path: str, walked: list[str]) -> Any:
    for i, part in enumerate(parts):
        if part == _EVERY:
            if not (isinstance(value, list | tuple) or _is_array(value)):
                where = ".".join(walked) or "the row"
                raise KeyError(
                    f"{path!r}: {where} is {type(value).__name__}, not a list to map [*] over"
                )
            rest = parts[i + 1 :]
            return [_walk(item, rest, path, [*walked, str(n)]) for n, item in enumerate(value)]
        if isinstance(value, Mapping):
            if part not in value:
                raise KeyError(_walk_error(path, walked, part, value))
            value = value[part]
        elif isinstance(value, list | tuple) or _is_array(value):
            if not part.isdigit() or int(part) >= len(value):
                raise KeyError(_walk_error(path, walked, part, value))
            value = value[int(part)]
        else:
            raise KeyError(_walk_error(path, walked, part, value))
        walked.append(part)
    return value


def _walk_error(path: str, walked: list[str], part: str, value: Any) -> str:
    where = ".".join(walked) or "the row"
    if isinstance(value, Mapping):
        close = difflib.get_close_matches(part, [str(k) for k in value], n=3, cutoff=0.5)
        hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
        return f"{path!r}: {where} has no key {part!r}{hint}"
    if isinstance(value, list | tuple) or _is_array(value):
        return f"{path!r}: {where} has {len(value)} items, no index {part!r}"
    return f"{path!r}: {where} is {type(value).__name__}, not a mapping or list"


def _is_array(value: Any) -> bool:
    return hasattr(value, "tolist") and hasattr(value, "__len__") and not isinstance(value, str)


@dataclass(frozen=True, slots=True)
class ColumnMap:
    """Where each canonical field comes from. Unmapped fields use their name or an alias."""

    sources: Mapping[str, Source]
    #: The format chosen (``column_map="NAME"``), else one detected from the columns.
    input_format: InputFormat | None = None
    #: Where each field comes from, by a row's keys (rows of a dataset share them).
    _by_keys: dict[tuple[Any, ...], tuple[tuple[str, Source], ...]] = dataclasses.field(
        default_factory=dict, repr=False, compare=False
    )

    @classmethod
    def from_any(
        cls,
        mapping: Mapping[str, Source] | Iterable[str] | str | None,
        *,
        input_format: str | None = None,
    ) -> ColumnMap:
        """A column map from a mapping (``{"contexts": "pred.contexts"}``), ``field=path``
        specs, a ColumnMap, or the name of another tool's format (``"ragchecker"``,
        ``"ragas"``; see :mod:`ragmeter.io.formats`), which ``input_format`` also names."""
        if isinstance(mapping, str):
            if input_format is not None and input_format != mapping:
                raise ConfigError(
                    f"Two input formats given: {mapping!r} and {input_format!r}. Choose one."
                )
            mapping, input_format = None, mapping
        fmt = None if input_format is None else get_format(input_format)
        if mapping is None:
            return cls({}, fmt)
        if isinstance(mapping, ColumnMap):
            return mapping if fmt is None else dataclasses.replace(mapping, input_format=fmt)
        if isinstance(mapping, Mapping):
            out: dict[str, Source] = {}
            for field, source in mapping.items():
                if not (isinstance(source, str) or callable(source)):
                    raise ConfigError(
                        f"Column mapping for {field!r} must be a column name, a dotted path or "
                        f"a callable. Got {type(source).__name__}."
                    )
                out[_canonical(field)] = source
            return cls(out, fmt)
        return cls(dict(parse_column_spec(s) for s in mapping), fmt)

    def format_for(self, columns: Iterable[str]) -> InputFormat | None:
        """The format chosen, else the one these columns identify (see
        :func:`~ragmeter.io.formats.detect_format`), else None."""
        return self.input_format or detect_format(columns)

    def source_for(self, field: str, columns: Iterable[str]) -> Source | None:
        """The source of ``field`` given the dataset's known top-level columns."""
        if field in self.sources:
            return self.sources[field]
        cols = columns if isinstance(columns, Set) else set(columns)
        if field in cols:
            return field
        for alias in ALIASES.get(field, ()):
            if alias in cols:
                return alias
        fmt = self.format_for(cols)
        return None if fmt is None else fmt.source(field, cols)

    def field_sources(self, keys: tuple[Any, ...]) -> tuple[tuple[str, Source], ...]:
        """``(field, source)`` for every field a row with these keys provides, in field order
        (:meth:`source_for` of each field, remembered for up to 64 sets of keys)."""
        found = self._by_keys.get(keys)
        if found is None:
            cols = set(keys)
            found = tuple(
                (name, source)
                for name in FIELDS
                if (source := self.source_for(name, cols)) is not None
            )
            if len(self._by_keys) < 64:
                self._by_keys[keys] = found
        return found

    def check_columns(self, needed: Mapping[str, list[str]], columns: Iterable[str]) -> None:
        """Reject a dataset lacking a needed field altogether, with close-name suggestions.

        ``needed`` maps field -> metric names that need it.
        """
        cols = list(columns)
        self.check_format(cols)
        problems: list[str] = []
        for field, metrics in needed.items():
            source = self.source_for(field, cols)
            if source is None:
                names = [field, *ALIASES.get(field, ())]
                close = difflib.get_close_matches(field, cols, n=3, cutoff=0.4)
                hint = f" Close column names: {', '.join(map(repr, close))}." if close else ""
                problems.append(
                    f"field {field!r} (needed by {', '.join(metrics)}) is not in the data: "
                    f"looked for column {' or '.join(map(repr, names))}.{hint} Map it with "
                    f"{_mapping(field)}."
                )
            elif isinstance(source, str) and source not in cols:
                head = path_head(source)
                if head not in cols:
                    close = difflib.get_close_matches(head, cols, n=3, cutoff=0.4)
                    hint = f" Close column names: {', '.join(map(repr, close))}." if close else ""
                    problems.append(
                        f"field {field!r} is mapped to {source!r}, but the data has no column "
                        f"{head!r}.{hint}"
                    )
        if problems:
            raise MissingColumnError(
                "The dataset lacks what the chosen metrics need:\n  - "
                + "\n  - ".join(problems)
                + f"\nColumns found: {', '.join(cols) or '(none)'}."
            )

    def check_format(self, columns: Iterable[Any]) -> None:
        """Reject data that lacks the identifying columns of the format chosen (if any)."""
        fmt = self.input_format
        cols = [str(c) for c in columns]
        if fmt is None or not (lacking := fmt.missing(cols)):
            return
        raise MissingColumnError(
            f"The data is not in {fmt.title} format (the format {fmt.name!r} was chosen): it has "
            f"no column {', '.join(map(repr, lacking))}. Columns found: "
            f"{', '.join(cols) or '(none)'}. Leave out {param('input_format', 'the format name')} "
            f"to read the canonical column names, or map them with {_mapping('FIELD')}."
        )

    def check_paths(self, rows: Iterable[Any]) -> None:
        """Reject a mapping to a path that none of ``rows`` (the first rows) has: a typo.

        A path that some rows have and others lack is data, not a typo: those rows fail.
        """
        rows = [row for row in rows if isinstance(row, Mapping)]
        problems: list[str] = []
        if rows:
            self.check_format(dict.fromkeys(itertools.chain.from_iterable(rows)))
        for field, source in self.sources.items():
            if not isinstance(source, str) or not rows:
                continue
            first_error = None
            for row in rows:
                try:
                    resolve_path(row, source)
                except KeyError as exc:
                    first_error = first_error or exc.args[0]
                else:
                    break
            else:
                which = (
                    "the first row lacks"
                    if len(rows) == 1
                    else (f"none of the first {len(rows)} rows has")
                )
                problems.append(
                    f"field {field!r} is mapped to {source!r}, which {which}: {first_error}. "
                    f"Fix the path given to {_mapping(field)}."
                )
        if problems:
            raise MissingColumnError(
                "A column mapping points nowhere:\n  - " + "\n  - ".join(problems)
            )


def to_sample(
    row: Mapping[str, Any], column_map: ColumnMap, columns: Iterable[str] | None = None
) -> tuple[Sample, dict[str, str]]:
    """Coerce one row to a Sample. Returns the sample and ``{field: problem}`` for bad fields.

    A bad field is left as ``None`` in the sample; metrics needing it fail for this row.
    """
    if type(row) is not dict and not isinstance(row, Mapping):
        return Sample(), {
            "*": f"expected a mapping (an object with named fields), got {_kind(row)}"
        }
    if columns is None:
        sources = column_map.field_sources(tuple(row))
    else:
        cols = set(columns)
        sources = tuple((f, s) for f in FIELDS if (s := column_map.source_for(f, cols)) is not None)
    values: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for field, source in sources:
        if type(source) is str and source in row:
            raw = row[source]  # a top-level column, as resolve_path looks it up first
        elif callable(source):
            try:
                raw = source(row)
            except Exception as exc:  # a user's callable may raise anything
                problems[field] = f"column function raised {type(exc).__name__}: {exc}"
                continue
        else:
            try:
                raw = resolve_path(row, source)
            except KeyError as exc:
                # A mapped path, or a format's path into a column the row has, that fails.
                if field in column_map.sources or path_head(source) in row:
                    problems[field] = f"column mapping {exc.args[0]}"
                continue
        kind = FIELD_KINDS[field]
        if type(raw) is str and kind in _TEXT_KINDS:
            values[field] = raw  # the common cases first, as _coerce gives them
        elif type(raw) is list and kind in _LIST_KINDS and _STR.issuperset(map(type, raw)):
            values[field] = tuple(raw)
        else:
            try:
                values[field] = _coerce(field, raw)
            except _BadValue as exc:
                problems[field] = str(exc)
    return Sample(**values), problems


def to_samples(rows: Sequence[Any], column_map: ColumnMap) -> list[tuple[Sample, dict[str, str]]]:
    """:func:`to_sample` of each row.

    Rows alike, the common batch, are coerced column by column: dicts with the same keys whose
    fields all come from top-level columns, each column holding one type of value that its
    field takes as it is (texts for text and id fields, lists of texts for list fields, dicts
    for metadata, booleans). Each row gets what :func:`to_sample` gives it; any other batch is
    coerced row by row.
    """
    columns = _plain_columns(rows, column_map) if rows else None
    if columns is None:
        return [to_sample(row, column_map) for row in rows]
    absent = [None] * len(rows)
    given = [columns.get(name, absent) for name in _SAMPLE_FIELDS]
    return [(Sample(*values), {}) for values in zip(*given, strict=True)]


def _plain_columns(rows: Sequence[Any], column_map: ColumnMap) -> dict[str, list[Any]] | None:
    """Each field's column of values as :func:`to_sample` coerces them, when every row is a
    dict with the first one's keys and every column holds the common case of its kind (see
    :func:`to_samples`); else None."""
    first = rows[0]
    if type(first) is not dict or not all(
        type(r) is dict and r.keys() == first.keys() for r in rows
    ):
        return None
    sources = column_map.field_sources(tuple(first))
    if not sources or not all(type(source) is str and source in first for _, source in sources):
        return None
    columns: dict[str, list[Any]] = {}
    for field, source in sources:
        values = [row[source] for row in rows]
        kind = FIELD_KINDS[field]
        types = set(map(type, values))
        if types == {_KEPT_AS_GIVEN.get(kind)}:
            columns[field] = values
        elif kind == "mapping" and types == {dict}:
            columns[field] = list(map(dict, values))
        elif (
            kind in _LIST_KINDS
            and types == {list}
            and _STR.issuperset(map(type, itertools.chain.from_iterable(values)))
        ):
            columns[field] = list(map(tuple, values))
        else:
            return None
    return columns


#: Sample's fields in the order its constructor takes them.
_SAMPLE_FIELDS = tuple(f.name for f in dataclasses.fields(Sample))
#: Types that are never array-likes (checked by exact type before the slower duck test).
_PLAIN_TYPES = frozenset({str, list, tuple, dict, int, float, bool})
_LIST_KINDS = frozenset({"texts", "ids"})
#: Kinds whose value is a text as given (an id given as text stays that text).
_TEXT_KINDS = frozenset({"text", "id"})
_STR = frozenset({str})
#: The type of value each kind of field keeps as it is.
_KEPT_AS_GIVEN: Mapping[str, type] = {"text": str, "id": str, "bool": bool}


class _BadValue(Exception):
    pass


def _kind(value: Any) -> str:
    text = repr(value)
    text = text if len(text) <= 40 else text[:37] + "..."
    return f"{type(value).__name__} {text}"


def _coerce(field: str, raw: Any) -> Any:
    kind = FIELD_KINDS[field]
    if raw is None:
        return None
    if type(raw) not in _PLAIN_TYPES and _is_array(raw):
        raw = raw.tolist()
    if type(raw) is list and kind in _LIST_KINDS and _STR.issuperset(map(type, raw)):
        return tuple(raw)  # the common case, as the loop below would give it
    if kind == "text":
        if isinstance(raw, str):
            return raw
        raise _BadValue(f"expected text, got {_kind(raw)}")
    if kind == "id":
        if isinstance(raw, bool) or not isinstance(raw, str | int):
            raise _BadValue(f"expected an id (text or integer), got {_kind(raw)}")
        return str(raw)
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, int) and raw in (0, 1):
            return bool(raw)
        if isinstance(raw, str) and raw.strip().lower() in ("true", "false", "1", "0", "yes", "no"):
            return raw.strip().lower() in ("true", "1", "yes")
        raise _BadValue(f"expected true or false, got {_kind(raw)}")
    if kind == "mapping":
        if isinstance(raw, Mapping):
            return dict(raw)
        if isinstance(raw, str) and isinstance(parsed := _mapping_from_text(raw), dict):
            return parsed
        raise _BadValue(
            f"expected a mapping (a JSON object or a Python dict literal), got {_kind(raw)}"
        )
    # texts / ids
    if isinstance(raw, str):
        raw = _list_from_text(raw, kind)
    if not isinstance(raw, list | tuple):
        what = "a list of texts" if kind == "texts" else "a list of ids"
        raise _BadValue(f"expected {what}, got {_kind(raw)}")
    out: list[str] = []
    for i, item in enumerate(raw):
        if kind == "texts":
            if not isinstance(item, str):
                raise _BadValue(f"item {i} must be text, got {_kind(item)}")
            out.append(item)
        else:
            if isinstance(item, bool) or not isinstance(item, str | int):
                raise _BadValue(f"item {i} must be an id (text or integer), got {_kind(item)}")
            out.append(str(item))
    return tuple(out)


def _mapping_from_text(raw: str) -> Any:
    """A mapping given as one string: a JSON object, or a dict written as a Python literal
    (``{'category': 'x'}``, what ``DataFrame.to_csv`` writes for dict columns; read with
    ``ast.literal_eval``, which evaluates literals only), or None."""
    text = raw.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _python_list(text: str) -> list[Any] | None:
    """A list written as a Python literal (``['a', 'b']``, what ``DataFrame.to_csv`` writes
    for list columns), or None. Only literals are read (``ast.literal_eval``)."""
    if not text.endswith("]"):
        return None
    try:
        kinds = [
            t.type
            for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER)
        ]
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError, tokenize.TokenError):
        return None
    # Python joins adjacent strings ("a" "b" is "ab"): a missing comma, not a list item.
    if any(a == b == tokenize.STRING for a, b in itertools.pairwise(kinds)):
        return None
    return value if isinstance(value, list) else None


def _list_from_text(raw: str, kind: str) -> Any:
    """A list field given as one string: a JSON list when it starts with ``[``, else one item.

    CSV cells are strings, so CSV list fields are written as JSON lists (or as Python list
    literals, as pandas writes them). A string that starts with ``[`` but is neither (a
    truncated cell, a missing comma) is an error for the row, never a one-item list: scoring
    it would score the broken text.
    """
    stripped = raw.strip()
    if not stripped.startswith("["):
        return [raw]
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as exc:
        python_list = _python_list(stripped)
        if python_list is not None:
            return python_list
        where = (
            f"line {exc.lineno}, column {exc.colno}"
            if exc.lineno > 1
            else f"character {exc.pos + 1} of {len(stripped)}"
        )
        problem = f"{exc.msg.removesuffix(' at')} at {where}"
        if exc.msg.startswith("Unterminated string"):
            problem += " (is the value cut off?)"
        elif stripped[1:].lstrip().startswith("'"):
            problem += " (JSON needs double quotes; this looks like a Python list)"
    except RecursionError:
        problem = "it nests lists too deeply to read"
    example = '["first text", "second text"]' if kind == "texts" else '["doc1", "doc2"]'
    raise _BadValue(
        f"looks like a JSON list (it starts with '[') but does not parse: {problem}; "
        f"got {_kind(raw)}. Write the whole list as JSON, e.g. {example} (in a CSV cell, "
        'quote the cell and double the inner quotes: "[""first text""]"); a single value '
        "that itself starts with '[' must be put in a one-item list, e.g. "
        '["[1] text"].'
    )
