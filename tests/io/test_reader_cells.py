"""List fields given as text (CSV cells, JSONL strings) and inputs without a single row."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.errors import DataError
from ragmeter.io.columns import ColumnMap, to_sample

runner = CliRunner()

TRUNCATED = '["The Eiffel Tower is a wrought-iron lat'
ANSWER = "The Eiffel Tower was completed in 1889."
CONTEXT = "The Eiffel Tower was completed in 1889 for the World's Fair."


def _csv(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _flat(text: str) -> str:
    """CLI output with the console's line wrapping undone."""
    return " ".join(text.split())


# --- a list field whose text looks like a JSON list but does not parse ---------------------


@pytest.mark.parametrize(
    ("field", "metric", "good", "bad"),
    [
        (
            "contexts",
            "k_precision",
            {"answer": ANSWER, "contexts": json.dumps([CONTEXT])},
            {"answer": ANSWER, "contexts": TRUNCATED},
        ),
        (
            "reference_answers",
            "token_f1",
            {"answer": ANSWER, "reference_answers": json.dumps([ANSWER])},
            {"answer": ANSWER, "reference_answers": TRUNCATED},
        ),
        (
            "contexts_ids",
            "mrr",
            {"contexts_ids": '["d1", "d2"]', "reference_context_ids": "d1"},
            {"contexts_ids": '["d1", "d2"', "reference_context_ids": "d1"},
        ),
        (
            "reference_context_ids",
            "mrr",
            {"contexts_ids": '["d1"]', "reference_context_ids": '["d1"]'},
            {"contexts_ids": '["d1"]', "reference_context_ids": "['d1'"},
        ),
    ],
)
def test_malformed_json_list_cell_in_csv_fails_the_row_naming_line_and_field(
    tmp_path, field, metric, good, bad
):
    data = _csv(tmp_path / "d.csv", [good, bad])

    result = ragmeter.evaluate(data, [metric], progress=False)

    assert result.rows[0].failures == {}
    assert result.rows[0].scores[metric] is not None
    assert result.rows[1].scores[metric] is None
    message = result.rows[1].failures[metric]
    assert message.startswith(f"line 3, field '{field}': looks like a JSON list")
    assert "does not parse" in message
    assert "Write the whole list as JSON" in message


def test_message_gives_the_json_error_position_and_spots_a_cut_off_value():
    _, problems = to_sample({"contexts": TRUNCATED}, ColumnMap.from_any(None))
    assert "Unterminated string starting at character 2 of 40" in problems["contexts"]
    assert "cut off" in problems["contexts"]

    _, problems = to_sample({"contexts": '["a" "b"]'}, ColumnMap.from_any(None))
    assert "Expecting ',' delimiter at character 6 of 9" in problems["contexts"]

    _, problems = to_sample({"contexts": '["a",\n"b"'}, ColumnMap.from_any(None))
    assert "at line 2, column" in problems["contexts"]


def test_python_list_literals_as_pandas_writes_them_are_read(tmp_path):
    sample, problems = to_sample({"contexts": "['a', \"b's\"]"}, ColumnMap.from_any(None))
    assert not problems and sample.contexts == ("a", "b's")
    frame = pd.DataFrame({"answer": [ANSWER], "contexts": [[CONTEXT, "other"]]})
    frame.to_csv(tmp_path / "p.csv", index=False)
    result = ragmeter.evaluate(tmp_path / "p.csv", ["k_precision"], progress=False)
    assert result.rows[0].scores["k_precision"] == 1.0
    assert result.rows[0].details["k_precision"]["best_context"] == 0


def test_a_broken_python_style_list_gets_a_double_quotes_hint():
    _, problems = to_sample({"reference_contexts": "['a', 'b'"}, ColumnMap.from_any(None))
    assert "JSON needs double quotes" in problems["reference_contexts"]
    _, problems = to_sample({"contexts": "[__import__('os')]"}, ColumnMap.from_any(None))
    assert "looks like a JSON list" in problems["contexts"]


def test_deeply_nested_brackets_are_a_row_problem_not_a_crash():
    _, problems = to_sample({"contexts": "[" * 100_000}, ColumnMap.from_any(None))
    assert "looks like a JSON list" in problems["contexts"]


def test_plain_text_cell_stays_one_item_in_csv_and_jsonl_alike(tmp_path):
    rows = [
        {"answer": ANSWER, "contexts": CONTEXT},
        {"answer": ANSWER, "contexts": f'  ["{CONTEXT}", "other"]  '},
        {"answer": ANSWER, "contexts": "[1] " + CONTEXT},
    ]
    from_csv = ragmeter.evaluate(_csv(tmp_path / "d.csv", rows), ["k_precision"], progress=False)
    from_jsonl = ragmeter.evaluate(
        _jsonl(tmp_path / "d.jsonl", rows), ["k_precision"], progress=False
    )

    for result in (from_csv, from_jsonl):
        assert result.rows[0].failures == {}
        assert result.rows[0].scores["k_precision"] == pytest.approx(1.0)
        assert result.rows[1].scores["k_precision"] == pytest.approx(1.0)
        # A text that starts with '[' but is not a JSON list is ambiguous: it must be listed.
        assert "field 'contexts': looks like a JSON list" in result.rows[2].failures["k_precision"]
    assert "line 4, field 'contexts'" in from_csv.rows[2].failures["k_precision"]
    assert "line 3, field 'contexts'" in from_jsonl.rows[2].failures["k_precision"]


def test_text_starting_with_a_bracket_is_accepted_inside_a_json_list(tmp_path):
    rows = [{"answer": ANSWER, "contexts": json.dumps(["[1] " + CONTEXT])}]
    result = ragmeter.evaluate(_csv(tmp_path / "d.csv", rows), ["k_precision"], progress=False)
    assert result.rows[0].failures == {}
    assert result.rows[0].scores["k_precision"] == pytest.approx(1.0)


def test_cli_reports_the_malformed_cell_as_a_row_failure(tmp_path):
    data = _csv(
        tmp_path / "d.csv",
        [
            {"answer": ANSWER, "contexts": json.dumps([CONTEXT])},
            {"answer": ANSWER, "contexts": TRUNCATED},
        ],
    )
    out = tmp_path / "res.jsonl"
    res = runner.invoke(app, ["evaluate", str(data), "-m", "k_precision", "-o", str(out)])
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[0]["scores"]["k_precision"] == pytest.approx(1.0)
    assert lines[1]["scores"]["k_precision"] is None
    assert lines[1]["failures"]["k_precision"].startswith(
        "line 3, field 'contexts': looks like a JSON list (it starts with '[') but does not parse"
    )
    assert "row 1 k_precision: line 3, field 'contexts'" in _flat(res.output)


# --- inputs without a single row --------------------------------------------------------------


def _empty_parquet(path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({"answer": pa.array([], pa.string())}), path)


EMPTY_FILES = {
    "empty.jsonl": lambda p: p.write_text(""),
    "blank.jsonl": lambda p: p.write_text("\n   \n\n"),
    "header.csv": lambda p: p.write_text("question,answer,contexts\n"),
    "empty.csv": lambda p: p.write_text(""),
    "empty.json": lambda p: p.write_text("[]"),
    "blank.json": lambda p: p.write_text("  \n"),
    "empty.parquet": _empty_parquet,
}


@pytest.mark.parametrize("name", list(EMPTY_FILES))
def test_file_without_rows_is_a_data_error_saying_so(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    EMPTY_FILES[name](tmp_path / name)
    with pytest.raises(DataError, match=rf"^The file {name} has no rows\. ") as info:
        ragmeter.evaluate(name, ["k_precision"], progress=False)
    assert "Columns found" not in str(info.value)


@pytest.mark.parametrize("name", ["empty.jsonl", "blank.jsonl", "header.csv", "empty.parquet"])
def test_cli_exits_2_on_a_file_without_rows(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    EMPTY_FILES[name](tmp_path / name)
    res = runner.invoke(app, ["evaluate", name, "-m", "k_precision"])
    assert res.exit_code == 2, res.output
    output = _flat(res.output)
    assert f"The file {name} has no rows." in output
    assert "is not in the data" not in output


def test_header_only_csv_message_names_the_header(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    EMPTY_FILES["header.csv"](tmp_path / "header.csv")
    with pytest.raises(DataError, match=r"header line \(question, answer, contexts\)"):
        ragmeter.evaluate("header.csv", ["k_precision"], progress=False)


def test_empty_in_memory_data_is_a_data_error():
    with pytest.raises(DataError, match=r"^The data has no rows: got an empty list\.$"):
        ragmeter.evaluate([], ["k_precision"], progress=False)
    with pytest.raises(DataError, match="The data has no rows: got an empty generator"):
        ragmeter.evaluate((r for r in []), ["k_precision"], progress=False)


def test_one_row_after_blank_lines_is_not_empty(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text("\n\n" + json.dumps({"answer": ANSWER, "contexts": [CONTEXT]}) + "\n")
    result = ragmeter.evaluate(data, ["k_precision"], progress=False)
    assert [r.scores["k_precision"] for r in result.rows] == [pytest.approx(1.0)]
