"""``ragmeter meta-eval lfqa --verifier nli:PATH``: a local checker measured against people on
a tiny LFQA-shaped data folder made here (the real one is ../shared/data/lfqa_verification)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.metaeval.common import SuiteOptions
from ragmeter.metrics.base import Settings

SYSTEMS = ("alpaca", "alpaca_wdoc", "gpt3", "gpt3_wdoc", "gpt3_whudoc", "webgpt")
DOCS = {
    1: ["Paris is the capital of France.", "The Seine is a river in Paris."],
    2: ["The Eiffel tower was completed in 1889.", "It is in Paris."],
    3: ["Water boils at 100 degrees Celsius at sea level."],
}
ANSWERS = {
    1: [("Paris is in France.", "supported"), ("Berlin is in Spain.", "not_supported")],
    2: [("The tower was completed in 1889.", "supported"), ("It is in Rome.", "not_supported")],
    3: [("Water boils at 100 degrees.", "supported"), ("It is famous.", "partially")],
}


def lfqa_folder(root: Path) -> Path:
    base = root / "lfqa_verification"
    (base / "docs").mkdir(parents=True)
    (base / "annotations").mkdir()
    docs = [{"question_id": q, "docs": [{"text": t} for t in texts]} for q, texts in DOCS.items()]
    for name in ("human", "webgpt"):
        (base / "docs" / f"docs-{name}.json").write_text(json.dumps(docs))
    rows = [
        {
            "question_id": q,
            "question": f"Question {q}?",
            "annotations": [{"answer": s, "labels": [label] * 3} for s, label in sentences],
        }
        for q, sentences in ANSWERS.items()
    ]
    for system in SYSTEMS:
        (base / "annotations" / f"annotations-{system}.json").write_text(json.dumps(rows))
    return root


def test_the_verifier_options_reach_the_lfqa_suite(tmp_path, monkeypatch):
    from ragmeter.metaeval import lfqa

    seen: list[tuple[str, Settings]] = []

    def run(answers, *, judge, settings, log):
        seen.append((judge, settings))
        return {"results": {}, "seconds": {}}

    monkeypatch.setattr(lfqa, "run", run)
    data = lfqa_folder(tmp_path / "shared")
    options = ["--base-url", "http://127.0.0.1:9/v1", "--verifier", "nli:/models/checker"]
    options += ["--verifier-label", "LABEL_1", "--verifier-threshold", "0.3", "--device", "cpu"]
    options += ["--data", str(data), "--allow-download"]
    res = CliRunner().invoke(app, ["meta-eval", "lfqa", *options])
    assert res.exit_code == 0, res.output
    [(judge, settings)] = seen
    assert judge == "offline"
    assert settings.base_url == "http://127.0.0.1:9/v1"
    assert settings.verifier == "nli:/models/checker"
    assert settings.verifier_label == "LABEL_1"
    assert settings.verifier_threshold == 0.3
    assert settings.device == "cpu"
    assert settings.allow_download is True
    assert "LFQA meta-evaluation (all questions, 18 answers)" in res.output


def test_suites_name_the_verifier_beside_the_judge():
    assert SuiteOptions().judge_name() == "offline"
    named = SuiteOptions(settings=Settings(verifier="nli:/m/checker")).judge_name()
    assert named == "offline, verifier nli:/m/checker"


@pytest.mark.slow  # torch and a checkpoint over the LFQA suite
def test_meta_eval_lfqa_measures_an_nli_verifier(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from ragmeter.testing.tiny_classifiers import tiny_classifier

    model = tiny_classifier(tmp_path / "checker", "bert")
    data = lfqa_folder(tmp_path / "shared")
    out = tmp_path / "out"
    res = CliRunner().invoke(
        app,
        [
            "meta-eval",
            "lfqa",
            "--verifier",
            f"nli:{model}",
            "--device",
            "cpu",
            "--data",
            str(data),
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    assert f"faithfulness (offline, verifier nli:{model}, per sentence)" in res.output
    report = json.loads((out / "lfqa.json").read_text())
    verifier = report["judge"]["judge"]["verifier"]
    assert verifier["name"].startswith("nli:checker@")
    assert report["judged"]["faithfulness"] == {"failed": 0, "undefined": 0}
