"""Marks in the 2D views where the brushes that bound no solid are: a dashed red box around
each one's plane points (they have no solid to fill), so the Problems dock's rows can be found
on the map. Drawn apart from the level's brushes, never picked or indexed."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from editor.model.invalid_brushes import marker_boxes

from ..overlay import rect_segments
from .items2d import PathsItem, cosmetic_pen, segments_path

#: colour of the marks (red: a problem)
INVALID_BRUSH = (0.95, 0.25, 0.22)


class InvalidBrushLayer:
    """One view's marks; :meth:`show` redraws them for a document."""

    def __init__(self, view) -> None:
        self.view = view
        self.item = PathsItem(z=3)
        view.vb.addItem(self.item, ignoreBounds=True)
        self.drawn = 0

    def show(self, document) -> None:
        lo, hi = marker_boxes(document.scene) if document is not None else (np.empty((0, 3)),) * 2
        self.drawn = len(lo)
        if not len(lo):
            self.item.set_layers([])
            return
        u, v = self.view.axes
        # a flat brush is a line in some views: give it a pixel of width so it still shows
        rects = np.stack([lo[:, u], lo[:, v], np.maximum(hi[:, u], lo[:, u] + 1e-3),
                          np.maximum(hi[:, v], lo[:, v] + 1e-3)], axis=1)
        path = segments_path(rect_segments(rects))
        self.item.set_layers([(path, cosmetic_pen(INVALID_BRUSH, 1.0, 1.6, Qt.PenStyle.DashLine), None)])


def install_invalid_brush_marks(window) -> list[InvalidBrushLayer]:
    """Give each 2D view of ``window`` its marks, redrawn whenever the document is replaced or
    its settings (which hold the brushes) change."""
    layers = [InvalidBrushLayer(view) for view in window.views2d.values()]

    def redraw(*_args) -> None:
        for layer in layers:
            layer.show(window.state.document)

    def follow(document) -> None:
        document.stack_changed.connect(redraw)
        redraw()

    window.state.document_replaced.connect(follow)
    if window.state.document is not None:
        follow(window.state.document)
    return layers
