"""The game's static boxes, drawn in every view while a live session shows them."""
from __future__ import annotations

import numpy as np

from ..overlay import box_lines, rect_segments
from ..views.items2d import PathsItem, cosmetic_pen, segments_path

STATIC_RGB = (0.55, 0.6, 0.55)


class StaticBoxes:
    """Outlines of the static boxes a game sent in its header (2D views and the 3D view)."""

    def __init__(self, window) -> None:
        self.window = window
        self.count = 0
        self.items2d = {}
        for name, view in window.views2d.items():
            item = PathsItem(z=6)
            view.vb.addItem(item, ignoreBounds=True)
            self.items2d[name] = item
        self.item3d = None
        if window.view3d is not None:
            import pyqtgraph.opengl as gl
            self.item3d = gl.GLLinePlotItem(pos=np.zeros((2, 3), dtype=np.float32), mode="lines",
                                            width=1.0, antialias=False, glOptions="opaque")
            self.item3d.setVisible(False)
            window.view3d.addItem(self.item3d)

    def show(self, lo: np.ndarray, hi: np.ndarray) -> None:
        """Draw these boxes (replacing any drawn before)."""
        self.count = len(lo)
        for name, item in self.items2d.items():
            u, v = self.window.views2d[name].axes
            if not len(lo):
                item.set_layers([])
                continue
            rects = np.column_stack([lo[:, u], lo[:, v], hi[:, u], hi[:, v]])
            item.set_layers([(segments_path(rect_segments(rects)), cosmetic_pen(STATIC_RGB, 0.8, 1.0), None)])
        if self.item3d is not None:
            if len(lo):
                self.item3d.setData(pos=box_lines(lo, hi), color=(*STATIC_RGB, 1.0))
            self.item3d.setVisible(bool(len(lo)))
