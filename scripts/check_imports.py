"""Fail on an import cycle between modules of src/ and on a private name used across modules.

    python scripts/check_imports.py [SRC]

Two rules of the code (both read from the source with ``ast``; nothing is imported):

- **No import cycle.** Module A imports module B (at the top, or inside a function: a
  deferred import or one under ``if TYPE_CHECKING:`` is still a dependency) when it names B
  or a name defined in B. Importing ``pkg.mod`` is an edge to ``pkg.mod`` only, not to
  ``pkg/__init__.py``. Every strongly connected component of more than one module is
  reported with its modules and one cycle through it.
- **No private name across modules.** ``from X import _name`` and ``X._name`` (X an imported
  module) are refused when ``_name`` is not X's own submodule; dunder names (``__version__``)
  are public. A private *module* (``pkg/_impl.py``) may be imported by the modules of its
  own package ``pkg`` and below.

Exit 0 when both hold, 1 with one line per violation otherwise. :data:`KNOWN` lists the
exceptions still open, each with its reason; an exception that no longer occurs is an error
too, so the list only shrinks.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

# (module that defines the name, name): private names still shared inside the IR measures'
# columnar path (metrics/kernels.py, columns.py, ir.py), which is being restructured as one
# piece; they go when it does.
KNOWN = {
    ("ragassay.metrics.kernels", "_pad"),
    ("ragassay.metrics.columns", "_encode"),
    ("ragassay.metrics.columns", "_encode_repeated"),
    ("ragassay.metrics.columns", "_padded"),
}


def module_names(src: Path) -> dict[str, Path]:
    """Dotted module name → file, for every ``.py`` under ``src`` (``pkg/__init__.py`` is
    ``pkg``)."""
    out = {}
    for path in sorted(src.rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_package(name: str, modules: dict[str, Path]) -> bool:
    return modules[name].name == "__init__.py"


def _resolve(module: str, node: ast.ImportFrom, modules: dict[str, Path]) -> str:
    """The absolute name of ``from <node.module> import ...`` written in ``module``."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not _is_package(module, modules):
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The longest module prefix of a dotted name (``a.b.c`` → ``a.b`` when ``a.b.c`` is
    not a module itself)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def analyse(src: Path) -> tuple[dict[str, set[str]], list[str]]:
    """The import graph between modules and the private-name violations (those of
    :data:`KNOWN` left out, and a :data:`KNOWN` entry that no longer occurs reported)."""
    modules = module_names(src)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    private: list[str] = []
    seen: set[tuple[str, str]] = set()
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        aliases: dict[str, str] = {}  # local name → imported module
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    target = _owner(a.name, modules)
                    if target is None:
                        continue
                    graph[module].add(target)
                    if a.asname:
                        aliases[a.asname] = target
                    _private_module(module, target, path, node, private)
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(module, node, modules)
                if _owner(base, modules) is None:
                    continue
                for a in node.names:
                    full = f"{base}.{a.name}"
                    if full in modules:  # a submodule
                        graph[module].add(full)
                        aliases[a.asname or a.name] = full
                        _private_module(module, full, path, node, private)
                        continue
                    target = _owner(base, modules)
                    assert target is not None
                    graph[module].add(target)
                    if (target, a.name) in KNOWN:
                        seen.add((target, a.name))
                    elif _private(a.name) and target != module:
                        private.append(f"{path}:{node.lineno}: from {base} import {a.name}: "
                                       f"'{a.name}' is private to {target}")
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and _private(node.attr)
                    and f"{aliases[node.value.id]}.{node.attr}" not in modules):
                private.append(f"{path}:{node.lineno}: {node.value.id}.{node.attr}: "
                               f"'{node.attr}' is private to {aliases[node.value.id]}")
        graph[module].discard(module)
    private += [f"{target}.{name}: listed in KNOWN but no longer imported elsewhere: "
                "remove it from the list" for target, name in sorted(KNOWN - seen)]
    return graph, private


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_module(module: str, target: str, path: Path, node: ast.stmt,
                    out: list[str]) -> None:
    parts = target.split(".")
    for i, part in enumerate(parts):
        if _private(part):
            package = ".".join(parts[:i])
            if not (module == package or module.startswith(package + ".")):
                out.append(f"{path}:{node.lineno}: imports {target}: the module '{part}' is "
                           f"private to {package}")
            return


def cycles(graph: dict[str, set[str]]) -> Iterator[tuple[list[str], list[str]]]:
    """Every strongly connected component of two or more modules, with one cycle through
    it (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        comp.append(m)
                        if m == node:
                            break
                    if len(comp) > 1:
                        components.append(sorted(comp))
    for comp in components:
        yield comp, _one_cycle(graph, set(comp), comp[0])


def _one_cycle(graph: dict[str, set[str]], comp: set[str], start: str) -> list[str]:
    """A shortest path from ``start`` back to itself inside the component (breadth first)."""
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for child in sorted(graph[node] & comp):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return [start, *reversed(path[:-1]), start] if node != start else [start]
                if child not in prev:
                    prev[child] = node
                    nxt.append(child)
        frontier = nxt
    return [start]


def main(argv: list[str]) -> int:
    src = Path(argv[0]) if argv else Path(__file__).resolve().parents[1] / "src"
    graph, private = analyse(src)
    problems = [f"import cycle between {', '.join(comp)}: {' -> '.join(cycle)}"
                for comp, cycle in cycles(graph)] + private
    for line in problems:
        print(line)
    if problems:
        print(f"{len(problems)} import problem(s) in {src}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
