"""Screenshot mode: render every view once and save the whole window as a PNG.

``QWidget.grab()`` does not capture OpenGL content reliably, so each 3D view's framebuffer is
read with ``grabFramebuffer()`` and painted over its place in the window grab.
"""
from __future__ import annotations

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, QRect
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QApplication

from spatial.atomic import atomic_write_bytes


class ScreenshotError(RuntimeError):
    """The window could not be rendered (no GL context, empty frame...)."""


def settle(rounds: int = 6) -> None:
    for _ in range(rounds):
        QApplication.processEvents()  # a static method: no instance needed


def grab_window(window):
    """A ``QPixmap`` of the whole window with the GL views' real pixels composited in."""
    window.state.flush()
    for view in getattr(window, "views2d", {}).values():
        view.finish_arrival()  # a big level arriving in slices: show all of it
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


def render_report(window) -> dict:
    """What the window drew: backend, tree nodes (in the table, in the overlay, boxes the 3D
    view kept after culling), and how many brushes, wall segments, triangles and entities the
    level views hold (the 3D view's, else the top view's), and the Statistics panel's figures as
    shown.
    """
    view = window.view3d if window.view3d is not None else window.views2d["Top"]
    drawn = view.drawn_counts() if window.view3d is not None else dict(view.drawn)
    state = window.state
    geom = state.overlay
    overlay_on = state.overlay_visible and geom is not None
    return {"backend": window.document.index.name,
            "nodes": int(geom.total) if geom is not None else 0,
            "nodes_drawn": int(geom.count) if overlay_on else 0,
            "overlay": state.overlay_settings.metric if overlay_on else "none",
            # what the colours mean, from the metric table (editor/model/heatmap_metrics.py)
            "overlay_legend": state.metric.legend if overlay_on else "",
            # a big tree is culled to the camera in 3D (level of detail): the boxes it kept
            "boxes_drawn_3d": int(window.view3d.drawn_boxes) if window.view3d is not None
            and overlay_on else 0,
            "statistics": {key: label.text() for key, label in window.stats_panel.values.items()},
            **{key: int(value) for key, value in drawn.items()}}


def write_render_report(window, path: str, compare: dict | None = None) -> None:
    """Write :func:`render_report` as JSON to ``path`` (whole or not at all); ``compare``, in
    compare mode, is added as its ``compare`` part (both sides)."""
    import json

    from spatial.atomic import atomic_write_text

    report = render_report(window)
    if compare is not None:
        report["compare"] = compare
    text = json.dumps(report, indent=2) + "\n"
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise ScreenshotError(f"{path}: could not write the report: {exc.strerror}") from None


def save_screenshot(window, path: str) -> None:
    """Render ``window`` and write it to ``path`` as a PNG, atomically.

    The image is encoded in memory first, so a failed encoding touches nothing on disk and an
    existing file is replaced in one step (see :mod:`spatial.atomic`).
    """
    pixmap = grab_window(window)
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not pixmap.save(buffer, "PNG"):
        raise ScreenshotError(f"{path}: could not encode the PNG")
    buffer.close()
    try:
        atomic_write_bytes(path, bytes(data.data()))
    except OSError as exc:
        raise ScreenshotError(f"{path}: could not write the PNG: {exc.strerror or exc}") from None
