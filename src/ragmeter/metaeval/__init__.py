"""Meta-evaluation: how far each metric agrees with human judgments and reference tools.

Each suite reads public data by path from a data folder the caller names (``data_dir`` or
``$RAGMETER_SHARED_DATA``; the data is never shipped with the package; its layout is
:data:`ragmeter.metaeval.common.DATA_LAYOUT`) and returns a :class:`SuiteResult` with a
Markdown table and JSON:

- ``ragchecker``: claim and token metrics vs RAGChecker's pairwise human preferences;
- ``msmarco``: context relevance, MS MARCO selected passage vs hard negative;
- ``wikieval``: faithfulness, answer and context relevance on labelled WikiEval pairs;
- ``trec``: ranking metrics vs trec_eval's reference output (exact);
- ``unitxt``: lexical and id-based metrics vs Unitxt's own scores (exact).

``ragmeter meta-eval lfqa`` (:mod:`ragmeter.metaeval.lfqa`) measures faithfulness metrics
against LFQA-Verification's human sentence labels.

>>> from ragmeter.metaeval import SUITES
>>> sorted(SUITES)
['msmarco', 'ragchecker', 'trec', 'unitxt', 'wikieval']
"""

from __future__ import annotations

import importlib
from pathlib import Path

from ragmeter.errors import ConfigError, did_you_mean
from ragmeter.metaeval.common import SuiteOptions, SuiteResult, shared_data_dir

#: Suite name -> module with ``run(data_dir, options) -> SuiteResult``.
SUITES: dict[str, str] = {
    "ragchecker": "ragmeter.metaeval.ragchecker",
    "msmarco": "ragmeter.metaeval.msmarco",
    "wikieval": "ragmeter.metaeval.wikieval",
    "trec": "ragmeter.metaeval.trec",
    "unitxt": "ragmeter.metaeval.unitxt",
}


def run_suite(
    name: str, data_dir: str | Path | None = None, options: SuiteOptions | None = None
) -> SuiteResult:
    """Run one suite on the data folder ``data_dir`` (see :func:`shared_data_dir`)."""
    if name not in SUITES:
        hint = did_you_mean(name, [*SUITES, "all", "lfqa"])
        raise ConfigError(
            f"Unknown suite {name!r}.{hint} Suites: {', '.join(SUITES)}; the CLI also takes "
            "'all' (these) and 'lfqa' (ragmeter.metaeval.lfqa)."
        )
    module = importlib.import_module(SUITES[name])
    return module.run(shared_data_dir(data_dir), options or SuiteOptions())


__all__ = ["SUITES", "SuiteOptions", "SuiteResult", "run_suite", "shared_data_dir"]
