"""The 3D view's still layer: the ground grid and a live game's static boxes are drawn once and
copied into later paints until they or the camera change (runs under Xvfb; skipped without a
GL context)."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from editor.model import SetSelection
from tests.qt.test_gl_ranges import _render

pytestmark = pytest.mark.gl


def _static_boxes(window, n: int = 400) -> None:
    rng = np.random.default_rng(3)
    lo = rng.uniform(-400, 400, (n, 3))
    window.live_link.static_view.show(lo, lo + rng.uniform(8, 40, (n, 3)))


def test_still_items_are_not_drawn_again_while_only_other_items_change(gl_window, qtbot):
    window = gl_window
    view, state, doc = window.view3d, window.state, window.document
    assert view.still.usable, "this OpenGL copies between framebuffers"
    _static_boxes(window)
    _render(window)
    renders, paints = view.still.renders, view.paints
    ids = [int(i) for i in state.scene_arrays.brush_ids[:3]]
    for k, oid in enumerate(ids):  # selection, overlay and level edits: other items only
        doc.push(SetSelection([oid]))
        state.set_overlay_visible(k % 2 == 0)
        _render(window)
    top = window.views2d["Top"]
    window.activateWindow()
    qtbot.waitActive(window)
    top.setFocus()
    qtbot.keyClick(top, Qt.Key_Right)  # nudge the selected brush
    _render(window)
    assert view.paints > paints + 3
    assert view.still.renders == renders
    # a camera move draws the layer again
    centre = QPoint(view.width() // 2, view.height() // 2)
    qtbot.mousePress(view, Qt.LeftButton, Qt.NoModifier, centre)
    qtbot.mouseMove(view, centre + QPoint(30, 0))
    qtbot.mouseRelease(view, Qt.LeftButton, Qt.NoModifier, centre + QPoint(30, 0))
    _render(window)
    assert view.still.renders > renders
    # and so do new static boxes
    moved = view.still.renders
    _static_boxes(window, 50)
    _render(window)
    assert view.still.renders == moved + 1


def _both_ways(window) -> tuple[np.ndarray, np.ndarray]:
    """The frame drawn with the still layer copied, then with every item drawn directly."""
    view = window.view3d
    renders = view.still.renders
    copied = _render(window)
    assert view.still.renders > renders or renders
    view.still.failed = True  # as an OpenGL that cannot copy: every item drawn on each paint
    view.update()
    direct = _render(window)
    view.still.failed = False
    return copied, direct


def _assert_same_frame(copied: np.ndarray, direct: np.ndarray, exact: bool | None) -> None:
    """The same pixels. Copied byte for byte, every one; blitted, all but depth ties: the
    demo's floor lies in the ground grid's plane, and a blit may round a copied depth (Mesa's
    llvmpipe does) and break a tie between the two the other way."""
    differ = np.abs(copied.astype(int) - direct.astype(int)).max(axis=2) > 0
    if exact:
        assert not differ.any(), f"{int(differ.sum())} pixels differ"
    assert differ.mean() < 0.001, f"{int(differ.sum())} pixels differ"


def _shows_something(frame: np.ndarray) -> bool:
    background = np.array([28, 30, 36])
    return (np.abs(frame.astype(int) - background).max(axis=2) > 16).sum() > 1000


def test_the_copied_layer_shows_the_same_frame_as_drawing_every_item(gl_window):
    window = gl_window
    view = window.view3d
    window.document.push(SetSelection([int(window.state.scene_arrays.brush_ids[0])]))
    copied, direct = _both_ways(window)  # the level, its overlay and selection over the grid
    _assert_same_frame(copied, direct, view.still.exact)
    assert _shows_something(direct)
    # a game's static boxes are drawn before the level's translucent surfaces (seen through
    # them, as the overlay is); without those surfaces the frames are the same as well
    _static_boxes(window)
    view.faces.setVisible(False)
    view.edges.setVisible(False)
    copied, direct = _both_ways(window)
    _assert_same_frame(copied, direct, view.still.exact)
    assert _shows_something(direct)


def test_a_live_game_s_static_boxes_are_still_items(gl_window):
    view = gl_window.view3d
    assert view.still.holds(gl_window.live_link.static_view.item3d)
    assert view.still.holds(view.grid_item)
    assert not view.still.holds(view.faces) and not view.still.holds(view.overlay)
    # the level's surfaces and the overlay are in the layer over it, the selection not
    level = view.level_layer
    assert level.base is view.still
    assert level.holds(view.faces) and level.holds(view.edges) and level.holds(view.overlay)
    assert not level.holds(view.faces.part) and not level.holds(view.selection)


def test_this_opengl_copies_the_layers_byte_for_byte(gl_window):
    """Mesa's llvmpipe (the tests' OpenGL) has ``glCopyImageSubData``: the layers are copied,
    not blitted, so a copied frame is the directly drawn one exactly."""
    from OpenGL.GL import GL_RENDERER, glGetString
    view = gl_window.view3d
    _render(gl_window)
    view.makeCurrent()
    renderer = bytes(glGetString(GL_RENDERER) or b"").decode()
    view.doneCurrent()
    if "llvmpipe" not in renderer:
        pytest.skip(f"not llvmpipe: {renderer}")
    assert view.still.exact and view.level_layer.exact
