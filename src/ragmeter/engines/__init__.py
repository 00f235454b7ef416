"""What scores a run's batches: this process, or a Ray cluster.

:func:`ragmeter.evaluate` (``engine="local" | "ray"``) is the one way a run starts; the
runner plans it, opens its rows and results and writes the run record, and the engine only
scores. The local engine is :class:`ragmeter.runner.LocalEngine`; :class:`RayEngine` runs the
runner's ``BatchScorer`` inside a Ray Data pipeline (``pip install 'ragmeter[ray]'``; Ray
itself is imported only when a run starts on it).
"""

from __future__ import annotations

import difflib
from typing import Any

from ragmeter.engines.ray_engine import RayEngine
from ragmeter.errors import ConfigError, param
from ragmeter.runner import Engine, LocalEngine

__all__ = ["ENGINES", "Engine", "LocalEngine", "RayEngine", "engine_named"]

#: Engine names accepted by ``evaluate(engine=...)`` and ``ragmeter evaluate --engine``.
ENGINES: tuple[str, ...] = ("local", "ray")


def engine_named(engine: str | Engine | Any) -> Engine:
    """The engine ``engine`` names (``"local"``, ``"ray"``), or ``engine`` itself."""
    if engine == "local":
        return LocalEngine()
    if engine == "ray":
        return RayEngine()
    if not isinstance(engine, str) and callable(getattr(engine, "scored", None)):
        return engine
    close = difflib.get_close_matches(str(engine), ENGINES, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ConfigError(
        f"{param('engine', 'The engine')} must be one of {', '.join(map(repr, ENGINES))} or an "
        f"engine object (ragmeter.engines.RayEngine(...)). Got {engine!r}.{hint}"
    )
