"""Every shell and Python block of the README and the docs runs, as written, or says why not.

A block is a fenced ```bash (or ```sh / ```shell) or ```python block. It is run unless the
HTML comments right above its fence hold ``<!-- not-run: REASON -->``; the reason must say why
in a few words (a bare ``<!-- not-run -->`` is an error, so a command is never left out
silently). A document's blocks run in order in one folder; each Python block in a fresh
interpreter, so it runs as a reader would paste it (its imports included).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHELL_FENCES = ("```bash", "```sh", "```shell")
PYTHON_FENCES = ("```python",)
NOT_RUN = re.compile(r"<!--\s*not-run\b(?P<rest>.*?)-->")
MIN_REASON_WORDS = 3


@dataclass(frozen=True, slots=True)
class ShellBlock:
    path: Path
    line: int  # 1-based line of the opening fence
    text: str
    not_run_reason: str | None
    #: "bash" or "python".
    lang: str = "bash"

    @property
    def where(self) -> str:
        return f"{_shown(self.path)}:{self.line}"


class DocMarkerError(ValueError):
    """A ``not-run`` marker without a reason."""


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def documents() -> list[Path]:
    """Every Markdown file a user reads: the README, the changelog and docs/."""
    found = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
    return [path for path in found if path.is_file()]


def _reason_above(lines: list[str], fence: int, where: str) -> str | None:
    """The not-run reason in the run of HTML comment lines right above ``lines[fence]``."""
    i = fence - 1
    while i >= 0 and lines[i].strip().startswith("<!--") and lines[i].strip().endswith("-->"):
        match = NOT_RUN.search(lines[i])
        if match:
            reason = match.group("rest").strip().removeprefix(":").strip()
            if len(reason.split()) < MIN_REASON_WORDS:
                raise DocMarkerError(
                    f"{where}: a not-run marker must say why the block is not run, in at least "
                    f"{MIN_REASON_WORDS} words. Got {lines[i].strip()!r}. Write "
                    "<!-- not-run: needs a server --> (the reason), or let the tests run it."
                )
            return reason
        i -= 1
    return None


def shell_blocks(path: Path) -> list[ShellBlock]:
    """The shell blocks of one Markdown file, in order."""
    return [block for block in code_blocks(path) if block.lang == "bash"]


def code_blocks(path: Path) -> list[ShellBlock]:
    """The shell and Python blocks of one Markdown file, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[ShellBlock] = []
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped in SHELL_FENCES or stripped in PYTHON_FENCES:
            lang = "python" if stripped in PYTHON_FENCES else "bash"
            indent = len(lines[i]) - len(lines[i].lstrip())
            where = f"{_shown(path)}:{i + 1}"
            end = i + 1
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            if end == len(lines):
                raise DocMarkerError(f"{where}: the {lang} block is never closed with ```.")
            body = "\n".join(line[indent:] for line in lines[i + 1 : end])
            reason = _reason_above(lines, i, where)
            blocks.append(ShellBlock(path, i + 1, body + "\n", reason, lang))
            i = end
        i += 1
    return blocks


# --- running them ---------------------------------------------------------------------------

EXAMPLE = ROOT / "examples" / "rag_sample.jsonl"
# Enough time for a first run that converts the context-relevance model (about 40 s on 2 cores).
BLOCK_TIMEOUT_S = 600


def _ragmeter(args: list[str], cwd: Path, env: dict[str, str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ragmeter", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT_S,
    )
    assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope="session")
def _doc_workspace_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What the docs' commands take as given: ``examples/``, a small ``data.jsonl`` and a
    ``results.jsonl`` and ``baseline.jsonl`` with faithfulness, mrr and k_precision."""
    template = tmp_path_factory.mktemp("doc-workspace")
    shutil.copytree(ROOT / "examples", template / "examples")
    rows = EXAMPLE.read_text(encoding="utf-8").splitlines()[:3]
    (template / "data.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    env = _block_env()
    _ragmeter(["evaluate", "data.jsonl", "-m", "faithfulness,mrr,k_precision", "--out",
               "results.jsonl", "-q"], template, env)  # fmt: skip
    shutil.copy(template / "results.jsonl", template / "baseline.jsonl")
    shutil.copy(template / "results.jsonl.run.json", template / "baseline.jsonl.run.json")
    return template


def _block_env() -> dict[str, str]:
    """The test's environment (its cache dir, no key), with this interpreter's scripts first on
    PATH so that ``ragmeter`` is the checkout's."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("OPENAI_API_KEY", None)
    env["COLUMNS"] = "120"
    return env


def _docs_with_blocks_to_run() -> list[Path]:
    """The documents with a block to run, and any whose markers cannot be read (its test then
    fails with the reason)."""
    found = []
    for doc in documents():
        try:
            if any(block.not_run_reason is None for block in code_blocks(doc)):
                found.append(doc)
        except DocMarkerError:
            found.append(doc)
    return found


@pytest.mark.slow  # the docs run the offline default, which loads the packaged models
@pytest.mark.parametrize("doc", _docs_with_blocks_to_run(), ids=lambda p: _shown(p))
def test_every_code_block_of_the_docs_runs(
    doc: Path, _doc_workspace_template: Path, tmp_path: Path
) -> None:
    """Each runnable block of one document, shell or Python, in order, in one folder (a block
    may use what an earlier one wrote), exits 0."""
    blocks = [block for block in code_blocks(doc) if block.not_run_reason is None]
    workspace = tmp_path / "ws"
    shutil.copytree(_doc_workspace_template, workspace)
    env = _block_env()
    for block in blocks:
        command = (
            [sys.executable, "-c", block.text]
            if block.lang == "python"
            else ["bash", "-e", "-o", "pipefail", "-c", block.text]
        )
        proc = subprocess.run(
            command,
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=BLOCK_TIMEOUT_S,
        )
        assert proc.returncode == 0, (
            f"{block.where} exited {proc.returncode}:\n{block.text}\n"
            f"--- stderr (end) ---\n{proc.stderr[-3000:]}"
        )


def test_every_document_is_read_and_the_readme_set_up_commands_are_run_elsewhere() -> None:
    """Every document's markers read (a not-run without a reason raises), and the README's two
    set-up commands, which make a venv, are the ones it leaves to CI and to
    tests/packaging/test_no_torch.py."""
    for doc in documents():
        code_blocks(doc)
    readme = shell_blocks(ROOT / "README.md")
    not_run = [block.text for block in readme if block.not_run_reason]
    assert any("pip install -q -e '.[local]'" in text for text in not_run)
    assert any("pytest" in text for text in not_run)
    assert any(block.not_run_reason is None for block in readme)


def test_a_not_run_marker_without_a_reason_is_refused(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("<!-- not-run -->\n```bash\nfalse\n```\n", encoding="utf-8")
    with pytest.raises(DocMarkerError, match="must say why"):
        shell_blocks(doc)
    doc.write_text("<!-- not-run: needs a server -->\n```bash\nfalse\n```\n", encoding="utf-8")
    (block,) = shell_blocks(doc)
    assert block.not_run_reason == "needs a server"


def test_blocks_are_read_with_their_markers_and_indentation(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    text = (
        "- item\n\n  ```bash\n  echo one \\\n      two\n  ```\n\n"
        "<!-- not-run: talks to a real server -->\n<!-- main-command -->\n```bash\nfalse\n```\n"
        "```python\nprint(1)\n```\n"
    )
    doc.write_text(text, encoding="utf-8")
    first, second = shell_blocks(doc)
    assert first.text == "echo one \\\n    two\n" and first.not_run_reason is None
    assert first.line == 3
    assert second.not_run_reason == "talks to a real server"
    *_, python = code_blocks(doc)
    assert (python.lang, python.text, python.line) == ("python", "print(1)\n", 13)


def test_every_python_block_of_the_docs_is_run_or_says_why() -> None:
    """Issue 37, item 7: the Python snippets are run too; only a few need what a test cannot
    give (an API key), and say so."""
    blocks = [block for doc in documents() for block in code_blocks(doc) if block.lang == "python"]
    assert len(blocks) >= 7
    skipped = [block.where for block in blocks if block.not_run_reason is not None]
    assert len(skipped) <= 1, skipped


def test_the_readme_stays_short() -> None:
    """The README is what it is, the two commands, a tour, the metric table and links; the
    rest lives in docs/ (issue 30)."""
    size = len((ROOT / "README.md").read_bytes())
    assert size <= 15_000, f"README.md is {size:,} bytes; move detail into docs/"
