"""Lightweight graphics items for the 2D views: many segments per item, a grid that follows
the visible range. One item per overlay colour bin, not one per node (thousands of items are
slow; a few painter paths are fast)."""
from __future__ import annotations

import math
from typing import TypeAlias

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem


def qcolor(rgb, alpha: float = 1.0) -> QColor:
    c = QColor()
    c.setRgbF(float(rgb[0]), float(rgb[1]), float(rgb[2]), float(alpha))
    return c


def cosmetic_pen(rgb, alpha: float = 1.0, width: float = 1.0, style=Qt.PenStyle.SolidLine) -> QPen:
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
    """One path holding every polygon (closed; those under three points are left out).

    Built in one go from a flat array (each polygon followed by its first point, and not
    joined to the next one): a chunk of brushes is one numpy pass, not a Qt call per point.
    """
    polys = [poly for poly in polys if len(poly) >= 3]
    if not polys:
        return QPainterPath()
    flat = np.concatenate(polys).reshape(-1, 2).astype(np.float64, copy=False)
    lengths = np.fromiter(map(len, polys), dtype=np.int64, count=len(polys))
    starts = np.cumsum(lengths) - lengths
    ends = np.cumsum(lengths + 1)  # one past each closed polygon in the output
    # each polygon's points, then its first point again
    pick = np.arange(int(ends[-1]), dtype=np.int64) - np.repeat(ends - lengths - 1 - starts, lengths + 1)
    pick[ends - 1] = starts
    closed = flat[pick]
    connect = np.ones(len(closed), dtype=np.int32)
    connect[ends - 1] = 0
    return pg.arrayToQPath(np.ascontiguousarray(closed[:, 0]), np.ascontiguousarray(closed[:, 1]),
                           connect=connect)


#: fixed weights folding a row of numbers into one key (see :func:`changed_rows`)
_ROW_WEIGHTS = np.random.default_rng(20261125).uniform(1.0, 2.0, size=16)


def _row_keys(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float64)
    return rows @ _ROW_WEIGHTS[:rows.shape[1]]


def changed_rows(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Rows of ``old`` or ``new`` (``(N, K)`` arrays, K <= 16) that are not in the other one.

    Rows are compared by one float key each (a fixed random weighting of their values): a
    one-dimensional set test, several times faster than comparing whole rows, and two
    different rows of drawing coordinates sharing a key would need an exact coincidence.
    """
    old, new = np.asarray(old, dtype=np.float64), np.asarray(new, dtype=np.float64)
    if not len(old) or not len(new):
        return new if len(new) else old
    a, b = _row_keys(old), _row_keys(new)
    return np.concatenate([old[~np.isin(a, b)], new[~np.isin(b, a)]])


def rects_bounds(rects: np.ndarray, margin: tuple[float, float] = (0.0, 0.0)) -> QRectF | None:
    """The rectangle around ``(N, 4+)`` rows ``u0, v0, u1, v1`` grown by ``margin`` (None: none)."""
    if not len(rects):
        return None
    u0, v0 = np.minimum(rects[:, 0], rects[:, 2]).min(), np.minimum(rects[:, 1], rects[:, 3]).min()
    u1, v1 = np.maximum(rects[:, 0], rects[:, 2]).max(), np.maximum(rects[:, 1], rects[:, 3]).max()
    mu, mv = margin
    return QRectF(float(u0 - mu), float(v0 - mv), float(u1 - u0 + 2 * mu), float(v1 - v0 + 2 * mv))


#: one drawn layer: a path stroked with the pen (if any) and filled with the brush (if any)
Layer: TypeAlias = "tuple[QPainterPath, QPen | None, QBrush | None]"


class _PathsLayers:
    """What :class:`PathsItem` and :class:`ChunkPathsItem` share: a list of ``(path, pen,
    brush)`` layers replaced wholesale by :meth:`set_layers`. :attr:`paints` counts the calls
    of :meth:`paint`: with a pixmap cache, the times the item was rasterised again."""

    _layers: list
    _rect: QRectF
    paints: int

    def _start(self, z: float) -> None:
        self._layers = []
        self._rect = QRectF()
        self.paints = 0
        self.setZValue(z)  # type: ignore[attr-defined]  # a QGraphicsItem method (the other base)

    def set_layers(self, layers, dirty: QRectF | None = None) -> None:
        """Draw ``layers`` from now on. ``dirty``: the only part of the item that looks
        different (in item coordinates), so the view repaints just that part; by default,
        all of it."""
        item: QGraphicsItem = self  # type: ignore[assignment]  # mixed into QGraphicsItem subclasses
        layers = [layer for layer in layers if not layer[0].isEmpty()]
        rect = QRectF()
        for path, _, _ in layers:
            rect = rect.united(path.boundingRect())
        if dirty is None or rect != self._rect:
            item.prepareGeometryChange()
            if rect != self._rect:
                self._drop_cache()
            self._layers, self._rect = layers, rect
            item.update()
            return
        self._layers = layers
        if not dirty.isEmpty():
            item.update(dirty)

    def _drop_cache(self) -> None:
        """Throw the pixmap cache away. Qt keeps a device-coordinate cache across a change of
        bounding rectangle and, when the rectangle grows to the left or top, blits the old
        pixels at the wrong offset (part of a brush went missing after a neighbour moved into
        its chunk); a fresh cache is rendered whole."""
        item: QGraphicsItem = self  # type: ignore[assignment]
        mode = item.cacheMode()
        if mode != QGraphicsItem.CacheMode.NoCache:
            item.setCacheMode(QGraphicsItem.CacheMode.NoCache)
            item.setCacheMode(mode)

    def clear(self) -> None:
        self.set_layers([])

    def layer_count(self) -> int:
        return len(self._layers)

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt's name)
        return self._rect

    def paint(self, painter, *args) -> None:
        self.paints += 1
        for path, pen, brush in self._layers:
            painter.setPen(pen if pen is not None else Qt.PenStyle.NoPen)
            painter.setBrush(brush if brush is not None else Qt.BrushStyle.NoBrush)
            painter.drawPath(path)


class PathsItem(_PathsLayers, pg.GraphicsObject):
    """Draws a list of ``(path, pen, brush)`` layers in a pyqtgraph view box (see
    :class:`_PathsLayers`)."""

    def __init__(self, z: float = 0.0) -> None:
        super().__init__()
        self._start(z)


class ChunkPathsItem(_PathsLayers, QGraphicsItem):
    """A :class:`PathsItem` without pyqtgraph's bookkeeping, for the thousands of items under
    one :class:`ItemGroup` (a pyqtgraph item added to a view box costs it a walk of its
    views: the 7,000 chunk items of a 50,000-brush level took over a second)."""

    def __init__(self, z: float = 0.0, parent: QGraphicsItem | None = None) -> None:
        super().__init__(parent)
        self._start(z)


class ItemGroup(QGraphicsItem):
    """An item drawing nothing itself, holding child items (added to a view once)."""

    def __init__(self, z: float = 0.0) -> None:
        super().__init__()
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, True)
        self.setZValue(z)

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt's name)
        return QRectF()

    def paint(self, painter, *args) -> None:
        pass


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

    #: labels changed at once above which the whole item repaints rather than each label
    PARTIAL_MAX = 64

    def set_labels(self, points: np.ndarray, texts: list[str]) -> None:
        """Show ``texts`` centred on ``points``; only the labels that differ are repainted."""
        points = np.asarray(points, dtype=np.float64).reshape(-1, 2)
        texts = list(texts)
        old = dict(zip(map(tuple, self._points.tolist()), self._texts))
        new = dict(zip(map(tuple, points.tolist()), texts))
        changed = [p for p in old.keys() | new.keys() if old.get(p) != new.get(p)]
        self._points, self._texts = points, texts
        vb = self.getViewBox()
        if len(changed) > self.PARTIAL_MAX or vb is None:
            self.update()
            return
        px, py = vb.viewPixelSize()
        for u, v in changed:  # a label spans 80 x 18 pixels around its point, plus its shadow
            self.update(QRectF(u - 42 * px, v - 11 * py, 84 * px, 22 * py))

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
            painter.drawText(box.translated(1, 1), Qt.AlignmentFlag.AlignCenter, text)
            painter.setPen(self._pen)
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)
