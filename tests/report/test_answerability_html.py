"""The report's Answerability section: the refusal counts and rates of the run record."""

from __future__ import annotations

import re

import ragmeter
from ragmeter.report.answerability_html import answerability_section
from ragmeter.report.html import render_report

ROWS = [
    {"question_id": "u1", "answer": "The documents do not say.", "is_answerable_label": False},
    {"question_id": "u2", "answer": "I don't know.", "is_answerable_label": False},
    {"question_id": "u3", "answer": "It was built in 1889.", "is_answerable_label": False},
    {"question_id": "a1", "answer": "Paris is the capital.", "is_answerable_label": True},
    {"question_id": "a2", "answer": "The text does not mention it.", "is_answerable_label": True},
]


def cells(page: str, label: str) -> list[str]:
    found = re.search(rf"<tr><td>{re.escape(label)}</td>(.*?)</tr>", page)
    assert found is not None, label
    return re.findall(r"<td class=n>(.*?)</td>", found.group(1))


def test_the_report_of_a_results_file_shows_the_refusal_statistics(tmp_path):
    out = tmp_path / "results.jsonl"
    ragmeter.evaluate(ROWS, ["answerability_accuracy"], out=str(out), progress=False)
    page = render_report(out)
    section = page[page.index('<h2 id="answerability">') :]
    assert "over the 5 rows with an <code>is_answerable_label</code>" in section
    # 2 of 3 unanswerable refused, 1 of 2 answerable refused.
    assert cells(section, "unanswerable (3)") == ["2", "1"]
    assert cells(section, "answerable (2)") == ["1", "1"]
    assert cells(section, "precision") == ["0.667"]
    assert cells(section, "recall") == ["0.667"]
    assert cells(section, "F1") == ["0.667"]
    assert cells(section, "false-refusal rate") == ["0.500"]


def test_a_rate_with_nothing_to_divide_by_is_a_dash_and_no_labels_no_section():
    only_answerable = [r for r in ROWS if r["is_answerable_label"]]
    result = ragmeter.evaluate(only_answerable, ["answerability_accuracy"], progress=False)
    section = answerability_section(result.info)
    assert cells(section, "recall") == ["—"] and cells(section, "F1") == ["—"]
    assert cells(section, "false-refusal rate") == ["0.500"]
    unlabelled = [{"answer": r["answer"]} for r in ROWS]
    plain = ragmeter.evaluate(unlabelled, ["answer_refusal"], progress=False)
    assert answerability_section(plain.info) == ""
    assert 'id="answerability"' not in render_report(plain)
