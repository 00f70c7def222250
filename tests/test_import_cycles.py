"""No import circle among the packages, at any level: the import graph of draftpool, specsel, data_gen, training and
online has no cycle.

Edges are every import statement of a module: at module level (also inside an `if` / `try` / `with`), and inside
function and method bodies (an import deferred into a function is still a dependency: two modules that reach into
each other that way are one module in two files), but not under `if TYPE_CHECKING:`. `import a.b` and
`from a.b import c` are an edge to `a.b`, or to `a.b.c` when c is a submodule. tests/test_layers.py keeps the direction
between packages; this test also sees a circle inside one package (the kind registry resolves the parts it names in
upper layers by path, at run time, so it adds no edge)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("draftpool", "specsel", "data_gen", "training", "online")


def modules(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Dotted module name -> file, for every .py under the packages (a package is its __init__)."""
    out = {}
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(node: ast.AST):
    """Every import statement under `node`, at any depth (functions, methods, nested blocks), but those under
    `if TYPE_CHECKING:` (its `else` counts)."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    elif isinstance(node, ast.If) and _is_type_checking(node.test):
        for child in node.orelse:
            yield from _imports(child)
    else:
        for child in ast.iter_child_nodes(node):
            yield from _imports(child)


def graph(root: Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    """module -> the project modules its imports name (module level or inside a function)."""
    mods = modules(root, packages)
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        is_pkg = path.name == "__init__.py"
        for node in _imports(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:  # relative: from the module's package, `level` steps up
                    pkg = name.split(".") if is_pkg else name.split(".")[:-1]
                    pkg = pkg[:len(pkg) - node.level + 1]
                    base = ".".join(pkg + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            edges[name] |= {t for t in targets if t in mods and t != name}
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each as a sorted list."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    found = cycles(graph(ROOT, PACKAGES))
    assert not found, "import circles (module-level or function-level imports): " + "; ".join(
        " <-> ".join(c) for c in found)


def _package(root: Path, files: dict[str, str]) -> None:
    for rel, text in {"pkg/__init__.py": "", **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_the_check_sees_a_planted_cycle(tmp_path):
    _package(tmp_path, {
        "pkg/sub/__init__.py": "",
        "pkg/a.py": "from pkg.sub import b\n",  # b is a submodule: an edge to pkg.sub.b
        "pkg/sub/b.py": "import pkg.c\n",
        "pkg/c.py": "from . import a\n",  # relative
        "pkg/d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.c\nelse:\n    import pkg.e\n",
        "pkg/e.py": "",
    })
    edges = graph(tmp_path, ("pkg",))
    assert edges["pkg.a"] == {"pkg.sub.b"} and edges["pkg.c"] == {"pkg.a"} and edges["pkg.d"] == {"pkg.e"}
    assert cycles(edges) == [["pkg.a", "pkg.c", "pkg.sub.b"]]


def test_the_check_sees_a_cycle_through_function_level_imports(tmp_path):
    """The circle data_gen/backends.py <-> generate.py and training/kinds/llama.py -> train_drafter.py were of this
    shape: one side imports the other inside a function, which a module-level reading does not see."""
    _package(tmp_path, {
        "pkg/orchestrator.py": "from pkg import part\n\ndef run():\n    return part.make()\n",
        "pkg/part.py": ("class Part:\n    def make(self):\n        try:\n"
                        "            from pkg.orchestrator import run\n"
                        "        except ImportError:\n            run = None\n        return run\n"),
        "pkg/lazy.py": ("def f():\n    from typing import TYPE_CHECKING\n    if TYPE_CHECKING:\n"
                        "        import pkg.part\n"),
    })
    edges = graph(tmp_path, ("pkg",))
    assert edges["pkg.part"] == {"pkg.orchestrator"} and edges["pkg.orchestrator"] == {"pkg.part"}
    assert edges["pkg.lazy"] == set()  # a function's TYPE_CHECKING import is no edge either
    assert cycles(edges) == [["pkg.orchestrator", "pkg.part"]]
