"""Every claim verdict of the offline judge on the shipped example, as a careful reader gives it.

``examples/rag_sample.jsonl`` is what a new user scores first. For each answer claim the
table below says whether a retrieved context entails it (faithfulness) and whether the
reference, read as the answer to its question, does (claim precision, RAGChecker's
correctness: a detail the reference does not state is not correct). The example's rows are
not changed to suit the verifier. The verdicts the shipped verifier still gets wrong are
listed in ``WRONG_TODAY`` and expected to fail (strictly), so the file states both what is
right and what is not yet.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("spacy")

import ragmeter

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rag_sample.jsonl"

#: (row id, answer claim) -> (entailed by a context, entailed by the reference)
CAREFUL_READER: dict[tuple[str, str], tuple[bool, bool]] = {
    ("q01", "The Eiffel Tower was completed in 1889."): (True, True),
    ("q01", "The Eiffel Tower was completed for the World's Fair."): (True, False),
    ("q01", "The World's Fair was in Paris."): (True, False),
    ("q02", "Water boils at 100 degrees Celsius at sea level."): (True, True),
    ("q03", "Frankenstein was written by Bram Stoker."): (False, False),
    ("q03", "Frankenstein was published in 1897."): (False, False),
    ("q04", "Mars has two moons."): (True, True),
    ("q04", "Mars's two moons are called Phobos and Deimos."): (True, True),
    ("q05", "Japan uses the yen."): (True, True),
    ("q06", "The capital of Australia is Sydney."): (False, False),
    ("q06", "Sydney is Australia's largest city."): (True, False),
    ("q07", "Fe is the symbol for iron."): (True, True),
    ("q07", "Iron is element number 26."): (True, False),
    ("q08", "Michelangelo painted it between 1508 and 1512."): (True, False),
    (
        "q10",
        "Light travels at about 300,000 kilometres per second, or exactly 299,792,458 "
        "metres per second.",
    ): (True, True),
    ("q11", "The Amazon flows through Cairo."): (False, False),
}


#: Verdicts verifier-v8 gets wrong today (issue 35). Strict: a fix turns these into failures
#: until the entry is removed. "Sea level" for "standard atmospheric pressure" is knowledge
#: of the world the words do not give, and the entailment model reads it as a contradiction.
WRONG_TODAY: frozenset[tuple[str, str]] = frozenset(
    {
        ("q02", "Water boils at 100 degrees Celsius at sea level."),
    }
)


def _case(key: tuple[str, str]):
    if key in WRONG_TODAY:
        reason = "verifier-v8 judges this claim wrongly (issue 35)"
        return pytest.param(key, marks=pytest.mark.xfail(strict=True, reason=reason))
    return key


@pytest.fixture(scope="module")
def verdicts() -> dict[tuple[str, str], tuple[bool, bool]]:
    result = ragmeter.evaluate(
        str(EXAMPLE), metrics=["faithfulness", "claim_precision"], progress=False
    )
    out: dict[tuple[str, str], tuple[bool, bool]] = {}
    for row in result.rows:
        faithful = {c["claim"]: bool(c["contexts"]) for c in _claims(row, "faithfulness")}
        correct = {c["claim"]: bool(c["correct"]) for c in _claims(row, "claim_precision")}
        for claim, entailed in faithful.items():
            out[(row.id, claim)] = (entailed, correct[claim])
    return out


def _claims(row, metric: str) -> list[dict]:
    return list((row.details.get(metric) or {}).get("answer_claims") or [])


def test_the_example_is_cut_into_the_claims_a_reader_would_check(verdicts) -> None:
    assert set(verdicts) == set(CAREFUL_READER)


@pytest.mark.parametrize(
    "key", [_case(k) for k in sorted(CAREFUL_READER)], ids=lambda k: f"{k[0]}:{k[1][:40]}"
)
def test_each_claim_verdict_is_what_a_careful_reader_gives(verdicts, key) -> None:
    assert verdicts[key] == CAREFUL_READER[key]
