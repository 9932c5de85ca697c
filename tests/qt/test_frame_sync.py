"""One composite of the window per shown frame: the graphics scenes' queued updates (three 2D
views, three timeline plots) join the frame being painted instead of each asking for another."""
from __future__ import annotations

import numpy as np

from editor.qt.frame_sync import CompositeCounter


def _composites_per_step(window, qtbot, steps: int = 3) -> int:
    """Window composites during ``steps`` presses of ``F10`` (Simulation → Step one frame),
    each followed by 300 ms for every view, plot and panel to repaint."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    window.activateWindow()
    qtbot.waitActive(window)
    counter = CompositeCounter(window)  # the window's paint-and-composite passes
    for _ in range(steps):
        QTest.keyClick(window, Qt.Key_F10)
        qtbot.wait(300)
    window.removeEventFilter(counter)
    return counter.frames


def test_a_simulation_step_repaints_its_views_in_one_composite(window, qtbot):
    window.docks["timeline"].show()
    _composites_per_step(window, qtbot, steps=2)  # the simulation and its docks exist first
    first = window.timeline.frame
    assert first >= 1
    with_sync = _composites_per_step(window, qtbot)
    window.removeEventFilter(window.frame_sync)
    without = _composites_per_step(window, qtbot)
    assert window.timeline.frame == first + 6
    # each 2D view and each plot otherwise asks for a composite of its own after the step
    # (later timers, the hotspot panel's and the overlay labels', add a few either way)
    assert 2 * with_sync <= without, (with_sync, without)


def test_a_frame_painted_while_an_edit_waits_for_its_recompute_shows_the_edit(window, qtbot):
    """An edit that also repaints a panel (Statistics, Partition) can have the window's paint
    request delivered before the editor's posted recompute (seen on e3m4: a frame without the
    edit, then one with it). The frame sync recomputes first, so that frame shows the edit."""
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    from editor.model import Transform
    doc, state = window.document, window.state
    oid = doc.scene.brush_ids()[0]
    qtbot.wait(100)
    doc.push(Transform([oid], delta=np.array([16.0, 0.0, 0.0])))
    assert state.flush_pending()
    top = window.views2d["Top"]
    QApplication.sendEvent(window, QEvent(QEvent.UpdateRequest))  # the window paints now
    assert not state.flush_pending()
    assert state.scene_arrays.changed == {oid}
    drawn = top.outlines.outline_segments()[oid]
    np.testing.assert_allclose(drawn[:, 0].min(), doc.scene[oid].lo[0])
