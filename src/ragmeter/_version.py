"""The installed package's version, read once (a source tree without metadata says so)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__"]

try:
    __version__ = version("ragmeter")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+src"
