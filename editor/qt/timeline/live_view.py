"""Show the playhead's frame in the editor: tree overlay, moving bodies, framing.

While a simulated or recorded frame is displayed, the tree overlay reads the node table of
that frame's index instead of the document's (so the lifespan, awake and pair-test heatmaps
follow the clock), and every view draws the dynamic bodies of the frame: awake ones bright,
sleeping ones dim. Redraws are lazy: a displayed frame only marks the overlay dirty, and the
editor state rebuilds it once per event-loop turn however many frames were stepped.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF

from ..overlay import box_lines, rect_segments
from ..views.items2d import cosmetic_pen, segments_path
from ..views.line_layers import add_line_layers

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
        self.items2d, self.item3d = add_line_layers(window, z=7, width=2.0)
        self._install_overlay_source()
        controller.frame_changed.connect(self._on_frame_changed)

    # ------------------------------------------------------------------ overlay
    def _install_overlay_source(self) -> None:
        """The overlay, the queries and the node inspector read the displayed frame's index
        while the timeline shows one (the controller answers None for "the document")."""
        self.state.frame_source = self.controller

    def _on_frame_changed(self, stats) -> None:
        self.state.set_overlay_settings()  # marks the overlay dirty; rebuilt once this turn
        self._draw_bodies()

    # ------------------------------------------------------------------ bodies
    def _draw_bodies(self) -> None:
        bodies = self.controller.shown_bodies()
        if bodies is None:
            ids, lo, hi, awake = (np.empty(0, dtype=np.int64), np.empty((0, 3)), np.empty((0, 3)),
                                  np.empty(0, dtype=bool))
        else:
            ids, lo, hi, awake = bodies
        self.bodies_drawn = len(ids)
        for name, item in self.items2d.items():
            item.set_layers(body_layers(lo, hi, awake, self.window.views2d[name].axes))
        if self.item3d is not None:
            if len(ids):
                colours = np.where(awake[:, None], np.array(AWAKE_RGB + (1.0,)),
                                   np.array(ASLEEP_RGB + (1.0,))).astype(np.float32)
                self.item3d.setData(pos=box_lines(lo, hi), color=np.repeat(colours, 24, axis=0))
            self.item3d.setVisible(bool(len(ids)))


def body_layers(lo: np.ndarray, hi: np.ndarray, awake: np.ndarray, axes) -> list:
    """The outlines of a frame's moving bodies seen along ``axes``, as
    :class:`~..views.items2d.PathsItem` layers: awake ones bright, sleeping ones dim."""
    u, v = axes
    layers = []
    for flags, rgb in ((~awake, ASLEEP_RGB), (awake, AWAKE_RGB)):
        if flags.any():
            rects = np.column_stack([lo[flags, u], lo[flags, v], hi[flags, u], hi[flags, v]])
            layers.append((segments_path(rect_segments(rects)), cosmetic_pen(rgb, 1.0, 1.5), None))
    return layers


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
