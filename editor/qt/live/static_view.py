"""The game's static boxes, drawn in every view while a live session shows them.

Tens of thousands of outlines are too many to rasterise on every paint (the movers over them
repaint at the game's rate). In each 2D view they are cut into tiles of about
:data:`CHUNK_BOXES` boxes, each an item with a device-coordinate pixmap cache, as the level's
brush outlines are: a paint blits the tiles in view, and only a zoom or a new header draws
the outlines again. In the 3D view they are one line item uploaded once per header
(pyqtgraph sends a line item's vertices only after ``setData``), drawn in the view's still
layer (:mod:`editor.qt.views.still_layer`): rasterised again only when the camera moves.

A game's header arrives while its frames are being shown: the outlines of its tens of
thousands of boxes (Qt paths, a value type any thread may build) are made on a worker
(:meth:`StaticBoxes.show_in_background`), and the window's thread only adds the finished tiles.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shiboken6
from PySide6.QtGui import QPainterPath
from PySide6.QtWidgets import QGraphicsItem

from ..overlay import box_lines, rect_segments
from ..views.items2d import ChunkPathsItem, ItemGroup, cosmetic_pen, segments_path
from ..workers import CallWorker

STATIC_RGB = (0.55, 0.6, 0.55)
#: boxes a cached 2D tile holds, about
CHUNK_BOXES = 256
Z = 6


@dataclass
class StaticGeometry:
    """A header's static boxes, ready to draw: per 2D view the outline path of each tile,
    and the 3D view's line vertices (None without boxes or a 3D view)."""

    count: int
    paths: dict[str, list[QPainterPath]]
    lines: np.ndarray | None


def prepare_static(lo: np.ndarray, hi: np.ndarray, axes: dict, with_3d: bool) -> StaticGeometry:
    """The outlines of boxes ``lo``..``hi`` for the views of ``axes`` (name: ``(u, v)``), cut
    into tiles of about :data:`CHUNK_BOXES` boxes; Qt value types only, so any thread may
    make them."""
    paths: dict[str, list[QPainterPath]] = {}
    for name, (u, v) in axes.items():
        if not len(lo):
            paths[name] = []
            continue
        rects = np.column_stack([lo[:, u], lo[:, v], hi[:, u], hi[:, v]])
        paths[name] = [segments_path(rect_segments(rects[part])) for part in tiles(rects, CHUNK_BOXES)]
    lines = box_lines(lo, hi) if with_3d and len(lo) else None
    return StaticGeometry(len(lo), paths, lines)


class StaticBoxes:
    """Outlines of the static boxes a game sent in its header (2D views and the 3D view)."""

    def __init__(self, window) -> None:
        self.window = window
        self.count = 0
        self.groups: dict[str, ItemGroup] = {}
        self.chunks: dict[str, list[ChunkPathsItem]] = {name: [] for name in window.views2d}
        self.item3d = None
        self._worker: CallWorker | None = None  # making the newest header's outlines
        if window.view3d is not None:
            import pyqtgraph.opengl as gl
            self.item3d = gl.GLLinePlotItem(pos=np.zeros((2, 3), dtype=np.float32), mode="lines",
                                            width=1.0, antialias=False, glOptions="opaque")
            self.item3d.setVisible(False)
            window.view3d.addItem(self.item3d)
            window.view3d.still.add(self.item3d)  # drawn again only when the header changes

    def show(self, lo: np.ndarray, hi: np.ndarray) -> None:
        """Draw these boxes now (replacing any drawn before)."""
        self._worker = None  # a header prepared in the background is superseded
        self.install(prepare_static(lo, hi, self._axes(), with_3d=self.item3d is not None))

    def show_in_background(self, lo: np.ndarray, hi: np.ndarray) -> None:
        """Draw these boxes once their outlines are made on a worker thread (a newer call, or
        :meth:`show`, supersedes one still running)."""
        lo, hi = np.array(lo, copy=True), np.array(hi, copy=True)  # owned by the worker
        axes, with_3d = self._axes(), self.item3d is not None
        worker = CallWorker(lambda: prepare_static(lo, hi, axes, with_3d))
        worker.result.connect(lambda geometry, ms: self._on_prepared(worker, geometry))
        worker.failed.connect(lambda message: self._on_prepared(worker, None, message))
        self._worker = worker
        worker.start()

    @property
    def preparing(self) -> bool:
        """Whether a header's outlines are still being made on a worker."""
        return self._worker is not None

    def _axes(self) -> dict:
        return {name: view.axes for name, view in self.window.views2d.items()}

    def _on_prepared(self, worker, geometry: StaticGeometry | None, message: str = "") -> None:
        if worker is not self._worker or not shiboken6.isValid(self.window):
            return  # superseded, or the window closed while the worker made the outlines
        self._worker = None
        if geometry is None:
            self.window.report_error(f"Live link: the game's static boxes: {message}")
            return
        self.install(geometry)

    def install(self, geometry: StaticGeometry) -> None:
        """Put prepared outlines in the views (window's thread: items, not paths, are made
        here)."""
        self.count = geometry.count
        pen = cosmetic_pen(STATIC_RGB, 0.8, 1.0)
        for name, view in self.window.views2d.items():
            old = self.groups.pop(name, None)
            if old is not None:
                view.vb.removeItem(old)  # its tiles go with it
            self.chunks[name] = []
            paths = geometry.paths.get(name, [])
            if not paths:
                continue
            group = ItemGroup(Z)
            for path in paths:
                item = ChunkPathsItem(parent=group)
                item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
                item.set_layers([(path, pen, None)])
                self.chunks[name].append(item)
            view.vb.addItem(group, ignoreBounds=True)
            self.groups[name] = group
        if self.item3d is not None:
            if geometry.lines is not None:
                self.item3d.setData(pos=geometry.lines, color=(*STATIC_RGB, 1.0))
            self.item3d.setVisible(geometry.lines is not None)

    def paints(self) -> int:
        """Times any 2D tile was rasterised (a cached tile is not, on a plain repaint)."""
        return sum(item.paints for items in self.chunks.values() for item in items)


def tiles(rects: np.ndarray, per_tile: int) -> list[np.ndarray]:
    """``rects`` (``(n, 4)``: u0, v0, u1, v1) grouped by a square grid of their centres with
    about ``per_tile`` in a tile on average: the row numbers of each non-empty tile."""
    n = len(rects)
    if n <= per_tile:
        return [np.arange(n)]
    side = max(1, int(np.ceil(np.sqrt(n / per_tile))))
    centre = (rects[:, :2] + rects[:, 2:]) / 2
    lo, hi = centre.min(axis=0), centre.max(axis=0)
    cell = np.maximum((hi - lo) / side, 1e-9)
    ij = np.minimum(((centre - lo) / cell).astype(np.int64), side - 1)
    key = ij[:, 1] * side + ij[:, 0]
    order = np.argsort(key, kind="stable")
    cuts = np.flatnonzero(np.diff(key[order])) + 1
    return np.split(order, cuts)
