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

Rows drawn by ``ragmeter label --strategy uncertainty`` (selection ``"uncertainty"``) were
each labelled with its own probability: every label line then carries the row's
``probability`` (the inclusion probability ``ragmeter label`` drew it with, in (0, 1]), as the
page's export and ``--selection-out``'s lines do; calibrated estimates weight each row by its
inverse. A ``fingerprint`` on a label line is the row's fingerprint when it was labelled (a hash
of its claims, or of its id for a row score), and the metadata line's ``fingerprint`` the
whole sample's: ``calibrate`` checks them against the results.

How the rows were chosen is said by a ``selection`` field: on a first metadata line with no
``id`` (``{"selection": "uniform", "sample": 50, "seed": 0, "of_rows": 1000, "key": "id"}``,
the form ``ragmeter label`` writes) or on each label line (a CSV column). ``uniform`` (a uniform
random sample of rows) and ``uncertainty`` (with probabilities) are the selections calibrated
estimates accept; ``stratified`` or any other is read (agreement can be looked at) but refused
for estimates. A file mixing selections is refused: its rows were drawn by two designs, and no
one probability of being labelled can be given to each row. A file that does not
say is taken as uniform, and the calibration says it assumed so.
"""

from __future__ import annotations

import csv
import hashlib
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
    "WEIGHTED_SELECTIONS",
    "ClaimLabel",
    "LabelSet",
    "RowLabel",
    "read_labels",
    "row_fingerprint",
    "sample_fingerprint",
]

#: The verdicts a person can give a claim.
CLAIM_LABELS: tuple[str, ...] = ("supported", "not_supported", "unsure")
#: What a labels file's ``id`` may name (its metadata line's ``key``).
ROW_KEYS: tuple[str, ...] = ("id", "index")
#: Selections whose labels are a random sample of the rows, so estimates may use them.
RANDOM_SELECTIONS: frozenset[str] = frozenset({"uniform", "uncertainty"})
#: Selections that draw rows with unequal probabilities, given on every label line.
WEIGHTED_SELECTIONS: frozenset[str] = frozenset({"uncertainty"})
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
    #: The row's inclusion probability (weighted selections), else ``None``.
    probability: float | None = None
    #: The row's fingerprint when it was labelled, when the file says.
    fingerprint: str | None = None


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
    probability: float | None = None
    fingerprint: str | None = None

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
        """Whether the labelled rows are a random sample (or not said otherwise)."""
        return self.selection is None or self.selection in RANDOM_SELECTIONS

    @property
    def weighted(self) -> bool:
        """Whether the rows were drawn with unequal probabilities (given per label)."""
        return self.selection in WEIGHTED_SELECTIONS

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


def row_fingerprint(
    row_id: str | int, answer_claims: list[str] | None, reference_claims: list[str] | None
) -> str:
    """A labelled row's fingerprint: its id and the claims the labels index into (12 hex
    digits). A rerun that splits the answer into other claims changes it, so a label on
    "claim 2" is never read against another claim 2."""
    text = json.dumps([str(row_id), answer_claims or [], reference_claims or []])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def sample_fingerprint(metric: str, input_sha: str | None, rows: list[str]) -> str:
    """A labelling page's fingerprint: its metric, the run's input and its rows' fingerprints
    (16 hex digits): the page's storage key and its export's first line hold it."""
    text = json.dumps([metric, input_sha, sorted(rows)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


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


def _probability(obj: dict[str, Any], where: str) -> float | None:
    raw = obj.get("probability")
    if raw is None or raw == "":
        return None
    try:
        value = float(raw)
    except (TypeError, ValueError):
        value = math.nan
    if isinstance(raw, bool) or not 0.0 < value <= 1.0:
        raise DataError(
            f"{where}: 'probability' is the row's inclusion probability, a number in (0, 1] "
            f"(as ragmeter label --selection-out writes it). Got {raw!r}."
        )
    return value


def _parse(obj: dict[str, Any], where: str, line: int) -> RowLabel | ClaimLabel:
    row_id = _row_id(obj.get("id"), where)
    labeller, time = _text(obj.get("labeller")), _text(obj.get("time"))
    probability, fingerprint = _probability(obj, where), _text(obj.get("fingerprint"))
    if _text(obj.get("claim")) is not None:
        raw = obj["claim"]
        try:
            if isinstance(raw, bool):
                raise ValueError
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
        return ClaimLabel(
            row_id,
            claim,
            label,
            line,
            source,  # type: ignore[arg-type]
            against,
            labeller,
            time,
            probability,
            fingerprint,
        )
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
    return RowLabel(row_id, metric, value, line, labeller, time, probability, fingerprint)


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
        if _text(obj.get("id")) is None and not {"claim", "label", "value"} & set(obj):
            if selection is None and "metric" in obj:
                _row_id(None, where)  # a label without its id
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
        raise DataError(
            f"{p}: the labels say different selections: {said}. Rows drawn by two designs "
            "(say a uniform sample and one drawn by uncertainty) have no one probability of "
            "being labelled, so no estimate can weight them; calibrate with one file per "
            "selection."
        )
    if not rows and not claims:
        raise DataError(f"{p}: no labels found; each line needs 'id' and a metric or a claim.")
    key = meta.pop("key", None)
    if key not in (None, *ROW_KEYS):
        raise DataError(
            f"{p}: the metadata line's 'key' says what the labels' ids name: 'id' (the rows' "
            f"ids) or 'index' (their indexes). Got {key!r}."
        )
    selection_said = next(iter(selections), None)
    if selection_said in WEIGHTED_SELECTIONS:
        lacking = [x.line for x in (*rows, *claims) if x.probability is None]
        if lacking:
            raise DataError(
                f"{p}, line {lacking[0]}: the rows were drawn by {selection_said!r}, each with "
                f"its own probability, but {len(lacking)} label line(s) give no 'probability'. "
                "Keep each row's probability from the page's export or --selection-out's line."
            )
    return LabelSet(
        path=str(p),
        rows=tuple(rows),
        claims=tuple(claims),
        selection=next(iter(selections), None),
        meta=meta,
        key=key,
    )
