"""The ``--verifier`` options, shared by ``ragmeter evaluate`` and ``ragmeter meta-eval``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

__all__ = [
    "AllowDownloadOption",
    "DeviceOption",
    "VerifierLabelOption",
    "VerifierOption",
    "VerifierThresholdOption",
    "verifier_settings",
]

VerifierOption = Annotated[
    str,
    typer.Option(
        help="Who decides 'premise entails claim': 'judge' (the judge's own; with the offline "
        "judge, the offline verifier), 'offline', or 'nli:PATH_OR_NAME' (a local Hugging Face "
        "classifier: MiniCheck, HHEM-2.1-open, an NLI cross-encoder)."
    ),
]
VerifierLabelOption = Annotated[
    str | None,
    typer.Option(help="nli: the label (name or index) that means support (default: its config)."),
]
VerifierThresholdOption = Annotated[
    float | None, typer.Option(help="nli: support probability a verdict needs (default 0.5).")
]
DeviceOption = Annotated[
    str | None, typer.Option(help="nli: where the model runs: cpu, cuda, cuda:N or auto (default).")
]
AllowDownloadOption = Annotated[
    bool,
    typer.Option(
        "--allow-download",
        metavar="",
        help="nli: fetch a model id missing from the local Hugging Face cache.",
    ),
]


def verifier_settings(
    verifier: str,
    label: str | None,
    threshold: float | None,
    device: str | None,
    allow_download: bool,
) -> dict[str, Any]:
    """The ``Settings`` fields of the options."""
    return {
        "verifier": verifier,
        "verifier_label": label,
        "verifier_threshold": threshold,
        "device": device,
        "allow_download": allow_download,
    }
