"""No import cycle among the document model's own modules.

The test parses every module of ``editor/model`` (no importing, so imports inside functions
count too) and looks for a cycle in the graph of which module imports which. A cycle means two
modules each need the other and neither can be read, changed or tested alone.
"""
from __future__ import annotations

import ast
from pathlib import Path

MODEL = Path(__file__).resolve().parents[2] / "editor" / "model"
PACKAGE = "editor.model"


def _targets(node: ast.AST, names: set[str]) -> set[str]:
    """The model modules one import statement names (the package itself counts as __init__)."""
    found: set[str] = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.startswith(PACKAGE + "."):
                found.add(alias.name[len(PACKAGE) + 1:].split(".")[0])
    elif isinstance(node, ast.ImportFrom):
        if node.level == 1:
            module = node.module or ""
        elif node.level == 0 and node.module and (node.module == PACKAGE
                                                 or node.module.startswith(PACKAGE + ".")):
            module = node.module[len(PACKAGE) + 1:]
        else:
            return found
        if module:
            found.add(module.split(".")[0])
        else:  # from . import a, b: each a module of the package, or a name of __init__
            found |= {a.name if a.name in names else "__init__" for a in node.names}
    return found & names


def import_graph(folder: Path = MODEL) -> dict[str, set[str]]:
    """Module name -> the model modules it imports, anywhere in its body."""
    names = {p.stem for p in folder.glob("*.py")}
    graph = {}
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        edges: set[str] = set()
        for node in ast.walk(tree):
            edges |= _targets(node, names)
        graph[path.stem] = edges - {path.stem}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of modules (first == last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_the_cycle_finder_sees_a_cycle(tmp_path):
    (tmp_path / "a.py").write_text("from .b import x\n")
    (tmp_path / "b.py").write_text("def f():\n    from editor.model.a import y\n")
    (tmp_path / "c.py").write_text("from . import a\n")
    graph = import_graph(tmp_path)
    assert graph == {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    assert find_cycle(graph) == ["a", "b", "a"]


def test_no_import_cycle_among_model_modules():
    graph = import_graph()
    assert "index_sync" in graph and "index_input" in graph["index_sync"]
    # the package's __init__ re-exports the modules; a module importing the package itself
    # would close a cycle through it, so it counts as a node like any other
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle in editor/model: " + " -> ".join(cycle or [])
