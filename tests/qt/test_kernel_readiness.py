"""The tools wait, disabled, for their kernel family (``editor.qt.kernel_readiness``): a
stand-in warm-up process releases the families one at a time."""
from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from editor.warmup import FAMILIES


class _Warmup:
    """Says a family's line when the test sets its event."""

    def __init__(self) -> None:
        self.release = {line: threading.Event() for line in FAMILIES.values()}

    def wait_ready(self, timeout: float = 600.0, line: str = "ready") -> bool:
        return self.release[line].wait(timeout)


@pytest.fixture
def gated(window, qtbot):
    from editor.qt.kernel_readiness import start_kernel_readiness

    warmup = _Warmup()
    readiness = start_kernel_readiness(window, "octree", warmup)
    yield window, warmup, readiness
    for event in warmup.release.values():
        event.set()
    readiness.stop()


def test_tools_wait_for_their_kernels_then_work(gated, qtbot):
    from tests.qt.conftest import view_pos

    window, warmup, readiness = gated
    doc = window.document
    label = window.findChild(type(readiness.label), "kernel_readiness")
    assert label.isVisible() and "picking …" in label.text()
    assert not window.tool_actions["ray"].isEnabled() and not window.act_play.isEnabled()
    assert not window.act_delete.isEnabled()
    # a click in the Top view is ignored while picking is not ready
    top = window.views2d["Top"]
    oid = doc.scene.brush_ids()[0]
    lo, hi = doc.scene.bounds_of([oid])
    centre = ((lo[0] + hi[0]) / 2)[:2]
    QTest.mouseClick(top.viewport(), Qt.LeftButton, Qt.NoModifier, view_pos(top, *centre))
    qtbot.wait(50)
    assert not doc.selection

    warmup.release["queries ready"].set()
    qtbot.waitUntil(lambda: readiness.ready("pick"), timeout=30000)
    assert window.tool_actions["ray"].isEnabled() and "picking ✓" in label.text()
    assert not window.act_play.isEnabled()  # the simulation still waits
    for line in ("edits ready", "simulation ready"):
        warmup.release[line].set()
    qtbot.waitUntil(lambda: not readiness.pending, timeout=30000)
    assert window.act_play.isEnabled() and window.act_delete.isEnabled()
    assert not label.isVisible()
    QTest.mouseClick(top.viewport(), Qt.LeftButton, Qt.NoModifier, view_pos(top, *centre))
    qtbot.waitUntil(lambda: bool(doc.selection), timeout=5000)


def test_tools_wait_again_while_a_first_switch_loads_its_remaining_kernels(gated, qtbot,
                                                                            monkeypatch):
    import editor.warmup as warmup_module

    window, warmup, readiness = gated
    for event in warmup.release.values():
        event.set()
    qtbot.waitUntil(lambda: not readiness.pending, timeout=30000)
    class Preparation:  # a first switch whose remaining kernels are still loading
        def cancel(self) -> None:
            preparing.discard(self)

    preparing = set()
    preparing.add(Preparation())
    monkeypatch.setattr(warmup_module, "_PREPARING", preparing)
    window.document.rebuild_finished.emit(1.0)
    qtbot.wait(50)
    assert readiness.pending and not window.tool_actions["ray"].isEnabled()
    assert not window.act_play.isEnabled()
    preparing.clear()
    qtbot.waitUntil(lambda: not readiness.pending, timeout=5000)
    assert window.tool_actions["ray"].isEnabled() and window.act_play.isEnabled()
