"""No import cycles between modules, lazy imports (inside functions) included.

`../shared/tools/layers.py` finds cycles between top-level packages only; a cycle inside one
package (`metrics.registry` -> `metrics.custom.plugins` -> `metrics.registry`, hidden in a
function) passes it. This test builds the graph of modules from the source with `ast`, by the
same rule as layers.py (an import of `a.b.name` counts as an import of the module `a.b` when
`name` is not a module; imports under `if TYPE_CHECKING:` do not run and do not count), and finds
its strongly connected components. A package's `__init__` importing its own submodules is fine.

The benchmarks in `bench/meta/` import each other by bare module name (their folder is on
`sys.path`); they are checked the same way.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "ragmeter"
BENCH_META = ROOT / "bench" / "meta"


def module_files(root: Path, prefix: str) -> dict[str, Path]:
    """Each module's dotted name (`prefix.sub.mod`, a package by its own name) -> its file."""
    files: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = [prefix, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for inner in ast.walk(node))
    return skipped


def _imported_names(node: ast.AST, package: str) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parts = package.split(".")
            kept = parts[: len(parts) - node.level + 1]
            base = ".".join([*kept, base] if base else kept)
        return [base, *(f"{base}.{alias.name}" for alias in node.names)]
    return []


def imports_of(
    module: str, path: Path, known: Iterable[str], *, bare_prefix: str | None = None
) -> set[str]:
    """The modules of `known` that `module` imports at run time, lazy imports included.

    `bare_prefix`: a folder whose modules import each other by bare name (`import lfqa`).
    """
    known = set(known)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_nodes(tree)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        for name in _imported_names(node, package):
            if bare_prefix is not None:
                name = f"{bare_prefix}.{name}"
            while name and name not in known:
                name = name.rsplit(".", 1)[0] if "." in name else ""
            if name and name != module and not name.startswith(module + "."):
                found.add(name)
    return found


def import_graph(root: Path, prefix: str, *, bare: bool = False) -> dict[str, set[str]]:
    files = module_files(root, prefix)
    return {
        module: imports_of(module, path, files, bare_prefix=prefix if bare else None)
        for module, path in files.items()
    }


def cycles(graph: Mapping[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in graph:
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(graph.get(start, ())))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def _shown(found: Iterable[frozenset[str]]) -> str:
    return "\n".join(" <-> ".join(sorted(cycle)) for cycle in found)


def test_cycles_finds_a_lazy_import_cycle_and_ignores_type_checking(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from pkg import a\n")
    (pkg / "a.py").write_text("from pkg.sub.b import f\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def f():\n    from pkg.a import g\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.d import x\n"
    )
    (pkg / "d.py").write_text("from pkg import c\n")
    graph = import_graph(pkg, "pkg")
    assert cycles(graph) == [frozenset({"pkg.a", "pkg.sub.b"})]


def test_ragmeter_has_no_import_cycle_between_modules() -> None:
    found = set(cycles(import_graph(SRC, "ragmeter")))
    assert not found, f"import cycles (lazy imports included):\n{_shown(found)}"


def test_bench_meta_scripts_have_no_import_cycle() -> None:
    found = cycles(import_graph(BENCH_META, "meta", bare=True))
    assert not found, f"import cycles in bench/meta:\n{_shown(found)}"
