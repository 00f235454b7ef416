"""``ragmeter evaluate --fail-under``: the gates, read and checked before the run, and the
run's outcome judged after it (passed, failed: exit 1, or unusable: exit 2)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from rich.markup import escape

from ragmeter.cli.output import err_console, parse_assignments
from ragmeter.errors import ConfigError
from ragmeter.metrics.criteria import specs_for
from ragmeter.metrics.registry import get_spec

__all__ = [
    "check_gates",
    "check_gates_asked",
    "first_failures",
    "parse_thresholds",
    "passed_line",
    "print_gates",
    "unusable_run",
]


def parse_thresholds(
    specs: list[str], option: str, *, criteria: Collection[Any] = ()
) -> dict[str, float]:
    """Parse ``metric=value`` pairs given to a gate option (``criteria``: the run's own
    metrics, scored in [0, 1])."""
    out: dict[str, float] = {}
    own = {spec.name: spec for spec in specs_for(criteria)}
    for name, raw in parse_assignments(specs, option=option, example="faithfulness=0.8").items():
        metric = own[name] if name in own else get_spec(name)
        try:
            value = float(raw)
        except ValueError:
            raise ConfigError(f"Bad {option} {name}={raw}: {raw!r} is not a number.") from None
        if not metric.lower <= value <= metric.upper:
            raise ConfigError(
                f"Bad {option} {name}={raw}: {name} scores lie in [{metric.lower:g}, "
                f"{metric.upper:g}], so a gate at {raw} can never be met or never fail."
            )
        out[name] = value
    return out


def check_gates_asked(gates: dict[str, float], metrics: str | None, criteria: Any) -> None:
    """Refuse, before any row is scored, a gate on a metric that ``--metrics`` leaves out
    (the run would score every row and then fail on the option)."""
    if metrics is None:
        return
    named = [m.strip() for m in metrics.split(",") if m.strip()]
    asked = {*named, *(spec.name for spec in specs_for(criteria))}
    missing = [name for name in gates if name not in asked]
    if missing:
        them = "it" if len(missing) == 1 else "them"
        raise ConfigError(
            f"--fail-under names {', '.join(missing)}, which --metrics does not ask for "
            f"({', '.join(named)}). Add {them} to --metrics "
            f"(-m {','.join([*named, *missing])}) or drop the gate."
        )


def unusable_run(result: Any, gates: dict[str, float]) -> str | None:
    """Why the run's outcome cannot be trusted as a pass (exit 2), or None.

    Every row failing on every metric means bad input or a bad column mapping, not a
    score; a gate on a metric the run did not compute is a bad option; a score that failed on
    the judge's or a model's endpoint (a timeout, HTTP 5xx, 429 after every retry), or on the
    judge's reply (invalid twice, a criterion without a verdict), leaves the run incomplete.
    """
    missing = [name for name in gates if name not in result.summary]
    if missing:
        skipped = result.info.get("skipped") or {}
        why = "; ".join(f"{name}: {skipped[name]}" for name in missing if name in skipped)
        return (
            f"--fail-under names {', '.join(missing)}, which this run did not compute"
            + (f" ({why})" if why else "")
            + ". Add it to --metrics or map the columns it needs with --column."
        )
    for cause, failed_on, again in (
        ("infrastructure", "the judge's or a model's endpoint", "scored again"),
        # The same rule: not the data's failure, and a resumed run asks again.
        (
            "judge",
            "the judge's replies (invalid after the corrective retry)",
            "asked again (a judge that keeps failing them needs another model)",
        ),
    ):
        count = (result.info.get("failure_causes") or {}).get(cause, 0)
        if count:
            first = result.info.get(f"first_{cause}_failure")
            where = f" First: row {first[0]} {first[1]}: {first[2]}" if first else ""
            return (
                f"{count} score{'s' if count != 1 else ''} failed on {failed_on}, not on the "
                f"data, so the run is incomplete.{where} Rerun with the same --out and "
                f"--resume: only the failed rows are {again}."
            )
    summaries = list(result.summary.values())
    if summaries and all(s.count == 0 and s.undefined == 0 and s.failed > 0 for s in summaries):
        failures = first_failures(result)
        first = (
            f" First: row {failures[0][0]} {failures[0][1]}: {failures[0][2]}" if failures else ""
        )
        return f"Every row failed on every metric; nothing was scored.{first}"
    return None


def first_failures(result: Any) -> list[tuple[Any, ...]]:
    """(row, metric, message) of the run's failures; rows streamed to --out are not kept in
    memory, so then the first ones the run recorded."""
    return result.failures() or [tuple(f) for f in result.info.get("first_failures", ())]


def check_gates(result: Any, gates: dict[str, float]) -> list[str]:
    """Messages for every gate the run fails; a metric with no defined score fails."""
    failed = []
    for name, threshold in gates.items():
        summary = result.summary.get(name)
        if summary is None:
            failed.append(f"{name}: not computed in this run (gate {threshold})")
            continue
        spec = result.specs[name]
        mean = summary.mean
        if mean is None:
            failed.append(f"{name}: no defined score (gate {threshold})")
        elif spec.higher_is_better and mean < threshold:
            failed.append(f"{name}: mean {mean:.4f} < {threshold}")
        elif not spec.higher_is_better and mean > threshold:
            failed.append(f"{name}: mean {mean:.4f} > {threshold} (lower is better)")
    return failed


def passed_line(result: Any, gates: dict[str, float], *, with_means: bool = True) -> str:
    """One line for gates that all passed (after "PASS"): each gate, with the run's mean
    when asked."""
    parts = []
    for name, threshold in gates.items():
        spec, summary = result.specs.get(name), result.summary.get(name)
        op = ">=" if spec is None or spec.higher_is_better else "<="
        mean = summary.mean if with_means and summary is not None else None
        parts.append(f"{name}: {'' if mean is None else f'mean {mean:.4f} '}{op} {threshold}")
    return "; ".join(parts)


def print_gates(result: Any, gates: dict[str, float], failed: list[str], *, means: bool) -> None:
    """``FAIL`` and each gate failed, else ``PASS`` and the gates (with the run's means when
    ``means``); nothing without gates."""
    for line in failed:
        err_console.print(f"[bold red]FAIL[/] {escape(line)}", highlight=False)
    if gates and not failed:
        line = passed_line(result, gates, with_means=means)
        err_console.print(f"[bold green]PASS[/] {escape(line)}", highlight=False)
