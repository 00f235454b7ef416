"""What a claim metric's details say about each row's verdicts, for the report's signs and
"Check these": the counts of uncertain verdicts, the short-reference flag and the weakest
verdict that counted a claim as entailed.

Read from the rows' details once per run and kept (:meth:`RunResult.memo`). A report reading
a large results file keeps of each row's details only what these need
(:func:`claim_digest`), and reads the few rows it shows in full again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragmeter.result import RunResult

__all__ = [
    "RESTS_ON",
    "ClaimFlags",
    "claim_digest",
    "flags_of",
    "short_reference_rows",
    "uncertain_rows",
    "verdict_counts",
    "weakest_verdict",
]

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


@dataclass(frozen=True, slots=True)
class ClaimFlags:
    """One row's claim metrics, as their details say."""

    #: ``(uncertain, verdicts)`` per claim metric whose details count them.
    verdict_counts: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    #: Claim metrics whose reason says the references are much shorter than the answer.
    short_reference: frozenset[str] = frozenset()
    #: The weakest verdict that counted a claim as entailed: ``(support, claim, "context 0")``.
    weakest: Mapping[str, tuple[float, str, str]] = field(default_factory=dict)


_NO_FLAGS = ClaimFlags()


def _claim_items(details: Mapping[str, Any]) -> Iterable[tuple[str, Mapping[str, Any]]]:
    """``(claims key, claim item)`` of every claim with evidence in a metric's details."""
    answer = details.get("answer_claims")
    for item in answer if isinstance(answer, list) else ():
        if isinstance(item, Mapping) and isinstance(item.get("evidence"), Mapping):
            yield "answer_claims", item
    references = details.get("reference_claims")
    for claims in references if isinstance(references, list) else ():
        for item in claims if isinstance(claims, list) else ():
            if isinstance(item, Mapping) and isinstance(item.get("evidence"), Mapping):
                yield "reference_claims", item


def _support(verdict: Any) -> tuple[float, int] | None:
    """An entailed verdict's first support and the index of the text it rests on."""
    if not isinstance(verdict, Mapping) or verdict.get("entailed") is not True:
        return None
    cells = [c for c in verdict.get("rests_on") or () if isinstance(c, Mapping)]
    support = cells[0].get("support") if cells else None
    if isinstance(support, bool) or not isinstance(support, int | float):
        return None
    return float(support), cells[0].get("index", 0)


def weakest_verdict(metric: str, details: Any) -> tuple[float, str, str] | None:
    """The verdict with the lowest support among those that counted a claim of ``metric`` as
    entailed (the verdicts a good score rests on, :data:`RESTS_ON`): ``(support, claim,
    "context 0")``; ``None`` when no such verdict carries a support (an LLM judge's)."""
    if not isinstance(details, Mapping):
        return None
    wanted = RESTS_ON.get(metric)
    found: tuple[float, str, str] | None = None
    for claims, item in _claim_items(details):
        for against, verdict in item["evidence"].items():
            if wanted is not None and (claims, against) not in wanted:
                continue
            support = _support(verdict)
            if support is not None and (found is None or support[0] < found[0]):
                name = _TEXT_NAMES.get(str(against), str(against))
                where = name if name == "answer" else f"{name} {support[1]}"
                found = (support[0], str(item.get("claim", "")), where)
    return found


def row_flags(details: Any) -> ClaimFlags:
    """Claim metrics' verdict counts, short-reference flags and weakest entailed verdicts
    from a row's details."""
    if not isinstance(details, Mapping):
        return _NO_FLAGS
    counts: dict[str, tuple[int, int]] = {}
    short: set[str] = set()
    weakest: dict[str, tuple[float, str, str]] = {}
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
    if not (counts or short or weakest):
        return _NO_FLAGS
    return ClaimFlags(counts, frozenset(short), weakest)


def flags_of(run: RunResult) -> list[ClaimFlags]:
    """Every row's :class:`ClaimFlags`, by position in ``run.rows`` (read once, kept)."""
    return run.memo("claim_flags", lambda: [row_flags(row.details) for row in run.rows])


def verdict_counts(run: RunResult, metric: str) -> tuple[int, int] | None:
    """``(uncertain, verdicts)`` of ``metric`` over the scored rows; ``None`` when no row
    says (not a claim metric, or a judge that gives no uncertainty)."""
    flags = flags_of(run)
    counts = [
        flags[p].verdict_counts[metric]
        for p in run.column(metric).positions
        if metric in flags[p].verdict_counts
    ]
    if not counts:
        return None
    return sum(c[0] for c in counts), sum(c[1] for c in counts)


def uncertain_rows(run: RunResult, metric: str) -> list[int]:
    """Indices of the scored rows with at least one uncertain verdict of ``metric``."""
    flags = flags_of(run)
    return [
        run.rows[p].index
        for p in run.column(metric).positions
        if flags[p].verdict_counts.get(metric, (0, 0))[0] > 0
    ]


def short_reference_rows(run: RunResult, metric: str) -> list[int]:
    """Indices of the scored rows whose references are much shorter than the answer."""
    flags = flags_of(run)
    return [
        run.rows[p].index
        for p in run.column(metric).positions
        if metric in flags[p].short_reference
    ]


def _slim_claim(item: Mapping[str, Any], metric: str, claims: str) -> dict[str, Any] | None:
    """A claim item with only the entailed verdicts (and their first support) that
    :func:`weakest_verdict` reads; None when it has none."""
    wanted = RESTS_ON.get(metric)
    evidence = {}
    for against, verdict in item["evidence"].items():
        if wanted is not None and (claims, against) not in wanted:
            continue
        support = _support(verdict)
        if support is not None:
            cell = {"support": support[0], "index": support[1]}
            evidence[against] = {"entailed": True, "rests_on": [cell]}
    return {"claim": item.get("claim", ""), "evidence": evidence} if evidence else None


def claim_digest(details: dict[str, Any]) -> dict[str, Any]:
    """A row's details with only what the report's statistics and flags read: each metric's
    plain values (verdict and refusal counts, flags) and its claims' entailed verdicts'
    supports. Made while a large results file is read (``read_run(details=claim_digest)``)."""
    out: dict[str, Any] = {}
    for metric, value in details.items():
        if not isinstance(value, Mapping):
            continue
        slim: dict[str, Any] = {
            k: v for k, v in value.items() if isinstance(v, int | float | str | bool)
        }
        answer = [
            found
            for claims, item in _claim_items(value)
            if claims == "answer_claims" and (found := _slim_claim(item, metric, claims))
        ]
        reference = [
            found
            for claims, item in _claim_items(value)
            if claims == "reference_claims" and (found := _slim_claim(item, metric, claims))
        ]
        if answer:
            slim["answer_claims"] = answer
        if reference:
            slim["reference_claims"] = [reference]
        if slim:
            out[metric] = slim
    return out
