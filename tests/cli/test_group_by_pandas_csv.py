"""``--group-by metadata.category`` on a CSV written by pandas (issue 28, item 7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app

pd = pytest.importorskip("pandas")
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rag_sample.jsonl"


def _pandas_csv(tmp_path: Path, transform=None) -> Path:
    rows = [json.loads(line) for line in EXAMPLE.read_text().splitlines()]
    path = tmp_path / "data.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    if transform is not None:
        path.write_text(transform(path.read_text()))
    return path


def _run(*args: object):
    res = CliRunner().invoke(app, ["evaluate", *map(str, args)])
    return res, " ".join(res.output.split())


def test_group_by_a_dict_column_of_a_pandas_csv(tmp_path):
    report = tmp_path / "report.html"
    data = _pandas_csv(tmp_path)
    res, _ = _run(data, "-m", "token_f1", "--report", report, "--group-by", "metadata.category")
    assert res.exit_code == 0, res.output
    assert "history" in report.read_text()


def test_a_typo_in_group_by_suggests_the_real_path_not_the_one_given(tmp_path):
    data = _pandas_csv(tmp_path)
    res, text = _run(
        data, "-m", "token_f1", "--report", tmp_path / "r.html", "--group-by", "metadata.categry"
    )
    assert res.exit_code == 2
    assert "Did you mean 'metadata.category'?" in text
    assert "e.g. --group-by metadata.categry" not in text


def test_unreadable_metadata_is_named_instead_of_the_path_given(tmp_path):
    data = _pandas_csv(tmp_path, lambda text: text.replace("{'category': ", "{category: "))
    res, text = _run(
        data, "-m", "token_f1", "--report", tmp_path / "r.html", "--group-by", "metadata.category"
    )
    assert res.exit_code == 2
    assert "The metadata of line 2 cannot be read" in text
    assert "--group-by metadata.category" not in text  # never the very path given as the fix
