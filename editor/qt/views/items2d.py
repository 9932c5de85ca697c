"""Lightweight graphics items for the 2D views: many segments per item, a grid that follows
the visible range. One item per overlay colour bin, not one per node (thousands of items are
slow; a few painter paths are fast)."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainterPath, QPen


def qcolor(rgb, alpha: float = 1.0) -> QColor:
    c = QColor()
    c.setRgbF(float(rgb[0]), float(rgb[1]), float(rgb[2]), float(alpha))
    return c


def cosmetic_pen(rgb, alpha: float = 1.0, width: float = 1.0, style=Qt.SolidLine) -> QPen:
    pen = QPen(qcolor(rgb, alpha))
    pen.setCosmetic(True)
    pen.setWidthF(width)
    pen.setStyle(style)
    return pen


def segments_path(points: np.ndarray) -> QPainterPath:
    """A painter path of segments from ``(2 K, 2)`` end points (pairs)."""
    if len(points) == 0:
        return QPainterPath()
    return pg.arrayToQPath(np.ascontiguousarray(points[:, 0], dtype=np.float64),
                           np.ascontiguousarray(points[:, 1], dtype=np.float64), connect="pairs")


def polygons_path(polys) -> QPainterPath:
    """One path holding every polygon (closed)."""
    path = QPainterPath()
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QPolygonF
    for poly in polys:
        if len(poly) >= 3:
            path.addPolygon(QPolygonF([QPointF(float(x), float(y)) for x, y in poly]))
            path.closeSubpath()
    return path


class PathsItem(pg.GraphicsObject):
    """Draws a list of ``(path, pen, brush)`` layers; replaced wholesale by :meth:`set_layers`."""

    def __init__(self, z: float = 0.0) -> None:
        super().__init__()
        self._layers: list[tuple[QPainterPath, QPen, QBrush | None]] = []
        self._rect = QRectF()
        self.setZValue(z)

    def set_layers(self, layers) -> None:
        self.prepareGeometryChange()
        self._layers = [layer for layer in layers if not layer[0].isEmpty()]
        rect = QRectF()
        for path, _, _ in self._layers:
            rect = rect.united(path.boundingRect())
        self._rect = rect
        self.update()

    def clear(self) -> None:
        self.set_layers([])

    def layer_count(self) -> int:
        return len(self._layers)

    def boundingRect(self) -> QRectF:
        return self._rect

    def paint(self, painter, *args) -> None:
        for path, pen, brush in self._layers:
            painter.setPen(pen if pen is not None else Qt.NoPen)
            painter.setBrush(brush if brush is not None else Qt.NoBrush)
            painter.drawPath(path)


class GridItem(pg.GraphicsObject):
    """The editing grid over the visible range: lines every ``size`` units while at least
    ``min_px`` pixels apart (coarser multiples otherwise), every 8th line brighter, axes brightest."""

    def __init__(self, min_px: float = 7.0) -> None:
        super().__init__()
        self.size = 16.0
        self.min_px = min_px
        self.setZValue(-100)
        self._minor = cosmetic_pen((1, 1, 1), 0.07)
        self._major = cosmetic_pen((1, 1, 1), 0.16)
        self._axis = cosmetic_pen((1, 1, 1), 0.35)

    def set_size(self, size: float) -> None:
        self.size = float(size)
        self.update()

    def _range(self) -> QRectF:
        vb = self.getViewBox()
        return vb.viewRect() if vb is not None else QRectF()

    def boundingRect(self) -> QRectF:
        return self._range()

    def viewRangeChanged(self) -> None:
        self.prepareGeometryChange()
        super().viewRangeChanged()

    def paint(self, painter, *args) -> None:
        vb = self.getViewBox()
        if vb is None:
            return
        rect = vb.viewRect()
        px = vb.viewPixelSize()
        step = self.size
        while step / max(px[0], 1e-12) < self.min_px:
            step *= 2
        for axis in (0, 1):
            lo = rect.left() if axis == 0 else rect.top()
            hi = rect.right() if axis == 0 else rect.bottom()
            lo, hi = min(lo, hi), max(lo, hi)
            first = math.floor(lo / step)
            last = math.ceil(hi / step)
            if last - first > 2000:
                continue
            for k in range(first, last + 1):
                x = k * step
                major = (k * step) % (self.size * 8) == 0
                painter.setPen(self._axis if k == 0 else (self._major if major else self._minor))
                if axis == 0:
                    painter.drawLine(pg.QtCore.QPointF(x, rect.top()), pg.QtCore.QPointF(x, rect.bottom()))
                else:
                    painter.drawLine(pg.QtCore.QPointF(rect.left(), x), pg.QtCore.QPointF(rect.right(), x))


class LabelsItem(pg.GraphicsObject):
    """Many short texts centred on view points, drawn at a fixed pixel size by one item
    (hundreds of separate text items would each cost a layout on every update)."""

    def __init__(self, font, colour=(0.92, 0.92, 0.95), z: float = 20.0) -> None:
        super().__init__()
        self.setZValue(z)
        self._font = font
        self._pen = QPen(qcolor(colour))
        self._shadow = QPen(QColor(0, 0, 0, 200))
        self._points = np.empty((0, 2))
        self._texts: list[str] = []

    def set_labels(self, points: np.ndarray, texts: list[str]) -> None:
        self._points = np.asarray(points, dtype=np.float64).reshape(-1, 2)
        self._texts = list(texts)
        self.update()

    def count(self) -> int:
        return len(self._texts)

    def boundingRect(self) -> QRectF:
        vb = self.getViewBox()
        return vb.viewRect() if vb is not None else QRectF()

    def viewRangeChanged(self) -> None:
        self.prepareGeometryChange()
        super().viewRangeChanged()

    def paint(self, painter, *args) -> None:
        if not self._texts:
            return
        from PySide6.QtCore import QPointF
        transform = painter.transform()
        painter.resetTransform()
        painter.setFont(self._font)
        for (x, y), text in zip(self._points, self._texts):
            p = transform.map(QPointF(float(x), float(y)))
            box = QRectF(p.x() - 40, p.y() - 9, 80, 18)
            painter.setPen(self._shadow)
            painter.drawText(box.translated(1, 1), Qt.AlignCenter, text)
            painter.setPen(self._pen)
            painter.drawText(box, Qt.AlignCenter, text)
