"""Command-line options made from the table of settings (:mod:`ragmeter.settings`).

A command takes settings as options by naming them in :func:`with_settings`: each becomes an
option with the table's flag, type, default and help, and the command gets their values as
one mapping, ready for ``Settings(**values)``. The flags its errors name come from the same
table (:func:`flags_of`). The ``--plugin`` option, shared by ``evaluate`` and ``metrics``, is
here too.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Iterable
from typing import Annotated, Any

import typer

from ragmeter.settings import AS_FIELD, Settings, setting_info

__all__ = ["PluginOption", "flags_of", "load_plugins", "with_settings"]

PluginOption = Annotated[
    list[str] | None,
    typer.Option(
        "--plugin",
        metavar="MODULE",
        help="Import MODULE (package.module, importable from the working directory, or a .py "
        "file) for the metrics it defines with @ragmeter.metric; repeatable.",
    ),
]


def load_plugins(modules: list[str] | None) -> None:
    """Import each ``--plugin`` module, defining its Python metrics."""
    from ragmeter.metrics.custom.plugins import load_plugin

    for module in modules or ():
        load_plugin(module)


def flags_of(names: Iterable[str]) -> dict[str, str]:
    """The flags of the settings ``names`` (``{"timeout": "--timeout"}``), for
    :func:`ragmeter.errors.param_names`."""
    return {name: setting_info(name).flag for name in names}


def _parameter(name: str) -> inspect.Parameter:
    """The command's parameter for the setting ``name``: its option, type and default."""
    info = setting_info(name)
    kind = info.option_type or typing.get_type_hints(Settings)[name]
    if info.option_default is not AS_FIELD:
        default = info.option_default
    else:
        default = Settings.__dataclass_fields__[name].default
    option = typer.Option(info.flag, metavar=info.metavar, help=info.help)
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[kind, option], default=default
    )


def with_settings(names: Iterable[str], *, into: str = "settings") -> Callable[..., Any]:
    """Decorate a command whose parameter ``into`` takes the settings ``names``: in its place
    the command line gets one option per setting (in the table's order), and the command
    gets ``into={name: setting value}`` (an option's value made the setting's, e.g.
    ``--no-cache`` as ``use_cache=False``)."""
    names = list(names)

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(command, eval_str=True)
        parameters: list[inspect.Parameter] = []
        for parameter in signature.parameters.values():
            if parameter.name == into:
                parameters += [_parameter(name) for name in names]
            else:  # keyword-only, as the settings' options
                parameters.append(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY))

        @functools.wraps(command)
        def run(**given: Any) -> Any:
            values = {name: _setting_value(name, given.pop(name)) for name in names}
            return command(**given, **{into: values})

        run.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        run.__annotations__ = {}  # typer reads the types from the signature
        return run

    return decorate


def _setting_value(name: str, value: Any) -> Any:
    convert = setting_info(name).from_option
    return value if convert is None else convert(value)
