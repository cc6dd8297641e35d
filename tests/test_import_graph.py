"""No import circle inside the ``companion`` package.

The graph: one node per module of ``companion`` (a package is its ``__init__``); an arrow from
``a`` to ``b`` for every ``import companion.b...``, ``from companion.b import ...`` and relative
``from .b import ...`` / ``from . import b`` statement in ``a``'s source, read from the AST (no
module is imported). ``from P import name`` points at the submodule ``P.name`` when that is a
module of the package, else at ``P`` itself.

What counts: every import statement anywhere in the module -- at the top, inside functions and
methods, inside ``try`` blocks -- because an import deferred into a function still makes the two
modules need each other (that is how the circle ``contextual.chapter6b`` <-> ``small_cove`` /
``small_elmo`` used to hide). What does not count: imports under ``if TYPE_CHECKING:`` (never run)
and modules named by a string (``importlib.import_module``, a registry's ``"module:function"``
loader), which no AST walk can resolve reliably. Importing ``P.m`` also runs ``P/__init__``; that
implied arrow is not drawn, or every package with re-exports would be a circle.

A circle is a strongly connected component of more than one module (Tarjan's algorithm).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "companion"
PACKAGE = "companion"


def module_names() -> dict[str, Path]:
    """``{"companion.data.registry": path, "companion.data": .../__init__.py, ...}``."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = (PACKAGE, *path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every Import/ImportFrom node, skipping the bodies of ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def import_graph() -> dict[str, set[str]]:
    modules = module_names()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        is_pkg = path.name == "__init__.py"
        here = name.split(".") if is_pkg else name.split(".")[:-1]  # the package relative imports start from
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
                names: list[str] = []
            else:
                if node.level:
                    base = here[: len(here) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                targets = [target]
                names = [a.name for a in node.names]
            for target in targets:
                if target != PACKAGE and not target.startswith(PACKAGE + "."):
                    continue
                subs = [f"{target}.{n}" for n in names if f"{target}.{n}" in modules]
                if subs:
                    graph[name].update(subs)
                if len(subs) < len(names) or not names:  # names from the module itself, or `import x`
                    while target not in modules and "." in target:  # `import companion.a.b.attr`
                        target = target.rsplit(".", 1)[0]
                    graph[name].add(target)
        graph[name].discard(name)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
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
                    out.append(sorted(comp))
    return out


def test_the_finder_finds_a_circle():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert circles(g) == [["a", "b", "c"]]


def test_the_graph_reads_relative_and_deferred_imports():
    g = import_graph()
    assert "companion.train" in g["companion.sentence._training"]
    assert "companion.contextual.small_cove" in g["companion.contextual.chapter6b"]  # inside a function
    assert "companion.contextual.trainers" in g["companion.contextual.small_cove"]  # `from . import trainers`
    assert "companion.data.sources" in g["companion.data.registry_files"]


def test_no_import_circle_in_companion():
    found = circles(import_graph())
    assert not found, "import circles (each a set of modules that import each other):\n" + "\n".join(
        " <-> ".join(c) for c in found)
