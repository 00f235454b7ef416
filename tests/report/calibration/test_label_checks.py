"""Labels are tied to their run and matched loudly (issue 36, items 8-10), small samples give
honest intervals, and rows drawn by uncertainty are weighted by their probabilities
(issue 38)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.cli.calibrate import check_calibrated_gates
from ragmeter.errors import DataError
from ragmeter.io.labels import read_labels
from ragmeter.report.labels.page import build_label_page, write_label_page
from ragmeter.scoring.calibration import ppi

runner = CliRunner()


def claim_row(index: int, claims: list[str], supported: list[bool], row_id=None) -> dict:
    items = [
        {
            "claim": text,
            "contexts": [0] if v else [],
            "evidence": {
                "contexts": {"uncertain": False, "rests_on": [{"index": 0, "support": s}]}
            },
        }
        for text, v, s in zip(
            claims, supported, [0.9 if v else 0.2 for v in supported], strict=True
        )
    ]
    return {
        "index": index,
        "id": f"r{index}" if row_id is None else row_id,
        "scores": {"faithfulness": sum(supported) / len(supported), "answer_reward": 0.5},
        "details": {"faithfulness": {"answer_claims": items}},
    }


def write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def run_of(tmp_path: Path, n: int = 30, name: str = "res.jsonl", claim0: str = "a") -> Path:
    rows = [claim_row(i, [claim0, "b"], [True, i % 3 == 0]) for i in range(n)]
    return write(tmp_path / name, rows)


# ----------------------------------------------------------------- item 10: loud matching


def test_a_label_on_an_id_two_rows_share_is_refused(tmp_path: Path) -> None:
    rows = [claim_row(i, ["a"], [True], row_id="dup" if i < 2 else f"r{i}") for i in range(4)]
    results = write(tmp_path / "res.jsonl", rows)
    labels = write(tmp_path / "l.jsonl", [{"id": "dup", "metric": "answer_reward", "value": 1}])
    with pytest.raises(
        DataError, match=r"2 rows of the results have the id 'dup' \(indexes 0, 1\)"
    ):
        ragmeter.calibrate(results, labels)


def test_labels_on_a_failed_row_exit_2(tmp_path: Path) -> None:
    rows = [claim_row(i, ["a"], [True]) for i in range(3)]
    rows[1]["scores"] = {"answer_reward": 0.5}  # faithfulness failed on row 1
    rows[1]["failures"] = {"faithfulness": "judge: boom"}
    rows[1]["details"] = {}
    results = write(tmp_path / "res.jsonl", rows)
    row_label = write(tmp_path / "a.jsonl", [{"id": "r1", "metric": "faithfulness", "value": 1}])
    claim_label = write(tmp_path / "b.jsonl", [{"id": "r1", "claim": 0, "label": "supported"}])
    for labels in (row_label, claim_label):
        res = runner.invoke(app, ["calibrate", str(results), "--labels", str(labels)])
        assert res.exit_code == 2, res.output
        assert "has no" in res.output and "failed or" in res.output


def test_a_claim_index_past_the_rows_claims_exits_2(tmp_path: Path) -> None:
    results = run_of(tmp_path)
    labels = write(tmp_path / "l.jsonl", [{"id": "r1", "claim": 99, "label": "supported"}])
    res = runner.invoke(app, ["calibrate", str(results), "--labels", str(labels)])
    assert res.exit_code == 2 and "has 2 answer claim(s) (0 to 1)" in res.output


def test_claim_true_is_not_read_as_claim_one(tmp_path: Path) -> None:
    labels = write(tmp_path / "l.jsonl", [{"id": "r1", "claim": True, "label": "supported"}])
    with pytest.raises(DataError, match="'claim' must be a claim index"):
        read_labels(labels)


def test_contradictory_labels_by_one_labeller_are_refused(tmp_path: Path) -> None:
    results = run_of(tmp_path)
    lines = [
        {"id": "r1", "claim": 0, "label": "supported"},
        {"id": "r1", "claim": 0, "label": "not_supported"},
    ]
    with pytest.raises(DataError, match="lines 1 and 2: two different labels of answer claim 0"):
        ragmeter.calibrate(results, write(tmp_path / "l.jsonl", lines))
    rows = [
        {"id": "r2", "metric": "answer_reward", "value": 0.2, "labeller": "ana"},
        {"id": "r2", "metric": "answer_reward", "value": 0.9, "labeller": "ana"},
    ]
    with pytest.raises(DataError, match="both with labeller 'ana': 0.2 and 0.9"):
        ragmeter.calibrate(results, write(tmp_path / "r.jsonl", rows))
    # Two people who disagree are both kept (their values are averaged).
    rows[1]["labeller"] = "bo"
    cal = ragmeter.calibrate(results, write(tmp_path / "r2.jsonl", rows))
    assert cal["answer_reward"].n_labels == 2


def test_a_label_pasted_many_times_counts_once(tmp_path: Path) -> None:
    results = run_of(tmp_path)
    lines = [{"id": f"r{i}", "metric": "answer_reward", "value": 0.5} for i in range(12)]
    lines += [{"id": "r0", "metric": "answer_reward", "value": 0.5}] * 50
    cal = ragmeter.calibrate(results, write(tmp_path / "l.jsonl", lines))
    assert cal["answer_reward"].n_labels == 12
    assert any("50 label line(s) repeat an earlier one" in note for note in cal.notes)


# ----------------------------------------------------------------- item 9: small samples


def test_two_identical_labels_give_no_interval_and_no_gate_passes(tmp_path: Path) -> None:
    results = run_of(tmp_path)
    lines = [{"id": f"r{i}", "metric": "answer_reward", "value": 1.0} for i in (0, 1)]
    cal = ragmeter.calibrate(results, write(tmp_path / "l.jsonl", lines))
    entry = cal.as_dict()["answer_reward"]
    assert entry["labels"]["ci"] is None and entry["calibrated"]["ci"] is None
    assert "an interval needs at least 10" in entry["calibrated"]["refused"]
    failed = check_calibrated_gates(cal.as_record(), {"answer_reward": 0.2})
    assert failed and "at least 10" in failed[0]
    res = runner.invoke(
        app,
        ["calibrate", str(results), "--labels", str(tmp_path / "l.jsonl"), "--fail-under",
         "answer_reward=0.2"],
    )  # fmt: skip
    assert res.exit_code == 1


def test_identical_labels_never_give_a_zero_width_interval(tmp_path: Path) -> None:
    results = run_of(tmp_path)
    lines = [{"id": f"r{i}", "metric": "answer_reward", "value": 1.0} for i in range(10)]
    cal = ragmeter.calibrate(results, write(tmp_path / "l.jsonl", lines)).as_dict()
    low, high = cal["answer_reward"]["labels"]["ci"]
    assert high == 1.0 and low < 0.85  # ten of ten do not show that the next one agrees
    low, high = cal["answer_reward"]["calibrated"]["ci"]
    assert high == 1.0 and low < 0.85


def test_compare_gives_no_paired_difference_on_fewer_than_ten_shared_rows(tmp_path) -> None:
    from ragmeter.report.calibration.compare import compare_calibrations

    data = tmp_path / "in.jsonl"
    write(data, [{"question_id": f"q{i}", "answer": "x", "contexts": ["x"]} for i in range(20)])
    labels = write(
        tmp_path / "l.jsonl",
        [{"id": f"q{i}", "metric": "k_precision", "value": 1.0} for i in (0, 1)],
    )
    outs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.jsonl"
        ragmeter.evaluate(
            str(data), ["k_precision"], out=str(out), labels=str(labels), progress=False
        )
        outs.append(out)
    diff = compare_calibrations(*outs)["k_precision"]
    assert diff["calibrated"]["ci"] is None  # was +0.000 [+0.000, +0.000]


# ----------------------------------------------------------------- item 8: fingerprints


def test_labels_of_a_rerun_whose_claims_changed_are_refused(tmp_path: Path) -> None:
    results = run_of(tmp_path)
    page = build_label_page(results, sample=12, seed=0)
    row = page.payload["rows"][0]
    line = {"id": row["id"], "claim": 0, "label": "supported", "fingerprint": row["fingerprint"]}
    labels = write(tmp_path / "l.jsonl", [page.header(), line])
    assert ragmeter.calibrate(results, labels)["faithfulness"].n_labels == 1
    # The same path written again: claim 0 is now another sentence.
    run_of(tmp_path, claim0="The Moon is made of cheese.")
    res = runner.invoke(app, ["calibrate", str(results), "--labels", str(labels)])
    assert res.exit_code == 2 and "is not the row that was labelled" in res.output
    # The page's storage key changes with its rows' claims, so old labels are not shown.
    assert build_label_page(results, sample=12, seed=0).payload["key"] != page.payload["key"]


def test_labels_drawn_from_another_number_of_rows_are_refused(tmp_path: Path) -> None:
    small = run_of(tmp_path, n=10, name="small.jsonl")
    page = build_label_page(small, sample=10, seed=0)
    lines = [page.header()] + [
        {"id": f"r{i}", "metric": "answer_reward", "value": 0.5} for i in range(10)
    ]
    labels = write(tmp_path / "l.jsonl", lines)
    big = run_of(tmp_path, n=300, name="big.jsonl")
    with pytest.raises(DataError, match="drawn from 10 rows with a faithfulness score.*has 300"):
        ragmeter.calibrate(big, labels)


# ----------------------------------------------------------------- issue 38: active labels


def test_active_mean_is_unbiased_and_covers_with_unequal_probabilities() -> None:
    rng = np.random.default_rng(0)
    n_rows, covered, errors = 2000, 0, []
    y = rng.beta(2, 2, n_rows)
    noisy = rng.random(n_rows) < 0.3
    f = np.clip(y + rng.normal(0, np.where(noisy, 0.4, 0.05)), 0, 1)
    p = ppi.inclusion_probabilities(np.where(noisy, 0.4, 0.05), 150)
    assert p.sum() == pytest.approx(150) and p.min() >= 0.2 * 150 / n_rows - 1e-12
    for _ in range(400):
        drawn = rng.random(n_rows) < p
        est = ppi.active_mean(y[drawn], f[drawn], p[drawn], f)
        covered += est.ci[0] <= y.mean() <= est.ci[1]
        errors.append(est.mean - y.mean())
    assert 0.92 <= covered / 400 <= 0.98
    assert abs(np.mean(errors)) < 3 * np.std(errors) / np.sqrt(400)


def test_uncertainty_labels_are_weighted_and_mixed_selections_refused(tmp_path: Path) -> None:
    results = run_of(tmp_path, n=60)
    out = tmp_path / "rows.jsonl"
    res = runner.invoke(
        app,
        ["label", str(results), "--sample", "20", "--strategy", "uncertainty", "--seed", "3",
         "--selection-out", str(out)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    head, *rows = (json.loads(x) for x in out.read_text().splitlines())
    assert head["selection"] == "uncertainty" and head["of_rows"] == 60
    assert head["drawn"] == len(rows) and all(0 < r["probability"] <= 1 for r in rows)
    # Rows whose verdicts the judge is less sure of (row i % 3 == 0 has a 0.9 and a 0.9
    # support, the others 0.9 and 0.2: the same p(1 - p)) ... all drawn with a probability.
    for r in rows:
        r.update(metric="answer_reward", value=0.6)
    labelled = write(tmp_path / "labelled.jsonl", [head, *rows])
    res = runner.invoke(app, ["calibrate", str(results), "--labels", str(labelled), "--json"])
    assert res.exit_code == 0, res.output
    entry = json.loads(res.stdout)["answer_reward"]
    assert entry["calibrated"]["mean"] == pytest.approx(0.6)
    assert "inverse inclusion probability" in entry["how"]
    mixed = write(tmp_path / "mixed.jsonl", [{**rows[0], "selection": "uniform"}, *rows[1:], head])
    with pytest.raises(DataError, match="two designs"):
        read_labels(mixed)
    lacking = write(tmp_path / "lacking.jsonl", [head, *[{**r, "probability": None} for r in rows]])
    with pytest.raises(DataError, match="give no 'probability'"):
        read_labels(lacking)


def test_target_width_says_how_many_more_labels(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    rows = [claim_row(i, ["a"], [True]) for i in range(400)]
    for r in rows:
        r["scores"]["answer_reward"] = float(rng.random())
    results = write(tmp_path / "res.jsonl", rows)
    lines = [
        {"id": f"r{i}", "metric": "answer_reward", "value": float(rng.random())} for i in range(30)
    ]
    labels = write(tmp_path / "l.jsonl", lines)
    res = runner.invoke(
        app, ["calibrate", str(results), "--labels", str(labels), "--target-width", "0.1"]
    )
    assert res.exit_code == 0, res.output
    assert "budget: answer_reward: 30 labelled rows; label about" in res.output
    budget = ragmeter.calibrate(results, labels, target_width=0.1)["answer_reward"].budget
    # Labels unrelated to the judge: about Var(Y) (1/12) * (2 * 1.96 / 0.1)^2 = 128 rows.
    assert 80 <= budget["needed"] <= 200 and budget["more"] == budget["needed"] - 30


def test_the_page_of_an_uncertainty_sample_carries_probabilities(tmp_path: Path) -> None:
    results = run_of(tmp_path, n=60)
    page = write_label_page(results, tmp_path / "p.html", sample=20, seed=1, strategy="uncertainty")
    assert page.payload["selection"] == "uncertainty"
    assert all(0 < row["probability"] <= 1 for row in page.payload["rows"])
    with pytest.raises(ragmeter.errors.ConfigError, match="Give one of them"):
        build_label_page(results, sample=5, stratified=True, strategy="uncertainty")


def test_the_report_section_says_how_many_labels_reach_a_width() -> None:
    from ragmeter.report.calibration.section import calibration_section

    entry = {"n_labelled_rows": 100, "calibrated": {"mean": 0.6, "ci": [0.55, 0.65]}}
    html = calibration_section({"calibration": {"metrics": {"faithfulness": entry}}})
    assert (
        "faithfulness label budget: interval 0.100 wide from 100 labelled rows; about 400" in html
    )
    entry["budget"] = {"target_width": 0.02, "needed": 2500, "more": 2400}
    html = calibration_section({"calibration": {"metrics": {"faithfulness": entry}}})
    assert "about 2500 labelled rows in all (2400 more) for an interval 0.02 wide" in html


def test_row_uncertainty_reads_support_uncertain_flags_and_repeats() -> None:
    from ragmeter.report.labels.sample import row_uncertainty

    def claim(support: float, uncertain: bool = False) -> dict:
        part = {"uncertain": uncertain, "rests_on": [{"index": 0, "support": support}]}
        return {"claim": "c", "evidence": {"contexts": part}}

    sure = {"answer_claims": [claim(0.99), claim(0.01)]}
    unsure = {"answer_claims": [claim(0.5), claim(0.9, uncertain=True)]}
    assert (
        row_uncertainty(sure, 0.5)
        < 0.1
        < row_uncertainty(unsure, 0.5)
        == pytest.approx((0.25 + 0.25) ** 0.5 / 2)
    )
    flaky = {**sure, "repeats": {"values": [1.0, 0.0], "spread": 1.0}}
    assert row_uncertainty(flaky, 0.5) == 0.5
    assert row_uncertainty(None, 0.5) == 0.5  # no claims: sqrt(x (1 - x)) of the score
