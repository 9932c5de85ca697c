"""Where the sides differ: a heatmap of A minus B per region and the objects that differ most.

The heatmap is the level's top (x, y) plane in regions; red where A does more work than B,
blue where B does more (query visits of the shared query set, or pair tests), white where
they agree, on a scale symmetric around zero. The list names the objects whose number of
holding nodes differs most; choosing one selects it in the editor (an undoable selection).
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import QListWidget, QListWidgetItem

from editor.model.compare.difference import costliest_objects, region_grid
from editor.model.compare.queries import world_bounds

#: blue (B costs more) - white - red (A costs more)
_DIVERGING = pg.ColorMap([0.0, 0.5, 1.0], [(40, 90, 220), (235, 235, 235), (220, 50, 40)])


class DifferencePlot(pg.PlotWidget):
    """The A minus B heatmap (see the module docstring)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent=parent, background=(24, 26, 31))
        self.setObjectName("compare_difference")
        self.setMinimumSize(160, 120)
        self.plotItem.hideButtons()
        self.plotItem.setMenuEnabled(False)
        self.image = pg.ImageItem()
        self.addItem(self.image)
        self.setAspectLocked(True)
        self.grid = None

    def show_grid(self, grid, title: str) -> None:
        """Draw a :class:`~editor.model.compare.difference.RegionGrid` of A minus B."""
        self.grid = grid
        extent = float(np.abs(grid.values).max()) or 1.0
        self.image.setImage(grid.values, levels=(-extent, extent),
                            lut=_DIVERGING.getLookupTable(nPts=256))
        x0, x1 = grid.x_edges[0], grid.x_edges[-1]
        y0, y1 = grid.y_edges[0], grid.y_edges[-1]
        self.image.setRect(QRectF(x0, y0, x1 - x0, y1 - y0))
        self.setTitle(f"{title}: A − B (±{extent:,.0f})", color=(200, 205, 215), size="9pt")
        self.autoRange()


def difference(a_index, b_index, queries, record, metric: str):
    """The A minus B region grid of ``metric`` over the level's bounds."""
    lo, hi = world_bounds(record)
    return region_grid(a_index, queries, lo, hi, metric).minus(
        region_grid(b_index, queries, lo, hi, metric))


class CostliestList(QListWidget):
    """The objects whose node counts differ most; choosing one selects it."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("compare_costliest")
        self.setWordWrap(True)  # a long line wraps instead of hiding behind a scroll bar
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.costs: list = []

    def show_costs(self, scene, a_index, b_index, a_name: str, b_name: str, top: int = 12) -> None:
        self.clear()
        self.costs = costliest_objects(a_index, b_index, top)
        for cost in self.costs:
            obj = scene.get(cost.oid)
            kind = type(obj).__name__.lower() if obj is not None else "object"
            item = QListWidgetItem(cost.describe(kind, a_name, b_name))
            item.setData(256, cost.oid)
            self.addItem(item)
        if not self.costs:
            self.addItem("every object is held by as many nodes in A as in B")


class FramePlot(pg.PlotWidget):
    """Candidate pair tests per frame of the shared motion, A and B (the timeline of the
    comparison: a recording's frames, or the seeded drift of the moving entities)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent=parent, background=(24, 26, 31))
        self.setObjectName("compare_frames")
        self.setMinimumSize(160, 100)
        self.plotItem.hideButtons()
        self.plotItem.setMenuEnabled(False)
        self.addLegend(offset=(6, 6))
        self.setLabel("bottom", "frame")
        self.curves: dict[str, pg.PlotDataItem] = {}  # by side: "a", "b"

    def show_frames(self, report: dict) -> None:
        """Plot ``candidates`` of each side's ``frames``."""
        self.clear()
        self.curves = {}
        for key, colour in (("a", (90, 200, 255)), ("b", (255, 170, 60))):
            side = report[key]
            frames = side.get("frames") or []
            x = [f["frame"] for f in frames]
            y = [f["candidates"] for f in frames]
            self.curves[key] = self.plot(x, y, pen=pg.mkPen(colour, width=2),
                                         name=f"{key.upper()}: {side['backend']}")
        self.setTitle("pair candidates per frame", color=(200, 205, 215), size="9pt")
