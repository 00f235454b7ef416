"""A file that cannot be read as its suffix says is refused with what is wrong with it (issue 29,
item 19): UTF-16 JSONL is not UTF-8, a JSONL file of which no line is JSON says so (not "the
column is missing"), and a Parquet file with a damaged row group names it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ragmeter
from ragmeter.errors import DataError
from ragmeter.io.readers import open_rows

ROWS = [
    {"question_id": f"q{i}", "answer": "Paris is in France.", "contexts": ["Paris."]}
    for i in range(3)
]


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32"])
def test_a_utf16_jsonl_file_is_refused_as_not_utf8(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(_jsonl(ROWS).encode(encoding))
    with pytest.raises(DataError, match=r"not UTF-8.*UTF-(16|32).*iconv") as caught:
        ragmeter.evaluate(str(path), ["k_precision"], progress=False)
    assert str(path) in str(caught.value)


def test_a_utf8_jsonl_file_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(_jsonl(ROWS).encode("utf-8-sig"))
    result = ragmeter.evaluate(str(path), ["k_precision"], progress=False)
    assert not result.failures(), result.failures()
    assert len(result.scores("k_precision")) == 3


def test_a_jsonl_file_where_no_line_is_json_says_so(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("answer,contexts\nParis,Paris\nRome,Rome\n")
    with pytest.raises(DataError) as caught:
        ragmeter.evaluate(str(path), ["k_precision"], progress=False)
    message = str(caught.value)
    assert "not in the data" not in message, message
    assert "none of the 3 rows" in message.lower() and "line 1" in message, message
    assert "not valid JSON" in message, message


def test_a_parquet_file_with_a_damaged_row_group_names_it(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "d.parquet"
    table = pa.Table.from_pylist([{**ROWS[0], "answer": f"Paris {i}."} for i in range(400)])
    pq.write_table(table, path, row_group_size=100, compression="NONE")
    meta = pq.ParquetFile(path).metadata
    offset = meta.row_group(2).column(0).data_page_offset
    blob = bytearray(path.read_bytes())
    blob[offset : offset + 64] = b"\xff" * 64
    path.write_bytes(bytes(blob))
    with pytest.raises(DataError) as caught:
        for _ in open_rows(path):
            pass
    message = str(caught.value)
    assert str(path) in message and "row group 2" in message, message
    assert "unexpected" not in message, message
