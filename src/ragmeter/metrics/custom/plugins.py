"""Loading Python metrics from a module named by the user (:func:`load_plugin`): a module
importable from the working directory or a path to a ``.py`` file. Installed packages'
metrics come through the entry point group ``ragmeter.metrics`` (:mod:`.entry_points`).

Importing a module runs its ``@ragmeter.metric`` decorators, which register its metrics.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path

from ragmeter.errors import ConfigError, cap_text
from ragmeter.metrics import registry

__all__ = ["load_plugin"]


def load_plugin(module: str) -> list[str]:
    """Import ``module`` (``package.module``, importable from the working directory, or a
    path to a ``.py`` file) and return the names of the Python metrics it defines."""
    before = _defined_by_modules()
    name = module.strip()
    if name.endswith(".py"):
        imported = _import_file(Path(name))
    else:
        here = os.getcwd()
        if here not in sys.path and "" not in sys.path:
            sys.path.insert(0, here)  # as `python -m` does: the working directory first
        try:
            imported = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and name.startswith(exc.name):
                raise ConfigError(
                    f"Plugin {name!r} was not found: no module named {exc.name!r} in the "
                    f"working directory ({here}) or the installed packages. Give a module "
                    "importable from the working directory (package.module, no '.py'), or a "
                    "path to a .py file."
                ) from None
            raise _import_failed(name, exc) from exc
        except Exception as exc:
            raise _import_failed(name, exc) from exc
    names = [
        metric
        for metric, where in _defined_by_modules().items()
        if where == imported.__name__ or before.get(metric) != where
    ]
    if not names:
        raise ConfigError(
            f"Plugin {name!r} defines no metric: decorate a function of a sample with "
            "@ragmeter.metric(needs=(...)) in it (or in a module it imports)."
        )
    return names


def _import_file(path: Path) -> object:
    if not path.is_file():
        raise ConfigError(f"Plugin file {str(path)!r} does not exist.")
    module_name = path.stem
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"Plugin file {str(path)!r} cannot be imported as a module.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(module_name, None)
        raise _import_failed(str(path), exc) from exc
    return module


def _import_failed(name: str, exc: BaseException) -> ConfigError:
    if isinstance(exc, ConfigError):
        return ConfigError(f"Plugin {name!r}: {exc}")
    return ConfigError(
        f"Plugin {name!r} raised {type(exc).__name__} while being imported: "
        f"{cap_text(str(exc), 500)}. Fix the module, then run again."
    )


def _defined_by_modules() -> dict[str, str]:
    """Each Python metric's name and the module that defined it."""
    return {
        name: registry.defined(name).module
        for name, spec in registry.all_specs().items()
        if spec.family == registry.PYTHON_FAMILY
    }
