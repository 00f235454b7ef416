from __future__ import annotations

import re
import statistics
from html.parser import HTMLParser

import pytest

from ragmeter.errors import DataError
from ragmeter.report.html import render_report, write_report
from ragmeter.report.risk import RiskThresholds
from ragmeter.results import read_run, run_from_rows


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


def test_the_overview_has_each_metrics_counts_mean_interval_and_distribution(report, rd):
    for header in ("n", "undefined", "failed", "mean", "distribution", "signs"):
        assert f"<th>{header}</th>" in report
    assert "95% bootstrap interval" in report
    # faithfulness: 12 scores 0..1, mean 0.5; context_precision: 3 undefined
    row = re.search(r'<tr><td><a href="#metric-0">faithfulness</a></td>.*?</tr>', report)
    cells = re.findall(r"<td class=n>([^<]*)</td>", row.group(0))
    faith = [r["scores"]["faithfulness"] for r in rd.make_rows()]
    assert cells[:4] == ["12", "0", "0", f"{statistics.mean(faith):.3f}"]
    assert re.fullmatch(r"\[0\.\d{3}, 0\.\d{3}\]", cells[4])
    assert '<svg class="sp"' in row.group(0) and "12 scores in 10 bins" in row.group(0)
    assert re.search(r">context_precision</a></td>.*?<td class=n>9</td><td class=n>3</td>", report)
    # median, std, min and max are in the metric's own section
    section = report.split('id="metric-0"')[1].split('id="metric-1"')[0]
    stats = re.search(r'<p class="stats">(.*?)</p>', section).group(1)
    for part in (
        f"median {statistics.median(faith):.3f}",
        f"std {statistics.stdev(faith):.3f}",
        "min 0.000",
        "max 1.000",
    ):
        assert part in stats


def test_plots_are_inline_svg_per_metric_and_per_group(report):
    svgs = re.findall(r'<svg class="pl".*?</svg>', report, flags=re.DOTALL)
    assert len(svgs) == 6  # 3 metrics + 3 grouped
    for svg in svgs[:3]:
        assert "Histogram: samples per bin" in svg and "Box plot" in svg
        assert svg.count('<path class="h"') == 1  # every bar in one path
    for svg in svgs[3:]:
        assert "Box plot by group" in svg and re.search(r"plain \(n=[456]\)", svg)
    assert not any("style=" in svg for svg in svgs)  # one stylesheet for every plot


def test_risk_signs_are_in_words_with_numbers_and_merged(report):
    summary = report.split('id="summary"')[1].split('id="metrics"')[0]
    assert '<h3 id="signs">Signs of risk (2)</h3>' in summary
    assert (
        "6 of 12 samples (50%) have faithfulness below 0.50, noise_sensitivity above 0.50 "
        "(lower is better), more than the 25% threshold."
    ) in summary
    assert '<span class="rows">(rows 0, 1, 2, 3, 4, 5)</span>' in summary
    # context_precision is undefined on rows 0, 5 and 10: a quarter of the rows
    assert "context_precision: 3 of 12 rows (25%) have no score (0 failed, 3 undefined)" in summary
    # the metric's own section says it too
    assert "6 of 12 samples (50%) have noise_sensitivity above 0.50 (lower is better)" in report


def test_thresholds_change_the_signs(results_file):
    strict = render_report(
        results_file, thresholds=RiskThresholds(poor_share=0.9, missing_share=0.5)
    )
    assert '<h3 id="signs">Signs of risk (0)</h3>' in strict
    assert "No sign of high risk." in strict
    per_metric = RiskThresholds().with_overrides({"faithfulness.poor_share": "0.9"})
    doc = render_report(results_file, thresholds=per_metric)
    assert "have noise_sensitivity above 0.50 (lower is better), more than" in doc
    assert "faithfulness below" not in doc


def test_worst_samples_are_listed_with_reasons_and_claims(report, rd):
    section = report.split('id="metric-0"')[1].split('id="metric-1"')[0]
    shown = re.findall(r"<b>row (\d+) · id q\d+</b> · faithfulness", section)
    assert shown == ["0", "1", "2", "3", "4"]
    assert "<th>claim</th><th>verdict</th>" in section
    assert "unsupported" in section
    assert "0 claims supported" in section
    # lower is better: worst noise_sensitivity rows have the highest values (rows 0, 1, ...);
    # with no claims in its details, each is one line, its row number a link to the row
    ns = report.split('id="metric-1"')[1].split('id="metric-2"')[0]
    assert re.findall(r'<a href="#row-(\d+)">', ns)[:2] == ["0", "1"]
    assert '<tr id="row-0"' in report


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
    assert "***" in doc
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
    run = read_run(results_file)
    assert render_report(run).count('<svg class="pl"') == 3


def test_report_of_a_run_with_no_metrics(writer):
    doc = render_report(writer("e.jsonl", [{"index": 0, "scores": {}}], None))
    assert "This run has no metric scores." in doc


def test_redaction_catches_key_shaped_strings_and_keeps_prompt_hashes(monkeypatch):
    from ragmeter.io.redact import MASK as REDACTED
    from ragmeter.io.redact import redact_everywhere as scrub_text
    from ragmeter.io.redact import redact_tree as scrub

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


@pytest.mark.parametrize(
    ("usage", "settings", "judge", "shown"),
    [
        (
            {"calls": 0, "cost": None},
            {"judge": "offline"},
            {"name": "offline:verifier-v5"},
            "offline: 0",
        ),
        ({"calls": 0, "cost": None}, {}, {}, "0 (no judge calls)"),
        ({"calls": 3, "cost": None}, {"judge": "openai"}, {"name": "openai"}, "not known"),
        ({"calls": 3, "cost": 0.5}, {"judge": "openai"}, {"name": "openai"}, "0.5000"),
    ],
)
def test_cost_says_offline_zero_for_an_offline_run(writer, rd, usage, settings, judge, shown):
    info = {**rd.make_info(4), "usage": usage, "settings": settings, "judge": judge}
    doc = render_report(writer("o.jsonl", rd.make_rows(4), info))
    assert f"<tr><th>cost</th><td class=n>{shown}" in doc


def test_skipped_metrics_are_listed_with_their_reason(writer, rd):
    info = {**rd.make_info(4), "skipped": {"answer_reward": "The reward model <x> is not cached."}}
    doc = render_report(writer("s.jsonl", rd.make_rows(4), info))
    assert "<h3>Skipped metrics (1)</h3>" in doc
    assert (
        '<tr><td>answer_reward</td><td class="txt">The reward model &lt;x&gt; is not cached.' in doc
    )
    assert "Skipped metrics" not in render_report(
        writer("n.jsonl", rd.make_rows(4), rd.make_info(4))
    )


def test_long_unbroken_ids_wrap(writer, rd):
    rows = rd.make_rows(4)
    rows[0]["id"] = "x" * 300
    doc = render_report(writer("w.jsonl", rows, rd.make_info(4)))
    css = re.search(r"<style>(.*?)</style>", doc, flags=re.DOTALL).group(1)
    assert "overflow-wrap:anywhere" in css and "b,h3,h4,dd,a{overflow-wrap:anywhere}" in css
    assert f"<b>row 0 · id {'x' * 200}…" in doc  # in a <b>, which wraps anywhere


def test_count_axes_have_integer_ticks():
    from ragmeter.report.svg import count_ticks

    assert count_ticks(1) == [0, 1]
    assert count_ticks(3) == [0, 1, 2, 3]
    assert count_ticks(7) == [0, 2, 4, 6, 8]
    assert count_ticks(23) == [0, 5, 10, 15, 20, 25]
    assert count_ticks(9_734) == [0, 2000, 4000, 6000, 8000, 10000]


def test_unknown_group_path_is_an_error_with_close_names(results_file):
    with pytest.raises(DataError, match=r"Cannot group by 'metadata.nope'.*metadata.category"):
        render_report(results_file, group_by="metadata.nope")
    with pytest.raises(DataError, match=r"Did you mean 'metadata.category'"):
        render_report(results_file, group_by="metadata.categroy")


def test_small_groups_raise_no_sign(results_file):
    doc = render_report(results_file, group_by="metadata.category")
    groups = doc.split('id="groups"')[1]
    assert "<h3>Signs of risk by group (0)</h3>" in groups  # 6 rows a group: too few
    assert "1 of 1 (100%)" not in doc


def test_only_the_top_signs_show_and_the_rest_fold(writer, rd):
    rows = rd.make_rows(12)
    for r in rows:  # six metrics, each poor on its own rows
        for k in range(6):
            r["scores"][f"m{k}"] = 0.0 if (r["index"] + k) % 3 == 0 else 1.0
    doc = render_report(writer("t.jsonl", rows, rd.make_info(12)), top_signs=3)
    summary = doc.split('id="summary"')[1].split('id="metrics"')[0]
    head, folded = summary.split("<details><summary>", 1)
    assert head.count('<li class="risk">') == 3
    # m0..m5 are poor on 3 row sets (merged), with faithfulness and context_precision
    assert folded.startswith("2 more signs</summary>")


def test_sign_count_of_a_typical_12_row_run_is_small_and_stable(rd):
    counts, flat_counts = [], []
    flat = RiskThresholds(per_metric={}, min_samples=3)  # a flat 0.5, signs on 3 rows
    for seed in range(10):
        run = run_from_rows(*rd.typical_run(12, seed))
        doc = render_report(run)
        counts.append(int(re.search(r"<h3[^>]*>Signs of risk \((\d+)\)</h3>", doc).group(1)))
        flat_doc = render_report(run, thresholds=flat)
        flat_counts.append(int(re.search(r"Signs of risk \((\d+)\)", flat_doc).group(1)))
        summary = doc.split('id="summary"')[1].split('id="metrics"')[0]
        assert summary.split("<details>")[0].count('<li class="risk">') <= 5
    assert max(counts) <= 5, counts
    assert sum(flat_counts) > 3 * sum(counts), (flat_counts, counts)  # the defaults matter


@pytest.mark.parametrize("group_by", [None, "metadata.topic"])
def test_a_12_row_report_is_under_500_kb(rd, tmp_path, group_by):
    results = rd.write_run(tmp_path / "r.jsonl", *rd.typical_run(12))
    out = write_report(results, tmp_path / "r.html", group_by=group_by)
    assert out.stat().st_size < 500_000
    n_metrics = len(rd.typical_specs())
    doc = out.read_text(encoding="utf-8")
    assert doc.count('<svg class="sp"') == n_metrics  # one small histogram each
    # a plot per metric, but for metrics with another's scores (said instead), and by group
    same = doc.count('<p class="same">')
    assert doc.count('<svg class="pl"') == (n_metrics - same) * (2 if group_by else 1)


def test_a_10000_row_report_is_under_5_mb(rd, tmp_path):
    results = rd.write_run(tmp_path / "r.jsonl", *rd.typical_run(10_000))
    out = write_report(results, tmp_path / "r.html", group_by="metadata.topic")
    size = out.stat().st_size
    assert size < 5_000_000, size
    doc = out.read_text(encoding="utf-8")
    n_metrics = len(rd.typical_specs())
    assert f"10000 rows, {n_metrics} metrics" in doc
    assert len(re.findall(r'<div class="sample">', doc)) <= n_metrics * 5 * 2  # worst, unscored
