"""The fast paths for common rows (checked by exact type) give what the general code gives.

Reading a row checks how deep it nests, and ``to_sample`` coerces each field; both take a
shortcut for the common row (a dict of texts and lists of texts). These tests compare them
with the general rules on tricky rows, so a shortcut that changes a result fails here.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.io.columns import ColumnMap, _BadValue, _coerce, to_sample, to_samples
from ragmeter.io.readers import open_rows
from ragmeter.io.rows import MAX_DEPTH, shallow_row, too_deep
from ragmeter.types import FIELDS, Sample


class Text(str):
    """A str subclass: not the exact type the fast paths look for."""


def levels(value: Any) -> int:
    """How many levels of mappings, lists and tuples ``value`` nests (0 for a leaf)."""
    if isinstance(value, Mapping):
        children: Any = value.values()
    elif isinstance(value, list | tuple):
        children = value
    else:
        return 0
    return 1 + max((levels(child) for child in children), default=0)


leaves = st.one_of(
    st.text(max_size=3),
    st.integers(),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
    st.builds(Text, st.text(max_size=3)),
)
nested = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=2), inner, max_size=3),
        st.dictionaries(st.text(max_size=2), inner, max_size=3).map(MappingProxyType),
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(value=nested, limit=st.integers(1, 5))
def test_too_deep_is_whether_the_value_nests_more_levels_than_the_limit(
    value: Any, limit: int
) -> None:
    if levels(value) == 0:
        return  # only containers are checked
    assert too_deep(value, limit) == (levels(value) > limit)


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_a_list_of_texts_at_the_limit_is_read_and_one_level_more_is_not(limit: int) -> None:
    value: Any = ["a", "b"]
    for _ in range(limit - 1):
        value = {"x": value}
    assert too_deep(value, limit) is False
    assert too_deep({"x": value}, limit) is True
    assert too_deep([value], limit) is True


def test_a_row_with_texts_in_lists_of_every_kind_is_read_whole() -> None:
    row = {"contexts": ["a", Text("b")], "ids": [1, 2.5, True, None], "t": ("x",), "m": {}}
    assert shallow_row(0, row, "row 0") == shallow_row(0, MappingProxyType(row), "row 0")
    assert shallow_row(0, row, "row 0").data is row


def test_rows_nested_past_the_limit_fail_whatever_their_type() -> None:
    deep: Any = ["x"]
    for _ in range(MAX_DEPTH):
        deep = [deep]
    for data in ({"metadata": deep}, MappingProxyType({"metadata": deep}), deep, tuple(deep)):
        row = shallow_row(3, data, "row 3")
        assert row.data is None
        assert row.problem == f"row 3 is nested deeper than {MAX_DEPTH} levels of lists and " + (
            "objects; flatten it"
        )
    rows = list(open_rows([{"answer": "a"}, {"answer": "b", "metadata": {"x": deep}}, "text"]))
    assert [row.problem is None for row in rows] == [True, False, True]


def general_to_sample(row: Mapping[str, Any]) -> tuple[Sample, dict[str, str]]:
    """What ``to_sample`` gives a row of canonical columns by the general rules alone."""
    values: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for field in FIELDS:
        if field in row:
            try:
                values[field] = _coerce(field, row[field])
            except _BadValue as exc:
                problems[field] = str(exc)
    return Sample(**values), problems


def typed(sample: Sample) -> dict[str, Any]:
    """Each field's value with its type and, for tuples, its items' types."""
    out: dict[str, Any] = {}
    for field in FIELDS:
        value = getattr(sample, field)
        items = tuple(type(item) for item in value) if isinstance(value, tuple) else None
        out[field] = (value, type(value), items)
    return out


field_values = st.one_of(
    leaves,
    st.sampled_from(['["a", "b"]', "[1, 2]", "['a', 'b']", '["cut', "[", "yes", "0", "{}"]),
    st.lists(st.one_of(st.text(max_size=3), st.builds(Text, st.text(max_size=2))), max_size=3),
    st.lists(leaves, max_size=3),
    st.lists(st.text(max_size=3), max_size=3).map(tuple),
    st.dictionaries(st.text(max_size=2), st.text(max_size=2), max_size=2),
)


@settings(max_examples=400, deadline=None)
@given(row=st.dictionaries(st.sampled_from(FIELDS), field_values, max_size=6))
def test_to_sample_gives_what_the_general_rules_give(row: dict[str, Any]) -> None:
    expected, expected_problems = general_to_sample(row)
    for given_row in (row, MappingProxyType(row)):
        sample, problems = to_sample(given_row, ColumnMap.from_any(None))
        assert typed(sample) == typed(expected)
        assert problems == expected_problems


def test_to_sample_turns_ids_given_as_text_subclasses_into_plain_text() -> None:
    sample, problems = to_sample(
        {"question_id": Text("q1"), "contexts_ids": [Text("d1"), "d2"]}, ColumnMap.from_any(None)
    )
    assert problems == {}
    assert type(sample.question_id) is str
    assert [type(i) for i in sample.contexts_ids or ()] == [str, str]


def test_to_sample_reads_arrays_of_texts_as_tuples() -> None:
    sample, problems = to_sample(
        {"contexts": np.array(["a", "b"]), "contexts_ids": np.array([1, 2])},
        ColumnMap.from_any(None),
    )
    assert problems == {}
    assert sample.contexts == ("a", "b") and sample.contexts_ids == ("1", "2")
    assert [type(c) for c in sample.contexts or ()] == [str, str]


def plain(i: int) -> dict[str, Any]:
    return {
        "question_id": f"q{i}",
        "contexts": [f"c{i}", "d"],
        "answer": f"a{i}",
        "reference_context_ids": [],
        "metadata": {"k": i},
        "is_answerable_label": i % 2 == 0,
    }


@settings(max_examples=300, deadline=None)
@given(
    changes=st.lists(
        st.tuples(st.integers(0, 5), st.sampled_from(sorted(plain(0))), field_values), max_size=3
    ),
    n=st.integers(1, 6),
)
def test_to_samples_gives_each_row_what_to_sample_gives_it(
    changes: list[tuple[int, str, Any]], n: int
) -> None:
    rows = [plain(i) for i in range(n)]
    for i, key, value in changes:
        rows[i % n][key] = value
    cmap = ColumnMap.from_any(None)
    got = to_samples(rows, cmap)
    expected = [to_sample(row, cmap) for row in rows]
    assert [(typed(s), p) for s, p in got] == [(typed(s), p) for s, p in expected]


@pytest.mark.parametrize(
    "rows",
    [
        [plain(0), {**plain(1), "answer": None}],  # a null in a text column
        [plain(0), {**plain(1), "contexts": ("x",)}],  # a tuple in a list column
        [plain(0), {**plain(1), "extra": 1}],  # other keys
        [plain(0), {k: v for k, v in plain(1).items() if k != "answer"}],  # fewer keys
        [plain(0), {**plain(1), "answer": None, "response": "alias"}],
        [plain(0), {"response" if k == "answer" else k: v for k, v in plain(1).items()}],
        [plain(0), MappingProxyType(plain(1))],  # not a dict
        [plain(0), "text"],  # not a mapping
        [{**plain(0), "metadata": MappingProxyType({"k": 0})}],
        [{**plain(0), "question_id": 3}],
        [{"response": "alias", "retrieved_contexts": ["c"]}],
        [{}],
    ],
)
def test_to_samples_gives_odd_batches_what_to_sample_gives(rows: list[Any]) -> None:
    cmap = ColumnMap.from_any(None)
    got = to_samples(rows, cmap)
    expected = [to_sample(row, cmap) for row in rows]
    assert [(typed(s), p) for s, p in got] == [(typed(s), p) for s, p in expected]


def test_to_samples_follows_the_column_map() -> None:
    rows = [{"out": f"a{i}", "pred": {"ctx": ["c"]}, "ids": ["d1"]} for i in range(3)]
    cmap = ColumnMap.from_any({"answer": "out", "contexts": "pred.ctx", "contexts_ids": "ids"})
    got = to_samples(rows, cmap)
    assert got == [to_sample(row, cmap) for row in rows]
    assert [s.answer for s, _ in got] == ["a0", "a1", "a2"]
    assert got[0][0].contexts == ("c",) and got[0][1] == {}
    assert to_samples([], cmap) == []


def test_metadata_of_each_sample_is_its_own_copy() -> None:
    rows = [plain(0), plain(1)]
    (first, _), (second, _) = to_samples(rows, ColumnMap.from_any(None))
    assert first.metadata == {"k": 0} and first.metadata is not rows[0]["metadata"]
    assert second.metadata == {"k": 1}
