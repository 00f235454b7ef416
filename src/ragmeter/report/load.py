"""Read a run's results (JSONL + ``.run.json`` sidecar) into a :class:`Run`.

A results file holds one JSON object per input row, in input order::

    {"index": 0, "id": "q1", "scores": {"faithfulness": 0.5}, "reasons": {...},
     "failures": {...}, "details": {...}, "metadata": {...}}

Beside it, ``<results>.run.json`` holds the run's configuration, usage and metric specs.
When the sidecar is missing, metric directions are inferred from their names and the
:class:`Run` says so (``directions_inferred``).
"""

from __future__ import annotations

import difflib
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragmeter.errors import DataError, param, unknown_metric
from ragmeter.io.paths import sidecar_path
from ragmeter.io.results import read_results, scan_results
from ragmeter.result import read_sidecar, results_expect
from ragmeter.scoring.statistics import Summary, summarize

__all__ = [
    "Column",
    "MetricInfo",
    "ReportRow",
    "Run",
    "as_run",
    "check_group_path",
    "infer_higher_is_better",
    "load_run",
    "read_details",
    "read_inputs",
    "recorded_input",
    "sidecar_path",
    "weakest_verdict",
]

#: Metrics whose best score is 0 although the sidecar does not say so.
_LOWER_IS_BETTER_PREFIXES: tuple[str, ...] = ("noise_sensitivity",)
_LOWER_IS_BETTER_NAMES: frozenset[str] = frozenset({"hallucination"})


def infer_higher_is_better(metric: str) -> bool:
    """Direction of a metric known only by name (no sidecar, no spec)."""
    if metric in _LOWER_IS_BETTER_NAMES:
        return False
    return not metric.startswith(_LOWER_IS_BETTER_PREFIXES)


@dataclass(frozen=True, slots=True)
class MetricInfo:
    """What the report needs to know about a metric."""

    name: str
    higher_is_better: bool = True
    lower: float = 0.0
    upper: float = 1.0
    description: str = ""
    family: str = ""
    #: True when the direction was guessed from the name (no sidecar entry).
    inferred: bool = False

    @property
    def span(self) -> float:
        span = self.upper - self.lower
        return span if span > 0 else 1.0

    def goodness(self, value: float) -> float:
        """``value`` on a 0 (worst) .. 1 (best) scale, whatever the direction."""
        g = (value - self.lower) / self.span
        return g if self.higher_is_better else 1.0 - g

    @property
    def direction(self) -> str:
        return "higher is better" if self.higher_is_better else "lower is better"


@dataclass(frozen=True, slots=True)
class ReportRow:
    """One row of results as a report reads it back (a results line, or a
    :class:`~ragmeter.types.RowResult` of a run in memory); not an input row
    (:class:`ragmeter.io.readers.Row`)."""

    index: int
    id: str | None
    scores: Mapping[str, float | None]
    reasons: Mapping[str, str] = field(default_factory=dict)
    failures: Mapping[str, str] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] | None = None
    #: Question and answer, when the results file carries them (optional keys) or the
    #: run's input was read again (:meth:`Run.with_inputs`).
    question: str | None = None
    answer: str | None = None
    #: The texts the claim evidence points into, when known (as question and answer).
    contexts: tuple[str, ...] | None = None
    reference_answers: tuple[str, ...] | None = None
    #: Claim metrics' ``(uncertain, verdicts)`` counts, kept even when details are dropped.
    verdict_counts: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    #: Claim metrics whose reason says the references are much shorter than the answer.
    short_reference: frozenset[str] = frozenset()
    #: Claim metrics' weakest verdict that counted a claim as entailed, kept even when
    #: details are dropped: ``(support, claim, what it rests on)`` (:func:`weakest_verdict`).
    weakest: Mapping[str, tuple[float, str, str]] = field(default_factory=dict)

    def lookup(self, path: str) -> Any:
        """Value at a dotted ``path`` (``metadata.category``, ``id``); ``None`` if absent.

        A bare name that is not a row field is read from ``metadata``.
        """
        parts = [p for p in path.split(".") if p]
        if not parts:
            return None
        head, rest = parts[0], parts[1:]
        if head in ("index", "id", "question", "answer"):
            value: Any = getattr(self, head)
        elif head == "metadata":
            value = self.metadata
        else:
            value, rest = self.metadata, parts
        for part in rest:
            if not isinstance(value, Mapping):
                return None
            value = value.get(part)
        return value


def group_paths(rows: Iterable[ReportRow]) -> list[str]:
    """The paths a report can group ``rows`` by: row fields and ``metadata`` keys, nested."""
    found: dict[str, None] = {}
    for row in rows:
        for name in ("id", "question", "answer"):
            if getattr(row, name) is not None:
                found[name] = None
        stack: list[tuple[str, Any]] = [("metadata", row.metadata)]
        while stack:
            prefix, value = stack.pop()
            if isinstance(value, Mapping):
                stack.extend((f"{prefix}.{key}", item) for key, item in value.items())
            elif value is not None:
                found[prefix] = None
    return sorted(found)


def check_group_path(path: str, rows: Iterable[ReportRow], *, unread: str | None = None) -> None:
    """Raise ``DataError`` when no row has a value at ``path``: a typo, not a group.

    Names close paths of the rows (``metadata.category`` for ``metadata.categroy``);
    ``unread`` says why some rows' metadata could not be read, when the caller knows.
    """
    rows = list(rows)
    if any(row.lookup(path) is not None for row in rows):
        return
    known = group_paths(rows)
    leaves = {name.rsplit(".", 1)[-1] for name in known}
    close_leaves = difflib.get_close_matches(path.rsplit(".", 1)[-1], leaves, n=3, cutoff=0.6)
    close = [name for name in known if name.rsplit(".", 1)[-1] in close_leaves]
    hint = f" Did you mean {', '.join(map(repr, close[:3]))}?" if close else ""
    why = f" {unread}" if unread else ""
    grouped = [name for name in known if name != "id"]  # one group per row: no grouping
    if grouped:
        shown = ", ".join(grouped[:20]) + (", ..." if len(grouped) > 20 else "")
        fix = f" Paths the rows have: {shown}; give one of them as {param('group_by')}."
    else:
        fix = " The rows have no metadata to group by."
    raise DataError(f"Cannot group by {path!r}: no row has a value there.{why}{hint}{fix}")


@dataclass(slots=True)
class Column:
    """One metric over a run's rows, by position in ``Run.rows``: the scored rows and their
    values, and the rows without a score (undefined; failed, whether or not a null is
    recorded)."""

    positions: list[int] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    undefined: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Run:
    """A run's rows and information (the sidecar's content), ready for reports."""

    rows: tuple[ReportRow, ...]
    info: Mapping[str, Any]
    #: Where the results were read from (``None`` for in-memory runs).
    source: Path | None = None
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_parts(
        cls,
        rows: Iterable[Any],
        info: Mapping[str, Any] | None = None,
        *,
        source: str | os.PathLike[str] | None = None,
    ) -> Run:
        """Build a run from rows (``RowResult`` objects or their JSON dicts) and info."""
        parsed = tuple(_parse_row(_row_mapping(r), where=f"row {i}") for i, r in enumerate(rows))
        return cls(
            rows=parsed,
            info=dict(info or {}),
            source=None if source is None else Path(source),
        )

    # -- metrics --------------------------------------------------------------------------
    @property
    def metrics(self) -> dict[str, MetricInfo]:
        """Every metric of the run: the sidecar's first, then any other found in rows."""
        if "metrics" not in self._cache:
            declared = self.info.get("metrics") or {}
            found: dict[str, MetricInfo] = {}
            if isinstance(declared, Mapping):
                for name, spec in declared.items():
                    found[str(name)] = _metric_info(str(name), spec)
            for row in self.rows:
                for name in row.scores:
                    if name not in found:
                        found[name] = MetricInfo(
                            name=name, higher_is_better=infer_higher_is_better(name), inferred=True
                        )
            self._cache["metrics"] = found
        return self._cache["metrics"]

    @property
    def directions_inferred(self) -> list[str]:
        """Metrics whose direction was guessed from the name."""
        return [m.name for m in self.metrics.values() if m.inferred]

    def metric(self, name: str) -> MetricInfo:
        try:
            return self.metrics[name]
        except KeyError:
            raise unknown_metric(name, self.metrics) from None

    # -- values ---------------------------------------------------------------------------
    def column(self, metric: str) -> Column:
        """``metric`` over the rows, read in one pass for every metric and kept."""
        if "columns" not in self._cache:
            cols: dict[str, Column] = {}
            for pos, row in enumerate(self.rows):
                for name, value in row.scores.items():
                    col = cols.get(name) or cols.setdefault(name, Column())
                    if value is None:
                        col.undefined.append(pos)
                    else:
                        col.positions.append(pos)
                        col.values.append(value)
                for name in row.failures:
                    if name not in row.scores or row.scores[name] is None:
                        col = cols.get(name) or cols.setdefault(name, Column())
                        if name in row.scores:
                            col.undefined.pop()  # this row's, appended just above
                        col.failed.append(pos)
            self._cache["columns"] = cols
        return self._cache["columns"].get(metric) or Column()

    def values(self, metric: str) -> list[float]:
        """Defined scores of ``metric``, in row order."""
        return list(self.column(metric).values)

    def counts(self, metric: str) -> tuple[int, int]:
        """(undefined, failed) counts of ``metric``: rows where the score is missing."""
        col = self.column(metric)
        return len(col.undefined), len(col.failed)

    def summary(self, metric: str) -> Summary:
        """Statistics of ``metric`` over this run's rows (with a 95 % bootstrap interval),
        with the claim metrics' uncertain verdicts counted over the scored rows."""
        key = f"summary:{metric}"
        if key not in self._cache:
            undefined, failed = self.counts(metric)
            found = summarize(self.values(metric), undefined=undefined, failed=failed)
            counts = self.verdict_counts(metric)
            if counts is not None:
                found = replace(found, uncertain_verdicts=counts[0], verdicts=counts[1])
            self._cache[key] = found
        return self._cache[key]

    def verdict_counts(self, metric: str) -> tuple[int, int] | None:
        """``(uncertain, verdicts)`` of ``metric`` over the scored rows; ``None`` when no
        row says (not a claim metric, or a judge that gives no uncertainty)."""
        counts = [
            self.rows[p].verdict_counts[metric]
            for p in self.column(metric).positions
            if metric in self.rows[p].verdict_counts
        ]
        if not counts:
            return None
        return sum(c[0] for c in counts), sum(c[1] for c in counts)

    def uncertain_rows(self, metric: str) -> list[int]:
        """Indices of the scored rows with at least one uncertain verdict of ``metric``."""
        return [
            self.rows[p].index
            for p in self.column(metric).positions
            if self.rows[p].verdict_counts.get(metric, (0, 0))[0] > 0
        ]

    def short_reference_rows(self, metric: str) -> list[int]:
        """Indices of the scored rows whose references are much shorter than the answer."""
        return [
            self.rows[p].index
            for p in self.column(metric).positions
            if metric in self.rows[p].short_reference
        ]

    def subset(self, rows: Sequence[ReportRow]) -> Run:
        """A run with the same info and only ``rows``."""
        return Run(rows=tuple(rows), info=self.info, source=self.source)

    def groups(self, path: str, *, max_groups: int = 20) -> dict[str, Run]:
        """Rows split by the value at ``path`` (``metadata.category``), largest groups first.

        Rows without the field go to ``(missing)``; past ``max_groups`` the smallest groups
        are merged into ``(other)``. A path no row has raises ``DataError`` naming close ones.
        The split is kept: asking again returns the same sub-runs (and their statistics).
        """
        key = f"groups:{max_groups}:{path}"
        if key not in self._cache:
            self._cache[key] = self._split(path, max_groups)
        return dict(self._cache[key])

    def _split(self, path: str, max_groups: int) -> dict[str, Run]:
        check_group_path(path, self.rows)
        buckets: dict[str, list[ReportRow]] = {}
        for row in self.rows:
            value = row.lookup(path)
            label = "(missing)" if value is None else _label(value)
            buckets.setdefault(label, []).append(row)
        ordered = sorted(buckets.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        if len(ordered) > max_groups:
            kept, rest = ordered[: max_groups - 1], ordered[max_groups - 1 :]
            other = [r for _, rows in rest for r in rows]
            other.sort(key=lambda r: r.index)
            ordered = [*kept, ("(other)", other)]
        return {label: self.subset(rows) for label, rows in ordered}

    def with_inputs(self, inputs: Mapping[int, Mapping[str, Any]]) -> Run:
        """A copy whose rows at the given indices carry their input texts (``question``,
        ``answer``, ``contexts``, ``reference_answers``; see :func:`read_inputs`)."""
        if not inputs:
            return self
        rows = tuple(
            _with_inputs(r, inputs[r.index]) if r.index in inputs else r for r in self.rows
        )
        return Run(rows=rows, info=self.info, source=self.source)

    def with_details(self, details: Mapping[int, Mapping[str, Any]]) -> Run:
        """A copy whose rows at the given indices carry ``details`` (see :func:`read_details`)."""
        rows = tuple(
            _replace_details(r, details[r.index]) if r.index in details else r for r in self.rows
        )
        return Run(rows=rows, info=self.info, source=self.source)


def _replace_details(row: ReportRow, details: Mapping[str, Any]) -> ReportRow:
    return replace(row, details=dict(details))


def _texts(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _with_inputs(row: ReportRow, given: Mapping[str, Any]) -> ReportRow:
    question, answer = given.get("question"), given.get("answer")
    return replace(
        row,
        question=question if isinstance(question, str) else row.question,
        answer=answer if isinstance(answer, str) else row.answer,
        contexts=_texts(given.get("contexts")) or row.contexts,
        reference_answers=_texts(given.get("reference_answers")) or row.reference_answers,
    )


#: The verdicts a claim metric's score rests on: ``(claims, checked against)`` pairs, the
#: claims being the answer's (``answer_claims``) or the references' (``reference_claims``).
#: A claim metric not named here rests on every verdict its details carry.
RESTS_ON: Mapping[str, tuple[tuple[str, str], ...]] = {
    **dict.fromkeys(
        ("faithfulness", "faithfulness_support", "context_utilization"),
        (("answer_claims", "contexts"),),
    ),
    **dict.fromkeys(
        ("claim_precision", "claim_precision_support"), (("answer_claims", "references"),)
    ),
    **dict.fromkeys(
        (
            "hallucination",
            "self_knowledge",
            "noise_sensitivity_relevant",
            "noise_sensitivity_irrelevant",
        ),
        (("answer_claims", "contexts"), ("answer_claims", "references")),
    ),
    "claim_recall": (("reference_claims", "answer"),),
    "claim_f1": (("answer_claims", "references"), ("reference_claims", "answer")),
    **dict.fromkeys(
        ("context_precision", "context_claim_precision", "context_claim_recall"),
        (("reference_claims", "contexts"),),
    ),
    "context_claim_utilization": (("reference_claims", "contexts"), ("reference_claims", "answer")),
}

_TEXT_NAMES = {"contexts": "context", "references": "reference", "answer": "answer"}


def _claim_evidence(details: Mapping[str, Any]) -> Iterable[tuple[str, str, Mapping[str, Any]]]:
    """``(claims key, claim text, evidence)`` of every claim in a metric's details."""
    answer = details.get("answer_claims")
    for item in answer if isinstance(answer, list) else ():
        if isinstance(item, Mapping) and isinstance(item.get("evidence"), Mapping):
            yield "answer_claims", str(item.get("claim", "")), item["evidence"]
    references = details.get("reference_claims")
    for claims in references if isinstance(references, list) else ():
        for item in claims if isinstance(claims, list) else ():
            if isinstance(item, Mapping) and isinstance(item.get("evidence"), Mapping):
                yield "reference_claims", str(item.get("claim", "")), item["evidence"]


def weakest_verdict(metric: str, details: Any) -> tuple[float, str, str] | None:
    """The verdict with the lowest support among those that counted a claim of ``metric`` as
    entailed (the verdicts a good score rests on, :data:`RESTS_ON`): ``(support, claim,
    "context 0")``; ``None`` when no such verdict carries a support (an LLM judge's)."""
    if not isinstance(details, Mapping):
        return None
    wanted = RESTS_ON.get(metric)
    found: tuple[float, str, str] | None = None
    for claims, claim, evidence in _claim_evidence(details):
        for against, verdict in evidence.items():
            if wanted is not None and (claims, against) not in wanted:
                continue
            if not isinstance(verdict, Mapping) or verdict.get("entailed") is not True:
                continue
            cells = [c for c in verdict.get("rests_on") or () if isinstance(c, Mapping)]
            support = cells[0].get("support") if cells else None
            if isinstance(support, bool) or not isinstance(support, int | float):
                continue
            if found is None or support < found[0]:
                index = cells[0].get("index", 0)
                name = _TEXT_NAMES.get(str(against), str(against))
                where = name if name == "answer" else f"{name} {index}"
                found = (float(support), claim, where)
    return found


def _claim_flags(
    details: Any,
) -> tuple[dict[str, tuple[int, int]], frozenset[str], dict[str, tuple[float, str, str]]]:
    """Claim metrics' verdict counts, short-reference flags and weakest entailed verdicts
    from a row's details."""
    counts: dict[str, tuple[int, int]] = {}
    short: set[str] = set()
    weakest: dict[str, tuple[float, str, str]] = {}
    if not isinstance(details, Mapping):
        return counts, frozenset(), weakest
    for metric, value in details.items():
        if not isinstance(value, Mapping):
            continue
        n, k = value.get("verdict_count"), value.get("uncertain_verdicts")
        if all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in (n, k)):
            counts[str(metric)] = (min(k, n), n)
        if value.get("short_reference") is True:
            short.add(str(metric))
        weak = weakest_verdict(str(metric), value)
        if weak is not None:
            weakest[str(metric)] = weak
    return counts, frozenset(short), weakest


def _label(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _metric_info(name: str, spec: Any) -> MetricInfo:
    if not isinstance(spec, Mapping):
        return MetricInfo(name=name, higher_is_better=infer_higher_is_better(name), inferred=True)
    hib = spec.get("higher_is_better")
    lower, upper = spec.get("lower", 0.0), spec.get("upper", 1.0)
    return MetricInfo(
        name=name,
        higher_is_better=bool(hib) if hib is not None else infer_higher_is_better(name),
        lower=float(lower) if isinstance(lower, int | float) else 0.0,
        upper=float(upper) if isinstance(upper, int | float) else 1.0,
        description=str(spec.get("description") or ""),
        family=str(spec.get("family") or ""),
        inferred=hib is None,
    )


def _row_mapping(row: Any) -> Mapping[str, Any]:
    if isinstance(row, Mapping):
        return row
    to_json = getattr(row, "to_json", None)
    if callable(to_json):
        return to_json()
    raise DataError(
        f"A run row must be a dict or a RowResult. Got {type(row).__name__}: {row!r:.80}."
    )


def _str_map(value: Any, name: str, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise DataError(f"{where}: {name!r} must be an object. Got {type(value).__name__}.")
    return {str(k): str(v) for k, v in value.items() if v is not None}


def _parse_row(obj: Any, *, where: str, keep_details: bool = True) -> ReportRow:
    if not isinstance(obj, Mapping):
        raise DataError(f"{where}: expected a JSON object. Got {type(obj).__name__}.")
    raw_scores = obj.get("scores")
    if raw_scores is None:
        raw_scores = {}
    if not isinstance(raw_scores, Mapping):
        raise DataError(
            f"{where}: 'scores' must be an object of metric -> number or null. "
            f"Got {type(raw_scores).__name__}."
        )
    scores: dict[str, float | None] = {}
    for metric, value in raw_scores.items():
        if value is None:
            scores[str(metric)] = None
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise DataError(
                f"{where}: score of {metric!r} must be a number or null. Got {value!r:.80}."
            )
        if not math.isfinite(value):
            raise DataError(
                f"{where}: score of {metric!r} must be finite. Got {value!r}; "
                "an undefined score is written as null with a reason."
            )
        scores[str(metric)] = float(value)
    index = obj.get("index")
    if index is None:
        raise DataError(f"{where}: the row has no 'index'. Is this a ragmeter results file?")
    if isinstance(index, bool) or not isinstance(index, int):
        raise DataError(f"{where}: 'index' must be an integer. Got {index!r:.80}.")
    rid = obj.get("id")
    counts, short, weakest = _claim_flags(obj.get("details"))
    details = obj.get("details") if keep_details else None
    metadata = obj.get("metadata")
    question, answer = obj.get("question"), obj.get("answer")
    return ReportRow(
        index=index,
        id=None if rid is None else str(rid),
        scores=scores,
        reasons=_str_map(obj.get("reasons"), "reasons", where),
        failures=_str_map(obj.get("failures"), "failures", where),
        details=dict(details) if isinstance(details, Mapping) else {},
        metadata=dict(metadata) if isinstance(metadata, Mapping) else None,
        question=question if isinstance(question, str) else None,
        answer=answer if isinstance(answer, str) else None,
        contexts=_texts(obj.get("contexts")),
        reference_answers=_texts(obj.get("reference_answers")),
        verdict_counts=counts,
        short_reference=short,
        weakest=weakest,
    )


def load_info(results: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The sidecar of ``results``, or ``None`` when there is none."""
    return read_sidecar(results)


def load_run(path: str | os.PathLike[str], *, keep_details: bool = True) -> Run:
    """Read a results JSONL and its sidecar.

    Reads line by line, checking each (:mod:`ragmeter.io.results`: scores in their metrics'
    ranges, indexes in the input's; a row written again by a resumed run counts once, in its
    last version; a cut-off last line is not a row); with
    ``keep_details=False`` claim-level details are dropped while reading (fetch the few that
    a report shows with :func:`read_details`).
    """
    path = Path(path)
    info = load_info(path)
    scan = scan_results(path, results_expect(info))
    rows = [
        _parse_row(obj, where=f"{path}, line {lineno}", keep_details=keep_details)
        for lineno, obj in read_results(path, scan)
    ]
    return Run(rows=tuple(rows), info=info or {}, source=path)


def read_details(path: str | os.PathLike[str], indices: Iterable[int]) -> dict[int, dict[str, Any]]:
    """Details of the rows with the given ``index`` values, read again from ``path``."""
    wanted = set(indices)
    found: dict[int, dict[str, Any]] = {}
    if not wanted:
        return found
    for _, obj in read_results(path):
        if obj["index"] in wanted:
            details = obj.get("details")
            found[obj["index"]] = dict(details) if isinstance(details, Mapping) else {}
            if len(found) == len(wanted):
                break
    return found


#: The input fields a report shows beside the claims.
_INPUT_FIELDS = ("question", "answer", "contexts", "reference_answers")


def read_inputs(
    data: Any, indices: Iterable[int], *, column_map: Any = None
) -> dict[int, dict[str, Any]]:
    """The input texts (question, answer, contexts, reference answers) of the rows with the
    given indices, read again from ``data`` (a path or rows, as ``evaluate`` takes them)."""
    from ragmeter.io.columns import ColumnMap, to_sample
    from ragmeter.io.readers import open_rows

    wanted = set(indices)
    found: dict[int, dict[str, Any]] = {}
    if not wanted:
        return found
    cmap = ColumnMap.from_any(column_map)
    for row in open_rows(data):
        if row.index in wanted and isinstance(row.data, Mapping):
            sample, _ = to_sample(row.data, cmap)
            found[row.index] = {
                name: value
                for name in _INPUT_FIELDS
                if (value := getattr(sample, name)) is not None
            }
            if len(found) == len(wanted):
                break
    return found


def recorded_input(info: Mapping[str, Any], results: str | os.PathLike[str] | None) -> Path | None:
    """The input file a run record names, when it is still there and unchanged (its sha256
    is the recorded one); a relative name is looked up beside the results too."""
    from ragmeter.io.fingerprint import input_fingerprint

    name, recorded = info.get("data"), info.get("input")
    if not isinstance(name, str) or not isinstance(recorded, Mapping):
        return None
    if recorded.get("source") != "file" or not isinstance(recorded.get("sha256"), str):
        return None
    places = [Path(name)]
    if results is not None and not Path(name).is_absolute():
        places.append(Path(results).parent / name)
    for place in places:
        try:
            if (
                place.is_file()
                and (input_fingerprint(place) or {}).get("sha256") == (recorded["sha256"])
            ):
                return place
        except OSError:
            continue
    return None


def as_run(obj: Any) -> Run:
    """Accept a :class:`Run`, a results path, or a RunResult-like object (``.rows``, ``.info``)."""
    if isinstance(obj, Run):
        return obj
    if isinstance(obj, str | os.PathLike):
        return load_run(obj)
    if hasattr(obj, "rows"):
        info = getattr(obj, "info", None)
        if callable(info):
            info = info()
        return Run.from_parts(obj.rows, info if isinstance(info, Mapping) else {})
    raise TypeError(
        "Expected a run result, a Run, or the path of a results .jsonl file. "
        f"Got {type(obj).__name__}."
    )
