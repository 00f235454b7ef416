"""Reading label files (JSONL and CSV): both kinds, the selection, and errors that name the line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragmeter.errors import DataError
from ragmeter.io.labels import read_labels


def write_jsonl(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_reads_both_kinds_and_the_metadata_line(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "labels.jsonl",
        [
            {"selection": "uniform", "sample": 3, "seed": 1, "of_rows": 10},
            {"id": "q1", "claim": 0, "label": "supported", "labeller": "ana", "time": "t"},
            {"id": 4, "claim": 2, "label": "unsure", "source": "reference"},
            {"id": "q2", "metric": "answer_reward", "value": 0.25},
        ],
    )
    labels = read_labels(path)
    assert labels.selection == "uniform" and labels.random
    assert labels.meta == {"sample": 3, "seed": 1, "of_rows": 10}
    first, second = labels.claims
    assert (first.id, first.claim, first.value, first.source, first.against) == (
        "q1",
        0,
        1.0,
        "answer",
        "contexts",
    )
    assert first.labeller == "ana" and first.line == 2
    assert (second.id, second.value, second.source, second.against) == (
        "4",
        None,
        "reference",
        "answer",
    )
    (row,) = labels.rows
    assert (row.id, row.metric, row.value, row.line) == ("q2", "answer_reward", 0.25, 4)


def test_reads_csv_with_empty_cells(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(
        "id,metric,value,claim,label,selection\n"
        "q1,faithfulness,0.5,,,uniform\n"
        "q2,,,1,not_supported,uniform\n",
        encoding="utf-8",
    )
    labels = read_labels(path)
    assert labels.rows[0].value == 0.5 and labels.rows[0].line == 2
    assert labels.claims[0].claim == 1 and labels.claims[0].value == 0.0
    assert labels.claims[0].line == 3


def test_a_stratified_selection_is_read_but_refused_for_estimates(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "l.jsonl",
        [{"id": "q1", "claim": 0, "label": "supported", "selection": "stratified"}],
    )
    labels = read_labels(path)
    assert not labels.random
    assert "'stratified' selection" in labels.refusal()
    assert "uniform random sample" in labels.refusal()


def test_a_file_that_does_not_say_is_taken_as_uniform(tmp_path: Path) -> None:
    labels = read_labels(write_jsonl(tmp_path / "l.jsonl", [{"id": 1, "metric": "m", "value": 1}]))
    assert labels.selection is None and labels.random and labels.refusal() is None


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"id": "q1", "claim": 0, "label": "yes"}, r"line 2: 'label' must be one of"),
        ({"id": "q1", "claim": -1, "label": "supported"}, r"line 2: 'claim' must be a claim"),
        ({"id": "q1", "claim": 1.5, "label": "supported"}, r"'claim' must be a claim index"),
        ({"id": "q1", "metric": "m", "value": "high"}, r"line 2: 'value' must be a number"),
        ({"id": "q1", "metric": "m", "value": float("nan")}, r"'value' must be a finite"),
        ({"id": "q1", "value": 1}, r"line 2: a label needs 'metric' and 'value'"),
        ({"claim": 0, "label": "supported"}, r"line 2: 'id' is missing"),
        (
            {"id": "q1", "claim": 0, "label": "supported", "source": "question"},
            r"'source' must be 'answer' or 'reference'",
        ),
        (
            {"id": "q1", "claim": 0, "label": "supported", "against": "answer"},
            r"'against' for answer claims must be one of contexts, reference",
        ),
    ],
)
def test_bad_lines_are_named(tmp_path: Path, line: dict, message: str) -> None:
    path = write_jsonl(tmp_path / "l.jsonl", [{"id": "q0", "metric": "m", "value": 1}, line])
    with pytest.raises(DataError, match=message):
        read_labels(path)


def test_file_level_errors(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        read_labels(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "metric": "m", "value": 1}\nnot json\n', encoding="utf-8")
    with pytest.raises(DataError, match="line 2: not JSON"):
        read_labels(bad)
    mixed = write_jsonl(
        tmp_path / "mixed.jsonl",
        [
            {"id": 1, "metric": "m", "value": 1, "selection": "uniform"},
            {"id": 2, "metric": "m", "value": 1, "selection": "stratified"},
        ],
    )
    with pytest.raises(DataError, match="different selections"):
        read_labels(mixed)
    empty = write_jsonl(tmp_path / "empty.jsonl", [{"selection": "uniform"}])
    with pytest.raises(DataError, match="no labels found"):
        read_labels(empty)
