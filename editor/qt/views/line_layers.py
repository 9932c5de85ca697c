"""The moving bodies' layers laid over every view of the window: one
:class:`~.box_outlines_item.BoxOutlinesItem` per 2D view, one line item in the 3D view (when
there is one), hidden until something is drawn."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .box_outlines_item import BoxOutlinesItem

if TYPE_CHECKING:  # OpenGL is imported only for a window with a 3D view
    from pyqtgraph.opengl import GLLinePlotItem


def add_body_layers(window, awake_rgb, sleeping_rgb, z: float,
                    width: float) -> tuple[dict[str, BoxOutlinesItem], GLLinePlotItem | None]:
    """``(items2d, item3d)``: a :class:`~.box_outlines_item.BoxOutlinesItem` at depth ``z`` in
    each 2D view of ``window`` (by view name; awake boxes in ``awake_rgb``, sleeping ones in
    ``sleeping_rgb``) and a hidden ``GLLinePlotItem`` of line ``width`` in its 3D view (None
    without one). Neither grows the views' auto-range."""
    items2d = {name: add_box_outlines(view, awake_rgb, sleeping_rgb, z)
               for name, view in window.views2d.items()}
    item3d: GLLinePlotItem | None = None
    if window.view3d is not None:
        import pyqtgraph.opengl as gl
        item3d = gl.GLLinePlotItem(pos=np.zeros((2, 3), dtype=np.float32), mode="lines",
                                   width=width, antialias=False, glOptions="opaque")
        item3d.setVisible(False)
        window.view3d.addItem(item3d)
    return items2d, item3d


def add_box_outlines(view, awake_rgb, sleeping_rgb, z: float) -> BoxOutlinesItem:
    """A :class:`~.box_outlines_item.BoxOutlinesItem` for 2D ``view``'s axes, added to it at
    depth ``z`` without growing its auto-range."""
    item = BoxOutlinesItem(view.axes, awake_rgb, sleeping_rgb, width=1.5, z=z)
    view.vb.addItem(item, ignoreBounds=True)
    return item
