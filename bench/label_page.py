"""Size and opening time of the labelling page (``ragmeter label``): the issue's target is
50 rows of 5 claims each, under 2 MB, open in under 1 s.

Writes a generated run (``--rows`` rows, ``--claims`` answer claims each, ``--contexts``
contexts of about ``--context-chars`` characters each, every claim's evidence a span of one
context), makes the page of all its rows, and opens it in headless Chromium ``--repeats``
times. The page records ``performance.now()`` when it has built every row (the time since
navigation started: parsing, the script, the rows' elements); printed as the median. The
baseline, measured the same way in the same run, is an empty page whose script only records
the time: what any page costs in this browser.

Run::

    python bench/label_page.py
    python bench/label_page.py --rows 500
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from ragmeter.report.labels.page import write_label_page

WORDS = [
    *("the", "river", "city", "bridge", "council", "built", "stone", "in", "year", "north"),
    *("market", "trade", "wool", "port", "merchants", "grew", "rich", "during", "century"),
    *("fire", "destroyed", "houses", "rebuilt", "brick", "streets"),
]


def generated_run(folder: Path, rows: int, claims: int, contexts: int, chars: int) -> Path:
    rng = random.Random(0)

    def text(n: int) -> str:
        words: list[str] = []
        while sum(len(w) + 1 for w in words) < n:
            words.append(rng.choice(WORDS))
        return " ".join(words).capitalize() + "."

    lines = []
    for i in range(rows):
        ctx = [text(chars) for _ in range(contexts)]
        answer_claims = []
        for c in range(claims):
            j = rng.randrange(contexts)
            start = rng.randrange(0, chars // 2)
            span = [start, start + rng.randrange(40, 160)]
            answer_claims.append(
                {
                    "claim": text(80),
                    "evidence": {
                        "contexts": {
                            "entailed": c % 3 != 0,
                            "rests_on": [{"index": j, "support": 0.8, "spans": [span]}],
                        }
                    },
                }
            )
        lines.append(
            {
                "index": i,
                "id": f"row-{i}",
                "scores": {"faithfulness": round(rng.random(), 3)},
                "details": {"faithfulness": {"answer_claims": answer_claims}},
                "question": text(90),
                "answer": " ".join(c["claim"] for c in answer_claims),
                "contexts": ctx,
            }
        )
    path = folder / "results.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def open_ms(chromium: str, page: Path, profile: Path) -> float:
    """Milliseconds from navigation to the page's ``data-render-ms`` mark."""
    dom = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--dump-dom",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    found = re.search(r'data-render-ms="([\d.]+)"', dom)
    if found is None:
        raise SystemExit(f"{page}: the page recorded no render time (did its script run?)")
    return float(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=50)
    parser.add_argument("--claims", type=int, default=5)
    parser.add_argument("--contexts", type=int, default=5)
    parser.add_argument("--context-chars", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    chromium = next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p),
        None,
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        results = generated_run(folder, args.rows, args.claims, args.contexts, args.context_chars)
        page = folder / "labels.html"
        built = write_label_page(results, page, sample=args.rows, seed=0)
        size = page.stat().st_size
        print(
            f"labelling page: {built.rows} rows, {built.items} claims, {args.contexts} contexts "
            f"of ~{args.context_chars} characters each: {size / 1e6:.3f} MB ({size:,} bytes)"
        )
        if chromium is None:
            print("opening time: not measured (no chromium on PATH)")
            return
        empty = folder / "empty.html"
        empty.write_text(
            "<!DOCTYPE html><html><body><script>document.documentElement.setAttribute("
            "'data-render-ms', performance.now().toFixed(1))</script></body></html>",
            encoding="utf-8",
        )
        times, base = [], []
        for k in range(args.repeats):
            base.append(open_ms(chromium, empty, folder / f"profile-e{k}"))
            times.append(open_ms(chromium, page, folder / f"profile-p{k}"))
        print(
            f"opens in {statistics.median(times):.0f} ms (median of {args.repeats}; "
            f"min {min(times):.0f}, max {max(times):.0f}); an empty page in the same browser: "
            f"{statistics.median(base):.0f} ms"
        )


if __name__ == "__main__":
    main()
