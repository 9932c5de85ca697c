"""Imports only point downwards: Qt stays in the GUI layer (DESIGN.md §1).

The test parses every module's import statements (no importing, so it also catches imports in
functions that never run) and checks each layer against its allowed dependencies.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
QT_MODULES = ("PySide6", "shiboken6", "pyqtgraph", "OpenGL", "PyQt5", "PyQt6", "PySide2")

# layer -> top-level packages it must never import
FORBIDDEN = {
    "spatial": QT_MODULES + ("editor", "plugins", "app"),
    "plugins": QT_MODULES + ("editor.qt", "app"),
    "editor/model": QT_MODULES + ("editor.qt", "app", "editor.cli"),
    "editor/cli": QT_MODULES + ("editor.qt",),
    # the editor reaches plugin code through the registry (spatial.registry) only
    "editor": ("plugins",),
}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def layer_files(layer: str) -> list[Path]:
    target = ROOT / layer
    if target.is_file():
        return [target]
    return sorted(target.rglob("*.py"))


def violations(layer: str) -> list[str]:
    bad = []
    for path in layer_files(layer):
        for line, module in imported_modules(path):
            for forbidden in FORBIDDEN[layer]:
                if module == forbidden or module.startswith(forbidden + "."):
                    bad.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    return bad


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_point_downwards(layer):
    assert layer_files(layer), f"layer {layer} has no Python files"
    assert violations(layer) == []


def test_the_scanner_catches_a_qt_import(tmp_path):
    """The check above would fail on a real violation (a test that cannot fail is a defect)."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from PySide6 import QtCore\n    import pyqtgraph.opengl as gl\n")
    modules = [m for _, m in imported_modules(bad)]
    assert "PySide6" in modules and "pyqtgraph.opengl" in modules
