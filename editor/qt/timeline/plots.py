"""Live per-frame plots of the simulation (pyqtgraph): pairs, nodes, update time, awake objects."""
from __future__ import annotations

import math

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

#: a plot's value axis shrinks only when its values need less than this share of it
SHRINK_BELOW = 0.4

#: a plot's frame range moves in steps of this share of its span (see :func:`frame_range`)
FRAME_STEP_SHARE = 0.1


#: the round numbers an axis end is chosen from (times a power of ten): steps of at most a
#: quarter, so a plot never leaves more than a fifth of itself empty
NICE_MANTISSAS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)


def nice_ceil(value: float) -> float:
    """The smallest round number (:data:`NICE_MANTISSAS` times a power of ten) that is at
    least ``value`` (1 for nothing positive): an axis end that stays put while the data
    grows under it."""
    if not value > 0 or not math.isfinite(value):
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    for mantissa in NICE_MANTISSAS:
        if mantissa * power >= value * (1 - 1e-12):
            return float(f"{mantissa * power:.12g}")  # 0.3, not 0.30000000000000004
    return 10.0 * power


def frame_range(first: int, last: int) -> tuple[float, float]:
    """The frame axis for frames ``first``..``last``: a nice span whose start moves in steps
    of :data:`FRAME_STEP_SHARE` of it, so the range (and with it the axes' cached pixmaps)
    changes a few times as a recording grows or a live buffer slides, not with every frame."""
    span = nice_ceil(max(last - first, 1) * 1.05)
    step = max(span * FRAME_STEP_SHARE, 1.0)
    lo = math.floor(first / step) * step
    hi = lo + nice_ceil(max(last - lo, 1))
    return lo, max(hi, lo + span)


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
                curve = plot.plot([], [], pen=pg.mkPen(colour, width=1.5), name=label)
                # a long run (a game streaming for minutes: tens of thousands of frames) is
                # drawn as a few points per pixel column, its peaks kept, not every frame
                curve.setDownsampling(auto=True, method="peak")
                curve.setClipToView(True)
                self.curves[column] = curve
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

    def _set_range(self, name: str, axis: str, lo: float, hi: float) -> None:
        """Set a plot's range on ``axis`` unless it is already that (a set range, even an
        equal one, makes pyqtgraph lay the axes out again)."""
        box = self.widgets[name].getViewBox()
        current = box.viewRange()[0 if axis == "x" else 1]
        if current != [lo, hi] or box.autoRangeEnabled()[0 if axis == "x" else 1]:
            if axis == "x":
                box.setXRange(lo, hi, padding=0)
            else:
                box.setYRange(lo, hi, padding=0)

    def _set_y_top(self, name: str, top: float) -> None:
        """Show ``name``'s values from 0 to ``top``: at once when they grew past the current
        top, but only once they fell well below it (a top that wobbles around a round number
        would otherwise move the axis back and forth)."""
        current = self.widgets[name].getViewBox().viewRange()[1]
        if current[0] == 0.0 and top <= current[1] and top >= SHRINK_BELOW * current[1]:
            return
        self._set_range(name, "y", 0.0, top)

    def point_count(self, column: str = "candidates") -> int:
        """Points drawn in a column's curve."""
        x, _ = self.curves[column].getData()
        return 0 if x is None else len(x)

    def refresh(self) -> None:
        self._timer.stop()
        cols = self.controller.plot_columns()
        for column, curve in self.curves.items():
            curve.setData(cols["frame"], cols[column])
        # the ranges are set, not fitted: they change in steps (nice_ceil, frame_range), so
        # between steps a redraw blits the axes and their grid from their cached pixmaps
        # instead of drawing every tick again (that was most of a redraw's cost while a live
        # game's frames came in)
        frames = cols["frame"]
        if len(frames):
            lo, hi = frame_range(int(frames[0]), int(frames[-1]))
            self._set_range("pairs", "x", lo, hi)
        for name, series in PLOTS.items():
            values = [cols[column] for column, _, _ in series]
            if name == "time" and len(values[0]) > 4:
                # the first frames include compiling the kernels: keep the steady state readable
                top = float(np.percentile(values[0], 98)) * 1.3
            else:
                top = max((float(v.max()) for v in values if len(v)), default=0.0) * 1.05
            self._set_y_top(name, nice_ceil(top))
        frame = self.controller.frame
        for cursor in self.cursors:
            cursor.setVisible(frame >= 0)
            cursor.setValue(max(frame, 0))
