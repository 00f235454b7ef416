"""Every third-party module ragmeter imports is a declared dependency of what uses it
(issue 36, item 15).

``pip install ragmeter`` once gave a ``ragmeter`` command that crashed on ``import click``:
click was imported but not declared, and typer 0.29 no longer brought it (``[local]`` hid
this, since spaCy brings click). Two checks:

- every import in ``src/`` (lazy ones too), parsed with :mod:`ast` and mapped to its
  distribution with :func:`importlib.metadata.packages_distributions`, is declared in
  pyproject.toml by the core or by the extra that uses it: the extra its file names to the
  user (``pip install 'ragmeter[x]'``, ``require_extra("x", ...)``), else the one
  :data:`OWNER` gives, else the core. A dependency of a dependency does not count.
- a bare virtual environment with the core install only runs ``ragmeter --help`` and an
  exact metric (``slow``: it builds and installs the package).

An import inside ``try: ... except ImportError`` is optional and needs no declaration.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "ragmeter"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS: dict[str, list[str]] = PROJECT["optional-dependencies"]

#: Files whose messages do not name (every) extra they use: the extras that install what
#: they import.
OWNER: dict[str, tuple[str, ...]] = {
    "models/_runtime.py": ("lm", "ner"),  # torch and the hub for [lm], spaCy for [ner]
    "models/hf_classifier.py": ("lm",),
    "models/reward.py": ("lm",),
    "models/relevance/torch_scorer.py": ("lm",),
    "models/relevance/packed_attention.py": ("lm",),
    "models/relevance/gguf/": ("relevance",),
    "models/relevance/onnx_scorer.py": ("relevance",),
}
#: Modules looked up with ``importlib.util.find_spec`` before their import: used only
#: where another library already brought them.
LOOKED_UP_FIRST = {"tqdm"}  # runner/progress.py: silences the bars of tqdm, if installed


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def declared(extra: str | None) -> set[str]:
    """The distributions the core (``None``) or an extra declares, through the extras it
    includes (``ragmeter[a,b]``), not through their own dependencies."""
    names: set[str] = set()
    for req in PROJECT["dependencies"] if extra is None else EXTRAS[extra]:
        if _name(req) == "ragmeter":
            inner = re.search(r"\[(.*)\]", req)
            assert inner, req
            for sub in inner.group(1).split(","):
                names |= declared(sub.strip())
        else:
            names.add(_name(req))
    return names


def _catches_import_error(node: ast.Try) -> bool:
    for handler in node.handlers:
        caught = handler.type
        names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
        for name in names:
            if name is None or ast.unparse(name) in {
                "ImportError",
                "ModuleNotFoundError",
                "Exception",
            }:
                return True
    return False


def third_party_imports(path: Path) -> list[tuple[str, int]]:
    """``(top-level module, line)`` of each import in ``path`` not from the standard
    library nor ragmeter, and not inside a ``try`` that catches ImportError."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and _catches_import_error(node):
            for inner in node.body:
                guarded.update(id(n) for n in ast.walk(inner))
    found = []
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.Import):
            tops = [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            tops = [node.module.split(".")[0]]
        else:
            continue
        for top in tops:
            if top in sys.stdlib_module_names or top in {"ragmeter", "__future__"}:
                continue
            found.append((top, node.lineno))
    return found


def owning_extras(path: Path) -> tuple[str, ...]:
    """The extras ``path`` names to the user and :data:`OWNER` gives it; () for the core."""
    text = path.read_text(encoding="utf-8")
    named = set(re.findall(r"ragmeter\[(\w+)\]", text))
    named |= set(re.findall(r"require_extra\(\s*\"(\w+)\"", text))
    named &= set(EXTRAS)  # not the placeholder of a docstring, ragmeter[extra]
    rel = path.relative_to(SRC).as_posix()
    for prefix, extras in OWNER.items():
        if rel == prefix or (prefix.endswith("/") and rel.startswith(prefix)):
            named.update(extras)
    return tuple(sorted(named))


def test_every_third_party_import_is_declared_by_the_core_or_the_extra_that_uses_it():
    distributions = md.packages_distributions()
    core = declared(None)
    problems = []
    for path in sorted(SRC.rglob("*.py")):
        extras = owning_extras(path)
        allowed = core.union(*(declared(extra) for extra in extras))
        where = "the core" if not extras else " or ".join(f"[{e}]" for e in extras)
        for module, line in third_party_imports(path):
            if module in LOOKED_UP_FIRST:
                continue
            names = {_name(d) for d in distributions.get(module, [])}
            rel = f"{path.relative_to(ROOT)}:{line}"
            if not names:
                problems.append(f"{rel}: 'import {module}': no installed distribution has it")
            elif not names & allowed:
                problems.append(
                    f"{rel}: 'import {module}' ({', '.join(sorted(names))}) is not declared "
                    f"by {where}"
                )
    assert not problems, "\n".join(problems)


def test_the_check_sees_an_undeclared_import(tmp_path):
    """The checks above catch what they are for: click in a core module, an import guarded
    by ``except ImportError`` left alone."""
    module = tmp_path / "module.py"
    module.write_text(
        "import click\n"
        "try:\n    import tiktoken\nexcept ImportError:\n    tiktoken = None\n"
        "def f():\n    from pandas import DataFrame\n"
    )
    assert third_party_imports(module) == [("click", 1), ("pandas", 7)]
    assert "click" not in declared(None)
    assert "pandas" in declared("data") and "pandas" not in declared(None)


def _venv_python(folder: Path) -> Path:
    return folder / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


@pytest.mark.slow
def test_the_core_install_alone_runs_the_command_line(tmp_path):
    """``pip install ragmeter`` (no extra) into a bare virtual environment: ``ragmeter
    --help`` and an exact metric run, with none of the packages the extras bring."""
    env = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env)
    python = _venv_python(env)
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(ROOT)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if install.returncode != 0 and "No matching distribution" in install.stderr:
        pytest.skip(f"no package index reachable: {install.stderr[-300:]}")
    assert install.returncode == 0, install.stderr[-3000:]
    command = env / ("Scripts/ragmeter.exe" if sys.platform == "win32" else "bin/ragmeter")
    helped = subprocess.run(
        [str(command), "--help"], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert helped.returncode == 0, helped.stderr[-3000:]
    assert "evaluate" in helped.stdout
    scored = subprocess.run(
        [str(command), "evaluate", str(ROOT / "examples" / "rag_sample.jsonl"), "-m", "mrr"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert scored.returncode == 0, scored.stderr[-3000:]
    assert "mrr" in scored.stdout
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=freeze"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    installed = {_name(line.split("==")[0]) for line in listed.stdout.splitlines()}
    assert not installed & {"click", "spacy", "onnxruntime", "pandas", "torch"}
