"""Model -> widget updates block the widget's signals through one context manager.

``editor.qt.quiet.signals_blocked`` restores each widget's previous state even when the body
raises; a bare ``blockSignals(True)``/``blockSignals(False)`` pair would leave the widget deaf
after an exception. The scan below keeps every ``blockSignals`` call in that one function.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = ("editor/qt/quiet.py", "signals_blocked")  # the one function that may call blockSignals


def block_signals_calls(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line in function`` for every ``.blockSignals(...)`` call in ``path``, except those
    inside the context manager itself."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    rel = path.relative_to(root).as_posix()
    found: list[str] = []

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "blockSignals" and (rel, function) != ALLOWED):
            found.append(f"{rel}:{node.lineno} in {function or '<module>'}")
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, "")
    return found


def test_no_bare_block_signals_outside_the_context_manager():
    files = sorted((ROOT / "editor").rglob("*.py")) + [ROOT / "app.py"]
    bare = [hit for path in files for hit in block_signals_calls(path)]
    assert bare == [], "use editor.qt.quiet.signals_blocked instead of blockSignals:\n" + "\n".join(bare)


def test_the_scan_catches_a_bare_pair(tmp_path):
    """The ban above would fail on a real bare pair (a check that cannot fail is a defect)."""
    (tmp_path / "editor" / "qt").mkdir(parents=True)
    bad = tmp_path / "editor" / "qt" / "panel.py"
    bad.write_text("def fill(combo):\n    combo.blockSignals(True)\n    combo.clear()\n"
                   "    combo.blockSignals(False)\n")
    assert block_signals_calls(bad, tmp_path) == ["editor/qt/panel.py:2 in fill", "editor/qt/panel.py:4 in fill"]
    quiet = tmp_path / "editor" / "qt" / "quiet.py"
    quiet.write_text("def signals_blocked(w):\n    w.blockSignals(True)\n\ndef other(w):\n    w.blockSignals(True)\n")
    assert block_signals_calls(quiet, tmp_path) == ["editor/qt/quiet.py:5 in other"]


def test_signals_come_back_after_an_exception(qtbot):
    from PySide6.QtWidgets import QSpinBox

    from editor.qt.quiet import signals_blocked
    spin = QSpinBox()
    qtbot.addWidget(spin)
    seen: list[int] = []
    spin.valueChanged.connect(seen.append)
    with pytest.raises(RuntimeError), signals_blocked(spin):
        spin.setValue(3)
        raise RuntimeError("a model update failed half way")
    assert seen == [] and not spin.signalsBlocked()
    spin.setValue(4)
    assert seen == [4]


def test_an_outer_block_survives_an_inner_one(qtbot):
    from PySide6.QtWidgets import QCheckBox, QSpinBox

    from editor.qt.quiet import signals_blocked
    spin, box = QSpinBox(), QCheckBox()
    qtbot.addWidget(spin)
    qtbot.addWidget(box)
    with signals_blocked(spin, box):
        with signals_blocked(spin):
            pass
        assert spin.signalsBlocked() and box.signalsBlocked(), "the inner block must not unblock"
    assert not spin.signalsBlocked() and not box.signalsBlocked()
