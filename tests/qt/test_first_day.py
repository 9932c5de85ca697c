"""Editor defects a new user meets on the first day, each driven through the real window."""
from __future__ import annotations

from PySide6.QtCore import Qt

from .conftest import drag


def _top(window):
    return window.views2d["Top"]


def test_the_brush_tool_makes_a_brush_with_every_drag(window):
    """The new brush is selected after a drag; the next drag elsewhere still makes a brush."""
    doc = window.document
    window.state.set_tool("brush")
    before = set(doc.scene.brush_ids())
    drag(_top(window), (-203, -205), (-124, -146))
    first = set(doc.scene.brush_ids()) - before
    assert len(first) == 1 and doc.selection == first
    drag(_top(window), (-83, -205), (-4, -146))
    second = set(doc.scene.brush_ids()) - before - first
    assert len(second) == 1, "the second drag made no brush"
    assert doc.selection == second
    drag(_top(window), (-203, -85), (-124, -26))
    assert len(set(doc.scene.brush_ids()) - before) == 3


def test_ctrl_y_redoes(window, qtbot):
    doc = window.document
    window.state.set_tool("brush")
    before = set(doc.scene.brush_ids())
    drag(_top(window), (-203, -205), (-124, -146))
    made = set(doc.scene.brush_ids()) - before
    window.activateWindow()  # the shortcuts are the window's: they act while it is active
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    qtbot.keyClick(window, Qt.Key_Z, Qt.ControlModifier)
    assert not made & set(doc.scene.brush_ids())
    qtbot.keyClick(window, Qt.Key_Y, Qt.ControlModifier)
    assert made <= set(doc.scene.brush_ids())

