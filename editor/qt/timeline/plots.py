"""Live per-frame plots of the simulation (pyqtgraph): pairs, nodes, update time, awake objects."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QBoxLayout, QGraphicsItem

from ..panels.base import Panel, PlaybackRefresh

#: plot -> [(column, colour, legend)]
PLOTS = {
    "pairs": [("candidates", (90, 170, 255), "candidate pairs"),
              ("overlapping", (255, 120, 80), "overlapping pairs")],
    "nodes": [("nodes", (140, 220, 120), "nodes"), ("awake", (255, 200, 60), "awake objects")],
    "time": [("update_ms", (220, 130, 255), "update ms")],
}

#: plots redraw at most this often while playing (ms): a trend, not the frame itself; each
#: redraw of the three plots and their axes costs 10-20 ms under a software OpenGL
REFRESH_MS = 250


class LivePlots(PlaybackRefresh, Panel):
    """Three small plots side by side sharing the frame axis, with a line at the displayed frame."""

    def __init__(self, controller, parent=None) -> None:
        super().__init__("timeline_plots", parent, margins=(0, 0, 0, 0), direction=QBoxLayout.Direction.LeftToRight)
        self.controller = controller
        layout = self.body
        self.widgets: dict[str, pg.PlotWidget] = {}
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.cursors = []
        first = None
        for name, series in PLOTS.items():
            plot = pg.PlotWidget(background=(24, 26, 31))
            plot.setMinimumSize(160, 90)
            plot.setMenuEnabled(False)
            plot.hideButtons()
            plot.showGrid(x=True, y=True, alpha=0.2)
            # with the grid on, each axis covers the whole plot: the moving cursor and every
            # new point would replay its ticks, labels and grid lines; blit them from a pixmap
            for side in ("bottom", "left"):
                plot.getAxis(side).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
            plot.addLegend(offset=(4, 2), labelTextSize="7pt", verSpacing=-6)
            if first is None:
                first = plot
            else:
                plot.setXLink(first)
            for column, colour, label in series:
                self.curves[column] = plot.plot([], [], pen=pg.mkPen(colour, width=1.5), name=label)
            cursor = pg.InfiniteLine(angle=90, pen=pg.mkPen((255, 255, 255, 90)))
            plot.addItem(cursor, ignoreBounds=True)
            self.cursors.append(cursor)
            self.widgets[name] = plot
            layout.addWidget(plot)
        for plot in self.widgets.values():
            plot.setLabel("bottom", "frame")
        # while playing, redraw at most every REFRESH_MS: repainting three plots and their
        # axes every frame would cost more than the frame itself
        self.follow_playback(controller, REFRESH_MS)

    def point_count(self, column: str = "candidates") -> int:
        """Points drawn in a column's curve."""
        x, _ = self.curves[column].getData()
        return 0 if x is None else len(x)

    def refresh(self) -> None:
        self._timer.stop()
        cols = self.controller.plot_columns()
        for column, curve in self.curves.items():
            curve.setData(cols["frame"], cols[column])
        times = cols["update_ms"]
        if len(times) > 4:
            # the first frames include compiling the kernels: keep the steady state readable
            top = float(np.percentile(times, 98)) * 1.3
            self.widgets["time"].setYRange(0, max(top, 1e-3), padding=0)
        else:
            self.widgets["time"].enableAutoRange(axis="y")
        frame = self.controller.frame
        for cursor in self.cursors:
            cursor.setVisible(frame >= 0)
            cursor.setValue(max(frame, 0))
