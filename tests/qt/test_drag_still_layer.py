"""A drag in the 3D view's still image: every brush but the selected ones stays in the cached
level image, each mouse move draws only the selected brushes over a copy of it, and the frame is
the one drawing every item gives, pixel for pixel (runs under Xvfb; skipped without a GL
context)."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, Qt

from tests.qt.conftest import _send, click, view_pos
from tests.qt.test_gl_ranges import _render

pytestmark = pytest.mark.gl


def _direct(window) -> np.ndarray:
    """The frame with every item drawn on the paint itself (no still image copied)."""
    view = window.view3d
    view.still.failed = True
    view.update()
    try:
        return _render(window)
    finally:
        view.still.failed = False
        view.update()


def _select_a_brush(window, qtbot) -> tuple[int, np.ndarray]:
    """Click a brush in the Top view, zoomed in on it; its id and a point on it away from its
    resize handles (world u, v)."""
    from PySide6.QtCore import QRectF
    qtbot.waitUntil(window.tools.ready, timeout=300_000)
    window.tool_actions["select"].trigger()
    doc, top = window.document, window.views2d["Top"]
    arrays = window.state.scene_arrays
    ids = [int(i) for i in arrays.brush_ids]
    lo, hi = doc.scene.bounds_of(ids)
    size = (hi - lo)[:, :2]
    level = size.max(axis=0)
    # the thickest brush in the Top view short of the floor and ceiling: grabbed away from
    # its handles, not a thin wall
    small = size.prod(axis=1) < level.prod() / 4
    k = int(np.argmax(np.where(small, size.min(axis=1), -1.0)))
    centre, extent = (lo[k] + hi[k])[:2] / 2, (hi[k] - lo[k])[:2]
    span = 4 * float(extent.max())
    top.vb.setRange(QRectF(centre[0] - span / 2, centre[1] - span / 2, span, span), padding=0)
    qtbot.wait(100)
    click(top, tuple(centre))
    qtbot.waitUntil(lambda: len(doc.selection) == 1, timeout=5000)
    (oid,) = doc.selection
    assert oid in ids
    olo, ohi = doc.scene.bounds_of([oid])
    return oid, (olo[0] + ohi[0])[:2] / 2 + (ohi[0] - olo[0])[:2] / 4


def test_a_drag_draws_only_the_selected_brush_over_the_still_level(gl_window, qtbot):
    window = gl_window
    view, doc, top = window.view3d, window.document, window.views2d["Top"]
    # the tree overlay hidden: a move into another of the demo's few octree nodes changes the
    # overlay, which is drawn before the brushes and so redraws the still level
    # (test_an_unchanged_overlay_is_not_uploaded_again: an unchanged one does not)
    window.state.set_overlay_visible(False)
    oid, at = _select_a_brush(window, qtbot)
    arrays = window.state.scene_arrays
    k = arrays.brush_rows()[oid]
    rows = (int(arrays.mesh_offsets[k]), int(arrays.mesh_offsets[k + 1]))
    assert view.faces.split == [rows], "the selected brush's faces are drawn apart"
    assert view.edges.split == [(2 * int(arrays.edge_offsets[k]), 2 * int(arrays.edge_offsets[k + 1]))]
    before = _render(window)
    np.testing.assert_array_equal(before, _direct(window))
    renders, base_renders = view.level_layer.renders, view.still.renders
    own, part = view.faces.frames_drawn, view.faces.part.frames_drawn
    x0 = float(doc.scene[oid].lo[0])
    grid = float(window.state.grid_size)
    _send(top, QEvent.MouseButtonPress, view_pos(top, *at), Qt.LeftButton, Qt.LeftButton,
          Qt.NoModifier)
    frames = [before]
    for step in range(1, 5):
        qtbot.wait(15)  # pyqtgraph drops moves closer than 10 ms apart
        _send(top, QEvent.MouseMove, view_pos(top, at[0] + 4 * grid * step, at[1]), Qt.NoButton,
              Qt.LeftButton, Qt.NoModifier)
        frame = _render(window)
        assert float(doc.scene[oid].lo[0]) == x0 + 4 * grid * step, "the move moved the brush"
        # the level without the brush was not drawn again: only the brush, over its copy
        assert view.level_layer.renders == renders and view.still.renders == base_renders
        assert view.faces.frames_drawn == own
        assert view.faces.part.frames_drawn > part
        part = view.faces.part.frames_drawn
        # only the brush's rows were sent to the vertex buffers
        assert view.faces.position_uploads.rows_uploaded == rows[1] - rows[0]
        assert view.edges.uploads.rows_uploaded == 2 * (arrays.edge_offsets[k + 1] - arrays.edge_offsets[k])
        assert np.abs(frame.astype(int) - frames[-1].astype(int)).max(axis=2).astype(bool).sum() > 20, \
            "the frame shows the brush where it moved"
        np.testing.assert_array_equal(frame, _direct(window))
        own = view.faces.frames_drawn  # the direct frame drew every brush itself
        frames.append(frame)
    _send(top, QEvent.MouseButtonRelease, view_pos(top, at[0] + 16 * grid, at[1]), Qt.LeftButton,
          Qt.NoButton, Qt.NoModifier)
    assert doc.stack.history[doc.stack.index - 1].startswith("Move")
    np.testing.assert_array_equal(_render(window), _direct(window))


def test_the_still_level_is_drawn_again_when_the_selection_or_camera_changes(gl_window, qtbot):
    window = gl_window
    view = window.view3d
    oid, _ = _select_a_brush(window, qtbot)
    _render(window)
    renders, base_renders = view.level_layer.renders, view.still.renders
    # another brush selected: it leaves the still level, the first one joins it again
    arrays = window.state.scene_arrays
    other = next(int(i) for i in arrays.brush_ids if int(i) != oid)
    from editor.model import SetSelection
    window.document.push(SetSelection([other]))
    selected = _render(window)
    assert view.level_layer.renders == renders + 1 and view.still.renders == base_renders
    np.testing.assert_array_equal(selected, _direct(window))
    # nothing selected: every brush is in the still level
    window.document.push(SetSelection([]))
    cleared = _render(window)
    assert view.faces.split == [] and not view.faces.part.visible()
    np.testing.assert_array_equal(cleared, _direct(window))
    # an orbit draws both layers again
    renders, base_renders = view.level_layer.renders, view.still.renders
    centre = QPoint(view.width() // 2, view.height() // 2)
    qtbot.mousePress(view, Qt.LeftButton, Qt.NoModifier, centre)
    qtbot.mouseMove(view, centre + QPoint(30, 0))
    qtbot.mouseRelease(view, Qt.LeftButton, Qt.NoModifier, centre + QPoint(30, 0))
    _render(window)
    assert view.level_layer.renders > renders and view.still.renders > base_renders


def test_an_unchanged_overlay_is_not_uploaded_again(gl_window, qtbot):
    """An edit redraws the tree overlay from a new node table; the same boxes in the same
    colours are not sent again, so the still level stays valid."""
    window = gl_window
    view = window.view3d
    _render(window)
    renders = view.level_layer.renders
    window.state.set_overlay_settings()  # the same settings: the same overlay, built again
    _render(window)
    assert view.level_layer.renders == renders
    window.state.set_overlay_settings(leaves_only=not window.state.overlay_settings.leaves_only)
    _render(window)
    assert view.level_layer.renders == renders + 1


def test_the_frame_bringing_the_faces_back_is_drawn_in_slices(gl_window, qtbot, monkeypatch):
    """Once the camera rests after an orbit of a big level, its faces come back in a level
    image drawn a slice per paint, the image without them on show until it is whole; the
    whole one is the frame drawing every item gives."""
    from editor.qt.views import view3d as view3d_module
    window = gl_window
    view = window.view3d
    faces = len(view.faces.vertexes)
    monkeypatch.setattr(view3d_module, "MOTION_LOD_VERTICES", faces - 1)
    monkeypatch.setattr(view3d_module, "SLICE_VERTICES", faces // 5 // 6 * 6)
    _render(window)
    paints_pending = []
    real = view.paintGL

    def paint(*args, **kwargs):
        real(*args, **kwargs)
        paints_pending.append(view.level_layer.pending)

    monkeypatch.setattr(view, "paintGL", paint)
    centre = QPoint(view.width() // 2, view.height() // 2)
    qtbot.mousePress(view, Qt.LeftButton, Qt.NoModifier, centre)
    for k in range(1, 4):  # an orbit: faces left out
        qtbot.mouseMove(view, centre + QPoint(12 * k, 0))
        qtbot.wait(20)
    qtbot.mouseRelease(view, Qt.LeftButton, Qt.NoModifier, centre + QPoint(36, 0))
    assert view.faces.skipped
    paints_pending.clear()
    renders = view.level_layer.renders
    qtbot.waitUntil(lambda: not view.faces.skipped and not view.full_frame_due(), timeout=5000)
    assert view.level_layer.renders == renders + 1
    assert paints_pending.count(True) >= 4, paints_pending  # five slices of faces at least
    assert paints_pending[-1] is False
    np.testing.assert_array_equal(_render(window), _direct(window))


def test_a_new_level_s_first_image_is_shown_as_it_is_drawn_in_slices(gl_window, qtbot,
                                                                     monkeypatch):
    """A big level's first image is drawn a slice per paint, each paint showing the part drawn
    so far; the whole one is the frame drawing every item gives."""
    from editor.qt.views import view3d as view3d_module
    window = gl_window
    view = window.view3d
    edges = len(view.edges.pos)
    monkeypatch.setattr(view3d_module, "SLICE_VERTICES", edges // 4 // 6 * 6)
    _render(window)
    pending = []
    real = view.paintGL

    def paint(*args, **kwargs):
        real(*args, **kwargs)
        pending.append(view.level_layer.pending)

    monkeypatch.setattr(view, "paintGL", paint)
    old = window.document
    assert window.open_file(None, background=False)  # the demo level again: a new document
    assert window.document is not old
    qtbot.waitUntil(lambda: not view.full_frame_due() and len(pending) > 3, timeout=10_000)
    first = pending[:pending.index(False)] if False in pending else pending
    assert len(first) >= 3 and all(first), pending  # the first image took several paints
    np.testing.assert_array_equal(_render(window), _direct(window))
