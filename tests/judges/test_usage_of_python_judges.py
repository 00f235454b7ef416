"""A Python judge's calls are counted in the run's usage, once each."""

from __future__ import annotations

import inspect
import pydoc
import textwrap

import ragmeter
from ragmeter.judges.base import Analysis
from ragmeter.judges.fake import FakeJudge, all_entailed, none_entailed

ROWS = [
    {
        "question": f"Where is Paris? {i}",
        "answer": "In France.",
        "contexts": ["Paris is in France."],
    }
    for i in range(3)
]


def _fake(**kw) -> FakeJudge:
    return FakeJudge(analyze=Analysis(answer_claims=("Paris is in France.",)), **kw)


def test_a_fake_judges_calls_are_the_runs_usage():
    judge = _fake(verify=all_entailed)
    result = ragmeter.evaluate(ROWS, ["faithfulness"], judge=judge, progress=False)
    assert judge.calls == 6  # one analyze and one verify per row
    assert result.usage.calls == judge.calls
    assert result.info["usage"]["calls"] == judge.calls
    assert result.usage.prompt_tokens == 0 and result.usage.cache_hits == 0


def test_calls_that_raise_count_as_calls_and_failures():
    judge = _fake(verify=RuntimeError("judge down"))
    result = ragmeter.evaluate(ROWS, ["faithfulness"], judge=judge, progress=False)
    assert result.usage.calls == judge.calls
    assert result.usage.failures == len(judge.verify_requests) > 0


def test_a_verifier_object_is_counted_and_the_offline_verifier_is_not():
    class Verifier:
        name = "mine"

        async def verify(self, blocks):
            return none_entailed(blocks)

        def describe(self):
            return {"name": self.name}

    judge = _fake()
    settings = ragmeter.Settings(verifier=Verifier())
    result = ragmeter.evaluate(ROWS, ["faithfulness"], judge=judge, settings=settings)
    assert result.usage.calls == 2 * len(ROWS)
    judge = _fake()
    offline = ragmeter.Settings(verifier="offline")
    result = ragmeter.evaluate(ROWS, ["faithfulness"], judge=judge, settings=offline)
    assert result.usage.calls == len(judge.analyze_requests) == len(ROWS)


def test_help_of_fake_judge_shows_how_to_script_it():
    text = pydoc.render_doc(FakeJudge, renderer=pydoc.plaintext)
    for part in ("analyze=Analysis(", "verify=all_entailed", "ragmeter.evaluate(", "exception"):
        assert part in text


def test_the_example_in_fake_judges_help_runs():
    doc = inspect.getdoc(FakeJudge) or ""
    example = textwrap.dedent(doc.split("::\n\n", 1)[1].split("\n\n", 1)[0])
    exec(compile(example, "FakeJudge example", "exec"), {})
