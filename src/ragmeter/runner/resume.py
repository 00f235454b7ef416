"""What of a results file stays on a resumed run, checked before a byte is appended or cut.

The file must be this input's results (:func:`check_resumable`: its run record names this
input; a file without one was not written by ragmeter), scored the way this run scores
(:func:`changed_scoring`: the same judge, verifier, models and column map for the metrics it
holds; :func:`changed_versions`: the same code of each Python metric), with no metric this run
leaves out (:func:`dropped_metrics`) and every line a valid row
(:mod:`ragmeter.io.results`: scores in their metrics' ranges, indexes in the input's). Then
each row that counts is

- done: kept as it is, and counted in the summaries;
- missing metrics added to the run since it was written: kept, and only those metrics are
  computed (:func:`merged` writes the row again with them);
- failed on the judge or the infrastructure: scored again.

Only a cut-off last line (a killed run's) is cut.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragmeter.errors import DataError, param
from ragmeter.io.fingerprint import same_input
from ragmeter.io.paths import sidecar_path
from ragmeter.io.readers import open_rows
from ragmeter.io.results import ResultsScan, read_record_at, read_results, scan_results
from ragmeter.metrics.registry import all_specs, changed_meanings
from ragmeter.result import read_sidecar, results_expect
from ragmeter.settings import scoring_settings
from ragmeter.types import MetricSpec, RowResult

__all__ = [
    "SCORING_SETTINGS",
    "Resumed",
    "changed_scoring",
    "changed_versions",
    "check_resumable",
    "dropped_metrics",
    "load_resumed",
    "merged",
]

#: The settings that change scores, each with the metrics whose scores it changes (the table
#: of settings says which, :func:`ragmeter.settings.scoring_settings`): a resumed run must have
#: each as the run record has it when the file holds such a metric. Others (concurrency,
#: timeouts, the cache, prices, the batch size) may change.
SCORING_SETTINGS: dict[str, Callable[[MetricSpec], bool]] = scoring_settings()


@dataclass(slots=True)
class Resumed:
    """The rows of a results file that stay."""

    scan: ResultsScan
    #: Rows kept as they are.
    done: set[int] = field(default_factory=set)
    #: Rows kept, with the metrics of this run they lack.
    partial: dict[int, frozenset[str]] = field(default_factory=dict)

    def completed(self, row: RowResult) -> RowResult:
        """``row`` (only the metrics a kept row lacked) merged into the row it completes."""
        if row.index not in self.partial:
            return row
        return merged(_row(read_record_at(self.scan, row.index), self.scan, row.index), row)

    def note(self, out: Path | None, total: int | None) -> str:
        """What a resumed run reuses of ``out``, and what it scores (``total``: the input's
        rows, when known)."""
        reused = len(self.done)
        partial = len(self.partial)
        extra = f", {partial} rows get the metrics they lack" if partial else ""
        rest = "" if total is None else f"; {max(total - reused, 0)} of {total} rows to score"
        return (
            f"{param('resume', 'resume=True')}: {reused} scored rows of {out} reused{extra}{rest}."
        )


def _row(record: dict[str, Any], scan: ResultsScan, index: int) -> RowResult:
    try:
        return RowResult.from_json(record)
    except (ValueError, KeyError, TypeError) as exc:
        lineno = scan.final[index][0]
        raise DataError(f"{scan.path}, line {lineno}: not a row of results ({exc}).") from None


def load_resumed(
    out: Path,
    *,
    fingerprint: dict[str, Any] | None,
    data: Any,
    data_name: str,
    metrics: Collection[str],
    account: Callable[[RowResult], None] | None = None,
    scoring: Mapping[str, Any] | None = None,
    specs: Collection[MetricSpec] = (),
    dry_run: bool = False,
) -> Resumed:
    """Check ``out`` for a resumed run of ``metrics`` on ``data``; ``account`` every row done.

    ``scoring`` holds what decides this run's scores as the run record writes it (the
    settings of :data:`SCORING_SETTINGS` and ``column_map``); any difference is refused, and
    so is a metric of the file this run leaves out, or one of ``specs`` (this run's) whose
    version differs from the record's. With ``dry_run`` the file is checked the same way and
    left as it is (a cut-off last line is not cut)."""
    info = check_resumable(out, fingerprint, data_name=data_name)
    dropped = dropped_metrics(info, metrics)
    if dropped:
        raise DataError(
            f"{out} holds metrics this run does not compute: {', '.join(dropped)}. Resuming "
            "with fewer metrics would leave rows of two metric sets in one file under a run "
            f"record naming only this run's. Resume with every metric of the file "
            f"({param('metrics', 'metrics=')} {','.join(_recorded_names(info))}), or give "
            f"{param('out')} a new path."
        )
    versions = changed_versions(info, specs)
    if versions:
        raise DataError(
            f"{out} was written by other code of its metrics: "
            + "; ".join(versions)
            + ". Resuming would mix the scores of two versions of a metric in one file under "
            f"one mean. Give {param('out')} a new path, or resume with the code that wrote it "
            "(@ragmeter.metric(version=...) names the versions whose scores differ)."
        )
    if scoring is not None:
        recorded = info.get("metrics")
        kept = set(recorded) & set(metrics) if isinstance(recorded, Mapping) else set(metrics)
        registered = all_specs()
        differences = changed_scoring(
            info, scoring, metrics=[registered[m] for m in sorted(kept) if m in registered]
        )
        if differences:
            raise DataError(
                f"{out} was written with other options that change scores: "
                + "; ".join(differences)
                + ". Resuming would mix the scores of two runs in one file under one mean. "
                "Resume with the options the run record names, or write to a new path "
                f"({param('out')}); cached judge replies make the rerun cheap."
            )
    changed = changed_meanings(info.get("metrics"), where=str(out), names=metrics)
    if changed:
        raise DataError(
            " ".join(changed) + " Resuming would mix the two formulas in one file: give "
            f"{param('out')} a new path (cached judge replies make the rerun cheap)."
        )
    expect = results_expect(info)
    if expect.n_rows is None:  # the first run stopped before it counted the input's rows
        expect = replace(expect, n_rows=sum(1 for _ in open_rows(data)))
    resumed = Resumed(scan_results(out, expect))
    wanted = frozenset(metrics)
    for _, record in read_results(out, resumed.scan):
        row = _row(record, resumed.scan, record["index"])
        if row.retried:
            continue
        missing = wanted - row.scores.keys()
        if missing:
            resumed.partial[row.index] = missing
            continue
        resumed.done.add(row.index)
        if account is not None:
            account(row)
    if resumed.scan.torn and not dry_run:
        with out.open("r+b") as fh:
            fh.truncate(resumed.scan.good_bytes)
    return resumed


def dropped_metrics(info: Mapping[str, Any], metrics: Collection[str]) -> list[str]:
    """The metrics of the run record ``info`` that ``metrics`` (a resumed run's) lacks."""
    return [name for name in _recorded_names(info) if name not in metrics]


def _recorded_names(info: Mapping[str, Any]) -> list[str]:
    recorded = info.get("metrics")
    return [str(name) for name in recorded] if isinstance(recorded, Mapping) else []


def changed_versions(info: Mapping[str, Any], specs: Collection[MetricSpec]) -> list[str]:
    """One phrase per metric of ``specs`` whose version (a Python metric's declared version
    or source hash) differs from the run record's. A record without one for the metric (an
    older ragmeter) is not checked."""
    recorded = info.get("metrics")
    recorded = recorded if isinstance(recorded, Mapping) else {}
    out = []
    for spec in specs:
        then = recorded.get(spec.name)
        then = then.get("version") if isinstance(then, Mapping) else None
        if spec.version is None or then is None or then == spec.version:
            continue
        out.append(f"{spec.name} (the run record has {then!r}, this run {spec.version!r})")
    return out


def changed_scoring(
    info: Mapping[str, Any], scoring: Mapping[str, Any], *, metrics: Collection[MetricSpec]
) -> list[str]:
    """What of ``scoring`` that changes the scores of ``metrics`` (those the file holds and
    this run computes) differs from the run record ``info``, one phrase each. A record
    without a column map (an older ragmeter) is not checked for it."""
    recorded = info.get("settings")
    recorded = recorded if isinstance(recorded, Mapping) else {}
    out = []
    for name, now in scoring.items():
        changes = SCORING_SETTINGS.get(name)
        if changes is not None and not any(changes(spec) for spec in metrics):
            continue
        if name == "column_map":
            if "column_map" not in info:
                continue
            then = info["column_map"]
            if _jsonable(then) != _jsonable(now):
                out.append(f"the column map was {_shown(then)}, now {_shown(now)}")
            continue
        then = recorded.get(name)
        if name == "relevance_dtype" and then == "auto" and _before_int8_default(info):
            if now == "auto":
                out.append(
                    "context relevance's dtype 'auto' meant float32 when this file was "
                    f"written and means int8 now: continue it with float32 "
                    f"({param('relevance_dtype')})"
                )
            elif now != "float32":
                named = param("relevance_dtype", "the 'relevance_dtype' setting")
                out.append(f"{named} was 'auto' (float32), now {now!r}")
            continue
        if _jsonable(then) != _jsonable(now):
            out.append(f"{param(name, f'the {name!r} setting')} was {then!r}, now {now!r}")
    return out


def _before_int8_default(info: Mapping[str, Any]) -> bool:
    """Whether a run record predates int8 as context relevance's 'auto' (ragmeter then
    recorded no ``models``): its context relevance scores are float32's."""
    models = info.get("models")
    return not (isinstance(models, Mapping) and "context_relevance" in models)


def _jsonable(value: Any) -> Any:
    """``value`` as the run record's JSON reads it back (tuples are lists)."""
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def _shown(column_map: Any) -> str:
    if not column_map:
        return "the default (no column given)"
    if isinstance(column_map, Mapping):
        return ", ".join(f"{k}={v}" for k, v in column_map.items())
    return repr(column_map)


def merged(old: RowResult, new: RowResult) -> RowResult:
    """``old`` with the metrics ``new`` computed for it (metrics added since it was written)."""
    return RowResult(
        index=new.index,
        id=new.id if new.id is not None else old.id,
        scores={**old.scores, **new.scores},
        reasons={**old.reasons, **new.reasons},
        failures={**old.failures, **new.failures},
        details={**old.details, **new.details},
        metadata=new.metadata if new.metadata is not None else old.metadata,
        failure_causes={**old.failure_causes, **new.failure_causes},
    )


def check_resumable(
    results: Path, fingerprint: dict[str, Any] | None, *, data_name: str
) -> dict[str, Any]:
    """The run record of ``results`` if it was written for the input ``fingerprint`` names;
    ``DataError`` otherwise (the file is left as it is)."""
    record = sidecar_path(results)
    fresh = (
        f"Give {param('out')} a new path, or leave out {param('resume', 'resume=True')} to "
        "start over (the file is replaced)."
    )
    if fingerprint is None:
        raise DataError(
            f"{param('resume', 'resume=True')} needs data that can be read twice, to check "
            f"that {results} holds its results: a file path, a list, a DataFrame or a Dataset, "
            "not an iterator."
        )
    info = read_sidecar(results)
    if info is None:
        raise DataError(
            f"{results} has no run record ({record.name} beside it), so it was not written by "
            f"ragmeter, or its record was deleted; {param('resume', 'resume=True')} appends only "
            "to results of this "
            f"input. {fresh}"
        )
    recorded = info.get("input")
    if not isinstance(recorded, Mapping):
        raise DataError(
            f"The run record {record} does not name the input {results} holds results of "
            f"(an older ragmeter, or RunResult.to_jsonl, wrote it). {fresh}"
        )
    if not same_input(recorded, fingerprint):
        raise DataError(
            f"{results} holds the results of another input: its run record names "
            f"{info.get('data')!r} (sha256 {str(recorded.get('sha256'))[:12]}...), and this "
            f"input {data_name!r} differs (sha256 {fingerprint['sha256'][:12]}...). {fresh}"
        )
    return info
