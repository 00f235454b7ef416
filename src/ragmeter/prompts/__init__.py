"""Prompt templates shipped as package data, each with an id and a content hash.

A template file (``analyze.md``, ``verify.md``) has a front matter block (``id``, ``version``)
and sections introduced by ``## name``: ``system``, any number of ``task NAME`` sections, and an
``example`` section holding a JSON object ``{"input": ..., "output": ...}`` used as a few-shot
exchange. ``{{name}}`` placeholders in the template text are filled once, in one pass; input
data never goes through substitution (it is sent as JSON in its own message).

The content hash (sha256 of the file's bytes) is recorded with every result, so a changed
prompt never reuses a cached reply and a result says exactly which prompt produced it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["Prompt", "load_prompt"]

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
_SECTION = re.compile(r"^## (.+)$", re.M)


@dataclass(frozen=True, slots=True)
class Prompt:
    id: str
    version: str
    hash: str
    system: str
    tasks: Mapping[str, str]
    example: Mapping[str, Any]

    def ref(self) -> dict[str, str]:
        """What results record about this prompt."""
        return {"id": self.id, "version": self.version, "hash": self.hash}

    def system_text(self, tasks: Iterable[str] = (), **values: object) -> str:
        """The system message: the preamble plus the named task sections, placeholders filled."""
        parts = [self.system]
        for task in tasks:
            try:
                parts.append(self.tasks[task])
            except KeyError:
                raise KeyError(
                    f"Prompt {self.id!r} has no task {task!r}. Known: {sorted(self.tasks)}."
                ) from None
        return _fill("\n\n".join(parts), values)


def _fill(text: str, values: Mapping[str, object]) -> str:
    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise KeyError(f"Prompt placeholder {{{{{name}}}}} has no value.")
        return str(values[name])

    return _PLACEHOLDER.sub(sub, text)


def parse_prompt(raw: bytes, *, source: str) -> Prompt:
    text = raw.decode("utf-8")
    match = re.match(r"---\n(.*?)\n---\n", text, flags=re.S)
    if match is None:
        raise ValueError(f"Prompt file {source} has no front matter between '---' lines.")
    meta = {}
    for line in match.group(1).splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            raise ValueError(
                f"Prompt file {source}: front matter line {line!r} is not 'key: value'."
            )
        meta[key.strip()] = value.strip()
    body = text[match.end() :]
    heads = list(_SECTION.finditer(body))
    sections: dict[str, str] = {}
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(body)
        sections[head.group(1).strip()] = body[head.end() : end].strip()
    if "id" not in meta or "system" not in sections:
        raise ValueError(f"Prompt file {source} needs an 'id' and a '## system' section.")
    tasks = {
        name.removeprefix("task ").strip(): content
        for name, content in sections.items()
        if name.startswith("task ")
    }
    example = json.loads(sections["example"]) if "example" in sections else {}
    return Prompt(
        id=meta["id"],
        version=meta.get("version", "1"),
        hash=hashlib.sha256(raw).hexdigest()[:16],
        system=sections["system"],
        tasks=tasks,
        example=example,
    )


@cache
def load_prompt(name: str) -> Prompt:
    """Load the packaged template ``name`` (e.g. ``"analyze"``)."""
    resource = resources.files(__name__).joinpath(f"{name}.md")
    if not resource.is_file():
        raise FileNotFoundError(f"No packaged prompt named {name!r} ({name}.md).")
    return parse_prompt(resource.read_bytes(), source=f"{name}.md")
