"""Criteria as users write them: TOML tables or Criterion objects, checked where made."""

from __future__ import annotations

from pathlib import Path

import pytest

import ragmeter
from ragmeter.config.criteria import Criterion, Level, as_criteria, load_criteria
from ragmeter.errors import ConfigError
from ragmeter.settings import Settings

TOML = """
[[criteria]]
name = "cites_policy"
question = "Does the answer cite a policy number?"
fields = ["answer", "contexts"]

[[criteria]]
name = "medical_advice"
question = "Does the answer give medical advice?"
higher_is_better = false

[[criteria]]
name = "tone"
question = "How courteous is the answer?"
levels = [
  {name = "curt", description = "Cold."},
  {name = "neutral", description = "Plain."},
  {name = "warm", description = "Courteous.", score = 0.9},
]

[[criteria]]
name = "grounded"
kind = "entailment"
premise = "contexts"
hypothesis = "answer"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "criteria.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_toml_file_gives_each_criterion_its_fields_scale_and_direction(tmp_path: Path) -> None:
    cites, medical, tone, grounded = load_criteria(write(tmp_path, TOML))
    assert cites.fields == ("answer", "contexts") and cites.answers == ("yes", "no")
    assert cites.score_of("yes") == 1.0 and cites.score_of("no") == 0.0
    assert medical.higher_is_better is False and medical.fields == ("answer",)
    assert [(lv.name, lv.score) for lv in tone.levels] == [
        ("curt", 0.0),
        ("neutral", 0.5),
        ("warm", 0.9),
    ]
    assert grounded.fields == ("contexts", "answer")
    assert "entail" in grounded.question


def test_the_public_name_and_settings_take_a_path_objects_or_tables(tmp_path: Path) -> None:
    path = write(tmp_path, TOML)
    assert ragmeter.Criterion is Criterion
    assert [c.name for c in Settings(criteria=str(path)).criteria] == [
        "cites_policy",
        "medical_advice",
        "tone",
        "grounded",
    ]
    made = Settings(criteria=[Criterion(name="a", question="A?"), {"name": "b", "question": "B?"}])
    assert [c.name for c in made.criteria] == ["a", "b"]
    assert Settings().criteria == ()


def test_levels_may_be_a_mapping_pairs_or_level_objects() -> None:
    for levels in (
        {"bad": "Bad.", "good": "Good."},
        [("bad", "Bad."), ("good", "Good.")],
        [Level("bad", "Bad.", 0.0), Level("good", "Good.", 1.0)],
    ):
        c = Criterion(name="q", question="How good?", levels=levels)
        assert [(lv.name, lv.score) for lv in c.levels] == [("bad", 0.0), ("good", 1.0)]


@pytest.mark.parametrize(
    ("table", "words"),
    [
        ({"name": "Bad Name", "question": "Q?"}, "snake_case"),
        ({"name": "q", "question": "  "}, "question to the judge is empty"),
        ({"name": "q", "question": "Q?", "fields": ["anwser"]}, "Did you mean 'answer'"),
        ({"name": "q", "question": "Q?", "levels": {"only": "One."}}, "at least 2 levels"),
        (
            {
                "name": "q",
                "question": "Q?",
                "levels": [
                    {"name": "a", "description": "A.", "score": 2},
                    {"name": "b", "description": "B."},
                ],
            },
            "in [0, 1]",
        ),
        ({"name": "q", "question": "Q?", "levels": {"a": "A.", "a ": "A again."}}, "distinct"),
        (
            {"name": "q", "kind": "entailment", "premise": "contexts", "hypothesis": "contexts"},
            "hypothesis",
        ),
        ({"name": "q", "question": "Q?", "premise": "contexts"}, "kind = 'entailment'"),
        ({"name": "q", "questoin": "Q?"}, "Did you mean 'question'"),
        ({"name": "q", "question": "Q?", "higher_is_better": "yes"}, "true or false"),
    ],
)
def test_a_bad_criterion_is_refused_saying_what_and_how(table: dict, words: str) -> None:
    with pytest.raises(ConfigError, match=None) as info:
        as_criteria([table])
    assert words in str(info.value)


def test_file_errors_name_the_file_and_the_criterion(tmp_path: Path) -> None:
    bad = write(tmp_path, '[[criteria]]\nname = "tone"\nquestion = "Q?"\nfields = ["x"]\n')
    with pytest.raises(ConfigError) as info:
        load_criteria(bad)
    assert str(bad) in str(info.value) and "criterion 1 ('tone')" in str(info.value)
    twice = write(tmp_path, '[[criteria]]\nname = "a"\nquestion = "Q?"\n' * 2)
    with pytest.raises(ConfigError, match="more than once"):
        load_criteria(twice)
    with pytest.raises(ConfigError, match="no \\[\\[criteria\\]\\] tables"):
        load_criteria(write(tmp_path, 'name = "a"\n'))
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_criteria(write(tmp_path, "[[criteria]\n"))
    with pytest.raises(ConfigError, match="No criteria file"):
        load_criteria(tmp_path / "absent.toml")


def test_the_description_changes_with_the_definition() -> None:
    one = Criterion(name="q", question="Is it short?")
    two = Criterion(name="q", question="Is it brief?")
    assert one.description != two.description
    assert one.description == Criterion(name="q", question="Is it short?").description
