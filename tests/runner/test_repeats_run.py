"""``--repeats N`` end to end: a noisy judge scored N times per row, each repeat cached on its
own, the judge's noise in the run record, the summary and the CLI; the offline judge refuses."""

from __future__ import annotations

import json
import random

import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.errors import ConfigError
from ragmeter.judges.base import Analysis, AnalyzeRequest, ClaimBlock, Verification
from ragmeter.judges.fake import FakeJudge
from ragmeter.judges.repeat import current_repeat
from ragmeter.settings import Settings
from ragmeter.testing import TestServer

ROWS = [
    {
        "question_id": f"q{i}",
        "question": f"What about {i}?",
        "answer": f"Paris is in France. The Seine runs there. Row {i} has a tower.",
        "contexts": ["Paris is the capital of France and the Seine runs through it."],
    }
    for i in range(30)
]


def sentences(request: AnalyzeRequest) -> Analysis:
    return Analysis(
        answer_claims=tuple(s.strip() + "." for s in request.answer.split(".") if s.strip())
    )


def noisy_judge(flip: float, seed: int = 0) -> FakeJudge:
    """Claims 0 and 1 are supported and claim 2 is not, each verdict flipped with
    probability ``flip`` (a judge sampled at a temperature)."""
    rng = random.Random(seed)

    def verify(blocks: tuple[ClaimBlock, ...]) -> Verification:
        return Verification(
            matrices=tuple(
                tuple(
                    tuple((i < 2) != (rng.random() < flip) for _ in block.premises)
                    for i, _ in enumerate(block.claims)
                )
                for block in blocks
            ),
            meta={"method": "fake"},
        )

    return FakeJudge(analyze=sentences, verify=verify)


def run(judge, repeats: int, **kw):
    settings = Settings(judge=judge, repeats=repeats)
    return ragmeter.evaluate(ROWS, ["faithfulness"], settings=settings, progress=False, **kw)


def test_every_repeat_asks_the_judge_and_a_row_is_their_mean():
    judge = noisy_judge(flip=0.2)
    result = run(judge, repeats=4)
    assert len(judge.analyze_requests) == 4 * len(ROWS)  # each repeat analyses on its own
    assert len(judge.verify_requests) == 4 * len(ROWS)
    for row in result.rows:
        record = row.details["faithfulness"]["repeats"]
        assert len(record["values"]) == 4
        assert row.scores["faithfulness"] == pytest.approx(sum(record["values"]) / 4, abs=1e-5)
        assert record["claims"] == 3
        assert record["spread"] == pytest.approx(
            max(record["values"]) - min(record["values"]), abs=1e-5
        )


def test_the_run_record_says_how_noisy_the_judge_is_and_which_rows_are_flaky():
    steady = run(noisy_judge(flip=0.0), repeats=3)
    noisy = run(noisy_judge(flip=0.25), repeats=3)
    calm, loud = (
        steady.info["judge_noise"]["faithfulness"],
        noisy.info["judge_noise"]["faithfulness"],
    )
    assert calm["flip_share"] == 0 and calm["flaky_rows"] == 0 and calm["mean_spread"] == 0
    # Three repeats of a verdict flipped with p = 0.25 disagree with p = 1 - 0.75^3 - 0.25^3.
    assert loud["flip_share"] == pytest.approx(1 - 0.75**3 - 0.25**3, abs=0.15)
    assert loud["flaky_rows"] > 10 and loud["mean_spread"] > 0.2
    flaky = noisy.info["judge_noise"]["faithfulness"]["flaky"]
    spreads = [f["spread"] for f in flaky]
    assert spreads == sorted(spreads, reverse=True)
    for found in flaky:
        row = noisy.rows[found["index"]]
        assert row.details["faithfulness"]["repeats"]["spread"] == found["spread"]


def test_the_summary_interval_holds_the_judges_variance():
    steady = run(noisy_judge(flip=0.0), repeats=3).summary["faithfulness"]
    noisy = run(noisy_judge(flip=0.25), repeats=3).summary["faithfulness"]
    assert noisy.ci_method == "rows+repeats" and steady.ci_method == "rows+repeats"
    # Every row's answer is the same: only the judge's noise makes an interval.
    assert steady.ci_high - steady.ci_low == pytest.approx(0.0)
    assert noisy.ci_high - noisy.ci_low > 0.05
    assert noisy.ci_low <= noisy.mean <= noisy.ci_high


def test_the_offline_judge_refuses_repeats_with_the_reason():
    with pytest.raises(ConfigError, match="offline judge is deterministic"):
        Settings(repeats=2)
    with pytest.raises(ConfigError, match="integer from 1 to 100"):
        Settings(repeats=0)
    with pytest.raises(ConfigError, match="integer from 1 to 100"):
        Settings(judge="openai:m", repeats=101)
    cli = CliRunner().invoke(app, ["evaluate", "in.jsonl", "-m", "faithfulness", "--repeats", "3"])
    assert cli.exit_code == 2
    assert "--repeats is 3, but the offline judge is deterministic" in " ".join(cli.output.split())


def test_each_repeat_of_an_llm_judge_is_cached_on_its_own(tmp_path):
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS[:4]), encoding="utf-8")
    cache = tmp_path / "cache.sqlite3"
    with TestServer() as server:

        def calls(repeats: int) -> tuple[int, dict]:
            server.reset()
            settings = Settings(
                judge="openai:test-model",
                base_url=server.base_url,
                api_key="sk-repeats-test-key",
                cache_path=str(cache),
                repeats=repeats,
            )
            result = ragmeter.evaluate(
                str(data), ["faithfulness"], settings=settings, progress=False
            )
            return server.stats()["chat_calls"], result.info

        once, _ = calls(1)
        assert once == 8  # an analysis and a verification per row
        fresh, info = calls(3)
        assert fresh == 2 * once  # repeat 0 is the run without repeats: already cached
        assert info["usage"]["cache_hits"] == once
        assert calls(3)[0] == 0  # every repeat now comes from the cache
        assert calls(4)[0] == once  # only the new repeat is asked for


def test_the_cli_prints_the_judges_noise(tmp_path):
    with TestServer() as server:
        data = tmp_path / "in.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in ROWS[:3]), encoding="utf-8")
        out = tmp_path / "out.jsonl"
        result = CliRunner().invoke(
            app,
            [
                "evaluate",
                str(data),
                "-m",
                "faithfulness",
                "--judge",
                "openai:test-model",
                "--base-url",
                server.base_url,
                "--no-cache",
                "--repeats",
                "2",
                "--out",
                str(out),
            ],
            env={"OPENAI_API_KEY": "test"},
        )
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "judge noise: faithfulness over 2 repeats" in text
    assert "0 flaky rows" in text  # the test server answers alike every time
    record = json.loads((tmp_path / "out.jsonl.run.json").read_text(encoding="utf-8"))
    assert record["settings"]["repeats"] == 2
    assert record["summary"]["faithfulness"]["ci_method"] == "rows+repeats"
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert len(first["details"]["faithfulness"]["repeats"]["values"]) == 2


def test_repeat_indices_reach_the_judge():
    seen = set()

    def analyze(request):
        seen.add(current_repeat())
        return sentences(request)

    judge = FakeJudge(analyze=analyze, verify=noisy_judge(0.0)._verify)
    run(judge, repeats=3)
    assert seen == {0, 1, 2}


def test_the_report_lists_the_flaky_rows(tmp_path):
    from ragmeter.report.html import write_report

    result = run(noisy_judge(flip=0.25), repeats=3)
    noise = result.info["judge_noise"]["faithfulness"]
    html = write_report(result, tmp_path / "report.html").read_text(encoding="utf-8")
    assert '<h2 id="judge-noise">Judge noise</h2>' in html
    assert f"Flaky rows of faithfulness ({noise['flaky_rows']})" in html
    first = noise["flaky"][0]
    assert f"<tr><td class=n>{first['index']}</td><td class=n>{first['spread']:.3f}</td>" in html
    lo, hi = noise["ci"]
    assert f"[{lo:.3f}, {hi:.3f}]" in html
    quiet = write_report(run(noisy_judge(flip=0.0), repeats=1), tmp_path / "r1.html")
    assert "Judge noise" not in quiet.read_text(encoding="utf-8")
