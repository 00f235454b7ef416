"""Size, page count of plots and signs of the HTML report, on generated runs and real ones.

Generates results of a decent RAG system for every registered metric (the generator the
report's tests use, ``typical_run`` in ``tests/report/conftest.py``: 12 and 10,000 rows by
default), writes the report with and without ``--group-by metadata.topic``, and prints its
size, the number of plots and the signs of risk (shown first / in all). Results files given
on the command line are measured the same way (e.g. the example's offline run).

Run::

    python bench/report_size.py
    ragmeter evaluate examples/rag_sample.jsonl --out /tmp/r.jsonl -q
    python bench/report_size.py /tmp/r.jsonl --group-by metadata.category
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from ragmeter.report.html import write_report

ROOT = Path(__file__).resolve().parent.parent


def _generator() -> tuple[Any, Any]:
    """``typical_run`` and ``write_run`` of the report tests' conftest (not a package)."""
    spec = importlib.util.spec_from_file_location(
        "report_conftest", ROOT / "tests" / "report" / "conftest.py"
    )
    if spec is None or spec.loader is None:
        raise SystemExit("tests/report/conftest.py not found: run from a source checkout")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.typical_run, module.write_run


def measure(results: Path, out: Path, group_by: str | None) -> str:
    start = time.perf_counter()
    write_report(results, out, group_by=group_by)
    seconds = time.perf_counter() - start
    doc = out.read_text(encoding="utf-8")
    signs = re.search(r"<h3[^>]*>Signs of risk \((\d+)\)</h3>", doc)
    shown = doc.split('id="signs"')[1].split("<details>")[0].count('<li class="risk">')
    plots = doc.count('<svg class="pl"')  # not the overview's small histograms
    return (
        f"{out.stat().st_size / 1000:9.1f} KB  {plots:4d} plots  "
        f"signs {shown} shown / {signs.group(1) if signs else 0}  {seconds:6.1f} s  "
        f"group_by={group_by or '-'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="*", type=Path, help="results .jsonl files to measure")
    parser.add_argument("--rows", type=int, nargs="+", default=[12, 10_000])
    parser.add_argument("--group-by", default="metadata.category", help="for RESULTS files")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if not args.results:
            typical_run, write_run = _generator()
            for n in args.rows:
                path = write_run(folder / f"typical{n}.jsonl", *typical_run(n))
                for group_by in (None, "metadata.topic"):
                    print(f"generated {n:6d} rows: {measure(path, folder / 'r.html', group_by)}")
        for path in args.results:
            for group_by in (None, args.group_by):
                print(f"{path}: {measure(path, folder / 'r.html', group_by)}")


if __name__ == "__main__":
    main()
