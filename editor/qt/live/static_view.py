"""The game's static boxes, drawn in every view while a live session shows them.

Tens of thousands of outlines are too many to rasterise on every paint (the movers over them
repaint at the game's rate). In each 2D view they are cut into tiles of about
:data:`CHUNK_BOXES` boxes, each an item with a device-coordinate pixmap cache, as the level's
brush outlines are: a paint blits the tiles in view, and only a zoom or a new header draws
the outlines again. In the 3D view they are one line item uploaded once per header
(pyqtgraph sends a line item's vertices only after ``setData``), drawn in the view's still
layer (:mod:`editor.qt.views.still_layer`): rasterised again only when the camera moves.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QGraphicsItem

from ..overlay import box_lines, rect_segments
from ..views.items2d import ChunkPathsItem, ItemGroup, cosmetic_pen, segments_path

STATIC_RGB = (0.55, 0.6, 0.55)
#: boxes a cached 2D tile holds, about
CHUNK_BOXES = 256
Z = 6


class StaticBoxes:
    """Outlines of the static boxes a game sent in its header (2D views and the 3D view)."""

    def __init__(self, window) -> None:
        self.window = window
        self.count = 0
        self.groups: dict[str, ItemGroup] = {}
        self.chunks: dict[str, list[ChunkPathsItem]] = {name: [] for name in window.views2d}
        self.item3d = None
        if window.view3d is not None:
            import pyqtgraph.opengl as gl
            self.item3d = gl.GLLinePlotItem(pos=np.zeros((2, 3), dtype=np.float32), mode="lines",
                                            width=1.0, antialias=False, glOptions="opaque")
            self.item3d.setVisible(False)
            window.view3d.addItem(self.item3d)
            window.view3d.still.add(self.item3d)  # drawn again only when the header changes

    def show(self, lo: np.ndarray, hi: np.ndarray) -> None:
        """Draw these boxes (replacing any drawn before)."""
        self.count = len(lo)
        pen = cosmetic_pen(STATIC_RGB, 0.8, 1.0)
        for name, view in self.window.views2d.items():
            old = self.groups.pop(name, None)
            if old is not None:
                view.vb.removeItem(old)  # its tiles go with it
            self.chunks[name] = []
            if not len(lo):
                continue
            group = ItemGroup(Z)
            u, v = view.axes
            rects = np.column_stack([lo[:, u], lo[:, v], hi[:, u], hi[:, v]])
            for part in tiles(rects, CHUNK_BOXES):
                item = ChunkPathsItem(parent=group)
                item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
                item.set_layers([(segments_path(rect_segments(rects[part])), pen, None)])
                self.chunks[name].append(item)
            view.vb.addItem(group, ignoreBounds=True)
            self.groups[name] = group
        if self.item3d is not None:
            if len(lo):
                self.item3d.setData(pos=box_lines(lo, hi), color=(*STATIC_RGB, 1.0))
            self.item3d.setVisible(bool(len(lo)))

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
