"""Text files have their rows counted up front, so the progress bar has a total."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragmeter.io import readers
from ragmeter.io.readers import open_rows


def test_jsonl_rows_are_counted_without_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"a": 1}) + "\n\n" + json.dumps({"a": 2}) + "\n  \n")
    source = open_rows(path)
    assert source.total == 2 == len(list(source))


def test_csv_records_are_counted_even_across_quoted_newlines(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text('answer,question\n"two\nlines",q1\n\nb,q2\n')
    source = open_rows(path)
    assert source.total == 2 == len(list(source))


def test_a_file_past_the_size_limit_has_no_total(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"a": 1}) + "\n")
    monkeypatch.setattr(readers, "COUNT_ROWS_UP_TO", 1)
    assert open_rows(path).total is None
