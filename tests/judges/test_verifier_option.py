"""``Settings.verifier`` / ``--verifier``: who decides entailment for the claim metrics, end to
end through ``ragmeter.evaluate`` and the CLI, with tiny random checkpoints built here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.errors import ConfigError
from ragmeter.judges.base import Analysis, Verifier
from ragmeter.judges.factory import make_judge
from ragmeter.judges.fake import FakeJudge, none_entailed
from ragmeter.judges.offline.judge import OfflineJudge
from ragmeter.judges.verified import VerifiedJudge
from ragmeter.metrics.base import Settings
from ragmeter.types import Usage

ROWS = [
    {
        "question": "Where is Paris?",
        "answer": "Paris is in France. The Eiffel tower opened in 1889.",
        "contexts": [
            "Paris is the capital of France.",
            "The Eiffel tower was completed in 1889 in Paris.",
        ],
        "reference_answers": ["Paris is in France."],
    },
    {
        "question": "When does water boil?",
        "answer": "Water boils at 100 degrees.",
        "contexts": ["Water boils at 100 degrees Celsius at sea level."],
        "reference_answers": ["At 100 degrees Celsius."],
    },
]
CLAIM_METRICS = ["faithfulness", "faithfulness_support", "claim_recall"]


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from ragmeter.testing.tiny_classifiers import FAMILIES, tiny_classifier, tiny_hhem

    root = tmp_path_factory.mktemp("verifiers")
    out = {family: tiny_classifier(root / family, family) for family in FAMILIES}
    out["hhem"] = tiny_hhem(root / "hhem")
    return out


def _judge(**settings):
    return make_judge(Settings(**settings), Usage()).inner


def test_the_default_verifier_is_the_judges_own():
    fake = FakeJudge(name="mine")
    assert _judge(judge=fake) is fake
    assert isinstance(_judge(), OfflineJudge)
    assert isinstance(_judge(verifier="offline"), OfflineJudge)  # the same as the default


def test_offline_verdicts_for_another_judges_claims():
    judge = _judge(judge=FakeJudge(name="llm"), verifier="offline")
    assert isinstance(judge, VerifiedJudge)
    assert isinstance(judge.verifier, OfflineJudge)
    assert judge.name == f"llm+verify:{judge.verifier.name}"
    described = judge.describe()
    assert described["claims"]["name"] == "llm"
    assert described["verifier"]["name"] == judge.verifier.name


def test_a_verifier_object_decides_and_the_judge_only_extracts():
    claims = FakeJudge(name="claims", analyze=Analysis(answer_claims=("Paris is in France.",)))
    verifier = FakeJudge(name="checker", verify=none_entailed)
    result = ragmeter.evaluate(
        ROWS[:1],
        ["faithfulness"],
        settings=Settings(judge=claims, verifier=verifier),
        progress=False,
    )
    assert result.scores("faithfulness") == [0.0]
    assert claims.verify_requests == [] and len(verifier.verify_requests) == 1
    assert result.rows[0].details["faithfulness"]["verify"] == {"method": "fake"}
    assert result.info["judge"]["name"] == "claims+verify:checker"


def test_every_judge_and_the_nli_verifier_are_verifiers(models):
    from ragmeter.judges.hf_entailment import NLIVerifier
    from ragmeter.models.hf_classifier import HFClassifier

    assert isinstance(OfflineJudge(), Verifier)
    assert isinstance(FakeJudge(), Verifier)
    assert isinstance(NLIVerifier(HFClassifier(str(models["bert"]))), Verifier)


def test_an_unknown_verifier_is_refused_with_the_choices():
    with pytest.raises(ConfigError, match="Did you mean 'offline'"):
        _judge(verifier="ofline")
    with pytest.raises(ConfigError, match="nli:PATH_OR_NAME"):
        _judge(verifier=42)


def test_nli_options_without_an_nli_verifier_are_refused():
    with pytest.raises(ConfigError, match="verifier_threshold, device"):
        _judge(verifier_threshold=0.7, device="cpu")
    with pytest.raises(ConfigError, match="allow_download"):
        _judge(allow_download=True)


def test_an_nli_verifier_without_a_model_says_what_to_pass():
    with pytest.raises(ConfigError, match="nli:PATH"):
        _judge(verifier="nli:")


@pytest.mark.parametrize("family", ["bert", "roberta", "deberta-v2", "t5", "hhem"])
def test_each_family_scores_the_claim_metrics_end_to_end(models, family):
    settings = Settings(verifier=f"nli:{models[family]}", device="cpu")
    result = ragmeter.evaluate(ROWS, CLAIM_METRICS, settings=settings, progress=False)
    assert all(s.failed == 0 for s in result.summary.values()), result.failures()
    for value in result.scores("faithfulness_support"):
        assert 0.0 <= value <= 1.0
    verify = result.rows[0].details["faithfulness"]["verify"]
    assert verify["judge"].startswith(f"nli:{models[family].name}@")
    assert "support >= 0.5" in verify["method"]
    assert result.rows[0].details["faithfulness"]["analyze"]["judge"].startswith("offline:")
    info = result.info["judge"]
    assert info["name"].endswith(f"+verify:{verify['judge']}")
    assert info["verifier"]["threshold"] == 0.5
    assert info["verifier"]["pairs_computed"] > 0


def test_a_rerun_recomputes_nothing_and_a_new_threshold_reuses_the_probabilities(models):
    spec = f"nli:{models['bert']}"
    first = ragmeter.evaluate(ROWS, CLAIM_METRICS, settings=Settings(verifier=spec))
    again = ragmeter.evaluate(ROWS, CLAIM_METRICS, settings=Settings(verifier=spec))
    assert again.info["judge"]["verifier"]["pairs_computed"] == 0
    assert again.info["judge"]["verifier"]["pairs_cached"] > 0
    assert again.scores("faithfulness_support") == first.scores("faithfulness_support")
    assert again.rows[0].details["faithfulness"]["verify"]["cached"] is True
    strict = ragmeter.evaluate(
        ROWS, CLAIM_METRICS, settings=Settings(verifier=spec, verifier_threshold=0.999)
    )
    assert strict.info["judge"]["verifier"]["pairs_computed"] == 0
    assert strict.scores("faithfulness") == [0.0, 0.0]


def test_no_cache_computes_again(models):
    spec = f"nli:{models['bert']}"
    ragmeter.evaluate(ROWS, ["faithfulness"], settings=Settings(verifier=spec, use_cache=False))
    again = ragmeter.evaluate(
        ROWS, ["faithfulness"], settings=Settings(verifier=spec, use_cache=False)
    )
    assert again.info["judge"]["verifier"]["pairs_computed"] > 0
    assert again.info["judge"]["verifier"]["cache"] == "off"


def test_the_cli_takes_the_verifier_and_its_options(models, tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    out = tmp_path / "out.jsonl"
    args = ["evaluate", str(data), "-m", "faithfulness", "--out", str(out)]
    nli = ["--verifier", f"nli:{models['roberta']}", "--device", "cpu"]
    res = CliRunner().invoke(app, [*args, *nli, "--verifier-threshold", "0.25"])
    assert res.exit_code == 0, res.output
    row = json.loads(out.read_text().splitlines()[0])
    assert row["details"]["faithfulness"]["verify"]["judge"].startswith("nli:roberta@")
    record = json.loads(Path(f"{out}.run.json").read_text())
    assert record["judge"]["verifier"]["threshold"] == 0.25


def _flat(text: str) -> str:
    return " ".join(text.split())  # rich wraps long error lines


def test_the_cli_reports_a_bad_verifier_option_before_any_work(models, tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    base = ["evaluate", str(data), "-m", "faithfulness"]
    bad_label = [*base, "--verifier", f"nli:{models['bert']}", "--verifier-label", "entailmnt"]
    res = CliRunner().invoke(app, bad_label)
    assert res.exit_code == 2
    assert "Did you mean 'entailment'" in _flat(res.output)
    res = CliRunner().invoke(app, [*base, "--verifier-threshold", "0.5"])
    assert res.exit_code == 2
    assert "--verifier nli:PATH_OR_NAME" in _flat(res.output)
    res = CliRunner().invoke(app, [*base, "--verifier", f"nli:{models['bert']}", "--device", "tpu"])
    assert res.exit_code == 2
    assert "--device must be" in _flat(res.output)


_NO_TORCH = """
import importlib.abc, sys

class NoSpacy(importlib.abc.MetaPathFinder):  # spaCy's thinc imports torch when it is installed
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("spacy", "thinc"):
            raise ImportError(name)

sys.meta_path.insert(0, NoSpacy())
import ragmeter
from ragmeter.metrics.base import Settings
import ragmeter.judges.hf_entailment, ragmeter.models.hf_classifier, ragmeter.judges.verified
import ragmeter.testing.tiny_classifiers, ragmeter.cli
rows = [{"question": "Where is Paris?", "answer": "Paris is in France.",
         "contexts": ["Paris is the capital of France."], "reference_answers": ["In France."]}]
for verifier in ("judge", "offline"):
    result = ragmeter.evaluate(rows, ["faithfulness", "faithfulness_support", "claim_recall"],
                               settings=Settings(verifier=verifier), progress=False)
    assert result.summary["faithfulness"].count == 1, result.failures()
loaded = [m for m in ("torch", "transformers") if m in sys.modules]
print(loaded)
"""


def test_nothing_on_the_default_path_imports_torch_or_transformers(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", _NO_TORCH],
        capture_output=True,
        text=True,
        check=False,
        env={**__import__("os").environ, "RAGMETER_CACHE_DIR": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
