"""Every relative link of the README, the changelog and docs/ points at a file that exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\((?P<target>[^)#\s]+)(?:#[^)\s]*)?\)")


def documents() -> list[Path]:
    found = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
    return [path for path in found if path.is_file()]


def broken_links(doc: Path) -> list[str]:
    broken = []
    for match in LINK.finditer(doc.read_text(encoding="utf-8")):
        target = match.group("target")
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        if not (doc.parent / target).exists():
            broken.append(target)
    return broken


def test_every_relative_link_resolves() -> None:
    broken = {str(doc.relative_to(ROOT)): broken_links(doc) for doc in documents()}
    assert {doc: links for doc, links in broken.items() if links} == {}


def test_a_link_to_a_missing_file_is_found(tmp_path: Path) -> None:
    (tmp_path / "here.md").write_text("x", encoding="utf-8")
    doc = tmp_path / "doc.md"
    doc.write_text(
        "[a](here.md) [b](gone.md#part) [c](https://example.org/x) [d](here.md#top)",
        encoding="utf-8",
    )
    assert broken_links(doc) == ["gone.md"]
