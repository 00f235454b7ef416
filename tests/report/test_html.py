from __future__ import annotations

import re
import statistics
from html.parser import HTMLParser

import pytest

pytest.importorskip("matplotlib")

from ragmeter.report.html import render_report, write_report
from ragmeter.report.load import load_run
from ragmeter.report.risk import RiskThresholds


class Tags(HTMLParser):
    """Collects tag names and the text of the parsed document."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data):
        self.text.append(data)


def parse(doc: str) -> Tags:
    p = Tags()
    p.feed(doc)
    return p


@pytest.fixture(scope="module")
def report(rd, tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    results = rd.write_run(folder / "out.jsonl", rd.make_rows(), rd.make_info())
    out = write_report(results, folder / "r.html", group_by="metadata.category")
    assert out == folder / "r.html"
    return out.read_text(encoding="utf-8")


def test_report_is_one_self_contained_file_without_scripts_or_fetches(report):
    tags = parse(report)
    assert "script" not in tags.tags
    assert not {"img", "iframe", "link", "object", "embed"} & set(tags.tags)
    assert not any(name.startswith("on") for name, _ in tags.attrs)
    assert not re.search(r"(src|href)=\"(https?:)?//", report)
    assert "Content-Security-Policy" in report and "default-src 'none'" in report


def test_data_text_is_escaped_and_shown(report, rd):
    text = "".join(parse(report).text)
    assert rd.SCRIPT in text  # shown as text...
    assert rd.IMG in text
    assert "&lt;script&gt;document.title" in report  # ...because it is escaped
    assert "<i>cat-a</i>" in text and "&lt;i&gt;cat-a&lt;/i&gt;" in report
    assert "<b>bold</b>" not in report


def test_summary_table_has_every_statistic(report, rd):
    for header in ("n", "undefined", "failed", "mean", "median", "std", "min", "max"):
        assert f"<th>{header}</th>" in report
    assert "95% bootstrap interval" in report
    # faithfulness: 12 scores 0..1, mean 0.5; context_precision: 3 undefined
    row = re.search(r"<tr><td>faithfulness</td>.*?</tr>", report).group(0)
    cells = re.findall(r"<td class=n>([^<]*)</td>", row)
    faith = [r["scores"]["faithfulness"] for r in rd.make_rows()]
    expected = ["12", "0", "0", f"{statistics.mean(faith):.3f}", f"{statistics.median(faith):.3f}"]
    assert cells[:5] == expected
    assert cells[5] == f"{statistics.stdev(faith):.3f}"
    assert cells[6:8] == ["0.000", "1.000"]
    assert re.fullmatch(r"\[0\.\d{3}, 0\.\d{3}\]", cells[8])
    assert re.search(
        r"<tr><td>context_precision</td>.*?<td class=n>9</td><td class=n>3</td>", report
    )


def test_plots_are_inline_svg_per_metric_and_per_group(report):
    svgs = re.findall(r"<svg\b.*?</svg>", report, flags=re.DOTALL)
    assert len(svgs) == 6  # 3 metrics + 3 grouped
    assert all(s.count("<path") > 10 for s in svgs)


def test_risk_signs_are_in_words_with_numbers(report):
    assert "have noise_sensitivity above 0.50" in report
    assert "The standard deviation 0.33 is 33% of the range" in report


def test_thresholds_change_the_signs(results_file):
    strict = render_report(results_file, thresholds=RiskThresholds(spread=0.5, poor_share=0.9))
    assert "The standard deviation" not in strict
    assert "No sign of high risk." in strict


def test_worst_samples_are_listed_with_reasons_and_claims(report, rd):
    section = report.split('id="metric-0"')[1].split('id="metric-1"')[0]
    shown = re.findall(r"<b>row (\d+) · id q\d+</b> · faithfulness", section)
    assert shown == ["0", "1", "2", "3", "4"]
    assert "<th>claim</th><th>verdict</th>" in section
    assert "unsupported" in section
    assert "0 claims supported" in section
    # lower is better: worst noise_sensitivity rows have the highest values (rows 0, 1, ...)
    ns = report.split('id="metric-1"')[1].split('id="metric-2"')[0]
    assert re.findall(r"<b>row (\d+) ·", ns)[:2] == ["0", "1"]


def test_unscored_rows_are_listed_with_their_reason(report):
    section = report.split('id="metric-2"')[1]
    assert "Rows without a score (3 undefined, 0 failed" in section
    assert "no reference context" in section


def test_usage_and_configuration_are_shown(report):
    for text in ("judge calls", "<td class=n>24</td>", "cache hits", "12345", "0.0421"):
        assert text in report
    for text in ("gpt-test", "claims.extract", "sha256:abc123", "0.1.0", "max_tokens"):
        assert text in report


def test_secrets_never_appear(results_file, tmp_path, monkeypatch, rd):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-abcdef-987654")
    rows = rd.make_rows(4)
    rows[0]["failures"] = {"faithfulness": "401 for key tok-abcdef-987654"}
    rows[0]["scores"]["faithfulness"] = None
    path = rd.write_run(tmp_path / "s.jsonl", rows, rd.make_info(4))
    doc = render_report(path)
    assert rd.SECRET not in doc
    assert "tok-abcdef-987654" not in doc
    assert "[redacted]" in doc
    assert "<td class=n>512</td>" not in doc  # settings are shown as JSON
    assert "&quot;max_tokens&quot;: 512" in doc  # numbers under key-like names are kept


def test_missing_sidecar_is_stated(writer, rd):
    doc = render_report(writer("n.jsonl", rd.make_rows(4), None))
    assert "No direction recorded for" in doc
    assert "sidecar was not" in doc


def test_baseline_section_compares_paired_rows(results_file, writer, rd):
    rows = rd.make_rows()
    for r in rows:
        r["scores"]["faithfulness"] = max(0.0, r["scores"]["faithfulness"] - 0.2)
    base = writer("base.jsonl", rows, rd.make_info())
    doc = render_report(results_file, baseline=base)
    assert 'id="baseline"' in doc
    row = re.search(r"<tr><td>faithfulness</td><td class=n>12</td>.*?</tr>", doc).group(0)
    assert "+0.1" in row  # B − A is positive: this run is better than the baseline
    assert "B is better by" in doc


def test_in_memory_rows_and_info_work_like_files(results_file, rd):
    run = load_run(results_file)
    assert render_report(run).count("<svg") == 3


def test_report_of_a_run_with_no_metrics(writer):
    doc = render_report(writer("e.jsonl", [{"index": 0, "scores": {}}], None))
    assert "This run has no metric scores." in doc


def test_scrub_catches_key_shaped_strings_and_keeps_prompt_hashes(monkeypatch):
    from ragmeter.report.scrub import REDACTED, scrub, scrub_text

    monkeypatch.setenv("ACME_API_KEY", "plain-looking-value-42")
    assert scrub_text("Authorization: Bearer abcdefghijklmnop") == f"Authorization: {REDACTED}"
    assert scrub_text("https://user:hunter22@host/x") == f"https://{REDACTED}@host/x"
    assert scrub_text("failed with plain-looking-value-42 sent") == f"failed with {REDACTED} sent"
    assert scrub_text("short key 1") == "short key 1"
    cleaned = scrub(
        {
            "headers": {"Authorization": "Basic xyz", "X-Trace": "ok"},
            "tokenizer_max_tokens": 7,
            "prompts": {"key_facts.extract": "sha256:1"},
        }
    )
    assert cleaned == {
        "headers": {"Authorization": REDACTED, "X-Trace": "ok"},
        "tokenizer_max_tokens": 7,
        "prompts": {"key_facts.extract": "sha256:1"},
    }


def test_claim_records_render_as_an_escaped_table(writer):
    details = {
        "faithfulness": {
            "judge": "offline",
            "n": 2,
            "answer_claims": [
                {"claim": "A <b>x</b>", "correct": True, "contexts": [0]},
                {"claim": "B", "correct": False, "contexts": []},
            ],
        }
    }
    rows = [{"index": 0, "scores": {"faithfulness": 0.5}, "details": details}]
    doc = render_report(writer("c.jsonl", rows, None))
    assert "<th>#</th><th>claim</th><th>correct</th><th>contexts</th>" in doc
    assert "<td>A &lt;b&gt;x&lt;/b&gt;</td>" in doc.replace('<span class="txt">', "").replace(
        "</span>", ""
    )
    assert "<b>judge</b>: " in doc and "<b>n</b>: 2" in doc
