"""Real pixels from the OpenGL 3D view (runs under Xvfb; skipped without a GL context)."""
from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.gl


def _pixels(image) -> np.ndarray:
    from PySide6.QtGui import QImage
    image = image.convertToFormat(QImage.Format_RGBA8888)
    ptr = image.constBits()
    arr = np.frombuffer(ptr, dtype=np.uint8, count=image.sizeInBytes())
    return arr.reshape(image.height(), image.bytesPerLine() // 4, 4)[:, :image.width(), :3].copy()


def _render(window):
    from editor.qt.screenshot import settle
    window.state.flush()
    settle(4)
    return _pixels(window.view3d.grabFramebuffer())


def test_3d_view_draws_the_level_and_the_overlay_colour(gl_window, qtbot):
    window = gl_window
    view = window.view3d
    window.state.set_overlay_visible(False)
    without = _render(window)
    assert without.std(axis=(0, 1)).max() > 5, "the frame is not a uniform colour"
    # a single bright, unmistakable overlay colour: every node at the top of the colour map
    window.state.set_overlay_visible(True)
    window.state.set_overlay_settings(metric="depth", min_depth=0, max_depth=0)
    window.state.flush()
    geom = window.state.overlay
    assert geom.count == 1
    colour = (np.asarray(geom.colours[0, :3]) * 255).round()
    with_overlay = _render(window)
    near = np.abs(with_overlay.astype(int) - colour).sum(axis=2) <= 30
    near_before = np.abs(without.astype(int) - colour).sum(axis=2) <= 30
    assert near.sum() > near_before.sum() + 50, "the overlay's colour appears in the frame"
    assert view.frame_ms > 0


def test_click_in_3d_view_picks_through_the_index(gl_window, qtbot):
    window = gl_window
    view = window.view3d
    doc = window.document
    window.state.set_tool("select")
    w, h = view.width(), view.height()
    origin, direction = view.ray_at(w / 2, h / 2)
    hits = window.state.pick(origin, direction)
    assert hits, "the camera looks at the level, the centre ray hits something"
    from PySide6.QtCore import QPoint, Qt
    qtbot.mouseClick(view, Qt.LeftButton, pos=QPoint(w // 2, h // 2))
    assert doc.selection == {hits[0]}


def test_screenshot_mode_writes_the_window_with_gl_content(tmp_path, qapp):
    from editor.qt.glcheck import gl_status
    ok, reason = gl_status()
    if not ok:
        pytest.skip(f"no OpenGL: {reason}")
    from PySide6.QtGui import QImage

    from editor.qt.app_main import run_gui
    out = tmp_path / "shot.png"
    code = run_gui(["--screenshot", str(out), "--backend", "quadtree", "--overlay", "own_count",
                    "--size", "1200x800"])
    assert code == 0
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1200, 800)
    px = _pixels(image)
    # the 3D view sits top-left of the central area: its region must hold real, varied pixels
    region = px[80:380, 260:560]
    assert region.std(axis=(0, 1)).max() > 10


def test_fly_mode_moves_the_camera_with_wasd(gl_window, qtbot):
    from PySide6.QtCore import Qt
    view = gl_window.view3d
    view.setFocus()
    qtbot.keyClick(view, Qt.Key_Z)
    assert view.fly_mode
    eye0 = np.array(list(view.cameraPosition()))
    c = view.opts["center"]
    forward = np.array([c.x(), c.y(), c.z()]) - eye0
    qtbot.keyPress(view, Qt.Key_W)
    qtbot.wait(100)
    qtbot.keyRelease(view, Qt.Key_W)
    eye1 = np.array(list(view.cameraPosition()))
    assert (eye1 - eye0) @ forward > 0, "W flies forward"
    qtbot.keyClick(view, Qt.Key_Z)
    assert not view.fly_mode


def test_big_overlays_are_culled_to_the_camera_view(gl_window, qtbot, monkeypatch):
    from PySide6.QtGui import QVector3D

    import editor.qt.views.view3d as view3d_module
    monkeypatch.setattr(view3d_module, "CULL_OVERLAY_ABOVE", 0)
    window = gl_window
    view = window.view3d
    window.params_panel.choose_backend("quadtree")
    window.state.flush()
    geom = window.state.overlay
    view._upload_overlay()
    assert view.drawn_boxes == geom.count, "the whole level is in view"
    # look closely at one corner, away from most cells
    view.setCameraPosition(pos=QVector3D(-480, -480, 0), distance=60, elevation=10, azimuth=45)  # looking outwards
    view._upload_overlay()
    assert 0 < view.drawn_boxes < geom.count


def test_query_layer_draws_over_the_heatmap_and_toggles(gl_window, qtbot):
    from PySide6.QtCore import QPoint, Qt

    from editor.qt.colors import VISITED
    window = gl_window
    view = window.view3d
    window.overlay_panel.set_metric("own_count")
    window.tool_actions["ray"].trigger()
    w, h = view.width(), view.height()
    qtbot.mouseClick(view, Qt.LeftButton, pos=QPoint(w // 2, h // 2))
    ray = window.state.ray
    assert ray is not None and len(ray.result.visited)
    colour = np.array(VISITED) * 255
    shown = _render(window)
    visited_px = (np.abs(shown.astype(int) - colour).sum(axis=2) <= 30).sum()
    assert visited_px > 50, "visited nodes drawn in their own colour, over the overlay boxes"
    window.act_queries.trigger()  # View → Query results: off
    hidden = _render(window)
    assert (np.abs(hidden.astype(int) - colour).sum(axis=2) <= 30).sum() < visited_px / 10


def test_the_window_stays_a_raster_window_and_shows_the_3d_frame(gl_window, qtbot):
    """The 3D view renders offscreen and paints its frame as an image: the window is never
    switched to OpenGL composition (which costs every update of any widget a composite of the
    whole window), and a grab of the window shows the 3D view's frame."""
    from PySide6.QtGui import QSurface

    window = gl_window
    view = window.view3d
    frame = _render(window)
    assert window.windowHandle().surfaceType() == QSurface.SurfaceType.RasterSurface
    shot = _pixels(window.grab().toImage())
    corner = view.mapTo(window, view.rect().topLeft())
    h, w = frame.shape[:2]
    seen = shot[corner.y():corner.y() + h, corner.x():corner.x() + w]
    assert seen.shape == frame.shape
    assert np.abs(seen.astype(int) - frame.astype(int)).max() <= 2, "the window shows the frame"
    assert frame.std(axis=(0, 1)).max() > 5
