"""What every command prints through: the two consoles, the exit codes, the one error printer
and the one ``NAME=VALUE`` parser.

Exit codes, for every command:

==== ==================================================================================
0    success
1    a quality gate failed (``--fail-under``, ``--fail-if-worse``, ``meta-eval``'s
     agreement gate) and nothing else
2    bad input or options, a judge that refused or went away, rows that failed on an
     endpoint (``--resume`` retries them), or any other error: always with a line starting
     ``Error:``
130  interrupted by Ctrl-C (SIGINT); a run keeps the rows it scored
141  standard output closed by its reader (SIGPIPE)
143  stopped by SIGTERM; a run keeps the rows it scored
==== ==================================================================================
"""

from __future__ import annotations

from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from ragmeter.errors import ConfigError

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_GATE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "err_console",
    "fail",
    "out_console",
    "parse_assignments",
    "print_error",
]

EXIT_OK = 0
EXIT_GATE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
#: 128 + SIGPIPE: what a shell reports for a command whose reader went away.
EXIT_BROKEN_PIPE = 141
#: 128 + SIGTERM.
EXIT_TERMINATED = 143

out_console = Console()
err_console = Console(stderr=True)


def print_error(message: str) -> None:
    """``Error: MESSAGE`` on standard error, secrets redacted, markup escaped."""
    from ragmeter.io.redact import redact

    # Not wrapped: a message often ends with a command or a path to copy.
    err_console.print(
        f"[bold red]Error:[/] {escape(redact(message))}", highlight=False, soft_wrap=True
    )


def fail(message: str) -> NoReturn:
    """Print ``message`` as an error and end the command with :data:`EXIT_USAGE`."""
    print_error(message)
    raise typer.Exit(EXIT_USAGE)


def parse_assignments(items: list[str], *, option: str, example: str) -> dict[str, str]:
    """``["a=1", "b=2"]`` -> ``{"a": "1", "b": "2"}``; an item without ``=``, a name or a
    value is refused naming ``option`` and the item, with ``example`` (``faithfulness=0.8``)."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ConfigError(
                f"Bad {option} {item!r}: expected NAME=VALUE, e.g. {option} {example}."
            )
        out[key.strip()] = value.strip()
    return out
