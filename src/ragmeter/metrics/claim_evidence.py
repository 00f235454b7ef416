"""What each claim verdict rests on, read from a judge's ``Verification.meta["evidence"]``.

A judge may give, per claim block, one *cell* per claim and premise (the shape of the verdict
matrix)::

    {"support": 0.93, "decided_by": "model", "spans": [[12, 40]], "uncertain": False}

``support`` is the probability that the premise entails the claim, ``decided_by`` what
decided ("model", "rule:verbatim", "llm", ...), ``spans`` character offsets ``[start, end)``
into the premise exactly as sent, and ``uncertain`` whether the support lies in the judge's
uncertain band. Every key is optional, and so is the whole entry: a judge that gives none
(the fake judge, an older cache entry, the LLM judge) leaves what is known, the verdict, the
graded support of ``meta["support"]`` and, for the LLM and NLI verifiers, what decided.

Per claim and *relation* (an answer claim against the contexts, against the references; a
reference claim against the contexts, against the answer) :func:`relation` gives::

    {"entailed": True, "uncertain": False,
     "rests_on": [{"index": 0, "support": 0.93, "decided_by": "model",
                   "spans": [[12, 40]], "uncertain": False}]}

``rests_on`` lists the premises the verdict rests on: every premise that entails the claim
(highest support first) when it is entailed, else the one with the highest support (the
nearest miss). ``index`` is the context's or reference's index (0 for the answer).
``spans`` of a reference or answer read with its question (a :class:`Premise` with a
question) are offsets into the reference or answer text itself (``Premise.text``).

The relation's ``uncertain`` is the verdict's, not one cell's: an entailed claim is uncertain
when every premise that entails it is uncertain (a certain one would keep it entailed); a
claim that is not entailed is uncertain when any premise is (that one might entail it). It is
absent when the judge did not say which cells are uncertain.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ragmeter.types import ClaimBlock, Premise, Verification

__all__ = ["MAX_SPANS", "block_cells", "relation"]

#: Spans kept per cell (a judge's windows over a long premise may be many).
MAX_SPANS = 8

Cell = dict[str, Any]


def _decided_by(meta: dict[str, Any]) -> str | None:
    """What decided, for a judge that gives no evidence: the LLM, an NLI verifier."""
    method = meta.get("method")
    if method == "llm":
        return "llm"
    if isinstance(method, str) and method.startswith("nli"):
        return "nli"
    return None


def _support(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return round(value, 4) if math.isfinite(value) and 0.0 <= value <= 1.0 else None


def _spans(raw: Any, length: int) -> list[list[int]]:
    """Valid ``[start, end)`` spans of a premise text of ``length`` characters."""
    out: list[list[int]] = []
    if not isinstance(raw, list | tuple):
        return out
    for span in raw:
        if not isinstance(span, list | tuple) or len(span) != 2:
            continue
        start, end = span
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (start, end)):
            continue
        if not 0 <= start < end <= length:
            continue
        out.append([start, end])
    out.sort()
    return out[:MAX_SPANS]


def _cell(raw: Any, premise: Premise, support: float | None, decided: str | None):
    cell: Cell = {}
    given = raw if isinstance(raw, dict) else {}
    value = _support(given.get("support"))
    value = support if value is None else value
    if value is not None:
        cell["support"] = value
    by = given.get("decided_by")
    by = by if isinstance(by, str) and by else decided
    if by is not None:
        cell["decided_by"] = by
    if "spans" in given:
        cell["spans"] = _spans(given["spans"], len(premise.text))
    if isinstance(given.get("uncertain"), bool):
        cell["uncertain"] = given["uncertain"]
    return cell


def _block_evidence(meta: dict[str, Any], index: int, block: ClaimBlock) -> list | None:
    """Block ``index``'s evidence rows when they fit the block's shape, else ``None``."""
    evidence = meta.get("evidence")
    try:
        rows = evidence[index]  # type: ignore[index]
    except (TypeError, IndexError, KeyError):
        return None
    if not isinstance(rows, list | tuple) or len(rows) != len(block.claims):
        return None
    if any(not isinstance(r, list | tuple) or len(r) != len(block.premises) for r in rows):
        return None
    return list(rows)


def block_cells(
    verification: Verification,
    index: int,
    block: ClaimBlock,
    *,
    support: Sequence[Sequence[float]] | None,
) -> list[list[Cell]]:
    """The cells of block ``index`` (claims × premises), each holding what is known.

    ``support`` is the judge's graded support when it gave one (``meta["support"]``), else
    ``None``.
    """
    meta = verification.meta or {}
    rows = _block_evidence(meta, index, block)
    decided = _decided_by(meta)
    out = []
    for i in range(len(block.claims)):
        out.append(
            [
                _cell(
                    rows[i][j] if rows is not None else None,
                    premise,
                    _support(support[i][j]) if support is not None else None,
                    decided,
                )
                for j, premise in enumerate(block.premises)
            ]
        )
    return out


def relation(
    verdicts: Sequence[bool], cells: Sequence[Cell], indices: Sequence[int]
) -> dict[str, Any] | None:
    """What one claim's verdict against some premises rests on (see the module's docstring);
    ``None`` when nothing is known beyond the verdict, or there is no premise."""
    if not verdicts or not any(cells):
        return None
    entailed = any(verdicts)
    known = all("uncertain" in c for c in cells)

    def strength(j: int) -> tuple[float, int]:
        return (-cells[j].get("support", 1.0 if verdicts[j] else 0.0), j)

    if entailed:
        chosen = sorted((j for j, v in enumerate(verdicts) if v), key=strength)
    else:
        chosen = [min(range(len(verdicts)), key=strength)]
    out: dict[str, Any] = {"entailed": entailed}
    if known:
        flags = [cells[j]["uncertain"] for j in range(len(cells))]
        out["uncertain"] = all(flags[j] for j in chosen) if entailed else any(flags)
    out["rests_on"] = [{"index": indices[j], **cells[j]} for j in chosen]
    return out
