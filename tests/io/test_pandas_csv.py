"""CSV written by pandas: dict and list columns as Python literals (issue 28, item 7)."""

from __future__ import annotations

import pytest

from ragmeter.io.columns import ColumnMap, to_sample
from ragmeter.io.readers import open_rows

pd = pytest.importorskip("pandas")


def _rows(tmp_path, records):
    path = tmp_path / "data.csv"
    pd.DataFrame(records).to_csv(path, index=False)
    return [row.data for row in open_rows(path)]


def test_a_dict_column_written_by_pandas_is_read_as_metadata(tmp_path):
    (row,) = _rows(
        tmp_path,
        [{"question": "q", "metadata": {"category": "history", "level": 2}, "ids": ["a", "b"]}],
    )
    assert row["metadata"] == "{'category': 'history', 'level': 2}"  # as pandas wrote it
    sample, problems = to_sample(row, ColumnMap.from_any(["contexts_ids=ids"]))
    assert problems == {}
    assert sample.metadata == {"category": "history", "level": 2}
    assert sample.contexts_ids == ("a", "b")


def test_text_that_looks_like_a_literal_stays_text(tmp_path):
    (row,) = _rows(tmp_path, [{"question": "{'a': 1}", "answer": "{x}", "metadata": "{}"}])
    sample, problems = to_sample(row, ColumnMap.from_any(None))
    assert sample.question == "{'a': 1}" and sample.answer == "{x}"
    assert sample.metadata == {} and problems == {}


@pytest.mark.parametrize(
    "cell", ["{category: 'x'}", "{'category': 'x'", "{'a', 'b'}", "{'a': __import__('os')}"]
)
def test_a_cell_that_is_no_dict_literal_is_a_problem_of_its_row(cell):
    sample, problems = to_sample({"metadata": cell}, ColumnMap.from_any(None))
    assert sample.metadata is None
    assert "expected a mapping (a JSON object or a Python dict literal)" in problems["metadata"]
