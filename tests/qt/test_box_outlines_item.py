"""The moving bodies in the 2D views: outlines drawn as one image, exact in every view transform.

A user steps the simulation, then zooms and pans the Top view with the mouse: at every step
each visible body's outline sits on the pixels the view maps its corners to, in its colour
(awake bright, sleeping dim).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QMouseEvent, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from editor.qt.timeline.live_view import ASLEEP_RGB, AWAKE_RGB


@pytest.fixture
def stepped(window, qtbot):
    if getattr(window, "timeline", None) is None:
        from editor.qt.timeline import install_timeline
        install_timeline(window)
    for _ in range(3):
        window.act_step.trigger()
    qtbot.waitUntil(lambda: window.timeline.frame == 3, timeout=60_000)
    qtbot.waitUntil(lambda: window.live_view.bodies_drawn > 0, timeout=10_000)
    return window


def _rgb(colour) -> tuple[int, int, int]:
    return tuple(int(round(c * 255)) for c in colour[:3])


def _edge_colours(view, lo, hi) -> list[tuple[tuple[int, int, int], int]]:
    """For each body whose top edge's middle is inside the view's plot area (its view box,
    which clips what it holds): (pixel colour there, body row)."""
    image = view.viewport().grab().toImage()
    to_device = view.viewportTransform()
    area = to_device.mapRect(view.vb.sceneBoundingRect())
    u, v = view.axes
    found = []
    for row in range(len(lo)):
        corners = [to_device.map(view.vb.mapViewToScene(QPointF(p[u], p[v]))) for p in (lo[row], hi[row])]
        x0, x1 = sorted(c.x() for c in corners)
        y0, _ = sorted(c.y() for c in corners)
        x, y = math.floor((x0 + x1) / 2), math.floor(y0)
        if area.left() + 1 <= x < area.right() - 1 and area.top() + 1 <= y < area.bottom() - 1:
            c = QColor(image.pixel(x, y))
            found.append(((c.red(), c.green(), c.blue()), row))
    return found


def _outlines_on_their_pixels(view, bodies) -> int:
    _, lo, hi, awake = bodies
    found = _edge_colours(view, lo, hi)
    assert found, "no body on screen"
    own = sum(colour == (_rgb(AWAKE_RGB) if awake[row] else _rgb(ASLEEP_RGB)) for colour, row in found)
    # a body's edge may lie under another body's outline (awake ones are drawn last) or an
    # item drawn over the bodies (a label, the selection)
    assert own >= 0.7 * len(found), f"only {own} of {len(found)} edges in their own colour: {found}"
    return len(found)


def _wheel(view, steps: int) -> None:
    centre = QPointF(view.viewport().width() / 2, view.viewport().height() / 2)
    event = QWheelEvent(centre, view.viewport().mapToGlobal(centre), QPoint(), QPoint(0, 120 * steps),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(view.viewport(), event)


def _middle_drag(view, dx: float, steps: int = 6) -> None:
    """Pan: press the middle button in the middle of the view, move ``dx`` pixels, release."""
    target = view.viewport()
    start = QPointF(target.width() / 2, target.height() / 2)

    def send(kind, at, button, buttons):
        QApplication.sendEvent(target, QMouseEvent(kind, at, target.mapToGlobal(at), button,
                                                   buttons, Qt.KeyboardModifier.NoModifier))

    middle = Qt.MouseButton.MiddleButton
    send(QEvent.Type.MouseButtonPress, start, middle, middle)
    for k in range(1, steps + 1):
        QTest.qWait(11)  # pyqtgraph takes at most one move per 10 ms
        send(QEvent.Type.MouseMove, start + QPointF(dx * k / steps, 0), Qt.MouseButton.NoButton, middle)
    send(QEvent.Type.MouseButtonRelease, start + QPointF(dx, 0), middle, Qt.MouseButton.NoButton)


def test_body_outlines_follow_zoom_and_pan(stepped, qtbot):
    window = stepped
    top = window.views2d["Top"]
    bodies = window.timeline.shown_bodies()
    item = window.live_view.items2d["Top"]
    assert item.count == len(bodies[0]) == window.live_view.bodies_drawn
    qtbot.waitUntil(lambda: item.paints > 0, timeout=5_000)
    _outlines_on_their_pixels(top, bodies)

    _wheel(top, 3)  # zoom in around the middle
    qtbot.wait(50)
    _outlines_on_their_pixels(top, bodies)

    rect = top.vb.viewRect()
    _middle_drag(top, top.viewport().width() / 5)
    qtbot.wait(50)
    assert top.vb.viewRect() != rect
    _outlines_on_their_pixels(top, bodies)


def test_the_bodies_go_when_the_level_is_shown_again(stepped, qtbot):
    window = stepped
    item = window.live_view.items2d["Top"]
    assert item.count > 0 and not item.boundingRect().isEmpty()
    window.act_stop.trigger()
    qtbot.waitUntil(lambda: item.count == 0, timeout=5_000)
    assert item.boundingRect().isEmpty()
    np.testing.assert_equal(window.live_view.bodies_drawn, 0)
