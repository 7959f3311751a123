"""The modules of acp_notebook import each other one way: the import graph has no cycle.

Every import counts, function-local ones too (a local import hides a cycle, it does
not remove it). A package's ``__init__`` is left out as a source: importing any
submodule initializes its package first, and the package's own lazy re-exports
(``acp_notebook.Chat``) are how it is meant to reach down.
"""

from __future__ import annotations

import ast
from pathlib import Path

import acp_notebook

ROOT = Path(acp_notebook.__file__).parent
PACKAGE = "acp_notebook"


def module_name(path: Path) -> str:
    parts = [PACKAGE, *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, modules: set[str]) -> set[str]:
    """The package's modules that ``path`` imports, wherever in the file."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            source = (
                (f"{base}.{node.module}" if node.level and node.module else base)
                if node.level
                else (node.module or "")
            )
            for alias in node.names:
                candidate = f"{source}.{alias.name}"
                found.add(candidate if candidate in modules else source)
    return {m for m in found if m in modules and m != name}


def graph() -> dict[str, set[str]]:
    paths = sorted(ROOT.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {
        module_name(p): imports(p, modules) if p.name != "__init__.py" else set() for p in paths
    }


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_package_has_no_import_cycle() -> None:
    edges = graph()
    assert (
        "acp_notebook.bridge.hub" in edges["acp_notebook.kernel.local_transport"]
    )  # the graph is really read
    assert find_cycle(edges) is None, " -> ".join(find_cycle(edges) or [])


def test_the_check_finds_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(edges) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
