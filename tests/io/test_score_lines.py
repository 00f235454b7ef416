"""read_score_lines: index, id and scores of every row, fast where lines are as ragmeter writes
them and whole elsewhere, checked as the results reader checks them."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import ragmeter
from ragmeter.errors import DataError
from ragmeter.io.results import Expect, read_score_lines
from ragmeter.results import no_details, read_run

BOUNDS = Expect(bounds={"f": (0.0, 1.0)})


def write(path: Path, rows: list[dict | str]) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows),
        encoding="utf-8",
    )
    return path


def test_a_run_written_by_evaluate_reads_as_the_report_reads_it(tmp_path):
    out = tmp_path / "results.jsonl"
    data = [
        {"question_id": f"q{i}", "answer": f"Paris {i}", "contexts": ["Paris is in France"]}
        for i in range(6)
    ]
    ragmeter.evaluate(data, ["k_precision"], out=str(out), progress=False)
    lines = read_score_lines(out)
    run = read_run(out, details=no_details)
    assert lines.indexes == [r.index for r in run.rows]
    assert lines.ids == [r.id for r in run.rows] == [f"q{i}" for i in range(6)]
    assert [dict(s) for s in lines.scores] == [dict(r.scores) for r in run.rows]
    assert lines.kept == {}


def test_lines_in_other_forms_are_parsed_whole_with_the_same_result(tmp_path):
    path = write(
        tmp_path / "r.jsonl",
        [
            '{"index": 0, "id": "a", "scores": {"f": 0.5, "g": null}, "details": {"x": [1]}}',
            '{"scores": {"f": 1}, "index": 1, "id": "b"}',  # keys in another order
            {"index": 2, "id": 'caf\u00e9 \\ "q"', "scores": {"f": 0.25}},  # escapes
            {"index": 3, "id": 7, "scores": {}},  # an integer id, no scores
            {"index": 4, "id": None, "scores": {"we{ird}": 0.0}},  # braces in a metric name
            "",  # a blank line
            '{"index": 5, "id": "e", "scores": {"f": 0.75}}',
            '{"index": 6, "id": "cut", "sco',  # a last line cut off by a killed run
        ],
    )
    path.write_bytes(path.read_bytes()[:-1])  # no newline after the cut-off line
    lines = read_score_lines(path, BOUNDS)
    assert lines.indexes == [0, 1, 2, 3, 4, 5]
    assert lines.ids == ["a", "b", 'caf\u00e9 \\ "q"', "7", None, "e"]
    assert [dict(s) for s in lines.scores] == [
        {"f": 0.5, "g": None},
        {"f": 1},
        {"f": 0.25},
        {},
        {"we{ird}": 0.0},
        {"f": 0.75},
    ]


def test_the_rows_asked_for_are_kept_whole_by_id_or_index(tmp_path):
    path = write(
        tmp_path / "r.jsonl",
        [{"index": i, "id": f"r{i}", "scores": {"f": 0.5}, "details": {"d": i}} for i in range(5)],
    )
    lines = read_score_lines(path, keep_ids={"r1", "nope"}, keep_indexes={3})
    assert sorted(lines.kept) == [1, 3]
    assert lines.kept[1]["details"] == {"d": 1} and lines.kept[3]["id"] == "r3"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"index": 1, "id": "b", "scores": {"f": 1.5}}, "line 2, field 'scores.f'"),
        ('{"index": 1, "id": "b", "scores": {"f": NaN}}', "must be finite"),
        ({"index": 1, "id": "b", "scores": {"f": True}}, "must be a number or null"),
        ({"index": 1, "id": "b", "scores": {"f": "0.5"}}, "must be a number or null"),
        ('{"index": 1, "id": "b", "scores": {"f": 0.5x}}', "line 2: not valid JSON"),
        ({"index": -1, "id": "b", "scores": {}}, "line 2, field 'index'"),
        ({"index": 9, "id": "b", "scores": {}}, "the input has 5 rows"),
        ({"index": 0, "id": "again", "scores": {"f": 0.5}}, "row 0 is already on line 1"),
    ],
)
def test_bad_lines_are_refused_naming_the_line_and_field(tmp_path, line, message):
    path = write(tmp_path / "r.jsonl", [{"index": 0, "id": "a", "scores": {"f": 0.5}}, line])
    with pytest.raises(DataError, match="r.jsonl") as caught:
        read_score_lines(path, Expect(bounds={"f": (0.0, 1.0)}, n_rows=5))
    assert message in str(caught.value)


def test_resume_replaces_a_retried_row_and_one_that_adds_metrics(tmp_path):
    path = write(
        tmp_path / "r.jsonl",
        [
            {
                "index": 0,
                "id": "a",
                "scores": {"f": None},
                "failures": {"f": "judge timed out"},
                "failure_causes": {"f": "judge"},
            },
            {"index": 1, "id": "b", "scores": {"f": 0.5}},
            {"index": 0, "id": "a", "scores": {"f": 0.25}},  # retried by --resume
            {"index": 1, "id": "b", "scores": {"f": 0.5, "g": 1.0}},  # adds a metric
        ],
    )
    lines = read_score_lines(path, BOUNDS, keep_indexes={0})
    assert lines.indexes == [0, 1]
    assert [dict(s) for s in lines.scores] == [{"f": 0.25}, {"f": 0.5, "g": 1.0}]
    assert lines.kept[0]["scores"] == {"f": 0.25}


def test_the_registry_bounds_are_read_only_for_metrics_without_bounds(tmp_path):
    path = write(tmp_path / "r.jsonl", [{"index": 0, "id": "a", "scores": {"f": 0.5}}])
    asked = []

    def more() -> dict[str, tuple[float, float]]:
        asked.append(1)
        return {"g": (0.0, 1.0)}

    read_score_lines(path, BOUNDS, more_bounds=more)
    assert asked == []
    write(path, [{"index": 0, "id": "a", "scores": {"f": 0.5, "g": 2.0}}])
    with pytest.raises(DataError, match=r"scores\.g.*outside g's range"):
        read_score_lines(path, BOUNDS, more_bounds=more)
    assert asked == [1]
    assert not math.isnan(read_score_lines(path, BOUNDS).scores[0]["g"])
