"""An input file that grows while it is read (issue 29, item 15).

The run record's input hash is the hash of the bytes the run read: the record pairs it with
the rows scored, and a later ``--resume`` on the file as it was read is accepted (nothing to
score again). Rows appended after the hash would otherwise be scored under the hash of the
shorter file.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import ragmeter
import ragmeter.runner.core as core
from ragmeter.result import sidecar_path

LEXICAL = ["k_precision", "token_recall"]


def _lines(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def test_record_holds_the_hash_of_the_bytes_read_and_resume_accepts_the_file(
    samples: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = samples(300)
    data = tmp_path / "data.jsonl"
    data.write_text(_lines(rows[:250]))  # more than the 200 rows read ahead for the columns
    out = tmp_path / "out.jsonl"
    real = core.input_fingerprint

    def hashed_then_grown(source: Any) -> Any:
        found = real(source)
        with Path(source).open("a") as fh:  # another process appends while the run reads
            fh.write(_lines(rows[250:]))
        return found

    monkeypatch.setattr(core, "input_fingerprint", hashed_then_grown)
    run = ragmeter.evaluate(data, metrics=LEXICAL, out=out, progress=False)
    monkeypatch.setattr(core, "input_fingerprint", real)

    assert len(run.rows) == 300
    record = json.loads(sidecar_path(out).read_text())
    assert record["input"]["rows"] == 300
    assert record["input"]["sha256"] == hashlib.sha256(data.read_bytes()).hexdigest()

    again = ragmeter.evaluate(data, metrics=LEXICAL, out=out, resume=True, progress=False)
    assert len(again.rows) == 300
    assert len(out.read_text().splitlines()) == 300
