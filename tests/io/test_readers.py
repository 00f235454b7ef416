from __future__ import annotations

import json

import pytest

from ragmeter.errors import DataError
from ragmeter.io.readers import open_rows

ROWS = [
    {"question": "q1", "contexts": ["a", "b"], "answer": "x", "contexts_ids": ["1", "2"]},
    {"question": "q2", "contexts": ["c"], "answer": "y", "contexts_ids": ["3"]},
]


def _data(source):
    return [row.data for row in source]


def test_jsonl_streams_rows_and_reports_bad_lines(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n\n{not json\n[1, 2]\n" + json.dumps(ROWS[1]) + "\n")
    rows = list(open_rows(path))
    assert [r.index for r in rows] == [0, 1, 2, 3]
    assert rows[0].data == ROWS[0] and rows[3].data == ROWS[1]
    assert rows[1].problem.startswith("line 3 of d.jsonl is not valid JSON")
    assert "JSON list, expected an object" in rows[2].problem


def test_jsonl_reader_is_lazy(tmp_path):
    path = tmp_path / "big.jsonl"
    with path.open("w") as fh:
        for i in range(5000):
            fh.write(json.dumps({"answer": str(i)}) + "\n")
    source = open_rows(path, peek=10)
    assert source.columns == ["answer"]
    first = next(iter(source))
    assert first.data == {"answer": "0"}


def test_json_list(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps(ROWS))
    source = open_rows(path)
    assert source.total == 2 and _data(source) == ROWS


def test_json_object_is_rejected_clearly(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"a": 1}))
    with pytest.raises(DataError, match="JSON list of objects"):
        open_rows(path)


def test_csv_list_fields_as_json_strings(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text(
        'question,contexts,answer,contexts_ids\nq1,"[""a"", ""b""]",x,"[""1"", ""2""]"\n'
        'q2,"[""c""]",y,"[""3""]"\n'
    )
    assert _data(open_rows(path)) == ROWS


def test_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist(ROWS), path)
    source = open_rows(path)
    assert source.total == 2 and set(source.columns) == set(ROWS[0])
    assert _data(source) == ROWS


def test_pandas_dataframe():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(ROWS)
    assert _data(open_rows(df)) == ROWS


def test_hugging_face_dataset():
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_list(ROWS)
    assert _data(open_rows(ds)) == ROWS


def test_list_of_dicts_and_generators():
    assert _data(open_rows(ROWS)) == ROWS
    assert _data(open_rows(r for r in ROWS)) == ROWS


@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        ("missing.jsonl", None, "No such file"),
        ("d.txt", "x", "Cannot tell the format"),
        ("d.parquet", "not parquet", "not a readable Parquet file"),
        ("d.json", "{bad", "not valid JSON"),
    ],
)
def test_unreadable_files_give_clear_errors(tmp_path, name, content, match):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    with pytest.raises(DataError, match=match):
        open_rows(path)


def test_single_mapping_is_rejected():
    with pytest.raises(DataError, match="list of rows"):
        open_rows({"question": ["a"]})
