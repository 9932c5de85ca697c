"""A 2D view's item for a frame's moving bodies: thousands of box outlines drawn as one image.

The outlines are written into pixels by a compiled kernel (:mod:`spatial.outline_raster`) at
each paint, in the view's transform of that paint, so panning and zooming stay exact. The
kernel runs without the interpreter lock; the window's thread only draws the finished image.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QImage

from spatial.outline_raster import argb, finite_bounds, outline_image


class BoxOutlinesItem(pg.GraphicsObject):
    """The outlines of boxes ``lo``..``hi`` seen along a view's ``axes``: sleeping ones in
    ``sleeping_rgb``, awake ones in ``awake_rgb`` over them, ``width`` pixels wide.
    :attr:`paints` counts paints; :attr:`count` the boxes held."""

    def __init__(self, axes: tuple[int, int], awake_rgb, sleeping_rgb, width: float = 1.5,
                 z: float = 0.0) -> None:
        super().__init__()
        self.axes = (int(axes[0]), int(axes[1]))
        self._colours = (int(argb(sleeping_rgb)), int(argb(awake_rgb)))
        self._width = float(width)
        self._lo = self._hi = np.empty((0, 3))
        self._awake = np.empty(0, dtype=np.uint8)
        self._rect = QRectF()
        self.paints = 0
        self.setZValue(z)

    @property
    def count(self) -> int:
        return len(self._lo)

    def set_boxes(self, lo: np.ndarray, hi: np.ndarray, awake: np.ndarray) -> None:
        """Draw boxes ``lo``..``hi`` (``(N, 3)``) with their ``awake`` flags from now on (the
        arrays are kept, not copied: a frame's arrays are never written again)."""
        self._lo = np.ascontiguousarray(lo, dtype=np.float64).reshape(-1, 3)
        self._hi = np.ascontiguousarray(hi, dtype=np.float64).reshape(-1, 3)
        self._awake = np.asarray(awake).reshape(-1)
        rect = self._bounds()
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = rect
        self.update()

    def clear(self) -> None:
        self.set_boxes(np.empty((0, 3)), np.empty((0, 3)), np.empty(0, dtype=bool))

    def _bounds(self) -> QRectF:
        if not len(self._lo):
            return QRectF()
        u0, v0, u1, v1 = finite_bounds(self._lo, self._hi, *self.axes)
        if u1 < u0:
            return QRectF()
        return QRectF(float(u0), float(v0), float(u1 - u0), float(v1 - v0))

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt's name)
        return self._rect

    def paint(self, painter, *args) -> None:
        self.paints += 1
        if not len(self._lo):
            return
        device = painter.device()
        ratio = float(device.devicePixelRatioF()) if device is not None else 1.0
        width = int(np.ceil(device.width() * ratio)) if device is not None else 0
        height = int(np.ceil(device.height() * ratio)) if device is not None else 0
        t = painter.worldTransform()
        transform = (t.m11() * ratio, t.m12() * ratio, t.m21() * ratio, t.m22() * ratio,
                     t.dx() * ratio, t.dy() * ratio)
        made = outline_image(self._lo, self._hi, self._awake, self.axes, transform,
                             (width, height), self._colours, max(1, round(self._width * ratio)))
        if made is None:
            return
        pixels, left, top = made
        image = QImage(pixels.data, pixels.shape[1], pixels.shape[0], pixels.strides[0],
                       QImage.Format.Format_ARGB32_Premultiplied)
        image.setDevicePixelRatio(ratio)
        painter.save()
        painter.resetTransform()
        painter.drawImage(QPointF(left / ratio, top / ratio), image)
        painter.restore()
