"""Calibrating a run with labels: row-level and claim-level, refusal, errors, the public API."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ragmeter
from ragmeter.errors import DataError
from ragmeter.scoring.calibration import ppi


def claim_row(index: int, verdicts: list[bool], correct: list[bool] | None = None) -> dict:
    claims = []
    for i, v in enumerate(verdicts):
        item = {"claim": f"claim {i}", "contexts": [0] if v else []}
        if correct is not None:
            item["correct"] = correct[i]
        item["evidence"] = {"contexts": {"rests_on": [{"index": 0, "support": 0.9 if v else 0.2}]}}
        claims.append(item)
    faith = sum(verdicts) / len(verdicts) if verdicts else None
    scores = {"faithfulness": faith, "answer_reward": 0.5}
    details = {"faithfulness": {"answer_claims": claims}}
    if correct is not None:
        halluc = sum((not c) and (not v) for c, v in zip(correct, verdicts, strict=True))
        scores["hallucination"] = halluc / len(verdicts)
        details["hallucination"] = {"answer_claims": claims}
    return {"index": index, "id": f"r{index}", "scores": scores, "details": details}


def write_results(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_labels(path: Path, lines: list[dict], selection: str | None = "uniform") -> Path:
    head = [{"selection": selection, "sample": len(lines)}] if selection else []
    path.write_text("".join(json.dumps(x) + "\n" for x in head + lines), encoding="utf-8")
    return path


def test_row_level_labels_give_the_three_means_as_ppi_computes_them(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    n_rows = 300
    judge = np.round(rng.random(n_rows), 3)
    rows = [
        {"index": i, "id": f"r{i}", "scores": {"answer_reward": float(judge[i])}}
        for i in range(n_rows)
    ]
    results = write_results(tmp_path / "res.jsonl", rows)
    labelled = rng.choice(n_rows, 40, replace=False)
    human = np.clip(judge[labelled] - 0.1 + rng.normal(0, 0.05, 40), 0, 1).round(3)
    labels = write_labels(
        tmp_path / "l.jsonl",
        [
            {"id": f"r{i}", "metric": "answer_reward", "value": float(h)}
            for i, h in zip(labelled, human, strict=True)
        ],
    )
    cal = ragmeter.calibrate(results, labels)
    entry = cal.as_dict()["answer_reward"]
    expected = ppi.ppi_mean(human, judge[labelled], judge)
    assert entry["calibrated"]["mean"] == pytest.approx(expected.mean)
    assert entry["calibrated"]["ci"] == pytest.approx(list(expected.ci))
    assert entry["labels"]["mean"] == pytest.approx(human.mean())
    assert entry["judge"]["mean"] == pytest.approx(judge.mean())
    assert entry["bias"]["mean"] == pytest.approx((judge[labelled] - human).mean())
    assert entry["n_labels"] == 40 and entry["n_rows"] == n_rows and entry["level"] == "rows"
    assert entry["agreement"]["spearman"] > 0.9
    assert entry["calibrated"]["ci"][1] - entry["calibrated"]["ci"][0] < (
        entry["labels"]["ci"][1] - entry["labels"]["ci"][0]
    )


def test_claim_labels_recompute_faithfulness_with_the_peoples_verdicts(tmp_path: Path) -> None:
    # Judge: claim 0 supported, claim 1 not, in every row; people disagree on claim 1.
    rows = [claim_row(i, [True, False]) for i in range(20)]
    results = write_results(tmp_path / "res.jsonl", rows)
    lines = []
    for i in range(0, 20, 2):  # every claim of ten rows labelled
        lines.append({"id": f"r{i}", "claim": 0, "label": "supported"})
        lines.append({"id": f"r{i}", "claim": 1, "label": "supported"})
    cal = ragmeter.calibrate(results, write_labels(tmp_path / "l.jsonl", lines))
    entry = cal.as_dict()["faithfulness"]
    assert entry["level"] == "claims" and entry["n_labels"] == 20
    assert entry["judge"]["mean"] == pytest.approx(0.5)
    assert entry["labels"]["mean"] == pytest.approx(1.0)
    assert entry["calibrated"]["mean"] == pytest.approx(1.0)
    kind = entry["agreement"]["answer claims against the contexts"]
    assert kind["n"] == 20
    assert kind["people_supported_when_judge_supported"] == 1.0
    assert kind["people_supported_when_judge_did_not"] == 1.0
    assert "recomputed with the people's verdicts" in entry["how"]


def test_unlabelled_claims_of_a_labelled_row_take_the_corrected_rate(tmp_path: Path) -> None:
    rows = [claim_row(i, [True, False, False]) for i in range(10)]
    results = write_results(tmp_path / "res.jsonl", rows)
    lines = [{"id": "r0", "claim": 0, "label": "not_supported"}]
    lines += [{"id": f"r{i}", "claim": 1, "label": "supported"} for i in range(1, 4)]
    cal = ragmeter.calibrate(results, write_labels(tmp_path / "l.jsonl", lines))
    entry = cal["faithfulness"]
    # Judge-supported claims: 1 labelled, not supported -> rate (0 + 1) / (1 + 1) = 0.5.
    # Judge-unsupported claims: 3 labelled, supported -> rate (3 + 0) / (3 + 1) = 0.75.
    # Row r0: claim 0 people 0, claims 1 and 2 unlabelled, judge 0 -> 0.75 each.
    # Rows r1..r3: claim 0 unlabelled, judge 1 -> 0.5; claim 1 people 1; claim 2 -> 0.75.
    assert entry.labels.mean == pytest.approx(((0 + 0.75 + 0.75) + 3 * (0.5 + 1 + 0.75)) / 3 / 4)


def test_hallucination_combines_labelled_and_judged_verdict_kinds(tmp_path: Path) -> None:
    rows = [claim_row(i, [False, False], correct=[False, True]) for i in range(6)]
    results = write_results(tmp_path / "res.jsonl", rows)
    lines = [{"id": f"r{i}", "claim": c, "label": "supported"} for i in range(3) for c in (0, 1)]
    cal = ragmeter.calibrate(results, write_labels(tmp_path / "l.jsonl", lines))
    entry = cal.as_dict()["hallucination"]
    # The judge: claim 0 wrong and in no context -> hallucination 0.5 per row; people say both
    # claims are in the contexts, so no claim is unsupported: 0.
    assert entry["judge"]["mean"] == pytest.approx(0.5)
    assert entry["labels"]["mean"] == pytest.approx(0.0)
    assert "judge's verdicts kept for answer claims against the reference" in entry["how"]


def test_stratified_labels_are_refused_for_estimates(tmp_path: Path) -> None:
    rows = [claim_row(i, [True, False]) for i in range(10)]
    results = write_results(tmp_path / "res.jsonl", rows)
    lines = [{"id": f"r{i}", "claim": c, "label": "supported"} for i in range(5) for c in (0, 1)]
    labels = write_labels(tmp_path / "l.jsonl", lines, selection="stratified")
    cal = ragmeter.calibrate(results, labels)
    entry = cal.as_dict()["faithfulness"]
    assert entry["calibrated"]["mean"] is None and entry["labels"]["mean"] is None
    assert "not a uniform random sample" in entry["calibrated"]["refused"]
    assert entry["judge"]["mean"] == pytest.approx(0.5)
    assert any("No labels-only or calibrated mean" in note for note in cal.notes)


def test_unknown_rows_claims_and_metrics_name_the_line(tmp_path: Path) -> None:
    results = write_results(tmp_path / "res.jsonl", [claim_row(i, [True]) for i in range(3)])
    cases = [
        ({"id": "r9", "claim": 0, "label": "supported"}, r"line 2: row 'r9' is not in the results"),
        (
            {"id": "r1", "claim": 3, "label": "supported"},
            r"line 2: row 'r1' has 1 answer claim\(s\) \(0 to 0\); the label names claim 3",
        ),
        (
            {"id": "r1", "metric": "faithfulnes", "value": 1},
            r"line 2: metric 'faithfulnes' is not in the results. Did you mean 'faithfulness'",
        ),
        (
            {"id": "r1", "metric": "faithfulness", "value": 3},
            r"line 2: faithfulness lies in \[0, 1\]",
        ),
    ]
    for k, (line, message) in enumerate(cases):
        labels = write_labels(tmp_path / f"l{k}.jsonl", [line])
        with pytest.raises(DataError, match=message):
            ragmeter.calibrate(results, labels)


def test_a_row_is_found_by_its_index_when_it_has_no_id(tmp_path: Path) -> None:
    rows = [{"index": i, "id": None, "scores": {"answer_reward": i / 10}} for i in range(5)]
    results = write_results(tmp_path / "res.jsonl", rows)
    labels = write_labels(
        tmp_path / "l.jsonl",
        [
            {"id": 3, "metric": "answer_reward", "value": 0.1},
            {"id": 4, "metric": "answer_reward", "value": 0.2},
        ],
    )
    entry = ragmeter.calibrate(results, labels).as_dict()["answer_reward"]
    assert entry["bias"]["mean"] == pytest.approx(((0.3 - 0.1) + (0.4 - 0.2)) / 2)


def test_calibrates_a_run_in_memory(tmp_path: Path) -> None:
    from ragmeter.judges.base import Analysis
    from ragmeter.testing import FakeJudge, all_entailed

    judge = FakeJudge(analyze=Analysis(answer_claims=("A.", "B.")), verify=all_entailed)
    data = [
        {"question_id": f"q{i}", "question": "?", "answer": "A. B.", "contexts": ["A. B."]}
        for i in range(8)
    ]
    result = ragmeter.evaluate(data, ["faithfulness"], judge=judge, progress=False)
    lines = [{"id": f"q{i}", "claim": 1, "label": "not_supported"} for i in range(4)]
    cal = ragmeter.calibrate(result, write_labels(tmp_path / "l.jsonl", lines))
    assert cal["faithfulness"].judge.mean == pytest.approx(1.0)
    # Claim 1 not supported by people; claim 0 takes the corrected rate of judge-supported
    # claims, (0 + 1) / (4 + 1) = 0.2: row value (0.2 + 0) / 2.
    assert cal["faithfulness"].labels.mean == pytest.approx(0.1)


def test_the_one_pass_reader_keeps_resumed_rows_and_skips_a_cut_off_line(tmp_path: Path) -> None:
    rows = [
        {
            "index": 0,
            "id": "r0",
            "scores": {"answer_reward": None},
            "failures": {"answer_reward": "timeout"},
            "failure_causes": {"answer_reward": "infrastructure"},
        },
        {"index": 1, "id": "r1", "scores": {"answer_reward": 0.2}},
        {"index": 0, "id": "r0", "scores": {"answer_reward": 0.6}},
    ]
    path = write_results(tmp_path / "res.jsonl", rows)
    with path.open("a") as f:
        f.write('{"index": 2, "id": "r2", "sco')  # killed mid-line
    labels = write_labels(
        tmp_path / "l.jsonl",
        [
            {"id": "r0", "metric": "answer_reward", "value": 0.5},
            {"id": "r1", "metric": "answer_reward", "value": 0.1},
        ],
    )
    entry = ragmeter.calibrate(path, labels).as_dict()["answer_reward"]
    assert entry["n_rows"] == 2
    assert entry["judge"]["mean"] == pytest.approx(0.4)
    assert entry["bias"]["mean"] == pytest.approx(0.1)
    twice = write_results(tmp_path / "twice.jsonl", [rows[1], rows[1]])
    with pytest.raises(DataError, match="line 2, field 'index': row 1 is already on line 1"):
        ragmeter.calibrate(twice, labels)


def _calibrated_run(tmp_path: Path, name: str, judge: np.ndarray, labels: dict[int, float]) -> Path:
    from ragmeter.report.calibration.compare import compare_calibrations  # noqa: F401 (import check)

    rows = [
        {"index": i, "id": f"r{i}", "scores": {"answer_reward": float(v)}}
        for i, v in enumerate(judge)
    ]
    path = write_results(tmp_path / f"{name}.jsonl", rows)
    label_file = write_labels(
        tmp_path / f"{name}-labels.jsonl",
        [{"id": f"r{i}", "metric": "answer_reward", "value": v} for i, v in labels.items()],
    )
    record = ragmeter.calibrate(path, label_file).as_record()
    Path(f"{path}.run.json").write_text(json.dumps({"calibration": record}), encoding="utf-8")
    return path


def test_compare_pairs_two_runs_labelled_on_the_same_rows(tmp_path: Path) -> None:
    from ragmeter.report.calibration.compare import compare_calibrations

    rng = np.random.default_rng(5)
    truth_a = rng.random(400)
    truth_b = np.clip(truth_a + 0.1, 0, 1)  # B is better by about 0.1 on every row
    judge_a = np.clip(truth_a + 0.2 + rng.normal(0, 0.05, 400), 0, 1).round(4)
    judge_b = np.clip(truth_b + 0.05 + rng.normal(0, 0.05, 400), 0, 1).round(4)
    rows = rng.choice(400, 60, replace=False)
    a = _calibrated_run(tmp_path, "a", judge_a, {int(i): float(truth_a[i]) for i in rows})
    b = _calibrated_run(tmp_path, "b", judge_b, {int(i): float(truth_b[i]) for i in rows})
    diff = compare_calibrations(a, b)["answer_reward"]
    assert diff["paired"] and diff["n_shared_labels"] == 60 and diff["n_paired_rows"] == 400
    true_diff = float((truth_b - truth_a).mean())
    low, high = diff["calibrated"]["ci"]
    assert low <= true_diff <= high
    # The judges' own difference is off by their changed bias (0.05 - 0.2).
    assert diff["judge"]["mean"] < true_diff - 0.1
    # Unpaired (different rows labelled): wider than the paired interval.
    other = [i for i in range(400) if i not in set(rows.tolist())][:60]
    b2 = _calibrated_run(tmp_path, "b2", judge_b, {i: float(truth_b[i]) for i in other})
    unpaired = compare_calibrations(a, b2)["answer_reward"]
    assert not unpaired["paired"] and unpaired["n_shared_labels"] == 0
    assert unpaired["calibrated"]["ci"][1] - unpaired["calibrated"]["ci"][0] > high - low
    from typer.testing import CliRunner

    from ragmeter.cli import app

    res = CliRunner().invoke(app, ["compare", str(a), str(b)])
    assert "Calibrated with human labels (B - A, 95% interval):" in res.output
    assert "paired on 60 rows labelled in both runs" in res.output


def test_labels_no_metric_reads_are_noted(tmp_path: Path) -> None:
    results = write_results(tmp_path / "res.jsonl", [claim_row(i, [True, False]) for i in range(4)])
    lines = [
        {"id": "r0", "claim": 0, "label": "supported"},
        {"id": "r1", "claim": 1, "label": "supported"},
        {"id": "r1", "claim": 0, "label": "supported", "against": "reference"},
    ]
    cal = ragmeter.calibrate(results, write_labels(tmp_path / "l.jsonl", lines))
    assert list(cal.metrics) == ["faithfulness"]
    assert any(
        "1 claim label(s) on answer claims against the reference match no metric" in note
        for note in cal.notes
    )


def test_the_report_section_shows_estimates_and_refusals(tmp_path: Path) -> None:
    from ragmeter.report.calibration.section import calibration_section

    results = write_results(tmp_path / "res.jsonl", [claim_row(i, [True, False]) for i in range(6)])
    lines = [{"id": f"r{i}", "claim": 1, "label": "supported"} for i in range(4)]
    uniform = ragmeter.calibrate(results, write_labels(tmp_path / "u.jsonl", lines))
    page = calibration_section({"calibration": uniform.as_record()})
    assert "Calibration against human labels" in page and "faithfulness" in page
    assert f"{uniform['faithfulness'].calibrated.mean:.3f}" in page
    strat = ragmeter.calibrate(results, write_labels(tmp_path / "s.jsonl", lines, "stratified"))
    page = calibration_section({"calibration": strat.as_record()})
    assert "refused" in page and "not a uniform random sample" in page
    assert calibration_section({}) == ""


def recall_row(index: int) -> dict:
    """Two references of 2 and 1 claims; the judge finds only the first in the answer."""
    refs = [
        [
            {"claim": "ref 0 claim 0", "in_answer": True},
            {"claim": "ref 0 claim 1", "in_answer": False},
        ],
        [{"claim": "ref 1 claim 0", "in_answer": False}],
    ]
    return {
        "index": index,
        "id": f"r{index}",
        "scores": {"claim_recall": 1 / 3},
        "details": {"claim_recall": {"reference_claims": refs}},
    }


def test_reference_claim_labels_calibrate_claim_recall(tmp_path: Path) -> None:
    results = write_results(tmp_path / "res.jsonl", [recall_row(i) for i in range(10)])
    # Claim 2 is the second reference's first claim: indexes run over every reference in turn.
    lines = [
        {"id": f"r{i}", "claim": c, "label": "supported", "source": "reference"}
        for i in range(5)
        for c in (0, 1, 2)
    ]
    entry = ragmeter.calibrate(results, write_labels(tmp_path / "l.jsonl", lines))["claim_recall"]
    assert entry.level == "claims" and entry.n_labels == 15 and entry.n_labelled_rows == 5
    assert entry.judge.mean == pytest.approx(1 / 3)
    assert entry.labels.mean == pytest.approx(1.0)
    kind = entry.agreement["reference claims against the answer"]
    assert kind["n"] == 15
    assert kind["people_supported_when_judge_did_not"] == 1.0
    too_far = [{"id": "r0", "claim": 3, "label": "supported", "source": "reference"}]
    with pytest.raises(DataError, match=r"line 2: row 'r0' has 3 reference claim\(s\)"):
        ragmeter.calibrate(results, write_labels(tmp_path / "bad.jsonl", too_far))


def test_the_labels_key_says_whether_ids_are_row_ids_or_indexes(tmp_path: Path) -> None:
    # Row 0's id is "3"; rows 1 and 2 share an id, so a labelling page names rows by index.
    ids = ["3", "a", "a", "b"]
    rows = [
        {"index": i, "id": row_id, "scores": {"answer_reward": float(i == 3)}}
        for i, row_id in enumerate(ids)
    ]
    results = write_results(tmp_path / "res.jsonl", rows)

    def bias(key: str | None) -> float:
        head = {"selection": "uniform", "sample": 2, **({"key": key} if key else {})}
        path = tmp_path / f"l-{key}.jsonl"
        lines = [head, {"id": 3, "metric": "answer_reward", "value": 1.0}]
        lines.append({"id": 1, "metric": "answer_reward", "value": 0.0})
        path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        return ragmeter.calibrate(results, path)["answer_reward"].bias.mean

    # "key": "index": id 3 is row 3 (judge 1) and id 1 row 1 (judge 0): no bias.
    assert bias("index") == pytest.approx(0.0)
    # Without a key an id is a row id first: "3" is row 0 (judge 0), so the judge looks low.
    assert bias(None) == pytest.approx(-0.5)
    # "key": "id": "1" is no row's id.
    with pytest.raises(DataError, match=r"row '1' is not in the results.*\('key': 'id'\)"):
        bias("id")
    head = {"selection": "uniform", "key": "row"}
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(head) + '\n{"id": 1, "metric": "answer_reward", "value": 0}\n')
    with pytest.raises(DataError, match="'key' says what the labels' ids name.*Got 'row'"):
        ragmeter.calibrate(results, bad)
