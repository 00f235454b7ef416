"""Loading the Python metrics that installed packages declare in the entry point group
``ragmeter.metrics`` (a module or a decorated function: importing it runs its
``@ragmeter.metric`` decorators, which register its metrics).

The registry calls :func:`load_entry_points` the first time it is read; this module does not
read the registry, so the two do not import each other.
"""

from __future__ import annotations

from importlib.metadata import entry_points

from ragmeter.errors import ConfigError, cap_text

__all__ = ["ENTRY_POINT_GROUP", "load_entry_points"]

#: Installed packages declare their metrics' modules (or functions) in this group.
ENTRY_POINT_GROUP = "ragmeter.metrics"


def load_entry_points() -> None:
    """Import every entry point of the group ``ragmeter.metrics``; a failure names the
    package that declared it."""
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            point.load()
        except ConfigError as exc:
            raise ConfigError(f"{_declared_by(point)}: {exc}") from exc
        except Exception as exc:
            raise ConfigError(
                f"{_declared_by(point)} could not be loaded: {type(exc).__name__}: "
                f"{cap_text(str(exc), 500)}. Fix or uninstall that package."
            ) from exc


def _declared_by(point: object) -> str:
    dist = getattr(point, "dist", None)
    package = f" of package {dist.name!r}" if dist is not None else ""
    return (
        f"The entry point {getattr(point, 'name', '?')!r} = {getattr(point, 'value', '?')!r}"
        f"{package} (group {ENTRY_POINT_GROUP})"
    )
