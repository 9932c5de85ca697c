"""Line layers laid over every view of the window: one path item per 2D view, one line item
in the 3D view (when there is one), hidden until something is drawn."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .items2d import PathsItem

if TYPE_CHECKING:  # OpenGL is imported only for a window with a 3D view
    from pyqtgraph.opengl import GLLinePlotItem


def add_line_layers(window, z: float,
                    width: float) -> tuple[dict[str, PathsItem], GLLinePlotItem | None]:
    """``(items2d, item3d)``: a :class:`~.items2d.PathsItem` at depth ``z`` in each 2D view of
    ``window`` (by view name) and a hidden ``GLLinePlotItem`` of line ``width`` in its 3D view
    (None without one). Neither grows the views' auto-range."""
    items2d: dict[str, PathsItem] = {}
    for name, view in window.views2d.items():
        item = PathsItem(z=z)
        view.vb.addItem(item, ignoreBounds=True)
        items2d[name] = item
    item3d: GLLinePlotItem | None = None
    if window.view3d is not None:
        import pyqtgraph.opengl as gl
        item3d = gl.GLLinePlotItem(pos=np.zeros((2, 3), dtype=np.float32), mode="lines",
                                   width=width, antialias=False, glOptions="opaque")
        item3d.setVisible(False)
        window.view3d.addItem(item3d)
    return items2d, item3d
