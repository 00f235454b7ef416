"""The labelling page: one self-contained HTML file where a person labels a sample of a run.

:func:`write_label_page` reads a results file (and the input it scored, for the texts),
draws the sample (:mod:`ragmeter.report.labels.sample`), and writes one HTML file holding the
sampled rows as JSON and the script and styles that show them (``page.js``, ``page.css``
beside this module, inlined). The page needs no network and loads nothing: it works from
``file://``. Its Content-Security-Policy allows only its own inline script and styles; every
text from the data is put in the page with ``textContent``, never parsed as HTML.

Two kinds of page, chosen by the metric:

- *claims*: the metric's rows carry claims. Answer claims (faithfulness, claim precision,
  noise sensitivity, ...) are shown with the context spans their verdict rests on marked; the
  person says whether the contexts support each: ``supported``, ``not_supported`` or
  ``unsure`` (can't tell). Reference claims (the claims of the reference answers, where the
  metric's details record them: claim recall, noise sensitivity, ...) are shown with the
  answer spans their verdict rests on marked, and the person says whether the answer states
  each; for context claim recall, whether the contexts support it.
- *score*: any other metric; the person gives the row a score in the metric's range.

The export (``labels.jsonl``) writes a first line saying how the rows were chosen, then one
line per label, in the page's order (the format :mod:`ragmeter.io.labels` reads)::

    {"selection": "uniform", "sample": 50, "seed": 0, "of_rows": 1000, "key": "id"}
    {"id": "q7", "claim": 0, "label": "supported", "source": "answer",
     "labeller": "ana", "time": "2026-01-02T03:04:05.678Z", "selection": "uniform"}
    {"id": "q7", "claim": 1, "label": "not_supported", "source": "reference",
     "against": "answer", "labeller": "ana", "time": "...", "selection": "uniform"}
    {"id": "q7", "metric": "context_relevance", "value": 0.75, "labeller": "ana",
     "time": "...", "selection": "uniform"}

``id`` is the row's ``id`` in the results when every row of the run has its own, else the
row's ``index`` (an integer); the first line's ``key`` says which (``"id"`` or ``"index"``),
and the label reader looks rows up by it. ``claim`` is the claim's position (from 0) in the
row's ``answer_claims``, or for ``"source": "reference"`` among the reference claims of all
the row's references in turn (``reference_claims``, as the results' details list them);
``against`` is what the person checked a reference claim against. ``labeller`` is left out
when the person gave no name. ``selection`` is ``"stratified"`` for a stratified sample: such
labels are for looking, never for estimates.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError, DataError, RagmeterError, param
from ragmeter.io.labels import row_fingerprint, sample_fingerprint
from ragmeter.io.paths import check_outputs, make_parent, sidecar_path
from ragmeter.io.redact import redact_everywhere, secret_env_values
from ragmeter.report.labels.sample import (
    STRATIFIED,
    UNCERTAINTY,
    UNIFORM,
    row_uncertainty,
    stratified_sample,
    uncertainty_sample,
    uniform_sample,
)
from ragmeter.report.load import (
    read_details,
    read_inputs,
    recorded_input,
)
from ragmeter.result import RunResult
from ragmeter.results import no_details, read_run
from ragmeter.scoring.calibration.claims import CLAIM_METRICS
from ragmeter.types import MetricSpec, RowResult

__all__ = [
    "CLAIM_LABELS",
    "DEFAULT_METRIC",
    "STRATEGIES",
    "LabelPage",
    "build_label_page",
    "render_label_page",
    "selection_lines",
    "write_label_page",
    "write_selection",
]

#: How rows are drawn for estimates: uniformly, or favouring the judge's uncertain verdicts.
STRATEGIES = (UNIFORM, UNCERTAINTY)

#: The claim labels the page writes, as the export spells them.
CLAIM_LABELS = ("supported", "not_supported", "unsure")
#: The metric labelled when none is named.
DEFAULT_METRIC = "faithfulness"
#: Characters of one text (question, answer, context) put in the page; the rest is cut.
MAX_TEXT = 50_000
#: Contexts shown per row.
MAX_CONTEXTS = 50
#: What reference claims are checked against, where not the answer: the metric's verdict kind
#: (:data:`ragmeter.scoring.calibration.claims.CLAIM_METRICS`).
REFERENCE_AGAINST: dict[str, str] = {"context_claim_recall": "contexts"}

_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)


@dataclass(frozen=True, slots=True)
class LabelPage:
    """What a labelling page shows: the sampled rows as the page's JSON, and how many."""

    payload: dict[str, Any]
    rows: int
    items: int
    #: Why the rows show no texts, when the input could not be read (else ``None``).
    missing_texts: str | None = None

    def header(self) -> dict[str, Any]:
        """The first line of the page's export and of ``--selection-out``: how the rows were
        chosen, from how many, and the fingerprints that tie the labels to this run."""
        p = self.payload
        out = {
            "selection": p["selection"],
            "sample": p["sample"],
            "seed": p["seed"],
            "of_rows": p["population"],
            "key": p["row_key"],
            "metric": p["metric"],
            "drawn": len(p["rows"]),
            "fingerprint": p["fingerprint"],
        }
        if p.get("input"):
            out["input"] = p["input"]
        return out


def _text(value: Any, env: list[str]) -> tuple[str | None, bool]:
    """``value`` scrubbed of secrets and cut to :data:`MAX_TEXT`; whether it is unchanged
    (offsets of evidence spans hold only then)."""
    if not isinstance(value, str):
        return None, False
    clean = redact_everywhere(value, env=env)
    return clean[:MAX_TEXT], clean == value


def _row_ids(run: RunResult) -> tuple[str, dict[int, str | int]]:
    """Which key labels name rows by, and each row's label id: its ``id`` when every row has
    its own (``"id"``), else its ``index`` (``"index"``)."""
    ids = [row.id for row in run.rows]
    if all(i is not None for i in ids) and len(set(ids)) == len(ids):
        return "id", {row.index: row.id for row in run.rows}  # type: ignore[misc]
    return "index", {row.index: row.index for row in run.rows}


def _choose_metric(run: RunResult, metric: str | None) -> str:
    if metric is not None:
        run.metric(metric)  # raises naming close metrics
        return metric
    if DEFAULT_METRIC in run.metrics:
        return DEFAULT_METRIC
    raise ConfigError(
        f"This run has no {DEFAULT_METRIC} scores to label. Name the metric to label with "
        f"{param('metric')}; metrics in this run: {', '.join(run.metrics) or 'none'}."
    )


def _claims(details: Any) -> list[Mapping[str, Any]] | None:
    """The answer claims of one metric's details, or ``None`` when it has none."""
    if not isinstance(details, Mapping):
        return None
    claims = details.get("answer_claims")
    if not isinstance(claims, list):
        return None
    return [c if isinstance(c, Mapping) else {} for c in claims]


def _reference_claims(details: Any) -> list[Mapping[str, Any]] | None:
    """The reference claims of one metric's details, every reference's in turn (the order
    label indexes count in), or ``None`` when it has none."""
    if not isinstance(details, Mapping):
        return None
    refs = details.get("reference_claims")
    if not isinstance(refs, list):
        return None
    return [
        c if isinstance(c, Mapping) else {} for ref in refs if isinstance(ref, list) for c in ref
    ]


def _marks(
    claim: Mapping[str, Any], claim_index: int, against: str = "contexts"
) -> list[list[int]]:
    """``[text, start, end, claim]`` for every span the claim's verdict rests on: in the
    contexts (``text`` the context's index), for ``against="answer"`` in the answer (``text``
    0), for ``against="references"`` in the reference answers (``text`` the reference's
    index)."""
    evidence = claim.get("evidence")
    relation = evidence.get(against) if isinstance(evidence, Mapping) else None
    cells = relation.get("rests_on") if isinstance(relation, Mapping) else None
    out: list[list[int]] = []
    for cell in cells if isinstance(cells, list) else ():
        if not isinstance(cell, Mapping):
            continue
        index = cell.get("index")
        spans = cell.get("spans")
        if isinstance(index, bool) or not isinstance(index, int):
            continue
        for span in spans if isinstance(spans, list) else ():
            if (
                isinstance(span, list)
                and len(span) == 2
                and all(isinstance(x, int) and not isinstance(x, bool) for x in span)
                and 0 <= span[0] < span[1]
            ):
                out.append([index, span[0], span[1], claim_index])
    return out


def _inputs(
    run: RunResult, results: Path, indices: Sequence[int], data: Any
) -> tuple[dict, str | None]:
    """The input texts of the sampled rows, and why there are none when none can be read."""
    if data is not None:
        if isinstance(data, str | os.PathLike) and not Path(data).is_file():
            raise DataError(
                f"{param('data')} {os.fspath(data)!r} is not a file. Give the file the run scored."
            )
        return read_inputs(data, indices), None
    source = recorded_input(run.info, results)
    if source is None:
        named = run.info.get("data")
        why = (
            f"the input the run record names ({named!r}) is not there unchanged"
            if isinstance(named, str)
            else "the run record names no input file"
        )
        return {}, why
    try:
        return read_inputs(source, indices), None
    except (RagmeterError, OSError, ValueError) as exc:
        return {}, f"the input {str(source)!r} could not be read: {exc}"


def build_label_page(
    results: str | os.PathLike[str],
    *,
    sample: int,
    seed: int = 0,
    metric: str | None = None,
    stratified: bool = False,
    data: Any = None,
    strategy: str = UNIFORM,
    target_width: float | None = None,
) -> LabelPage:
    """The page's content for ``sample`` rows of the run in ``results`` (see the module's
    docstring). Rows with a defined score of the metric are the ones sampled; ``data`` is the
    input the run scored (default: the file its run record names, when unchanged).
    ``strategy="uncertainty"`` draws about ``sample`` rows, each with its own probability
    (:func:`ragmeter.report.labels.sample.uncertainty_sample`); ``target_width`` makes the
    page show how near its labels bring the interval to that width."""
    _check_options(sample, strategy, stratified=stratified, target_width=target_width)
    results = Path(results)
    run = read_run(results, details=no_details)
    name = _choose_metric(run, metric)
    info = run.metric(name)
    column = run.column(name)
    if not column.positions:
        raise DataError(
            f"No row of {str(results)!r} has a defined {name} score, so there is nothing to "
            f"label. Pick another metric with {param('metric')}."
        )
    indices = [run.rows[p].index for p in column.positions]
    kinds = CLAIM_METRICS.get(name, ("answer", (("answer", "contexts"),)))[1]
    chosen, probabilities = _draw(
        results,
        info,
        indices,
        column.values,
        sample,
        seed=seed,
        how=STRATIFIED if stratified else strategy,
    )
    by_index = {row.index: row for row in run.rows}
    details = read_details(results, chosen)
    claims = {i: _claims(details.get(i, {}).get(name)) for i in chosen}
    references = {i: _reference_claims(details.get(i, {}).get(name)) for i in chosen}
    has_claims = any(claims.values()) or any(references.values())
    kind = "claims" if has_claims else "score"
    texts, missing = _inputs(run, results, chosen, data)
    texts = {i: {**run.texts.get(i, {}), **texts.get(i, {})} for i in chosen}
    key_name, ids = _row_ids(run)
    against = REFERENCE_AGAINST.get(name, "answer")
    answer_against = [what for source, what in kinds if source == "answer"] or ["contexts"]
    env = secret_env_values()
    scores = dict(zip(indices, column.values, strict=True))
    rows = []
    items = 0
    for index in chosen:
        row = by_index[index]
        shown = _page_row(
            row,
            ids[index],
            texts.get(index, {}),
            (claims[index], references[index], against) if kind == "claims" else None,
            env,
        )
        shown["fingerprint"] = row_fingerprint(
            ids[index],
            *(
                (
                    [str(c.get("claim", "")) for c in claims[index] or ()],
                    [str(c.get("claim", "")) for c in references[index] or ()],
                )
                if kind == "claims" and (claims[index] is not None or references[index])
                else (None, None)
            ),
        )
        shown["judge"] = scores[index]
        if probabilities:
            shown["probability"] = round(probabilities[index], 6)
        rows.append(shown)
        if kind == "claims":
            items += len(shown["claims"]) * len(answer_against) + len(shown["reference_claims"])
        else:
            items += 1
    selection = STRATIFIED if stratified else strategy
    recorded = run.info.get("input")
    input_sha = recorded.get("sha256") if isinstance(recorded, Mapping) else None
    input_sha = input_sha[:16] if isinstance(input_sha, str) else None
    fingerprint = sample_fingerprint(name, input_sha, [r["fingerprint"] for r in rows])
    key = hashlib.sha256(
        json.dumps([str(results.resolve()), name, selection, seed, chosen, fingerprint]).encode()
    ).hexdigest()[:16]
    payload = {
        "key": f"ragmeter-labels:{key}",
        "results": results.name,
        "metric": name,
        "description": info.description,
        "kind": kind,
        "row_key": key_name,
        "answer_against": answer_against,
        "reference_against": against,
        "selection": selection,
        "sample": sample,
        "seed": seed,
        "population": len(indices),
        "range": [info.lower, info.upper],
        "fingerprint": fingerprint,
        "input": input_sha,
        "target_width": target_width,
        "rows": rows,
    }
    return LabelPage(payload=payload, rows=len(rows), items=items, missing_texts=missing)


def _check_options(
    sample: int, strategy: str, *, stratified: bool, target_width: float | None
) -> None:
    """``ConfigError`` naming the option when one of :func:`build_label_page`'s is wrong."""
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 1:
        raise ConfigError(f"{param('sample')} must be an integer >= 1. Got {sample!r}.")
    if strategy not in STRATEGIES:
        raise ConfigError(
            f"{param('strategy')} must be one of {', '.join(STRATEGIES)}. Got {strategy!r}."
        )
    if stratified and strategy != UNIFORM:
        raise ConfigError(
            f"{param('stratified')} draws by score band for looking; {param('strategy')} "
            f"{strategy} draws for estimates. Give one of them."
        )
    if target_width is not None and not (
        isinstance(target_width, int | float) and 0.0 < target_width < float("inf")
    ):
        raise ConfigError(f"{param('target_width')} must be a number > 0. Got {target_width!r}.")


def _draw(
    results: Path,
    info: MetricSpec,
    indices: list[int],
    values: list[float],
    sample: int,
    *,
    seed: int,
    how: str,
) -> tuple[list[int], dict[int, float]]:
    """The rows to label among ``indices`` (whose scores are ``values``), drawn ``how``
    (stratified, uniform or by uncertainty), and each row's probability of being drawn
    (none for a stratified sample)."""
    if how == STRATIFIED:
        chosen = stratified_sample(
            indices, values, sample, seed=seed, lower=info.lower, upper=info.upper
        )
        return chosen, {}
    if how == UNCERTAINTY:
        kinds = CLAIM_METRICS.get(info.name, ("answer", (("answer", "contexts"),)))[1]
        every = read_details(results, indices)
        spread = [
            row_uncertainty(
                every.get(i, {}).get(info.name), v, against=kinds, bounds=(info.lower, info.upper)
            )
            for i, v in zip(indices, values, strict=True)
        ]
        return uncertainty_sample(indices, spread, sample, seed=seed)
    share = min(1.0, sample / len(indices))
    return uniform_sample(indices, sample, seed=seed), dict.fromkeys(indices, share)


def _page_row(
    row: RowResult,
    row_id: str | int,
    given: Mapping[str, Any],
    claims: tuple[Sequence[Mapping[str, Any]] | None, Sequence[Mapping[str, Any]] | None, str]
    | None,
    env: list[str],
) -> dict[str, Any]:
    """One row of the page. ``claims``: its answer claims, its reference claims and what the
    reference claims are checked against (``None`` on a score page)."""
    question, _ = _text(given.get("question"), env)
    answer, answer_intact = _text(given.get("answer"), env)
    raw_contexts = given.get("contexts")
    contexts: list[str] = []
    intact: list[bool] = []
    for context in list(raw_contexts or ())[:MAX_CONTEXTS]:
        text, same = _text(context, env)
        contexts.append(text or "")
        intact.append(same)
    answer_claims, reference_claims, against = claims or (None, None, "answer")

    references: list[str] = []
    references_intact: list[bool] = []
    if answer_claims or reference_claims:
        for reference in given.get("reference_answers") or ():
            text, same = _text(reference, env)
            references.append(text or "")
            references_intact.append(same)

    def fits(mark: list[int], target: str) -> bool:
        j, end = mark[0], mark[2]
        if target == "answer":
            return j == 0 and answer is not None and answer_intact and end <= len(answer)
        if target == "references":
            return j < len(references) and references_intact[j] and end <= len(references[j])
        return j < len(contexts) and intact[j] and end <= len(contexts[j])

    shown, marks, precision_marks = [], [], []
    for i, claim in enumerate(answer_claims or ()):
        text, _ = _text(claim.get("claim", ""), env)
        shown.append(text or "")
        marks += [m for m in _marks(claim, i) if fits(m, "contexts")]
        precision_marks += [m for m in _marks(claim, i, "references") if fits(m, "references")]
    shown_refs, ref_marks = [], []
    for i, claim in enumerate(reference_claims or ()):
        text, _ = _text(claim.get("claim", ""), env)
        shown_refs.append(text or "")
        ref_marks += [m for m in _marks(claim, i, against) if fits(m, against)]
    return {
        "id": row_id,
        "index": row.index,
        "question": question,
        "answer": answer,
        "contexts": contexts if raw_contexts is not None else None,
        "more_contexts": max(0, len(raw_contexts or ()) - MAX_CONTEXTS),
        "claims": shown,
        "marks": marks,
        "precision_marks": precision_marks,
        "references": references,
        "reference_claims": shown_refs,
        "reference_marks": ref_marks,
    }


def _asset(name: str) -> str:
    return resources.files("ragmeter.report.labels").joinpath(name).read_text(encoding="utf-8")


def _script_json(payload: Mapping[str, Any]) -> str:
    """``payload`` as JSON that cannot end its ``<script>`` element or open a comment."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_label_page(page: LabelPage) -> str:
    """The page as one HTML document (script, styles and data inline)."""
    payload = page.payload
    title = f"ragmeter labels: {payload['metric']} · {payload['results']}"
    escaped = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name=viewport content="width=device-width,initial-scale=1">'
        f"<title>{escaped}</title><style>{_asset('page.css')}</style></head>"
        "<body><div id=app><noscript>This page needs JavaScript to label rows.</noscript></div>"
        f'<script id=data type="application/json">{_script_json(payload)}</script>'
        f"<script>{_asset('page.js')}</script></body></html>\n"
    )


def selection_lines(page: LabelPage) -> list[dict[str, Any]]:
    """The drawn rows as ``--selection-out`` writes them: the page's header (how the rows were
    chosen; :meth:`LabelPage.header`), then one object per row with its ``id``, its inclusion
    probability and its fingerprint. Add ``metric`` and ``value`` (or ``claim`` and ``label``)
    to each row's object and the file is a labels file ``ragmeter calibrate`` reads."""
    out = [page.header()]
    for row in page.payload["rows"]:
        line = {"id": row["id"], "probability": row.get("probability")}
        line["fingerprint"] = row["fingerprint"]
        out.append(line)
    return out


def _write_atomically(target: Path, text: str) -> None:
    part = target.with_name(f".{target.name}.{os.getpid()}.part")
    try:
        part.write_text(text, encoding="utf-8", errors="replace")
        os.replace(part, target)
    except BaseException:
        part.unlink(missing_ok=True)
        raise


def write_selection(page: LabelPage, out: str | os.PathLike[str]) -> None:
    """Write :func:`selection_lines` of ``page`` to ``out`` as JSON lines."""
    make_parent(out)
    lines = selection_lines(page)
    _write_atomically(Path(out), "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))


def write_label_page(
    results: str | os.PathLike[str],
    out: str | os.PathLike[str] | None,
    *,
    sample: int,
    seed: int = 0,
    metric: str | None = None,
    stratified: bool = False,
    data: Any = None,
    strategy: str = UNIFORM,
    target_width: float | None = None,
    selection_out: str | os.PathLike[str] | None = None,
) -> LabelPage:
    """Write the labelling page of ``sample`` rows of ``results`` to ``out`` (see
    :func:`build_label_page`) and, with ``selection_out``, the drawn rows as JSON lines
    (:func:`selection_lines`); returns what the page holds. ``out`` may be ``None`` when
    ``selection_out`` is given (labels made in another tool)."""
    if out is None and selection_out is None:
        raise ConfigError(f"Give {param('out')} (the page) or {param('selection_out')}, or both.")
    inputs: dict[str, Any] = {
        "RESULTS": results,
        "the run record of RESULTS": sidecar_path(results),
    }
    if isinstance(data, str | os.PathLike):
        inputs[param("data")] = data
    check_outputs(inputs, {param("out"): out, param("selection_out"): selection_out})
    page = build_label_page(
        results,
        sample=sample,
        seed=seed,
        metric=metric,
        stratified=stratified,
        data=data,
        strategy=strategy,
        target_width=target_width,
    )
    if out is not None:
        make_parent(out)
        _write_atomically(Path(out), render_label_page(page))
    if selection_out is not None:
        write_selection(page, selection_out)
    return page
