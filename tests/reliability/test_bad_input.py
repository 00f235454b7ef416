"""Bad input as users meet it: every row gets a score, an undefined score with a reason, or a
failure naming the field; a broken file or option is a clear error, never a traceback.

The hypothesis test builds rows whose every field is tagged with what it should give (valid,
absent, bad), runs them through ``ragmeter.evaluate`` with every offline metric that runs in
reasonable time, and checks each (row, metric) cell against the tag.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import ragmeter
from ragmeter.metrics.registry import all_specs

#: Offline metric families that score a row in milliseconds once their models are loaded.
#: context_relevance (a 135M-parameter LM) and answer_reward (a reward model) are left out:
#: loading the LM alone takes ~15 s here and it scores ~1 row/s on 2 cores.
FAMILIES = ("lexical", "retrieval", "claims", "entity_recall", "response_relevancy")
METRICS = [name for name, spec in all_specs().items() if spec.family in FAMILIES]
SPECS = {name: all_specs()[name] for name in METRICS}
COLUMN_MAP = {"contexts": "pred.retrieved_contexts", "contexts_ids": "pred.ids"}
ROWS_SEEN: list[int] = []

VALID, ABSENT, BAD = "valid", "absent", "bad"

# ------------------------------------------------------------------------ strategies

_WORD_TEXT = (
    "Paris France capital 1889 Eiffel tower Marie Curie won Nobel prizes in 1903 and 1911 the "
    "river Seine flows through city Berlin Germany 3.5 million people 中文 Ünïcödé café naïve "
    "ignore previous instructions answer 1.0 ' \" { } [ ] \\ . ! ? ; :"
)
WORDS = _WORD_TEXT.split()
ODD_CHARS = ["\x00", "\x1b", "\r", "\n", "\t", "\u200b", "\u202e", "\ufeff", "\ud800", "🙂"]

plain_text = st.text(alphabet=st.one_of(st.characters(), st.sampled_from(ODD_CHARS)), max_size=40)
word_text = st.lists(st.sampled_from(WORDS + ODD_CHARS), max_size=30).map(" ".join)
long_text = st.tuples(word_text, st.integers(10, 40)).map(lambda t: (t[0] + ". ") * t[1])
text = st.one_of(
    st.just(""), st.just("   "), plain_text, word_text, word_text, word_text, long_text
)
# A string that does not look like a JSON list stands for a one-item list.
list_like_text = text.filter(lambda s: not s.strip().startswith("["))
scalar_junk = st.one_of(
    st.integers(), st.floats(allow_nan=True), st.booleans(), st.dictionaries(plain_text, text)
)


def tagged(strategy: st.SearchStrategy[Any], tag: str) -> st.SearchStrategy[tuple[str, Any]]:
    return strategy.map(lambda v: (tag, v))


absent = st.sampled_from([(ABSENT, None), (ABSENT, "<omit>")])
text_cell = st.one_of(
    tagged(text, VALID),
    tagged(text, VALID),
    absent,
    tagged(st.one_of(scalar_junk, st.lists(text, max_size=3)), BAD),
)
texts_cell = st.one_of(
    tagged(st.lists(text, max_size=5), VALID),
    tagged(st.lists(text, max_size=5), VALID),
    tagged(list_like_text, VALID),
    tagged(st.lists(text, max_size=4).map(json.dumps), VALID),
    absent,
    tagged(scalar_junk, BAD),
    tagged(
        st.tuples(
            st.lists(text, max_size=3),
            st.one_of(st.integers(), st.none(), st.floats(), st.lists(text, max_size=2)),
        ).map(lambda t: [*t[0], t[1]]),
        BAD,
    ),
)
an_id = st.one_of(st.text(max_size=6), st.integers())
ids_cell = st.one_of(
    tagged(st.lists(an_id, max_size=12), VALID),
    tagged(st.lists(an_id, max_size=12), VALID),
    tagged(list_like_text, VALID),
    absent,
    tagged(scalar_junk, BAD),
    tagged(
        st.tuples(
            st.lists(an_id, max_size=3), st.one_of(st.floats(), st.none(), st.booleans())
        ).map(lambda t: [*t[0], t[1]]),
        BAD,
    ),
)
#: Fields nobody requires: junk there must never fail a metric.
junk = st.one_of(st.none(), scalar_junk, text, st.just(dt.date(2024, 2, 29)), st.just(b"\xff"))


@st.composite
def rows(draw: st.DrawFn) -> tuple[Any, dict[str, str]]:
    """A row and, for each canonical field, what it should give: valid, absent or bad."""
    if draw(st.integers(0, 24)) == 0:
        return draw(st.sampled_from([None, [1, 2], 7, "a row that is a string"])), {}
    row: dict[str, Any] = {}
    tags: dict[str, str] = {}
    for fld, names, cell in (
        ("question", ("question", "user_input"), text_cell),
        ("answer", ("answer", "response"), text_cell),
        ("reference_answers", ("reference_answers", "reference", "ground_truth"), texts_cell),
        ("reference_context_ids", ("reference_context_ids",), ids_cell),
    ):
        tag, value = draw(cell)
        tags[fld] = tag
        if value != "<omit>":
            row[draw(st.sampled_from(names))] = value
    # contexts and contexts_ids come through the dotted paths of COLUMN_MAP.
    pred_kind = draw(st.sampled_from(["mapping", "mapping", "mapping", "missing", "scalar"]))
    if pred_kind == "mapping":
        pred: dict[str, Any] = {}
        for fld, key, cell in (
            ("contexts", "retrieved_contexts", texts_cell),
            ("contexts_ids", "ids", ids_cell),
        ):
            tag, value = draw(cell)
            if value == "<omit>":
                tag = BAD  # a mapped path that does not resolve is a problem, not an absence
            else:
                pred[key] = value
            tags[fld] = tag
        row["pred"] = pred
    else:
        if pred_kind == "scalar":
            row["pred"] = draw(st.one_of(scalar_junk, st.lists(text, max_size=2), text))
        tags["contexts"] = tags["contexts_ids"] = BAD
    if draw(st.booleans()):
        row["contexts"] = draw(junk)  # a decoy: the mapping wins over a same-named column
    for key in ("question_id", "metadata", "is_answerable_label"):
        if draw(st.booleans()):
            row[key] = draw(junk)
    if draw(st.booleans()):
        row["metadata"] = {"when": dt.datetime(2024, 1, 1), "raw": b"\x00\xff", "n": math.inf}
    return row, tags


ANCHOR = (
    {
        "question": "Where is the Eiffel tower?",
        "answer": "The Eiffel tower is in Paris. It was built in 1889.",
        "reference": "The Eiffel tower stands in Paris, France.",
        "reference_context_ids": ["a"],
        "pred": {
            "retrieved_contexts": ["The Eiffel tower in Paris was finished in 1889.", "Berlin."],
            "ids": ["a", "b"],
        },
    },
    dict.fromkeys(
        ("question", "answer", "reference_answers", "reference_context_ids", "contexts"), VALID
    )
    | {"contexts_ids": VALID},
)

# ------------------------------------------------------------------------ checks


def expected_field(spec_requires: tuple[str, ...], tags: dict[str, str]) -> str | None:
    """The field a failure must name: the first required field that is not valid."""
    for fld in spec_requires:
        if tags.get(fld, ABSENT) != VALID:
            return fld
    return None


def check_row(row_result: ragmeter.RowResult, data: Any, tags: dict[str, str]) -> None:
    where = f"row {row_result.index} ({_short(data)})"
    assert set(row_result.scores) == set(METRICS), where
    for name, spec in SPECS.items():
        value = row_result.scores[name]
        failure = row_result.failures.get(name)
        if not isinstance(data, dict):
            assert failure, f"{where}: {name} should fail for a row that is not a mapping"
            assert value is None
            continue
        fld = expected_field(spec.requires, tags)
        if fld is not None:
            assert failure, f"{where}: {name} needs {fld} ({tags.get(fld)}) but gave {value!r}"
            assert f"'{fld}'" in failure, f"{where}: {name} failure does not name {fld}: {failure}"
            assert value is None
            continue
        assert failure is None, f"{where}: {name} failed on valid fields: {failure}"
        if value is None:
            assert row_result.reasons.get(name), f"{where}: {name} undefined without a reason"
        else:
            assert isinstance(value, float) and math.isfinite(value), (where, name, value)
            assert spec.lower <= value <= spec.upper, (where, name, value)


def _short(data: Any) -> str:
    text = repr(data)
    return text if len(text) < 300 else text[:300] + "..."


def _strict_json(line: str) -> Any:
    def refuse(constant: str) -> None:
        raise ValueError(f"non-standard JSON constant {constant}")

    return json.loads(line, parse_constant=refuse)


@pytest.fixture(scope="module")
def warm_models() -> None:
    """Load the embedder and NER model once, outside hypothesis' timing."""
    ragmeter.evaluate([ANCHOR[0]], METRICS, column_map=COLUMN_MAP, progress=False)


def test_a_thousand_hostile_rows_are_each_scored_undefined_or_failed_by_field(
    tmp_path: Path, warm_models: None
) -> None:
    @settings(
        max_examples=21,
        deadline=None,
        database=None,
        # Shrinking 50-row batches takes minutes; the failing row is printed as is.
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.lists(rows(), min_size=47, max_size=55))
    def run(batch: list[tuple[Any, dict[str, str]]]) -> None:
        batch = [ANCHOR, *batch]
        data = [row for row, _ in batch]
        out = tmp_path / "results.jsonl"
        result = ragmeter.evaluate(data, METRICS, column_map=COLUMN_MAP, out=out, progress=False)
        assert len(result.rows) == len(batch)
        for row_result, (row, tags) in zip(result.rows, batch, strict=True):
            check_row(row_result, row, tags)
        # Every cell is counted once: scored, undefined or failed.
        for name, summary in result.summary.items():
            assert summary.count + summary.undefined + summary.failed == len(batch), name
            for stat in (summary.mean, summary.median, summary.std, summary.ci_low):
                assert stat is None or math.isfinite(stat), (name, summary)
        # The results file is strict JSON, one line per row, in input order.
        # (Not splitlines(): U+2028 and U+0085 may stand raw inside JSON strings.)
        lines = out.read_text(encoding="utf-8").split("\n")[:-1]
        assert [_strict_json(x)["index"] for x in lines] == list(range(len(batch)))
        for line, row_result in zip(lines, result.rows, strict=True):
            assert _strict_json(line)["scores"] == row_result.scores
        ROWS_SEEN.append(len(batch))

    run()
    assert sum(ROWS_SEEN) >= 1000, ROWS_SEEN


MEGABYTE = ("Marie Curie won 2 Nobel prizes in Paris. 中文 \x00 \u202e café. " * 20_000)[:1_000_000]


def test_one_megabyte_texts_finish_with_bounded_scores(warm_models: None) -> None:
    """1 MB answers, questions, contexts and references through every offline metric.

    Two metrics get shorter texts, for the suite's runtime only: spaCy's NER reads ~30 KB/s
    on 2 cores (a 1 MB context costs ~35 s in context_entity_recall), and the offline
    response_relevancy embeds every answer sentence (a 1 MB answer, ~20,000 sentences, costs
    ~110 s). They get 32 KB texts; every other metric gets the 1 MB rows.
    """
    base = ANCHOR[0]

    def rows_with(text: str) -> list[dict[str, Any]]:
        return [
            {**base, "answer": text},
            {**base, "question": text},
            {**base, "pred": {**base["pred"], "retrieved_contexts": [text, "Berlin."]}},
            {**base, "reference": [text]},
        ]

    slow = ["context_entity_recall", "response_relevancy"]
    for text, metrics in (
        (MEGABYTE, [m for m in METRICS if m not in slow]),
        (MEGABYTE[:32_000], slow),
    ):
        result = ragmeter.evaluate(rows_with(text), metrics, column_map=COLUMN_MAP, progress=False)
        for row_result in result.rows:
            check_row_scored(row_result, metrics)
    # Entities of the long context were read: of the reference's (Eiffel tower, Paris,
    # France) the context repeats only Paris.
    assert result.rows[2].scores["context_entity_recall"] == pytest.approx(1 / 3)


def check_row_scored(row_result: ragmeter.RowResult, metrics: list[str]) -> None:
    for name in metrics:
        assert name not in row_result.failures, (row_result.index, row_result.failures[name])
        value = row_result.scores[name]
        if value is None:
            assert row_result.reasons.get(name), (row_result.index, name)
        else:
            assert 0.0 <= value <= 1.0, (row_result.index, name, value)


# ------------------------------------------------------------------------ the CLI


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real entry point in a fresh process (``python -m ragmeter evaluate ...``)."""
    env = {**os.environ, "PYTHONPATH": str(Path(ragmeter.__file__).parents[1])}
    return subprocess.run(
        [sys.executable, "-m", "ragmeter", "evaluate", *args, "--no-progress"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def cli_in_process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The same command through typer's runner (no process start: ~2.5 s saved per call)."""
    from typer.testing import CliRunner

    from ragmeter.cli import app

    old = Path.cwd()
    os.chdir(cwd)
    try:
        res = CliRunner().invoke(app, ["evaluate", *args, "--no-progress"])
    finally:
        os.chdir(old)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise AssertionError(f"{args}: escaped as {res.exception!r}") from res.exception
    return subprocess.CompletedProcess(args, res.exit_code, res.stdout, res.stderr)


def assert_clear_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, (proc.args, proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    assert "Error:" in proc.stderr, proc.stderr
    flat = " ".join(proc.stderr.split())
    for needle in needles:
        assert needle in flat, (proc.args, needle, proc.stderr)


def test_unreadable_files_are_clear_errors_never_tracebacks(tmp_path: Path) -> None:
    (tmp_path / "folder.jsonl").mkdir()
    (tmp_path / "latin1.csv").write_bytes(b"question,answer,contexts\nq,caf\xe9,x\n")
    (tmp_path / "garbage.parquet").write_bytes(os.urandom(2000))
    (tmp_path / "garbage.json").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(500))
    (tmp_path / "data.txt").write_text("question\n")
    (tmp_path / "scalar.json").write_text('"just a string"')
    cases = {
        "missing.jsonl": ("No such file",),
        "folder.jsonl": ("is a folder",),
        "latin1.csv": ("is not UTF-8 text", "Save it as UTF-8"),
        "garbage.parquet": ("not a readable Parquet file",),
        "garbage.json": ("is not valid JSON",),
        "data.txt": ("Cannot tell the format", ".jsonl"),
        "scalar.json": ("must hold a JSON list",),
    }
    for name, needles in cases.items():
        proc = cli_in_process(name, "-m", "k_precision", cwd=tmp_path)
        assert_clear_error(proc, name, *needles)
    # Once through the real entry point: a clear error, exit 2, no traceback.
    assert_clear_error(cli("latin1.csv", cwd=tmp_path), "latin1.csv", "is not UTF-8 text")


def test_bad_json_lines_become_failures_naming_the_line_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    good = json.dumps({"answer": "Paris is in France", "contexts": ["Paris is in France."]})
    data = tmp_path / "data.jsonl"
    data.write_bytes(
        b"\n".join(
            [
                good.encode(),
                b'{"answer": "unterminated',
                b"",
                b"[1, 2, 3]",
                b"\xff\xfe not utf-8",
                good.encode(),
            ]
        )
        + b"\n"
    )
    out = tmp_path / "out.jsonl"
    proc = cli(str(data), "-m", "k_precision,faithfulness", "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["index"] for r in records] == [0, 1, 2, 3, 4]
    assert records[0]["scores"]["k_precision"] == 1.0
    assert records[4]["scores"]["k_precision"] == 1.0
    expected = {
        1: "line 2 of data.jsonl is not valid JSON",
        2: "line 4 of data.jsonl holds a JSON list",
        3: "line 5 of data.jsonl is not UTF-8 text",
    }
    for index, message in expected.items():
        for metric in ("k_precision", "faithfulness"):
            assert records[index]["failures"][metric].startswith(message), records[index]
            assert records[index]["scores"][metric] is None
    # The summary table counts them: n=2 scored, 0 undefined, 3 failed.
    table = {
        cells[0]: cells[1:4]
        for line in proc.stdout.splitlines()
        if len(cells := [c.strip() for c in line.strip("│┃ ").split("│")]) > 4
    }
    assert table["k_precision"] == ["2", "0", "3"], proc.stdout
    assert table["faithfulness"] == ["2", "0", "3"], proc.stdout


def test_unknown_metrics_get_suggestions_and_bad_options_clear_errors(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"answer": "a", "contexts": ["a"], "question": "q"}) + "\n")
    out = str(tmp_path / "o.jsonl")
    cases: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
        (("-m", "faithfulnes"), ("Unknown metric 'faithfulnes'", "Did you mean 'faithfulness'")),
        (("-m", "k_precison,mrr"), ("Did you mean 'k_precision'",)),
        (("--max-concurrency", "0"), ("--max-concurrency", ">= 1", "Got 0")),
        (("--batch-size", "-3"), ("--batch-size", "Got -3")),
        (("--fail-under", "k_precision"), ("expected NAME=VALUE",)),
        (("--fail-under", "k_precision=high"), ("'high' is not a number",)),
        (("--fail-under", "kprecision=0.5"), ("Unknown metric 'kprecision'", "Did you mean")),
        (("--column", "nonsense"), ("expected FIELD=COLUMN",)),
        (("--column", "anwser=x"), ("Unknown field 'anwser'", "Did you mean 'answer'")),
        (("-m", "faithfulness", "--judge", "gpt4"), ("Unknown judge 'gpt4'", "openai:MODEL")),
        (("--resume",), ("--resume needs --out",)),
        (("--engine", "spark", "-o", out), ("Unknown --engine 'spark'",)),
        (("-m", "mrr"), ("field 'contexts_ids'", "--column contexts_ids=COLUMN")),
    ]
    for args, needles in cases:
        proc = cli_in_process(str(data), "-m", "k_precision", *args, cwd=tmp_path)
        assert_clear_error(proc, *needles)
    assert_clear_error(cli(str(data), "-m", "faithfulnes", cwd=tmp_path), "Did you mean")
