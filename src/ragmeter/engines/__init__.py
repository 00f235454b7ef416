"""Engines that run the same evaluation as :func:`ragmeter.evaluate` on more than one process.

The local engine is :mod:`ragmeter.runner` itself. ``ray_engine`` runs the runner's
``BatchScorer`` inside a Ray Data pipeline (``pip install 'ragmeter[ray]'``); it is imported
lazily so that ``import ragmeter`` never needs Ray.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragmeter.result import RunResult

__all__ = ["ENGINES", "run_ray"]

#: Engine names accepted by ``ragmeter evaluate --engine``.
ENGINES: tuple[str, ...] = ("local", "ray")


def run_ray(*args: Any, **kwargs: Any) -> RunResult:
    """Run an evaluation on Ray; see :func:`ragmeter.engines.ray_engine.run_ray`."""
    from ragmeter.engines.ray_engine import run_ray as _run_ray

    return _run_ray(*args, **kwargs)
