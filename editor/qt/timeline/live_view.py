"""Show the playhead's frame in the editor: tree overlay, moving bodies, framing.

While a simulated or recorded frame is displayed, the tree overlay reads the node table of
that frame's index instead of the document's (so the lifespan, awake and pair-test heatmaps
follow the clock), and every view draws the dynamic bodies of the frame: awake ones bright,
sleeping ones dim. Redraws are lazy: a displayed frame only marks the overlay dirty, and the
editor state rebuilds it once per event-loop turn however many frames were stepped.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QRectF

from spatial.outline_raster import box_edge_colours

from ..overlay import box_lines
from ..views.line_layers import add_body_layers

AWAKE_RGB = (1.0, 0.55, 0.15)
ASLEEP_RGB = (0.45, 0.55, 0.75)


class LiveView:
    """Binds a :class:`~.controller.TimelineController` to the window's views.

    Parameters
    ----------
    window : MainWindow
    controller : TimelineController
    """

    def __init__(self, window, controller) -> None:
        self.window = window
        self.state = window.state
        self.controller = controller
        self.bodies_drawn = 0
        self.items2d, self.item3d = add_body_layers(window, AWAKE_RGB, ASLEEP_RGB, z=7, width=2.0)
        self._install_overlay_source()
        controller.frame_changed.connect(self._on_frame_changed)

    # ------------------------------------------------------------------ overlay
    def _install_overlay_source(self) -> None:
        """The overlay, the queries and the node inspector read the displayed frame's index
        while the timeline shows one (the controller answers None for "the document")."""
        self.state.frame_source = self.controller

    def _on_frame_changed(self, stats) -> None:
        self.state.frame_shown()  # overlay and queries recomputed once this turn
        self._draw_bodies()

    # ------------------------------------------------------------------ bodies
    def prepare_bodies(self):
        """A ``prepare(record)`` hook making :func:`body_geometry` for this window's 3D view on
        another thread (a live game's processing thread): the display then only swaps it in.
        The 2D views need nothing made: they draw the record's boxes at their paint."""
        with_3d = self.item3d is not None
        return lambda record: body_geometry(record.lo, record.hi, record.awake, with_3d)

    def _draw_bodies(self) -> None:
        bodies = self.controller.shown_bodies()
        if bodies is None:
            lo, hi, awake = np.empty((0, 3)), np.empty((0, 3)), np.empty(0, dtype=bool)
        else:
            lo, hi, awake = bodies[1:]
        for item in self.items2d.values():
            item.set_boxes(lo, hi, awake)
        self.bodies_drawn = len(lo)
        if self.item3d is None:
            return
        geometry = self._prepared() or body_geometry(lo, hi, awake, True)
        if geometry.count:
            self.item3d.setData(pos=geometry.lines, color=geometry.colours)
        self.item3d.setVisible(bool(geometry.count))

    def _prepared(self) -> BodyGeometry | None:
        """The geometry made beside the frame on display, when it is a live game's newest."""
        controller = self.controller
        newest = getattr(controller.simulation, "newest", None)
        if not controller.live or newest is None or not isinstance(newest.display, BodyGeometry):
            return None
        return newest.display if newest.stats is controller.last_stats else None


@dataclass(frozen=True)
class BodyGeometry:
    """A frame's moving bodies as the 3D view draws them: line vertices and their colours
    (``None`` without a 3D view or without bodies)."""

    count: int
    lines: np.ndarray | None
    colours: np.ndarray | None


def body_geometry(lo: np.ndarray, hi: np.ndarray, awake: np.ndarray,
                  with_3d: bool) -> BodyGeometry:
    """The 3D view's outlines of bodies ``lo``..``hi`` (with ``with_3d``); numpy only, so any
    thread may make them."""
    lines = colours = None
    if with_3d and len(lo):
        lines = box_lines(lo, hi)
        rgba = np.where(awake[:, None], np.array(AWAKE_RGB + (1.0,)),
                        np.array(ASLEEP_RGB + (1.0,))).astype(np.float32)
        colours = box_edge_colours(rgba)
    return BodyGeometry(len(lo), lines, colours)


def frame_box(window, lo, hi) -> None:
    """Point every view at the box ``lo``..``hi`` (with a margin)."""
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    pad = max(float((hi - lo).max()), 64.0) * 0.25
    for view in window.views2d.values():
        u, v = view.axes
        view.vb.setRange(QRectF(lo[u] - pad, lo[v] - pad, hi[u] - lo[u] + 2 * pad,
                                hi[v] - lo[v] + 2 * pad), padding=0)
    view3d = window.view3d
    if view3d is not None:
        from PySide6.QtGui import QVector3D
        centre = (lo + hi) / 2
        radius = max(float(np.linalg.norm(hi - lo)) / 2, 64.0)
        view3d.setCameraPosition(pos=QVector3D(*centre), distance=radius * 2.5)
