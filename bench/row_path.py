"""The modules one row passes through in ``ragmeter evaluate FILE -m faithfulness`` (issue 30).

Runs the command on a one-row file in this process with a profile hook and prints every
ragmeter module whose functions ran, in the order first entered: first the set-up (options,
reading, the plan, loading the judge: resolving a metric's name reads every family's specs),
then the row's own path from the batch scorer to the results file. Module bodies run at import
are not counted. The offline judge is the default, so its modules are on the path.

    PYTHONPATH=src python bench/row_path.py [--data examples/rag_sample.jsonl]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="examples/rag_sample.jsonl")
    parser.add_argument("--metric", default="faithfulness")
    args = parser.parse_args()
    first = Path(args.data).read_text(encoding="utf-8").splitlines()[0]
    setup: dict[str, None] = {}
    row: dict[str, None] = {}

    def hook(frame, event, arg):
        if event == "call":
            name = frame.f_globals.get("__name__", "")
            if name.startswith("ragmeter") and frame.f_code.co_name != "<module>":
                if name == "ragmeter.runner.batch_scorer" and not row:
                    row[name] = None
                (row if row else setup).setdefault(name, None)
        return None

    from ragmeter.cli import app

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "one.jsonl"
        data.write_text(first + "\n", encoding="utf-8")
        out = Path(tmp) / "r.jsonl"
        argv = ["evaluate", str(data), "-m", args.metric, "--out", str(out), "-q", "--no-cache"]
        sys.setprofile(hook)
        threading.setprofile(hook)
        try:
            app(argv, standalone_mode=False)
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
    print("set-up:", ", ".join(setup))
    print("the row:", ", ".join(row))
    command = f"ragmeter evaluate -m {args.metric}"
    print(f"{len(setup)} modules in the set-up, {len(row)} on the row's own path ({command})")


if __name__ == "__main__":
    main()
