"""The seeds' worked examples, scored end to end by ``ragmeter.evaluate`` with the offline default.

The seed files are read by path from ``../shared/seeds`` at test time (their text is never
copied into the project); without ``../shared`` the tests skip. The hand-labelled arithmetic of
the same examples is in ``tests/scoring/test_claim_arithmetic.py`` (LIC) and the entity sets in
``tests/models/test_entities.py`` (Taj Mahal); here the offline judge does the labelling.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import ragmeter


def read_seed(shared: Path, prefix: str) -> str:
    paths = sorted((shared / "seeds").glob(f"{prefix}_*.txt"))
    if len(paths) != 1:
        pytest.skip(f"expected one seed {prefix}_*.txt in {shared / 'seeds'}, found {len(paths)}")
    return paths[0].read_text(encoding="utf-8")


def dict_literal_after(text: str, marker: str) -> dict:
    """The Python dict literal that follows ``marker`` (brackets inside strings are ignored)."""
    start = text.index("{", text.index(marker))
    depth, quote = 0, None
    for end, char in enumerate(text[start:], start):
        if quote:
            quote = None if char == quote and text[end - 1] != "\\" else quote
        elif char in "\"'":
            quote = char
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return ast.literal_eval(text[start : end + 1])
    raise ValueError(f"no closed dict literal after {marker!r}")


def labelled_line(text: str, label: str) -> str:
    match = re.search(rf"^\s*{re.escape(label)}:\s*(\S.*)$", text, re.MULTILINE)
    if match is None:
        raise ValueError(f"no line starting with {label!r}: in the seed")
    return match.group(1).strip()


def lic_example(shared: Path) -> tuple[list[dict], float]:
    """The noise-sensitivity seed's sample (Ragas columns) and its relevant-mode score."""
    seed = read_seed(shared, "000")
    data = dict_literal_after(seed, "data_sample =")
    rows = [dict(zip(data, values, strict=True)) for values in zip(*data.values(), strict=True)]
    wrong = int(labelled_line(seed, "Incorrect Statement"))
    total = int(labelled_line(seed, "Total claims"))
    return rows, wrong / total


def taj_mahal_example(shared: Path) -> tuple[list[dict], list[float]]:
    """The entity-recall seed's ground truth with each context, and the recalls it computes."""
    seed = read_seed(shared, "002")
    truth = labelled_line(seed, "Ground truth")
    rows = [
        {"ground_truth": truth, "contexts": [labelled_line(seed, f"{level} entity recall context")]}
        for level in ("High", "Low")
    ]
    fractions = re.findall(r"=\s*(\d+)\s*/\s*(\d+)\s*=", seed)
    return rows, [int(a) / int(b) for a, b in fractions]


def test_seed_parsers_find_the_worked_examples(shared: Path) -> None:
    rows, relevant = lic_example(shared)
    assert len(rows) == 1 and set(rows[0]) == {"question", "ground_truth", "answer", "contexts"}
    assert len(rows[0]["contexts"]) == 4 and "Indian economy" in rows[0]["contexts"][3]
    assert relevant == pytest.approx(1 / 3)
    rows, recalls = taj_mahal_example(shared)
    assert all("Taj Mahal" in row["ground_truth"] for row in rows)
    assert "Agra" in rows[0]["contexts"][0] and "UNESCO" in rows[1]["contexts"][0]
    assert recalls == pytest.approx([4 / 6, 1 / 6])


@pytest.fixture(scope="module")
def lic_scores(shared: Path) -> tuple[dict, float]:
    rows, relevant = lic_example(shared)
    metrics = ["noise_sensitivity_relevant", "noise_sensitivity_irrelevant"]
    (row,) = ragmeter.evaluate(rows, metrics, progress=False).rows
    return row.scores, relevant


def test_lic_noise_sensitivity_relevant_is_one_third_with_the_offline_default(lic_scores) -> None:
    scores, relevant = lic_scores
    assert scores["noise_sensitivity_relevant"] == pytest.approx(relevant, abs=0.05)


def test_lic_noise_sensitivity_irrelevant_is_zero_with_the_offline_default(lic_scores) -> None:
    # The seed's irrelevant retrieval (the Indian economy) supports none of the answer's
    # claims, so no wrong claim comes from irrelevant contexts alone.
    scores, _ = lic_scores
    assert scores["noise_sensitivity_irrelevant"] == pytest.approx(0.0, abs=0.05)


def test_taj_mahal_context_entity_recall_matches_the_seed_with_the_offline_default(
    shared: Path,
) -> None:
    rows, expected = taj_mahal_example(shared)
    result = ragmeter.evaluate(rows, ["context_entity_recall"], progress=False)
    values = result.scores("context_entity_recall")
    assert values == pytest.approx(expected, abs=0.1)
    assert values[0] > values[1]
