"""A ``.json`` file's rows: a list of objects, or an object holding one under a known key
("data", "rows", "samples", "records", "results"), items nested too deep failing alone."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any

from ragmeter.errors import DataError
from ragmeter.io.rows import (
    DEEP_ITEM,
    TOO_DEEP,
    ReadHash,
    Row,
    RowSource,
    peeked,
    shallow_row,
)

__all__ = ["json_rows"]


def json_rows(path: Path, seen: ReadHash | None = None) -> RowSource:
    raw = path.read_bytes()
    if seen is not None:
        seen.update(raw)
        seen.finish()
    if not raw.strip():
        raise DataError(
            f"The file {path} has no rows. It is empty; a .json file holds a list of objects, "
            "one per sample."
        )
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise DataError(f"{str(path)!r} is not valid JSON: {exc}.") from None
    except RecursionError:
        data = _json_list_items(path, raw)
    if isinstance(data, dict):
        # "results": RAGChecker's checking_inputs.json.
        for key in _ROW_KEYS:
            if isinstance(data.get(key), list):
                data = data[key]
                break
        else:
            raise DataError(_no_row_list(path, data))
    if not isinstance(data, list):
        raise DataError(
            f"{str(path)!r} must hold a JSON list of objects (one per sample). "
            f"Got a JSON {type(data).__name__}. For one object per line use .jsonl."
        )
    empty = f"The file {path} has no rows. Its JSON list is empty; put one object per sample in it."
    if not data:
        raise DataError(empty)
    rows = (_json_item(i, r, path.name) for i, r in enumerate(data))
    return peeked(rows, 200, str(path), len(data), empty=lambda: empty)


#: A string or a bracket of JSON text, for skipping a value too deep to parse.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def _json_list_items(path: Path, raw: bytes) -> list[Any]:
    """The items of a JSON list one by one, an item too deep to parse as ``DEEP_ITEM``.

    Used only when parsing the whole file hit the recursion limit.
    """
    text = raw.decode(json.detect_encoding(raw)).lstrip("\ufeff")
    decoder = json.JSONDecoder()
    items: list[Any] = []

    def skip_space(i: int) -> int:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        return i

    i = skip_space(0)
    if not text.startswith("[", i):
        raise DataError(
            f"{str(path)!r} nests JSON deeper than Python can read. Give the samples as a "
            "JSON list of objects, or as JSONL (one object per line)."
        )
    i = skip_space(i + 1)
    while i < len(text) and text[i] != "]":
        try:
            item, i = decoder.raw_decode(text, i)
        except ValueError as exc:
            raise DataError(f"{str(path)!r} is not valid JSON: {exc}.") from None
        except RecursionError:
            item, i = DEEP_ITEM, _skip_value(path, text, i)
        items.append(item)
        i = skip_space(i)
        if text.startswith(",", i):
            i = skip_space(i + 1)
        elif not text.startswith("]", i):
            raise DataError(f"{str(path)!r} is not valid JSON: expected ',' or ']' at char {i}.")
    return items


def _skip_value(path: Path, text: str, start: int) -> int:
    """The end of the array or object that starts at ``start``."""
    depth = 0
    for match in _JSON_TOKEN.finditer(text, start):
        token = match.group()
        if token in "[{":
            depth += 1
        elif token in "]}":
            depth -= 1
            if depth == 0:
                return match.end()
    raise DataError(f"{str(path)!r} is not valid JSON: an array or object is never closed.")


#: The keys of a JSON object whose list holds the rows ("results": RAGChecker's
#: checking_inputs.json).
_ROW_KEYS = ("data", "rows", "samples", "records", "results")


def _no_row_list(path: Path, data: dict[Any, Any]) -> str:
    """Why a JSON object holds no rows, naming its keys and the one the user likely meant
    (``"result"`` for RAGChecker's ``"results"``)."""
    keys = [str(k) for k in data]
    shown = ", ".join(repr(k) for k in keys[:10]) + (", ..." if len(keys) > 10 else "")
    wanted = ", ".join(repr(k) for k in _ROW_KEYS)
    message = (
        f"{str(path)!r} must hold a JSON list of objects (one per sample), at the top level "
        f"or under one of the keys {wanted} (RAGChecker's checking_inputs.json uses "
        f"'results'). It is a JSON object with none of them; its keys: {shown or '(none)'}."
    )
    for key in keys:
        close = difflib.get_close_matches(key.lower(), _ROW_KEYS, n=1, cutoff=0.6)
        if close:
            found = data[key]
            what = "a list" if isinstance(found, list) else f"a JSON {type(found).__name__}"
            if isinstance(found, list):
                return f"{message} Did you mean {close[0]!r}? Rename {key!r} ({what}) to it."
            return f"{message} {key!r} is {what}, not a list of rows."
    lists = [k for k in keys if isinstance(data[k], list)]
    if lists:
        return f"{message} Rename the key that holds the rows ({lists[0]!r}?) to 'rows'."
    return f"{message} For one object per line use .jsonl."


def _json_item(index: int, item: Any, name: str) -> Row:
    where = f"item {index}"
    if item is DEEP_ITEM:
        return Row(index, None, where, f"{where} of {name} {TOO_DEEP}")
    if not isinstance(item, dict):
        return Row(
            index, None, where, f"{where} is a JSON {type(item).__name__}, expected an object"
        )
    return shallow_row(index, item, where, f"{where} of {name}")
