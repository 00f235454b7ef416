"""The labelling page in a real headless Chromium: key presses and clicks label claims and
rows, the labels survive a reload (localStorage), and Export downloads labels.jsonl."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from ragmeter.io.labels import read_labels
from ragmeter.report.labels.page import write_label_page
from ragmeter.report.labels.sample import uniform_sample


def labels(blob: bytes, **selection) -> list[dict]:
    """The label lines of an export, after checking its first line: how rows were chosen."""
    text = blob.decode("utf-8")
    assert text.endswith("\n")
    first, *lines = (json.loads(line) for line in text.splitlines())
    assert {k: first.get(k) for k in selection} == selection
    # The rest of the first line ties the labels to the run (calibrate checks them).
    assert set(first) - set(selection) <= {"metric", "drawn", "fingerprint", "input"}
    assert len(first["fingerprint"]) == 16 and first["drawn"] >= len({g["id"] for g in lines})
    return lines


def test_keys_and_clicks_label_claims_and_the_export_holds_them(labelled_run, browser, tmp_path):
    page = write_label_page(labelled_run, tmp_path / "labels.html", sample=4, seed=3)
    ids = [f"q{i}" for i in uniform_sample(list(range(12)), 4, seed=3)]
    browser.open(tmp_path / "labels.html")
    assert browser.js("document.title").startswith("ragmeter labels: faithfulness")
    assert "PWNED" not in browser.js("document.title")  # the question's script is text
    assert browser.js("document.querySelector('main').textContent").count("<script>") == 4
    assert browser.js("document.getElementById('progress').textContent") == "0 of 12 labelled"
    assert browser.js("document.querySelector('.item.cur').dataset.item") == "0"
    # The first claim's evidence (context 0's first sentence) is marked as the current one.
    marked = "[...document.querySelectorAll('mark.on')].map(m => m.textContent)"
    assert browser.js(marked) == ["Paris is the capital of France"]

    browser.press("s")  # claim 0 of the first row: supported, then the next claim
    browser.press("n")  # claim 1: not supported
    browser.press("j")  # claim 2 skipped
    browser.press("u")  # claim 0 of the second row: can't tell
    browser.press("k")
    browser.press("k")  # back to claim 2 of the first row
    assert browser.js("document.querySelector('.item.cur').dataset.item") == "2"
    browser.press("s")
    browser.click("#labeller")
    browser.type("ana")
    browser.press("Enter")
    browser.click('[data-item="7"] button[data-label="not_supported"]')
    browser.click('[data-item="8"] button[data-label="supported"]')
    browser.press("x")  # clears the current item, the one just clicked
    assert browser.js("document.getElementById('progress').textContent") == "5 of 12 labelled"

    # What was labelled is kept in localStorage.
    progress = "document.getElementById('progress').textContent"
    assert browser.reload_until(progress, "5 of 12 labelled") == "5 of 12 labelled"
    assert browser.js("document.getElementById('labeller').value") == "ana"
    selected = "[...document.querySelectorAll('button.sel')].map(b => b.dataset.label)"
    assert browser.js(selected) == [
        "supported",
        "not_supported",
        "supported",
        "unsure",
        "not_supported",
    ]

    name, blob = browser.download("#export")
    assert name == "labels.jsonl"
    got = labels(blob, selection="uniform", sample=4, seed=3, of_rows=12, key="id")
    assert [(g["id"], g["claim"], g["label"]) for g in got] == [
        (ids[0], 0, "supported"),
        (ids[0], 1, "not_supported"),
        (ids[0], 2, "supported"),
        (ids[1], 0, "unsure"),
        (ids[2], 1, "not_supported"),
    ]
    for line in got:
        assert set(line) == {
            "id",
            "claim",
            "label",
            "source",
            "labeller",
            "time",
            "selection",
            "fingerprint",
        }
        assert line["source"] == "answer"
        assert line["selection"] == "uniform"
        assert line["labeller"] == "ana"
        assert datetime.fromisoformat(line["time"].replace("Z", "+00:00")).year >= 2024
    assert page.items == 12
    # ragmeter's label reader (calibrate's) reads the export as it was downloaded.
    (tmp_path / "labels.jsonl").write_bytes(blob)
    read = read_labels(tmp_path / "labels.jsonl")
    assert read.selection == "uniform" and read.refusal() is None
    assert [(c.id, c.claim, c.value) for c in read.claims] == [
        (ids[0], 0, 1.0),
        (ids[0], 1, 0.0),
        (ids[0], 2, 1.0),
        (ids[1], 0, None),
        (ids[2], 1, 0.0),
    ]


def test_a_row_level_metric_is_scored_by_keys_and_by_typing(labelled_run, browser, tmp_path):
    write_label_page(labelled_run, tmp_path / "labels.html", sample=3, seed=1, metric="k_precision")
    ids = [f"q{i}" for i in uniform_sample(list(range(12)), 3, seed=1)]
    browser.open(tmp_path / "labels.html")
    assert browser.js("document.getElementById('progress').textContent") == "0 of 3 labelled"
    browser.press("4")  # row 0: 0.75, then the next row
    browser.click('[data-item="1"] input')
    browser.type("0.3")
    browser.press("Enter")  # row 1: 0.3, then the next row
    browser.press("5")  # row 2: 1
    assert browser.js("document.getElementById('progress').textContent") == "3 of 3 labelled"
    _, blob = browser.download("#export")
    got = labels(blob, selection="uniform", sample=3, seed=1, of_rows=12, key="id")
    assert [(g["id"], g["metric"], g["value"]) for g in got] == [
        (ids[0], "k_precision", 0.75),
        (ids[1], "k_precision", 0.3),
        (ids[2], "k_precision", 1),
    ]
    assert all("labeller" not in g and g["selection"] == "uniform" for g in got)


def test_a_stratified_page_says_so_and_marks_every_label(labelled_run, browser, tmp_path):
    write_label_page(labelled_run, tmp_path / "look.html", sample=2, seed=0, stratified=True)
    browser.open(tmp_path / "look.html")
    note = browser.js("document.getElementById('selection').textContent")
    assert "for looking only" in note and "never used for estimates" in note
    browser.press("n")
    _, blob = browser.download("#export")
    got = labels(blob, selection="stratified", sample=2, seed=0, of_rows=12, key="id")
    assert [g["selection"] for g in got] == ["stratified"]
    (tmp_path / "labels.jsonl").write_bytes(blob)
    assert "not a uniform random sample" in read_labels(tmp_path / "labels.jsonl").refusal()


def test_reference_claims_are_labelled_against_the_answer_and_calibrate(
    reference_run, browser, tmp_path
):
    import ragmeter

    page = tmp_path / "labels.html"
    write_label_page(reference_run, page, sample=2, seed=0, metric="claim_recall")
    ids = [f"q{i}" for i in uniform_sample(list(range(6)), 2, seed=0)]
    browser.open(page)
    assert browser.js("document.getElementById('progress').textContent") == "0 of 6 labelled"
    heading = "[...document.querySelectorAll('.field > b')].map(b => b.textContent)"
    assert "claims of the reference answers (does the answer state it?)" in browser.js(heading)
    # Reference claim 0's evidence is the answer's first sentence, marked as the current one.
    marked = "[...document.querySelectorAll('mark.on')].map(m => m.textContent)"
    assert browser.js(marked) == ["Paris is the capital of France"]
    browser.press("s")  # reference claim 0 of the first row: stated by the answer
    browser.press("n")  # reference claim 1 ("It has a tower."): not stated
    browser.click('[data-item="5"] button[data-label="unsure"]')  # the second row's claim 2
    assert browser.js("document.getElementById('progress').textContent") == "3 of 6 labelled"
    _, blob = browser.download("#export")
    got = labels(blob, selection="uniform", sample=2, seed=0, of_rows=6, key="id")
    assert [(g["id"], g["claim"], g["label"], g["source"], g["against"]) for g in got] == [
        (ids[0], 0, "supported", "reference", "answer"),
        (ids[0], 1, "not_supported", "reference", "answer"),
        (ids[1], 2, "unsure", "reference", "answer"),
    ]
    exported = tmp_path / "labels.jsonl"
    exported.write_bytes(blob)
    read = read_labels(exported)
    assert read.key == "id"
    assert [(c.source, c.against, c.value) for c in read.claims] == [
        ("reference", "answer", 1.0),
        ("reference", "answer", 0.0),
        ("reference", "answer", None),
    ]
    # calibrate reads them for claim_recall, the metric built from reference claims.
    calibration = ragmeter.calibrate(reference_run, exported).as_dict()
    entry = calibration["claim_recall"]
    assert entry["level"] == "claims" and entry["n_labels"] == 3
    assert entry["agreement"]["reference claims against the answer"]["n"] == 2
    assert entry["n_labelled_rows"] == 1  # the second row's one label is "can't tell"


def test_rows_sharing_an_id_export_indexes_and_calibrate_finds_them(browser, tmp_path):
    import ragmeter

    # Row 0's id is "3" and rows 1 and 2 share one: the page names rows by index.
    results = tmp_path / "results.jsonl"
    rows = [
        {"index": i, "id": row_id, "scores": {"mrr": float(i == 3)}}
        for i, row_id in enumerate(["3", "a", "a", "b"])
    ]
    results.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    write_label_page(results, tmp_path / "labels.html", sample=4, seed=0, metric="mrr")
    order = uniform_sample(list(range(4)), 4, seed=0)
    browser.open(tmp_path / "labels.html")
    for _ in order:
        browser.press("5")  # every row: 1.0, then the next row
    _, blob = browser.download("#export")
    got = labels(blob, selection="uniform", sample=4, seed=0, of_rows=4, key="index")
    assert [g["id"] for g in got] == order
    exported = tmp_path / "labels.jsonl"
    exported.write_bytes(blob)
    entry = ragmeter.calibrate(results, exported)["mrr"]
    # Each label is paired with the row of its index (judge scores 0, 0, 0, 1), not label 3
    # with row 0 (id "3", judge 0), which would make the bias -1.
    assert entry.n_labelled_rows == 4
    assert entry.bias.mean == pytest.approx((0 + 0 + 0 + 1) / 4 - 1)


def test_answer_claims_are_labelled_against_the_reference_by_keys_and_calibrate(
    reference_run, browser, tmp_path
):
    import ragmeter

    page = tmp_path / "labels.html"
    write_label_page(
        reference_run,
        page,
        sample=1,
        seed=0,
        metric="noise_sensitivity_relevant",
        target_width=0.1,
    )
    browser.open(page)
    # Each answer claim is asked against the reference answers, then against the contexts,
    # then each reference claim against the answer: 3 + 3 + 3 items.
    assert browser.js("document.getElementById('progress').textContent") == "0 of 9 labelled"
    # Opening the page writes nothing: a write at load could put an older state back over labels
    # written just before (by another tab, or by this page before a reload).
    assert browser.js("localStorage.length") == 0
    heading = "[...document.querySelectorAll('.field > b')].map(b => b.textContent)"
    assert "claims (does a reference answer state it?)" in browser.js(heading)
    assert "claims (do the contexts support it?)" in browser.js(heading)
    # Answer claim 0's reference verdict rests on reference 0's first sentence: marked.
    marked = "[...document.querySelectorAll('mark.on')].map(m => m.textContent)"
    assert browser.js(marked) == ["Paris is the capital of France"]
    for key in "snn":  # answer claims 0-2 against the reference
        browser.press(key)
    for key in "ssn":  # answer claims 0-2 against the contexts
        browser.press(key)
    browser.press("s")  # reference claim 0 against the answer
    assert browser.js("document.getElementById('progress').textContent") == "7 of 9 labelled"
    assert "target width 0.1" in browser.js("document.getElementById('budget').textContent")
    progress = "document.getElementById('progress').textContent"
    assert browser.reload_until(progress, "7 of 9 labelled") == "7 of 9 labelled"
    _, blob = browser.download("#export")
    got = labels(blob, selection="uniform", sample=1, seed=0, of_rows=6, key="id")
    assert [(g["claim"], g["label"], g["source"], g.get("against")) for g in got] == [
        (0, "supported", "answer", "reference"),
        (1, "not_supported", "answer", "reference"),
        (2, "not_supported", "answer", "reference"),
        (0, "supported", "answer", None),
        (1, "supported", "answer", None),
        (2, "not_supported", "answer", None),
        (0, "supported", "reference", "answer"),
    ]
    exported = tmp_path / "labels.jsonl"
    exported.write_bytes(blob)
    entry = ragmeter.calibrate(reference_run, exported).as_dict()["noise_sensitivity_relevant"]
    assert entry["agreement"]["answer claims against the reference"]["n"] == 3
    assert entry["agreement"]["answer claims against the contexts"]["n"] == 3
    assert "the judge's verdicts kept" not in entry["how"]
    assert "at least 10" in entry["calibrated"]["refused"]  # one row: no interval


def test_the_header_asks_only_about_the_claims_the_page_shows(
    labelled_run, reference_run, browser, tmp_path
):
    """Issue 37, item 8: a faithfulness page asked about reference claims it does not show."""
    header = "document.querySelector('header').textContent"
    write_label_page(labelled_run, tmp_path / "f.html", sample=2, seed=0)
    browser.open(tmp_path / "f.html")
    text = browser.js(header)
    assert "For each claim of the answer:" in text and "reference answers" not in text
    write_label_page(reference_run, tmp_path / "r.html", sample=2, seed=0, metric="claim_recall")
    browser.open(tmp_path / "r.html")
    assert "For each claim of the reference answers: does the answer state it?" in browser.js(
        header
    )
