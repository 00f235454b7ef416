"""What every meta-evaluation suite shares: options, the data folder, scoring, the result.

Suites score their data through :func:`ragmeter.evaluate` (so the judge cache and the run's
failure handling apply) and return a :class:`SuiteResult`: a table as Markdown and JSON, with
the run's configuration.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import platform
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError, DataError, RagmeterError, param
from ragmeter.settings import Settings

log = logging.getLogger("ragmeter.metaeval")

#: Environment variable naming the data folder, when none is given (``data_dir``).
DATA_ENV = "RAGMETER_SHARED_DATA"
#: What the data folder holds, suite by suite (the README's "Meta-evaluation data" section).
DATA_LAYOUT = {
    "ragchecker": "ragchecker_meta_eval/human_labeled_data.json, baseline_ragchecker.json",
    "msmarco": "trulens_msmarco_context_relevance/ms_marco_hard_neg_balanced.csv",
    "wikieval": "wikieval/wikieval_original_10_samples.jsonl",
    "trec": "trec_eval_reference/qrels.test, results.test, out.test.aq",
    "unitxt": "unitxt_parity.jsonl, unitxt_parity_corpus.json",
    "lfqa": "lfqa_verification/docs/docs-{human,webgpt}.json, "
    "lfqa_verification/annotations/annotations-SYSTEM.json",
}


def shared_data_dir(path: str | Path | None = None) -> Path:
    """The folder holding the meta-evaluation data: ``path``, else ``$RAGMETER_SHARED_DATA``.

    Nothing is assumed about where ragmeter runs from: without either, or when the folder
    does not exist, a :class:`DataError` says what to pass and what the folder holds
    (:data:`DATA_LAYOUT`).
    """
    chosen = path if path is not None else os.environ.get(DATA_ENV)
    if not chosen:
        raise DataError(
            f"The meta-evaluation needs its data folder: pass {param('data_dir')} (or set "
            f"{DATA_ENV}). {_LAYOUT_HINT}"
        )
    where = Path(chosen).expanduser()
    if not where.is_dir():
        raise DataError(
            f"The meta-evaluation data folder {str(where)!r} does not exist. Pass "
            f"{param('data_dir')} or set {DATA_ENV} to the folder that holds the suites' data. "
            f"{_LAYOUT_HINT}"
        )
    return where.resolve()


_LAYOUT_HINT = "It holds, per suite: " + "; ".join(f"{k}: {v}" for k, v in DATA_LAYOUT.items())


def data_file(data_dir: Path, relative: str) -> Path:
    """A file of the data folder, with an error naming it when it is missing."""
    path = data_dir / relative
    if not path.is_file():
        raise DataError(
            f"Expected the data file {relative!r} under {str(data_dir)!r}; it is missing. "
            f"Check that {param('data_dir')} points at the shared data folder."
        )
    return path


@dataclass(frozen=True, slots=True)
class SuiteOptions:
    """How a suite runs: the judge, which metrics, how many items."""

    judge: Any = "offline"
    #: Restrict the suite to these metrics (None: the suite's defaults).
    metrics: tuple[str, ...] | None = None
    #: Use only the first N items of the data (None: all).
    limit: int | None = None
    #: Further run options; ``judge`` above overrides ``settings.judge``.
    settings: Settings = field(default_factory=Settings)

    def __post_init__(self) -> None:
        if self.limit is not None and self.limit < 1:
            raise ConfigError(f"The 'limit' option must be >= 1. Got {self.limit}.")

    def run_settings(self) -> Settings:
        return replace(self.settings, judge=self.judge)

    def judge_name(self) -> str:
        """The judge, and the verifier when it is not the judge's own."""
        name = _name(self.judge)
        verifier = self.settings.verifier
        return name if verifier == "judge" else f"{name}, verifier {_name(verifier)}"

    def choose(self, suite: str, defaults: Sequence[str], supported: Sequence[str]) -> list[str]:
        """The metrics to run: ``metrics`` when given (each must be supported), else defaults."""
        if self.metrics is None:
            return list(defaults)
        unknown = [m for m in self.metrics if m not in supported]
        if unknown:
            raise ConfigError(
                f"The {suite} suite cannot measure {', '.join(map(repr, unknown))}. "
                f"It measures: {', '.join(supported)}."
            )
        return list(dict.fromkeys(self.metrics))

    def take(self, items: Sequence[Any]) -> list[Any]:
        return list(items if self.limit is None else items[: self.limit])


def _name(thing: Any) -> str:
    return thing if isinstance(thing, str) else getattr(thing, "name", type(thing).__name__)


@dataclass(slots=True)
class Scored:
    """Per-item scores of the metrics that ran, and why the others did not."""

    #: metric -> one value per sample (None: undefined or failed).
    values: dict[str, list[float | None]] = field(default_factory=dict)
    #: metric -> one failure message (or None) per sample.
    failures: dict[str, list[str | None]] = field(default_factory=dict)
    #: metric -> reason it could not run at all.
    unavailable: dict[str, str] = field(default_factory=dict)
    #: The run's judge and embedder description.
    judge: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def n_failed(self, metric: str) -> int:
        return sum(f is not None for f in self.failures.get(metric, ()))

    def n_undefined(self, metric: str) -> int:
        return sum(v is None for v in self.values.get(metric, ())) - self.n_failed(metric)


def score_samples(
    samples: Sequence[Mapping[str, Any]], metrics: Sequence[str], options: SuiteOptions
) -> Scored:
    """Score ``samples`` with ``metrics`` through :func:`ragmeter.evaluate`.

    A metric that cannot run here (not registered in this install, its model or package
    missing) is listed in ``unavailable`` with the reason instead of stopping the suite.
    """
    import ragmeter

    started = time.perf_counter()
    out = Scored()
    if not metrics or not samples:
        return out
    groups: list[list[str]] = [list(metrics)]
    while groups:
        group = groups.pop(0)
        try:
            result = ragmeter.evaluate(
                list(samples), group, settings=options.run_settings(), progress=False
            )
        except RagmeterError as exc:
            if len(group) > 1:
                groups = [[m] for m in group] + groups
                continue
            out.unavailable[group[0]] = str(exc)
            log.warning("%s is not available: %s", group[0], exc)
            continue
        for key in ("judge", "embedder"):
            if key in result.info:
                out.judge[key] = result.info[key]
        for metric in group:
            out.values[metric] = result.scores(metric)
            out.failures[metric] = [row.failures.get(metric) for row in result.rows]
    out.seconds = time.perf_counter() - started
    return out


@dataclass(slots=True)
class SuiteResult:
    """The outcome of one suite: a table (Markdown and JSON), notes and the configuration.

    Exactness suites (``trec``, ``unitxt``) also fill ``checks``; ``passed`` is then whether
    every check held.
    """

    suite: str
    title: str
    columns: list[str]
    rows: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    checks: list[dict[str, Any]] = field(default_factory=list)
    #: Decimals shown in the Markdown table (JSON keeps full precision).
    digits: int = 3

    @property
    def passed(self) -> bool | None:
        if not self.checks:
            return None
        return all(c["ok"] for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "title": self.title,
            "columns": self.columns,
            "rows": self.rows,
            "notes": self.notes,
            "unavailable": self.unavailable,
            "checks": self.checks,
            "passed": self.passed,
            "info": self.info,
        }

    def to_markdown(self) -> str:
        lines = [f"### {self.title}", ""]
        info = self.info
        bits = [f"{k}: {info[k]}" for k in ("judge", "n", "date", "seconds") if k in info]
        if bits:
            lines += ["_" + "; ".join(bits) + "_", ""]
        lines.append(markdown_table(self.columns, self.rows, digits=self.digits))
        if self.unavailable:
            lines += ["", "Not measured:"]
            lines += [
                f"- `{m}`: {' '.join(reason.split())}" for m, reason in self.unavailable.items()
            ]
        if self.notes:
            lines += ["", *[f"- {note}" for note in self.notes]]
        return "\n".join(lines) + "\n"

    def write(self, out_dir: str | Path) -> tuple[Path, Path]:
        """Write ``<suite>.md`` and ``<suite>.json`` into ``out_dir``."""
        folder = Path(out_dir)
        folder.mkdir(parents=True, exist_ok=True)
        md = folder / f"{self.suite}.md"
        js = folder / f"{self.suite}.json"
        md.write_text(self.to_markdown(), encoding="utf-8")
        js.write_text(
            json.dumps(self.to_json(), indent=2, ensure_ascii=False, default=str) + "\n",
            encoding="utf-8",
        )
        return md, js


def fmt(value: Any, digits: int = 3) -> str:
    """A table cell: numbers rounded, ``None`` as an em dash."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(
    columns: Sequence[str], rows: Iterable[Mapping[str, Any]], *, digits: int = 3
) -> str:
    """A GitHub-flavoured Markdown table of ``rows`` (missing cells are blank)."""
    head = "| " + " | ".join(columns) + " |"
    rule = "|" + "|".join("---" for _ in columns) + "|"
    body = [
        "| " + " | ".join(fmt(row[c], digits) if c in row else "" for c in columns) + " |"
        for row in rows
    ]
    return "\n".join([head, rule, *body])


def run_info(
    options: SuiteOptions, *, n: int, started: float, uses_judge: bool = True, **extra: Any
) -> dict[str, Any]:
    """The configuration recorded with a suite's result."""
    import ragmeter

    return {
        "judge": options.judge_name() if uses_judge else "none needed",
        "limit": options.limit,
        "n": n,
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"),
        "seconds": round(time.perf_counter() - started, 1),
        "ragmeter": ragmeter.__version__,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        **extra,
    }


Suite = Callable[[Path, SuiteOptions], SuiteResult]
