"""The 3D view sends only the rows an edit changed to its vertex buffers, and draws the same
frame as a view that sent everything (runs under Xvfb; skipped without a GL context)."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from editor.model import SetSelection

pytestmark = pytest.mark.gl


def _render(window) -> np.ndarray:
    from editor.qt.screenshot import settle
    from tests.qt.test_gl import _pixels
    window.state.flush()
    settle(4)
    return _pixels(window.view3d.grabFramebuffer())


def _full_upload(view) -> None:
    """Make the view send its brush arrays whole at the next frame, as a new level does."""
    for uploads in (view.faces.position_uploads, view.faces.colour_uploads, view.edges.uploads):
        uploads.mark(None)
    view.faces.update()  # a changed item asks for its paint, as set_triangles does
    view.edges.update()


def test_a_nudge_uploads_the_moved_brush_rows_only(gl_window, qtbot):
    window = gl_window
    view = window.view3d
    doc = window.document
    window.state.set_overlay_visible(False)
    _render(window)
    arrays = window.state.scene_arrays
    oid = int(arrays.brush_ids[len(arrays.brush_ids) // 2])
    k = arrays.brush_rows()[oid]
    doc.push(SetSelection([oid]))
    window.activateWindow()
    qtbot.waitActive(window)
    top = window.views2d["Top"]
    top.setFocus()
    lo = doc.scene[oid].lo.copy()
    qtbot.keyClick(top, Qt.Key_Right)
    assert doc.scene[oid].lo[0] > lo[0]
    doc.push(SetSelection([]))  # the highlight off: the frame shows the brush itself
    incremental = _render(window)
    arrays = window.state.scene_arrays
    assert view.faces.position_uploads.rows_uploaded == arrays.mesh_offsets[k + 1] - arrays.mesh_offsets[k]
    assert view.edges.uploads.rows_uploaded == 2 * (arrays.edge_offsets[k + 1] - arrays.edge_offsets[k])
    assert view.faces.position_uploads.rows_uploaded < len(arrays.mesh_vertices) / 10
    _full_upload(view)
    whole = _render(window)
    assert view.faces.position_uploads.rows_uploaded == len(arrays.mesh_vertices)
    np.testing.assert_array_equal(incremental, whole)
    # and the moved brush really moved on screen: undo, and the frame differs
    window.act_undo.trigger()
    window.act_undo.trigger()
    assert np.allclose(doc.scene[oid].lo, lo)
    assert (np.abs(_render(window).astype(int) - whole.astype(int)).max(axis=2) > 8).sum() > 20


def test_a_new_brush_is_appended_behind_the_others(gl_window, qtbot):
    from tests.qt.conftest import drag
    window = gl_window
    view = window.view3d
    _render(window)
    before = len(window.state.scene_arrays.mesh_vertices)
    window.state.set_tool("brush")
    drag(window.views2d["Top"], (-320, 160), (-256, 224))
    after_frame = _render(window)
    arrays = window.state.scene_arrays
    assert len(arrays.mesh_vertices) > before
    assert view.faces.position_uploads.rows_uploaded == len(arrays.mesh_vertices) - before
    _full_upload(view)
    np.testing.assert_array_equal(after_frame, _render(window))


def test_big_levels_draw_brush_faces_again_once_the_camera_rests(gl_window, qtbot, monkeypatch):
    from PySide6.QtCore import QPoint

    from editor.qt.views import view3d as view3d_module
    window = gl_window
    view = window.view3d
    faces = view.faces
    monkeypatch.setattr(view3d_module, "MOTION_LOD_VERTICES", len(faces.vertexes) - 1)
    still = _render(window)
    drawn = faces.frames_drawn
    centre = QPoint(view.width() // 2, view.height() // 2)
    qtbot.mousePress(view, Qt.LeftButton, Qt.NoModifier, centre)
    for k in range(1, 6):  # an orbit: left-drag
        qtbot.mouseMove(view, centre + QPoint(12 * k, 0))
        qtbot.wait(20)
    moving = _pixels_now(view)
    assert faces.skipped and faces.frames_drawn == drawn, "faces left out while orbiting"
    qtbot.mouseRelease(view, Qt.LeftButton, Qt.NoModifier, centre + QPoint(60, 0))
    qtbot.waitUntil(lambda: not faces.skipped and faces.frames_drawn > drawn, timeout=3000)
    rested = _render(window)
    # the faces are back: the rested frame holds more of the face colours than the moving one
    assert np.abs(rested.astype(int) - moving.astype(int)).max(axis=2).astype(bool).sum() > 100
    assert np.abs(still.astype(int) - rested.astype(int)).max() > 0, "the camera did turn"


def test_small_levels_keep_their_faces_while_orbiting(gl_window, qtbot):
    from PySide6.QtCore import QPoint
    view = gl_window.view3d
    _render(gl_window)
    drawn = view.faces.frames_drawn
    centre = QPoint(view.width() // 2, view.height() // 2)
    qtbot.mousePress(view, Qt.LeftButton, Qt.NoModifier, centre)
    for k in range(1, 4):
        qtbot.mouseMove(view, centre + QPoint(12 * k, 0))
        qtbot.wait(20)
    qtbot.mouseRelease(view, Qt.LeftButton, Qt.NoModifier, centre + QPoint(36, 0))
    assert not view.faces.skipped and view.faces.frames_drawn > drawn


def _pixels_now(view) -> np.ndarray:
    from tests.qt.test_gl import _pixels
    return _pixels(view.grabFramebuffer())
