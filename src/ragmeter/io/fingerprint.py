"""What identifies a run's input, so that a resumed run appends only to results of this input.

A file is known by the sha256 of its bytes (wherever it lies: a moved file is the same input);
rows in memory (a list, a DataFrame, a Dataset) by the sha256 of each row as canonical JSON,
and their count. An iterator can be read only once: it has no fingerprint, and a results file
cannot be resumed with one.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ragmeter.io.readers import check_regular_file, open_rows

__all__ = ["input_fingerprint", "same_input"]

_CHUNK = 1 << 20


def input_fingerprint(data: Any) -> dict[str, Any] | None:
    """``{"source", "sha256", "rows"}`` of ``data`` (``rows`` is None when reading the file
    does not tell), or None for data that can be read only once."""
    if isinstance(data, str | os.PathLike):
        digest = hashlib.sha256()
        check_regular_file(Path(data))
        with Path(data).open("rb") as fh:
            while chunk := fh.read(_CHUNK):
                digest.update(chunk)
        return {"source": "file", "sha256": digest.hexdigest(), "rows": None}
    if not hasattr(data, "__len__"):
        return None
    digest, rows = hashlib.sha256(), 0
    for row in open_rows(data):
        record = row.data if row.problem is None else {"problem": row.problem}
        text = json.dumps(record, sort_keys=True, ensure_ascii=False, default=str)
        digest.update(text.encode("utf-8", "surrogatepass") + b"\n")
        rows += 1
    return {"source": "rows", "sha256": digest.hexdigest(), "rows": rows}


def same_input(recorded: Any, current: dict[str, Any] | None) -> bool:
    """Whether a run record's ``input`` names the input ``current`` fingerprints."""
    if not isinstance(recorded, dict) or current is None:
        return False
    return (
        recorded.get("source") == current["source"]
        and recorded.get("sha256") == (current["sha256"])
    )
