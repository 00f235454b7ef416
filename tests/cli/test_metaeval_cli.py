from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from ragmeter.cli.metaeval import register
from ragmeter.testing.server import TestServer


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()
    register(app)

    @app.command()
    def other() -> None:  # a second command, so Typer keeps 'meta-eval' as a subcommand
        pass

    return app


def test_meta_eval_trec_prints_the_table_and_writes_md_and_json(app, shared: Path, tmp_path):
    res = CliRunner().invoke(
        app, ["meta-eval", "trec", "--data", str(shared / "data"), "--out", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    assert "| map | map |" in res.output
    assert "0.1785" in res.output
    assert json.loads((tmp_path / "trec.json").read_text())["passed"] is True
    assert (tmp_path / "trec.md").read_text().startswith("### trec")


def test_meta_eval_reads_the_data_folder_from_the_environment(app, shared, monkeypatch):
    monkeypatch.setenv("RAGMETER_SHARED_DATA", str(shared / "data"))
    res = CliRunner().invoke(app, ["meta-eval", "unitxt", "--metrics", "mrr,map_retrieved"])
    assert res.exit_code == 0, res.output
    assert "| mrr | 14 | 14 |" in res.output


def test_unknown_suite_is_a_usage_error_with_a_suggestion(app, shared):
    res = CliRunner().invoke(app, ["meta-eval", "trek", "--data", str(shared / "data")])
    assert res.exit_code == 2
    assert "Did you mean 'trec'?" in res.output


def test_missing_data_folder_is_a_usage_error(app, tmp_path):
    res = CliRunner().invoke(app, ["meta-eval", "trec", "--data", str(tmp_path / "nope")])
    assert res.exit_code == 2
    assert "does not exist" in res.output


def test_a_metric_the_suite_cannot_measure_is_named(app, shared):
    res = CliRunner().invoke(
        app, ["meta-eval", "trec", "--data", str(shared / "data"), "--metrics", "faithfulness"]
    )
    assert res.exit_code == 2
    assert "cannot measure 'faithfulness'" in res.output


def test_limit_must_be_positive(app, shared):
    res = CliRunner().invoke(app, ["meta-eval", "trec", "--limit", "0"])
    assert res.exit_code == 2


def test_lfqa_measures_an_llm_judge_sentence_by_sentence(app, shared, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"
    args = ["meta-eval", "lfqa", "--judge", "openai:test-model", "--limit", "1", "--out", str(out)]
    args += ["--data", str(shared / "data")]
    with TestServer() as server:
        res = CliRunner().invoke(app, [*args, "--base-url", server.base_url])
        assert res.exit_code == 0, res.output
        calls = server.stats()["chat_calls"]
        report = json.loads((out / "lfqa.json").read_text())
        row = report["results"]["faithfulness (openai:test-model, per sentence)"]
        # One answer per system; every annotated sentence scored once, one analyze and one
        # verify call each.
        assert row["n_answers"] == 6
        sentences = row["n_sentences"]
        assert sentences >= 6 and calls == 2 * sentences
        assert report["judged"]["faithfulness"] == {"failed": 0, "undefined": 0}
        assert row["answer_pooled"]["spearman"] is not None
        assert "faithfulness_support (openai:test-model, per sentence)" in res.output
        # The judge cache makes a rerun free.
        again = CliRunner().invoke(app, [*args, "--base-url", server.base_url])
        assert again.exit_code == 0, again.output
        assert server.stats()["chat_calls"] == calls


def test_lfqa_rejects_metrics_and_offline_only_options(app):
    res = CliRunner().invoke(app, ["meta-eval", "lfqa", "--metrics", "faithfulness"])
    assert res.exit_code == 2
    assert "fixed set of metrics" in res.output


def test_without_a_data_folder_the_error_says_to_pass_data(app, monkeypatch, tmp_path):
    monkeypatch.delenv("RAGMETER_SHARED_DATA", raising=False)
    monkeypatch.chdir(tmp_path)  # no folder is looked for relative to where ragmeter runs
    for suite in ("trec", "lfqa"):
        res = CliRunner().invoke(app, ["meta-eval", suite])
        assert res.exit_code == 2, res.output
        assert "needs its data folder: pass --data DIR" in res.output
        assert "trec_eval_reference/qrels.test" in res.output  # the layout it expects
    from ragmeter.errors import DataError
    from ragmeter.metaeval import run_suite

    with pytest.raises(DataError, match=r"pass data_dir \(or set RAGMETER_SHARED_DATA\)"):
        run_suite("trec")  # Python names the parameter


def test_the_documented_layout_names_every_file_the_suites_read():
    from ragmeter.metaeval import SUITES, lfqa, msmarco, ragchecker, trec, unitxt, wikieval
    from ragmeter.metaeval.common import DATA_LAYOUT

    assert set(DATA_LAYOUT) == {*SUITES, "lfqa"}
    assert msmarco.FILE in DATA_LAYOUT["msmarco"]
    assert wikieval.FILE in DATA_LAYOUT["wikieval"]
    assert DATA_LAYOUT["ragchecker"].startswith(ragchecker.FOLDER + "/")
    assert DATA_LAYOUT["trec"].startswith(trec.FOLDER + "/")
    assert unitxt.PARITY_FILE in DATA_LAYOUT["unitxt"]
    assert unitxt.CORPUS_FILE in DATA_LAYOUT["unitxt"]
    assert DATA_LAYOUT["lfqa"].startswith(lfqa.FOLDER + "/")
