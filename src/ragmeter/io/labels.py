"""Read human labels (JSONL or CSV) for calibrating a run's judge (``ragmeter calibrate``).

One label per line (JSONL) or per CSV row; two kinds, told apart by their keys::

    {"id": "q1", "metric": "answer_reward", "value": 0.8}
    {"id": "q1", "claim": 2, "label": "supported", "source": "answer",
     "against": "contexts", "labeller": "ana", "time": "2026-11-27T02:00:00Z"}

``id`` is the row's id in the results (the input's ``question_id``), or its ``index`` (an
integer, 0 first) for rows without one. The metadata line's ``key`` says which of the two every
``id`` of the file names: ``"id"`` or ``"index"`` (``ragmeter label`` writes it: ``index``
when the run's rows do not all have their own id). Without it an ``id`` is looked up among the
rows' ids first, then among their indexes, so a label ``"3"`` names the row whose id is
``"3"`` even where another row's index is 3.

``claim`` counts the row's claims from 0 as the results' details list them: the answer's
claims (``"source": "answer"``, the default) or the reference claims of every reference in turn
(``"source": "reference"``). ``label`` is ``supported``, ``not_supported`` or ``unsure``
(``unsure`` is read and left out of estimates). ``against`` says what the person checked the
claim against: for answer claims ``contexts`` (the default: the retrieved passages) or
``reference``; for reference claims ``answer`` (the default) or ``contexts``. ``labeller`` and
``time`` are optional.

How the rows were chosen is said by a ``selection`` field: on a first metadata line with no
``id`` (``{"selection": "uniform", "sample": 50, "seed": 0, "of_rows": 1000, "key": "id"}``,
the form ``ragmeter label`` writes) or on each label line (a CSV column). ``uniform`` (a uniform
random sample of rows) is the one selection calibrated estimates accept; ``stratified`` or any
other is read (agreement can be looked at) but refused for estimates. A file that does not
say is taken as uniform, and the calibration says it assumed so.
"""

from __future__ import annotations

import csv
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ragmeter.errors import DataError

__all__ = [
    "CLAIM_LABELS",
    "RANDOM_SELECTIONS",
    "ROW_KEYS",
    "ClaimLabel",
    "LabelSet",
    "RowLabel",
    "read_labels",
]

#: The verdicts a person can give a claim.
CLAIM_LABELS: tuple[str, ...] = ("supported", "not_supported", "unsure")
#: What a labels file's ``id`` may name (its metadata line's ``key``).
ROW_KEYS: tuple[str, ...] = ("id", "index")
#: Selections whose labels are a random sample of the rows, so estimates may use them.
RANDOM_SELECTIONS: frozenset[str] = frozenset({"uniform"})
_AGAINST = {"answer": ("contexts", "reference"), "reference": ("answer", "contexts")}

Source = Literal["answer", "reference"]


@dataclass(frozen=True, slots=True)
class RowLabel:
    """A person's score of one row for one metric."""

    id: str
    metric: str
    value: float
    line: int
    labeller: str | None = None
    time: str | None = None


@dataclass(frozen=True, slots=True)
class ClaimLabel:
    """A person's verdict on one claim of one row."""

    id: str
    claim: int
    label: str
    line: int
    source: Source = "answer"
    against: str = "contexts"
    labeller: str | None = None
    time: str | None = None

    @property
    def value(self) -> float | None:
        """1 supported, 0 not supported, ``None`` unsure."""
        return {"supported": 1.0, "not_supported": 0.0}.get(self.label)


@dataclass(frozen=True, slots=True)
class LabelSet:
    """The labels of one file and how their rows were chosen."""

    path: str
    rows: tuple[RowLabel, ...] = ()
    claims: tuple[ClaimLabel, ...] = ()
    #: ``uniform``, ``stratified``, ...; ``None`` when the file does not say.
    selection: str | None = None
    #: The metadata line's other fields (sample size, seed, ...).
    meta: dict[str, Any] = field(default_factory=dict)
    #: What the labels' ``id`` names: ``"id"`` (the rows' ids), ``"index"`` (their indexes),
    #: or ``None`` when the file does not say (an id first, else an index).
    key: str | None = None

    @property
    def random(self) -> bool:
        """Whether the labelled rows are a uniform random sample (or not said otherwise)."""
        return self.selection is None or self.selection in RANDOM_SELECTIONS

    def refusal(self) -> str | None:
        """Why calibrated estimates cannot use these labels, or ``None``."""
        if self.random:
            return None
        return (
            f"the labels in {self.path} come from a {self.selection!r} selection of rows, not a "
            "uniform random sample, so the labelled rows do not stand for the whole run and any "
            "estimate of its mean from them would be biased. Label a uniform sample (a "
            "labelling page made without stratified sampling) for estimates."
        )


def _text(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return str(value)


def _row_id(value: Any, where: str) -> str:
    if isinstance(value, bool) or value is None or value == "":
        raise DataError(f"{where}: 'id' is missing; give the row's id (or index) from the results.")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def _parse(obj: dict[str, Any], where: str, line: int) -> RowLabel | ClaimLabel:
    row_id = _row_id(obj.get("id"), where)
    labeller, time = _text(obj.get("labeller")), _text(obj.get("time"))
    if _text(obj.get("claim")) is not None:
        raw = obj["claim"]
        try:
            claim = int(raw)
            if claim != float(raw) or claim < 0:
                raise ValueError
        except (TypeError, ValueError):
            raise DataError(
                f"{where}: 'claim' must be a claim index (0, 1, ...). Got {raw!r}."
            ) from None
        label = _text(obj.get("label"))
        if label not in CLAIM_LABELS:
            raise DataError(
                f"{where}: 'label' must be one of {', '.join(CLAIM_LABELS)}. Got {label!r}."
            )
        source = _text(obj.get("source")) or "answer"
        if source not in _AGAINST:
            raise DataError(f"{where}: 'source' must be 'answer' or 'reference'. Got {source!r}.")
        against = _text(obj.get("against")) or _AGAINST[source][0]
        if against not in _AGAINST[source]:
            raise DataError(
                f"{where}: 'against' for {source} claims must be one of "
                f"{', '.join(_AGAINST[source])}. Got {against!r}."
            )
        return ClaimLabel(row_id, claim, label, line, source, against, labeller, time)  # type: ignore[arg-type]
    metric = _text(obj.get("metric"))
    if metric is None:
        raise DataError(
            f"{where}: a label needs 'metric' and 'value' (a row's score) or 'claim' and "
            f"'label' (a claim's verdict). Got the keys {sorted(obj)}."
        )
    raw = obj.get("value")
    try:
        value = float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise DataError(f"{where}: 'value' must be a number. Got {raw!r}.") from None
    if isinstance(raw, bool) or not math.isfinite(value):
        raise DataError(f"{where}: 'value' must be a finite number. Got {raw!r}.")
    return RowLabel(row_id, metric, value, line, labeller, time)


def _records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    if path.suffix.lower() == ".csv":
        with path.open(encoding="utf-8-sig", newline="") as f:
            return [(k + 2, dict(row)) for k, row in enumerate(csv.DictReader(f))]
    out = []
    with path.open(encoding="utf-8-sig") as f:
        for k, text in enumerate(f, start=1):
            if not text.strip():
                continue
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}, line {k}: not JSON ({exc.msg}).") from None
            if not isinstance(obj, dict):
                raise DataError(
                    f"{path}, line {k}: a label is a JSON object. Got {type(obj).__name__}."
                )
            out.append((k, obj))
    return out


def read_labels(path: str | os.PathLike[str]) -> LabelSet:
    """Read a labels file (``.csv``, else JSONL); errors name the line and the field."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"Labels file {str(p)!r} not found (or not a file).")
    rows: list[RowLabel] = []
    claims: list[ClaimLabel] = []
    selections: dict[str, int] = {}
    meta: dict[str, Any] = {}
    for line, obj in _records(p):
        where = f"{p}, line {line}"
        selection = _text(obj.get("selection"))
        if selection is not None:
            selections.setdefault(selection, line)
        if _text(obj.get("id")) is None and "claim" not in obj and "metric" not in obj:
            if selection is None:
                raise DataError(
                    f"{where}: a line with no 'id' must be the metadata line, with "
                    "'selection' (how the rows were chosen)."
                )
            meta.update({k: v for k, v in obj.items() if k != "selection"})
            continue
        label = _parse(obj, where, line)
        (claims if isinstance(label, ClaimLabel) else rows).append(label)
    if len(selections) > 1:
        said = ", ".join(f"{s!r} (line {n})" for s, n in selections.items())
        raise DataError(f"{p}: the labels say different selections: {said}; keep one per file.")
    if not rows and not claims:
        raise DataError(f"{p}: no labels found; each line needs 'id' and a metric or a claim.")
    key = meta.pop("key", None)
    if key not in (None, *ROW_KEYS):
        raise DataError(
            f"{p}: the metadata line's 'key' says what the labels' ids name: 'id' (the rows' "
            f"ids) or 'index' (their indexes). Got {key!r}."
        )
    return LabelSet(
        path=str(p),
        rows=tuple(rows),
        claims=tuple(claims),
        selection=next(iter(selections), None),
        meta=meta,
        key=key,
    )
