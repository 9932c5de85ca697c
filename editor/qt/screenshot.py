"""Screenshot mode: render every view once and save the whole window as a PNG.

``QWidget.grab()`` does not capture OpenGL content reliably, so each 3D view's framebuffer is
read with ``grabFramebuffer()`` and painted over its place in the window grab.
"""
from __future__ import annotations

from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QApplication


class ScreenshotError(RuntimeError):
    """The window could not be rendered (no GL context, empty frame...)."""


def settle(rounds: int = 6) -> None:
    app = QApplication.instance()
    for _ in range(rounds):
        app.processEvents()


def grab_window(window):
    """A ``QPixmap`` of the whole window with the GL views' real pixels composited in."""
    window.state.flush()
    settle()
    pixmap = window.grab()
    view = window.view3d
    if view is not None:
        image = view.grabFramebuffer()
        if image.isNull() or image.width() == 0:
            raise ScreenshotError("the 3D view rendered nothing (no OpenGL framebuffer)")
        painter = QPainter(pixmap)
        top_left = view.mapTo(window, QPoint(0, 0))
        painter.drawImage(QRect(top_left, view.size()), image)
        painter.end()
    return pixmap


def save_screenshot(window, path: str) -> None:
    pixmap = grab_window(window)
    if not pixmap.save(path):
        raise ScreenshotError(f"{path}: could not write the PNG")
