"""The game's static boxes, drawn in every view while a live session shows them."""
from __future__ import annotations

import numpy as np

from ..overlay import box_lines, rect_segments
from ..views.items2d import cosmetic_pen, segments_path
from ..views.line_layers import add_line_layers

STATIC_RGB = (0.55, 0.6, 0.55)


class StaticBoxes:
    """Outlines of the static boxes a game sent in its header (2D views and the 3D view)."""

    def __init__(self, window) -> None:
        self.window = window
        self.count = 0
        self.items2d, self.item3d = add_line_layers(window, z=6, width=1.0)

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
