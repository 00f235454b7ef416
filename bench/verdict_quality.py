"""The offline judge's claim verdicts on the realistic RAG set, against issue 35's targets.

Scores ``bench/data/realistic_rag.jsonl`` (made by ``bench/data/realistic_rag.py``: seven
domains of fictional entities, same-domain distractor passages, short references, answers of
known faithfulness) with ``ragmeter.evaluate`` as a new user would: the default judge, no
API, no cache (the verdicts are the code's of now). Metrics: faithfulness,
faithfulness_support, k_precision, noise_sensitivity_relevant, noise_sensitivity_irrelevant,
claim_precision, claim_recall. Prints:

* AUROC faithful vs unfaithful of faithfulness, faithfulness_support and k_precision, over
  all rows and per domain (a judge tuned on some domains is read on the others);
* the share of unfaithful answers that score faithfulness 1.0, overall and per kind;
* on one-fact faithful answers, the mean noise_sensitivity_relevant (and the share above 0)
  and the mean claim_precision;
* each metric's mean per answer kind;
* issue 35's targets, met or not.

``--examples N`` prints, per failure type, the N worst rows with their claims and each
claim's verdicts (entailed, support, what decided, which passage; "gold" marks the gold
passage) read from the results' details.

Run::

    PYTHONPATH=src .venv/bin/python bench/verdict_quality.py [--data PATH] [--limit N]
        [--domains a,b] [--ids a,b] [--json] [--examples N] [--save PATH] [--workers N]

``PYTHONPATH`` picks which ragmeter is measured: ``src`` for the working tree, or a commit's
exported ``src`` (``git archive HEAD src | tar -x -C /tmp/head``, then
``PYTHONPATH=/tmp/head/src``) to measure that commit alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data" / "realistic_rag.jsonl"
METRICS = (
    "faithfulness",
    "faithfulness_support",
    "k_precision",
    "noise_sensitivity_relevant",
    "noise_sensitivity_irrelevant",
    "claim_precision",
    "claim_recall",
)
RANKED = ("faithfulness", "faithfulness_support", "k_precision")
#: issue 35's targets: (name, measure key, comparison, bound)
TARGETS = (
    ("unfaithful answers at faithfulness 1.0", "unfaithful_at_1", "<=", 0.05),
    ("faithfulness AUROC", "auroc_faithfulness", ">=", 0.95),
    ("noise_sensitivity_relevant, one-fact faithful", "ns_relevant_one_fact", "<=", 0.05),
    ("claim_precision, one-fact faithful", "claim_precision_one_fact", ">=", 0.90),
)


def load(
    path: Path, *, limit: int | None = None, domains: Sequence[str] | None = None
) -> list[dict]:
    """The set's rows, those of ``domains`` only when given, the first ``limit`` of them."""
    with path.open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines if line.strip()]
    if domains:
        known = sorted({r["domain"] for r in rows})
        unknown = [d for d in domains if d not in known]
        if unknown:
            raise SystemExit(f"Unknown domain(s) {unknown}; the set has {known}.")
        rows = [r for r in rows if r["domain"] in domains]
    return rows[:limit] if limit else rows


def auroc(scores: Sequence[float], labels: Sequence[bool]) -> float | None:
    """P(a positive scores above a negative), ties counting one half; None without both."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return None
    # rank-sum with mid-ranks for ties
    order = sorted(range(len(scores)), key=lambda i: scores[i])
    ranks = [0.0] * len(scores)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    rank_pos = sum(r for r, y in zip(ranks, labels, strict=True) if y)
    return (rank_pos - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def mean(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def share(flags: Iterable[bool]) -> float | None:
    flags = list(flags)
    return sum(flags) / len(flags) if flags else None


def score(rows: list[dict], *, workers: int | None = None) -> tuple[list[dict[str, Any]], float]:
    """Each row's scores and details (by input order), and the seconds the run took."""
    try:  # the installed ragmeter, or the one PYTHONPATH names (another commit's src)
        import ragmeter
    except ImportError:
        sys.path.insert(0, str(ROOT / "src"))
        import ragmeter

    settings = ragmeter.Settings(use_cache=False, workers=workers)
    started = time.perf_counter()
    result = ragmeter.evaluate(rows, metrics=list(METRICS), settings=settings, progress=False)
    seconds = time.perf_counter() - started
    by_index = {r.index: r for r in result.rows}
    out = []
    for i in range(len(rows)):
        r = by_index[i]
        out.append(
            {"scores": dict(r.scores), "details": dict(r.details), "failures": dict(r.failures)}
        )
    return out, seconds


def measures(rows: list[dict], results: list[dict[str, Any]]) -> dict[str, Any]:
    """Every number the bench prints, as one JSON-able dict."""
    m: dict[str, Any] = {"rows": len(rows)}

    def values(
        metric: str, keep: Callable[[dict], bool] = lambda r: True
    ) -> list[tuple[float | None, dict]]:
        return [
            (res["scores"].get(metric), r) for r, res in zip(rows, results, strict=True) if keep(r)
        ]

    def auroc_of(metric: str, keep: Callable[[dict], bool] = lambda r: True) -> float | None:
        pairs = [(v, r["faithful"]) for v, r in values(metric, keep) if v is not None]
        return auroc([v for v, _ in pairs], [y for _, y in pairs]) if pairs else None

    domains = sorted({r["domain"] for r in rows})
    kinds = sorted({r["kind"] for r in rows}, key=lambda k: (not k.startswith("faithful"), k))
    m["undefined"] = {k: sum(v is None for v, _ in values(k)) for k in METRICS}
    m["failed"] = sum(bool(res["failures"]) for res in results)
    m["auroc"] = {k: auroc_of(k) for k in RANKED}
    m["auroc_by_domain"] = {
        d: {k: auroc_of(k, lambda r, d=d: r["domain"] == d) for k in RANKED} for d in domains
    }
    m["auroc_without_domain"] = {
        d: {k: auroc_of(k, lambda r, d=d: r["domain"] != d) for k in RANKED} for d in domains
    }
    m["auroc_faithfulness"] = m["auroc"]["faithfulness"]
    at_1 = [(v == 1.0, r) for v, r in values("faithfulness", lambda r: not r["faithful"])]
    m["unfaithful_at_1"] = share(f for f, _ in at_1)
    m["unfaithful_at_1_by_kind"] = {
        k: share(f for f, r in at_1 if r["kind"] == k) for k in kinds if k not in _FAITHFUL
    }
    m["unfaithful_at_1_by_domain"] = {
        d: share(f for f, r in at_1 if r["domain"] == d) for d in domains
    }

    def one_fact_faithful(r: dict) -> bool:
        return r["faithful"] and r["one_fact"]

    ns = [v for v, _ in values("noise_sensitivity_relevant", one_fact_faithful)]
    cp = [v for v, _ in values("claim_precision", one_fact_faithful)]
    m["one_fact_faithful_rows"] = len(ns)
    m["ns_relevant_one_fact"] = mean(ns)
    m["ns_relevant_one_fact_above_0"] = share(v is not None and v > 0 for v in ns)
    m["claim_precision_one_fact"] = mean(cp)
    m["ns_relevant_one_fact_by_domain"] = {
        d: mean(
            v
            for v, r in values("noise_sensitivity_relevant", one_fact_faithful)
            if r["domain"] == d
        )
        for d in domains
    }
    m["claim_precision_one_fact_by_domain"] = {
        d: mean(v for v, r in values("claim_precision", one_fact_faithful) if r["domain"] == d)
        for d in domains
    }
    forms = sorted({r.get("reference_form", "?") for r in rows})

    def of_form(form: str, keep: Callable[[dict], bool]) -> Callable[[dict], bool]:
        return lambda r: r.get("reference_form", "?") == form and keep(r)

    m["by_reference_form"] = {
        form: {
            "one_fact_faithful_rows": len(
                values("claim_precision", of_form(form, one_fact_faithful))
            ),
            "ns_relevant_one_fact": mean(
                v for v, _ in values("noise_sensitivity_relevant", of_form(form, one_fact_faithful))
            ),
            "claim_precision_one_fact": mean(
                v for v, _ in values("claim_precision", of_form(form, one_fact_faithful))
            ),
            "claim_recall_faithful": mean(
                v for v, _ in values("claim_recall", of_form(form, lambda r: r["faithful"]))
            ),
            "claim_recall_undefined": sum(
                v is None for v, _ in values("claim_recall", of_form(form, lambda r: True))
            ),
        }
        for form in forms
    }
    m["ns_relevant_faithful_vs_unfaithful"] = {
        "faithful": mean(v for v, r in values("noise_sensitivity_relevant") if r["faithful"]),
        "unfaithful": mean(v for v, r in values("noise_sensitivity_relevant") if not r["faithful"]),
    }
    m["mean_by_kind"] = {
        k: {metric: mean(v for v, r in values(metric) if r["kind"] == k) for metric in METRICS}
        for k in kinds
    }
    m["targets"] = {
        name: {
            "value": m[key],
            "goal": f"{op} {bound}",
            "met": m[key] is not None and (m[key] <= bound if op == "<=" else m[key] >= bound),
        }
        for name, key, op, bound in TARGETS
    }
    return m


_FAITHFUL = {"faithful", "faithful_paraphrase", "faithful_long"}
_SHORT = {
    "faithfulness": "faith",
    "faithfulness_support": "f_supp",
    "k_precision": "k_prec",
    "noise_sensitivity_relevant": "ns_rel",
    "noise_sensitivity_irrelevant": "ns_irr",
    "claim_precision": "c_prec",
    "claim_recall": "c_rec",
}


def _fmt(x: Any, width: int = 7) -> str:
    if x is None:
        return "-".rjust(width)
    if isinstance(x, float):
        return f"{x:.3f}".rjust(width)
    return str(x).rjust(width)


def _table(
    title: str, header: Sequence[str], rows: Iterable[tuple[str, Sequence[Any]]], first: int = 24
) -> None:
    print(f"\n{title}")
    widths = [max(7, len(h)) for h in header]
    print(" " * first + " ".join(h.rjust(w) for h, w in zip(header, widths, strict=True)))
    for name, cells in rows:
        print(name.ljust(first) + " ".join(_fmt(c, w) for c, w in zip(cells, widths, strict=True)))


def print_report(m: dict[str, Any], seconds: float) -> None:
    print(f"ragmeter from {m['ragmeter']}")
    print(
        f"{m['rows']} rows in {seconds:.0f} s; rows with a failed metric: {m['failed']}; "
        f"undefined: " + ", ".join(f"{k} {v}" for k, v in m["undefined"].items() if v)
    )
    _table(
        "AUROC faithful vs unfaithful, per domain and over all other domains (w/o)",
        [*(_SHORT[k] for k in RANKED), *(f"w/o {_SHORT[k]}" for k in RANKED)],
        [("all", [m["auroc"][k] for k in RANKED] + [None] * 3)]
        + [
            (
                d,
                [m["auroc_by_domain"][d][k] for k in RANKED]
                + [m["auroc_without_domain"][d][k] for k in RANKED],
            )
            for d in m["auroc_by_domain"]
        ],
    )
    _table(
        "Unfaithful answers at faithfulness 1.0",
        ["share"],
        [("all", [m["unfaithful_at_1"]])]
        + [(f"kind {k}", [v]) for k, v in m["unfaithful_at_1_by_kind"].items()]
        + [(f"domain {d}", [v]) for d, v in m["unfaithful_at_1_by_domain"].items()],
    )
    _table(
        f"One-fact faithful answers ({m['one_fact_faithful_rows']} rows)",
        ["ns_rel", "ns_rel>0", "claim_precision"],
        [
            (
                "all",
                [
                    m["ns_relevant_one_fact"],
                    m["ns_relevant_one_fact_above_0"],
                    m["claim_precision_one_fact"],
                ],
            )
        ]
        + [
            (
                d,
                [
                    m["ns_relevant_one_fact_by_domain"][d],
                    None,
                    m["claim_precision_one_fact_by_domain"][d],
                ],
            )
            for d in m["ns_relevant_one_fact_by_domain"]
        ],
    )
    _table(
        "By reference form: one-fact faithful answers, claim_recall on faithful ones, "
        "claim_recall undefined (all rows)",
        ["rows", "ns_rel", "c_prec", "c_rec", "c_rec undef"],
        [
            (
                form,
                [
                    v["one_fact_faithful_rows"],
                    v["ns_relevant_one_fact"],
                    v["claim_precision_one_fact"],
                    v["claim_recall_faithful"],
                    v["claim_recall_undefined"],
                ],
            )
            for form, v in m["by_reference_form"].items()
        ],
    )
    fu = m["ns_relevant_faithful_vs_unfaithful"]
    print(
        f"\nnoise_sensitivity_relevant mean: faithful {_fmt(fu['faithful']).strip()}, "
        f"unfaithful {_fmt(fu['unfaithful']).strip()} (should be lower on faithful)"
    )
    _table(
        "Mean per answer kind",
        [_SHORT[k] for k in METRICS],
        [(k, [v[metric] for metric in METRICS]) for k, v in m["mean_by_kind"].items()],
    )
    print("\nIssue 35 targets")
    for name, t in m["targets"].items():
        print(
            f"  {name:48s} {_fmt(t['value']).strip():>7s}  goal {t['goal']:7s}  "
            f"{'met' if t['met'] else 'NOT MET'}"
        )


# ---------------------------------------------------------------------------- examples


def _claims(details: dict[str, Any], key: str = "answer_claims") -> list[Any]:
    """The claims (``answer_claims`` or ``reference_claims``) of the first metric whose
    details hold them; noise sensitivity's carry both relations of an answer claim."""
    for name in ("noise_sensitivity_relevant", "claim_precision", "claim_recall", "faithfulness"):
        claims = (details.get(name) or {}).get(key)
        if claims:
            return claims
    return []


def _relation_text(rel: dict[str, Any] | None, gold: int | None, what: str) -> str:
    if not rel:
        return f"{what}: -"
    parts = []
    for cell in rel.get("rests_on", []):
        idx = cell.get("index")
        tag = f"{what[0]}{idx}" + ("*" if what == "contexts" and idx == gold else "")
        support = cell.get("support")
        parts.append(
            f"{tag} {support:.2f} {cell.get('decided_by', '?')}"
            if support is not None
            else f"{tag} {cell.get('decided_by', '?')}"
        )
    return f"{what}: {'ENTAILED' if rel.get('entailed') else 'not'} [{'; '.join(parts)}]"


def print_examples(rows: list[dict], results: list[dict[str, Any]], n: int) -> None:
    def pick(keep: Callable[[dict, dict], bool], key: Callable[[dict], float]) -> list[int]:
        idx = [
            i
            for i, (r, res) in enumerate(zip(rows, results, strict=True))
            if keep(r, res["scores"])
        ]
        return sorted(idx, key=lambda i: key(results[i]["scores"]))[:n]

    def s(scores: dict, k: str) -> float:
        v = scores.get(k)
        return -1.0 if v is None else v

    failures = {
        "unfaithful answer at faithfulness 1.0 (highest support first)": pick(
            lambda r, sc: not r["faithful"] and sc.get("faithfulness") == 1.0,
            lambda sc: -s(sc, "faithfulness_support"),
        ),
        "faithful answer below faithfulness 1.0 (lowest first)": pick(
            lambda r, sc: (
                r["faithful"] and sc.get("faithfulness") is not None and sc["faithfulness"] < 1
            ),
            lambda sc: s(sc, "faithfulness"),
        ),
        "one-fact faithful answer with noise_sensitivity_relevant > 0": pick(
            lambda r, sc: (
                r["faithful"] and r["one_fact"] and (sc.get("noise_sensitivity_relevant") or 0) > 0
            ),
            lambda sc: -s(sc, "noise_sensitivity_relevant"),
        ),
        "one-fact faithful answer with claim_precision < 1": pick(
            lambda r, sc: (
                r["faithful"]
                and r["one_fact"]
                and sc.get("claim_precision") is not None
                and sc["claim_precision"] < 1
            ),
            lambda sc: s(sc, "claim_precision"),
        ),
    }
    for title, picked in failures.items():
        print(f"\n=== {title}: {len(picked)} shown")
        for i in picked:
            r, res = rows[i], results[i]
            gold = r["contexts_ids"].index(r["reference_context_ids"][0])
            sc = res["scores"]
            print(
                f"\n[{r['id']}] {r['domain']} / {r['kind']} / {r['attribute']}   "
                + " ".join(f"{k}={_fmt(sc.get(k)).strip()}" for k in METRICS)
            )
            print(f"  Q: {r['question']}")
            print(f"  R: {r['reference_answers'][0]}")
            print(f"  A: {r['answer']}")
            print(f"  gold passage c{gold}: {r['contexts'][gold]}")
            for c in _claims(res["details"]):
                ev = c.get("evidence") or {}
                print(f"  - claim: {c['claim']}")
                print(f"      {_relation_text(ev.get('contexts'), gold, 'contexts')}")
                if "references" in ev:
                    print(f"      {_relation_text(ev.get('references'), None, 'references')}")
            for reference in _claims(res["details"], "reference_claims"):
                for c in reference:
                    ev = c.get("evidence") or {}
                    print(f"  - reference claim: {c['claim']}")
                    print(f"      {_relation_text(ev.get('contexts'), gold, 'contexts')}")
                    if "answer" in ev:
                        print(f"      {_relation_text(ev.get('answer'), None, 'answer')}")
            if res["failures"]:
                print(f"  failures: {res['failures']}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument(
        "--limit", type=int, default=None, help="the first N rows (domains and kinds interleave)"
    )
    parser.add_argument("--domains", default=None, help="comma-separated domains to keep")
    parser.add_argument("--ids", default=None, help="comma-separated row ids to keep")
    parser.add_argument("--json", action="store_true", help="print the measures as JSON")
    parser.add_argument(
        "--save",
        type=Path,
        default=None,
        help="write each row's scores as JSON lines (to diff runs)",
    )
    parser.add_argument("--examples", type=int, default=0, help="the N worst rows per failure type")
    parser.add_argument(
        "--workers", type=int, default=1, help="cores for the offline judge (default 1)"
    )
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error(f"--limit must be >= 1. Got {args.limit}.")
    domains = [d.strip() for d in args.domains.split(",") if d.strip()] if args.domains else None
    rows = load(args.data, domains=domains)
    if args.ids:
        wanted = {i.strip() for i in args.ids.split(",") if i.strip()}
        missing = sorted(wanted - {r["id"] for r in rows})
        if missing:
            parser.error(f"--ids: no row with id {missing[:5]} in {args.data}.")
        rows = [r for r in rows if r["id"] in wanted]
    rows = rows[: args.limit] if args.limit else rows
    results, seconds = score(rows, workers=args.workers)
    if args.save:
        with args.save.open("w", encoding="utf-8") as out:
            for r, res in zip(rows, results, strict=True):
                keep = (
                    "id",
                    "domain",
                    "kind",
                    "attribute",
                    "reference_form",
                    "faithful",
                    "one_fact",
                )
                record = {k: r.get(k) for k in keep}
                out.write(json.dumps({**record, "scores": res["scores"]}) + "\n")
    m = measures(rows, results)
    m["seconds"] = round(seconds, 1)
    m["ragmeter"] = str(Path(sys.modules["ragmeter"].__file__).parent)
    if args.json:
        print(json.dumps(m, indent=1))
    else:
        print_report(m, seconds)
    if args.examples:
        print_examples(rows, results, args.examples)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
