"""Meta-evaluation suite ``msmarco``: context relevance, MS MARCO positive vs hard negative.

The suite is :mod:`ragmeter.metaeval.msmarco`; ``ragmeter meta-eval msmarco`` runs it too::

    PYTHONPATH=src python bench/meta/msmarco.py [--judge J] [--metrics a,b] [--limit N] [--out DIR]
        [--relevance-dtype {auto,float32,bfloat16}]

``--relevance-dtype`` sets ``RAGMETER_RELEVANCE_DTYPE`` for this run: the numerics of the
context-relevance LM (``auto``: bfloat16 on CPUs with native bfloat16, else float32).
"""

from __future__ import annotations

import argparse
import os
import sys

from common import main


def _pop_dtype(argv: list[str]) -> tuple[str | None, list[str]]:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--relevance-dtype", choices=("auto", "float32", "bfloat16"))
    known, rest = parser.parse_known_args(argv)
    return known.relevance_dtype, rest


if __name__ == "__main__":
    dtype, rest = _pop_dtype(sys.argv[1:])
    if dtype is not None:
        os.environ["RAGMETER_RELEVANCE_DTYPE"] = dtype
    raise SystemExit(main("msmarco", rest))
