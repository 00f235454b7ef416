"""A JSON object with no list of rows says which key it lacks (issue 36, item 18).

A RAGChecker file with ``"result"`` instead of ``"results"`` got the generic "must hold a JSON
list"; it now names the keys found and the one meant. Through the real command line too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ragmeter
from ragmeter.errors import DataError
from ragmeter.io.readers import open_rows

SRC = str(Path(ragmeter.__file__).parents[1])
ROW = {
    "query_id": "7",
    "query": "Where is the Eiffel Tower?",
    "response": "The Eiffel Tower is in Paris.",
    "retrieved_context": [{"doc_id": "d1", "text": "The Eiffel Tower stands in Paris."}],
}


def _error(path: Path, content: object) -> str:
    path.write_text(json.dumps(content))
    with pytest.raises(DataError) as info:
        list(open_rows(path))
    return " ".join(str(info.value).split())


def test_result_for_results_is_named_with_the_key_meant(tmp_path: Path) -> None:
    message = _error(tmp_path / "checking_inputs.json", {"result": [ROW]})
    assert "Did you mean 'results'? Rename 'result' (a list) to it." in message
    assert "RAGChecker's checking_inputs.json uses 'results'" in message
    assert "its keys: 'result'." in message


def test_other_objects_without_rows_name_their_keys(tmp_path: Path) -> None:
    message = _error(tmp_path / "a.json", {"items": [ROW], "meta": {}})
    assert "its keys: 'items', 'meta'" in message and "('items'?) to 'rows'" in message
    message = _error(tmp_path / "b.json", {"results": {"0": ROW}})
    assert "'results' is a JSON dict, not a list of rows" in message
    message = _error(tmp_path / "c.json", {})
    assert "its keys: (none)" in message


def test_the_command_line_says_so_with_exit_2(tmp_path: Path) -> None:
    data = tmp_path / "checking_inputs.json"
    data.write_text(json.dumps({"result": [ROW]}))
    proc = subprocess.run(
        [sys.executable, "-m", "ragmeter", "evaluate", str(data), "-m", "k_precision"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": SRC},
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "Did you mean 'results'?" in " ".join(proc.stderr.split())
