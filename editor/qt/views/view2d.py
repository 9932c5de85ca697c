"""The 2D orthographic views (top, front, side): a pyqtgraph plot with locked aspect.

Left-button gestures go to the active tool (select, brush, entity, ray, frustum, inspect);
the middle or right button pans, the wheel zooms. Everything is drawn by a few
:class:`~.items2d.PathsItem` layers rebuilt from the shared arrays when they change; the
brushes by cached items per chunk of neighbouring brushes (:mod:`.brush_layer`).
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QFont

from ..colors import (
    BRUSH_EDGE,
    BRUSH_FACE,
    CULLED,
    HIGHLIGHT,
    QUERY_HIT,
    QUERY_RAY,
    SELECTED,
    SPLIT_LINE,
    VISITED,
)
from ..level_arrays import MESH_FACE, ONE_SIDED_WALL, TWO_SIDED_WALL
from ..overlay import COLOUR_BINS, bin_colour, project_rects, rect_segments
from ..scene_geometry import selection_bounds, selection_lines
from .brush_layer import ARRIVAL_MAX_WAITS, ARRIVAL_PAUSE_MS, BrushLayer
from .brush_outlines import BrushOutlines
from .follow_state import follow_state
from .items2d import (
    GridItem,
    LabelsItem,
    Layer,
    PathsItem,
    changed_rows,
    cosmetic_pen,
    qcolor,
    rects_bounds,
    segments_path,
)
from .level_paths import LevelPaths, level_paths

AXIS_NAMES = "xyz"
#: a level drawing more wall segments and triangles than this is stroked a turn after it
#: arrives (and after the 3D view's first full frame of it), not in the frame it arrives in
LEVEL_ARRIVAL_SEGMENTS = 100_000
#: the three standard views: name -> (horizontal axis, vertical axis)
VIEW_AXES = {"Top": (0, 1), "Front": (0, 2), "Side": (1, 2)}

#: labels appear only on rectangles at least this big on screen, and at most this many
LABEL_MIN_PX = (30.0, 16.0)
LABEL_CAP = 300
#: overlay rectangles smaller than this on screen are not drawn, and at most this many are
MIN_RECT_PX = 3.0
RECT_CAP = 6000


class EditorViewBox(pg.ViewBox):
    """A view box that hands left-button gestures to its view and pans with the others."""

    def __init__(self, view) -> None:
        super().__init__(lockAspect=1.0, enableMenu=False, invertY=False)
        self._view = view

    def mouseClickEvent(self, ev) -> None:
        if ev.button() == Qt.MouseButton.LeftButton:
            ev.accept()
            self._view.tool_event("click", self.mapToView(ev.pos()), ev.modifiers())
        else:
            ev.ignore()

    def mouseDragEvent(self, ev, axis=None) -> None:
        if ev.button() == Qt.MouseButton.LeftButton:
            ev.accept()
            if ev.isStart():
                self._view.tool_event("drag_start", self.mapToView(ev.buttonDownPos()), ev.modifiers())
            self._view.tool_event("drag_move", self.mapToView(ev.pos()), ev.modifiers())
            if ev.isFinish():
                self._view.tool_event("drag_end", self.mapToView(ev.pos()), ev.modifiers())
            return
        # middle or right button: pan
        ev.accept()
        delta = self.mapToView(ev.lastPos()) - self.mapToView(ev.pos())
        self.translateBy(x=delta.x(), y=delta.y())


class View2D(pg.PlotWidget):
    """One orthographic view looking along the axis that is neither ``axes[0]`` nor ``axes[1]``.

    Signals: ``cursor_moved(point3)`` (throttled by the window), ``activated()`` on focus.
    """

    cursor_moved = Signal(object)
    #: the view that stroked an arriving big level and has not painted since: the next view
    #: waits until it has, so each view's first stroke of it is painted in a frame of its own
    _level_unpainted: View2D | None = None
    #: an arriving big level's walls and mesh (arrays, prepared paths), drawn a turn later,
    #: and the pauses it waited so far
    _level_due: tuple | None = None
    _level_waits = 0

    def __init__(self, state, tools, name: str = "Top", parent=None) -> None:
        self.axes = VIEW_AXES[name]
        self.depth_axis = 3 - sum(self.axes)
        self.view_name = name
        self.state = state
        self.tools = tools
        super().__init__(parent=parent, viewBox=EditorViewBox(self), background=(24, 26, 31))
        self.setObjectName(f"view2d_{name.lower()}")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMinimumSize(160, 120)
        self.plotItem.hideButtons()
        self.plotItem.setMenuEnabled(False)
        self.setLabel("bottom", AXIS_NAMES[self.axes[0]])
        self.setLabel("left", AXIS_NAMES[self.axes[1]])
        for ax in ("bottom", "left"):
            self.getAxis(ax).setTextPen((170, 175, 185))
            # level units, never scaled: an SI prefix read "(x0.001)" on the empty first view
            self.getAxis(ax).enableAutoSIPrefix(False)
            # an axis replays its ticks and labels whenever a repaint touches it (bodies moving
            # during playback, a tree node reaching the view's edge): blit it from a pixmap
            # instead; it renders again when the range changes
            self.getAxis(ax).setCacheMode(pg.QtWidgets.QGraphicsItem.DeviceCoordinateCache)
        self.vb: EditorViewBox = self.plotItem.getViewBox()
        self.title = pg.TextItem(name, color=(200, 205, 215), anchor=(0, 0))
        self.title.setParentItem(self.vb)
        self.title.setPos(4, 2)

        self.outlines = BrushOutlines(self.axes)
        self.grid = GridItem()
        self.mesh = PathsItem(z=0.5)     # mesh triangles' edges
        self.walls = PathsItem(z=1)      # Doom walls: one-sided solid, two-sided dashed amber
        self.entities = PathsItem(z=2)
        self.overlay = PathsItem(z=4)
        self.query = PathsItem(z=6)
        self.selection = PathsItem(z=8)
        self.preview = PathsItem(z=10)
        self.handles = pg.ScatterPlotItem(size=8, symbol="s", pen=pg.mkPen((255, 80, 60)),
                                          brush=pg.mkBrush(255, 255, 255, 200))
        self.handles.setZValue(12)
        # the level and the tree change rarely and in small parts: paint them from cached
        # pixmaps, so repainting the patch an edit touched blits them instead of stroking
        # every path again (brushes: cached items per chunk, see BrushLayer)
        for item in (self.grid, self.mesh, self.walls, self.entities, self.overlay):
            item.setCacheMode(pg.QtWidgets.QGraphicsItem.DeviceCoordinateCache)
        for item in (self.grid, self.mesh, self.walls, self.entities, self.overlay,
                     self.query, self.selection, self.preview, self.handles):
            self.vb.addItem(item, ignoreBounds=item not in (self.mesh, self.walls))
        self._brush_fill = QBrush(qcolor(BRUSH_FACE, 0.10))
        self._brush_pen = cosmetic_pen(BRUSH_EDGE, 0.55)
        self.brushes = BrushLayer(self.vb, self.outlines, self._brush_fill, self._brush_pen)
        self._level_timer = self._pause_timer(self._draw_level_due)
        self._label_font = QFont()
        self._label_font.setPointSize(8)
        self.labels = LabelsItem(self._label_font)
        self.labels.setCacheMode(pg.QtWidgets.QGraphicsItem.DeviceCoordinateCache)
        self.vb.addItem(self.labels, ignoreBounds=True)
        self._rects: np.ndarray | None = None  # projected overlay rectangles (unique), for labels
        self._rect_counts = np.empty(0, dtype=np.int64)  # read only while there are rects
        self._rect_bins = np.empty(0, dtype=np.int64)
        self._core_rects: np.ndarray | None = None
        self._plane_segments: np.ndarray | None = None
        self._drawn_overlay = np.empty((0, 5))   # what the overlay item shows: u0 v0 u1 v1 bin
        self.drawn_rects = 0
        self.drawn = {"brushes": 0, "wall_segments": 0, "triangles": 0, "entities": 0}
        self.handle_points = np.empty((0, 2))
        self._label_timer = QTimer(self)
        self._label_timer.setSingleShot(True)
        self._label_timer.setInterval(30)
        self._label_timer.timeout.connect(self._redraw_overlay)
        self.vb.sigRangeChanged.connect(lambda *a: self._label_timer.start())
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)

        # the graphics scene reports item changes to the viewport one event-loop turn later;
        # the window's FrameSync (editor/qt/frame_sync.py) delivers them before it paints, so
        # an edit's 2D views are in the edit's own frame and only the changed items repaint
        # (not the axes, as a whole-viewport update would)
        follow_state(self, state)
        self._on_grid_changed()

    # ------------------------------------------------------------------ coordinates
    def depth_value(self) -> float:
        """The depth coordinate new things get: the middle of the selection, else of the level."""
        doc = self.state.document
        if doc is None:
            return 0.0
        b = selection_bounds(doc.scene, doc.selection)
        lo, hi = b if b is not None else doc.scene.bounds()
        return float((lo[self.depth_axis] + hi[self.depth_axis]) / 2)

    def to_world(self, point: QPointF, depth: float | None = None) -> np.ndarray:
        p = np.zeros(3)
        p[self.axes[0]] = point.x()
        p[self.axes[1]] = point.y()
        p[self.depth_axis] = self.depth_value() if depth is None else depth
        return p

    def project(self, points3: np.ndarray) -> np.ndarray:
        return np.asarray(points3)[..., list(self.axes)]

    def pixel_size(self) -> float:
        return float(self.vb.viewPixelSize()[0])

    def frame_scene(self, bounds=None) -> None:
        """Show the whole level, or the box ``bounds`` (``(lo, hi)``) when given."""
        doc = self.state.document
        if bounds is None and doc is None:
            return
        lo, hi = bounds if bounds is not None else doc.scene.bounds()
        u, v = self.axes
        pad = max(hi[u] - lo[u], hi[v] - lo[v], 64) * 0.06
        self.vb.setRange(QRectF(lo[u] - pad, lo[v] - pad, hi[u] - lo[u] + 2 * pad, hi[v] - lo[v] + 2 * pad),
                         padding=0)

    # ------------------------------------------------------------------ tool plumbing
    def shows(self, lo, hi) -> bool:
        """The box ``lo``..``hi`` is inside the visible range."""
        (u0, u1), (v0, v1) = self.vb.viewRange()
        u, v = self.axes
        return u0 <= lo[u] and hi[u] <= u1 and v0 <= lo[v] and hi[v] <= v1

    def tool_event(self, kind: str, point: QPointF, modifiers) -> None:
        self.setFocus()
        tool = self.tools.current()
        if self.state.document is None or not self.tools.ready_for(tool):  # loading, preparing
            return
        handler = getattr(tool, kind, None)
        if handler is not None:
            handler(self, point, modifiers)

    def _on_mouse_moved(self, scene_pos) -> None:
        p = self.vb.mapSceneToView(scene_pos)
        hover = getattr(self.tools.current(), "hover", None)
        if hover is not None and self.state.document is not None:
            hover(self, p)  # e.g. where an entity would land, before the click
        self.cursor_moved.emit(self.to_world(p))

    def keyPressEvent(self, ev) -> None:
        key = ev.key()
        steps = {Qt.Key.Key_Left: (-1, 0), Qt.Key.Key_Right: (1, 0), Qt.Key.Key_Up: (0, 1), Qt.Key.Key_Down: (0, -1)}
        if key in steps and not (ev.modifiers() & Qt.KeyboardModifier.ControlModifier):
            du, dv = steps[key]
            delta = np.zeros(3)
            delta[self.axes[0]] = du
            delta[self.axes[1]] = dv
            self.tools.nudge(delta)
            ev.accept()
            return
        super().keyPressEvent(ev)

    def set_preview(self, segments: np.ndarray | None, fill_rect=None, colour=HIGHLIGHT) -> None:
        """Show a gesture preview: ``segments`` (2K, 2) and/or a translucent rectangle."""
        layers: list[Layer] = []
        if fill_rect is not None:
            (u0, v0), (u1, v1) = fill_rect
            path = segments_path(rect_segments(np.array([[u0, v0, u1, v1]])))
            from PySide6.QtGui import QPainterPath
            fill = QPainterPath()
            fill.addRect(QRectF(QPointF(u0, v0), QPointF(u1, v1)).normalized())
            layers.append((fill, None, QBrush(qcolor(colour, 0.15))))
            layers.append((path, cosmetic_pen(colour, 1.0, 1.5, Qt.PenStyle.DashLine), None))
        if segments is not None and len(segments):
            layers.append((segments_path(segments), cosmetic_pen(colour, 1.0, 2.0), None))
        self.preview.set_layers(layers)

    # ------------------------------------------------------------------ model -> items
    def _on_grid_changed(self) -> None:
        self.grid.set_size(self.state.grid_size)
        self.grid.setVisible(self.state.show_grid)

    def _on_scene_arrays_changed(self, arrays) -> None:
        # only the chunks holding the edited brushes are rebuilt and re-rasterised; a level
        # opened in the background comes with its outline paths built on the loading thread
        built = (arrays.outlines or {}).pop(tuple(self.axes), None) if arrays.changed is None \
            else None
        if built is not None:
            self.outlines.adopt(built)
        else:
            self.outlines.update(arrays)
        self.brushes.sync()
        everything = arrays.changed is None
        if everything or arrays.level_changed:
            prepared = (arrays.level_paths or {}).pop(tuple(self.axes), None) if everything else None
            level = arrays.level
            self._level_timer.stop()
            self._level_due = None
            if everything and level.walls_drawn + level.triangles_drawn > LEVEL_ARRIVAL_SEGMENTS:
                # stroked in a frame of its own: with the 3D view's first frame of the level
                # it would freeze the window (a 2,000,000-triangle mesh: ~0.1 s a view)
                self.walls.clear()
                self.mesh.clear()
                self._level_due, self._level_waits = (level, prepared), 0
                self._level_timer.start()
            else:
                self._draw_level(level, prepared)
        self.drawn = {"brushes": len(arrays.brush_ids), "wall_segments": arrays.level.walls_drawn,
                      "triangles": arrays.level.triangles_drawn, "entities": len(arrays.entity_ids)}
        if everything or arrays.entities_changed:
            self._draw_entities(arrays)

    def _draw_entities(self, arrays) -> None:
        """Point entities: a translucent box per entity, one pair of paths per class colour."""
        ent_layers: list[Layer] = []
        if len(arrays.entity_ids):
            rgb = arrays.entity_rgb
            keys, groups = np.unique(np.round(rgb, 3), axis=0, return_inverse=True)
            u, v = self.axes
            rects = np.column_stack([arrays.entity_lo[:, u], arrays.entity_lo[:, v],
                                     arrays.entity_hi[:, u], arrays.entity_hi[:, v]])
            for g, colour in enumerate(keys):
                mine = rects[groups.reshape(-1) == g]
                from PySide6.QtGui import QPainterPath
                fill = QPainterPath()
                for r in mine:
                    fill.addRect(QRectF(QPointF(r[0], r[1]), QPointF(r[2], r[3])))
                ent_layers.append((fill, None, QBrush(qcolor(colour, 0.25))))
                ent_layers.append((segments_path(rect_segments(mine)), cosmetic_pen(colour, 1.0, 1.5), None))
        self.entities.set_layers(ent_layers)

    def _pause_timer(self, slot) -> QTimer:
        """A single-shot timer calling ``slot`` a pause (:data:`ARRIVAL_PAUSE_MS`) after it
        is started."""
        timer = QTimer(self)
        timer.setSingleShot(True)
        timer.setInterval(ARRIVAL_PAUSE_MS)
        timer.timeout.connect(slot)
        return timer

    def arrival_pending(self) -> int:
        """Parts of an arriving level this view has still to draw (0: all of it is drawn)."""
        return self.brushes.pending() + (self._level_due is not None)

    def finish_arrival(self) -> None:
        """Draw whatever of an arriving level is still waiting, now (a screenshot)."""
        self.brushes.finish()
        if self._level_due is not None:
            self._level_waits = ARRIVAL_MAX_WAITS
            self._draw_level_due()

    def _draw_level_due(self) -> None:
        """Draw the walls and mesh of the arriving level, unless the 3D view's first full
        frame of it is still to come (then a pause later)."""
        if self._level_due is None:
            return
        wait_for = self.brushes.wait_for
        # one view a frame: each view's first stroke of a big mesh is a frame's work on its own
        other = View2D._level_unpainted
        other_view_unpainted = other is not None and other is not self and other.isVisible()
        if self._level_waits < ARRIVAL_MAX_WAITS and (
                other_view_unpainted or (wait_for is not None and wait_for())):
            self._level_waits += 1
            self._level_timer.start()
            return
        (level, prepared), self._level_due = self._level_due, None
        self._draw_level(level, prepared)
        View2D._level_unpainted = self

    def paintEvent(self, ev) -> None:  # noqa: N802 (Qt's name)
        super().paintEvent(ev)
        if View2D._level_unpainted is self:
            View2D._level_unpainted = None  # its arriving level is on screen: the next view's turn

    def _draw_level(self, level, built: LevelPaths | None = None) -> None:
        """Walls (one-sided solid grey, two-sided dashed amber) and mesh triangle edges.
        ``built``: their paths for this view's axes, made on the loading thread."""
        paths = built if built is not None else level_paths(level, (self.axes[0], self.axes[1]))
        self.walls.set_layers([
            (paths.two_sided, cosmetic_pen(TWO_SIDED_WALL, 0.85, 1.0, Qt.PenStyle.DashLine), None),
            (paths.one_sided, cosmetic_pen(ONE_SIDED_WALL, 1.0, 1.4), None)])
        self.mesh.set_layers([(paths.triangles, cosmetic_pen(MESH_FACE, 0.35, 1.0), None)])

    def _on_selection_changed(self, ids) -> None:
        doc = self.state.document
        if not ids:
            self.selection.clear()
            self.handles.setData([], [])
            self.handle_points = np.empty((0, 2))
            return
        lines = self.project(selection_lines(doc.scene, ids))
        self.selection.set_layers([(segments_path(lines), cosmetic_pen(SELECTED, 1.0, 2.0), None)])
        b = selection_bounds(doc.scene, ids)
        if b is None:
            self.handles.setData([], [])
            self.handle_points = np.empty((0, 2))
            return
        lo, hi = self.project(b[0]), self.project(b[1])
        mid = (lo + hi) / 2
        pts = np.array([[lo[0], lo[1]], [mid[0], lo[1]], [hi[0], lo[1]], [hi[0], mid[1]],
                        [hi[0], hi[1]], [mid[0], hi[1]], [lo[0], hi[1]], [lo[0], mid[1]]])
        self.handle_points = pts
        self.handles.setData(pts[:, 0], pts[:, 1])

    def _on_overlay_changed(self, geom) -> None:
        st = self.state
        if not st.overlay_visible or geom.count == 0:
            self._rects = self._core_rects = self._plane_segments = None
            self._redraw_overlay()
            return
        rects, bins, members = project_rects(geom, self.axes)
        counts = np.zeros(len(rects), dtype=np.int64)
        table = st.node_table
        np.add.at(counts, members, table.own_count[geom.rows])
        self._rects, self._rect_bins, self._rect_counts = rects, bins, counts
        self._core_rects = None
        planes2d = geom.plane_segments_2d(self.axes, self.depth_axis)
        self._plane_segments = planes2d if len(planes2d) else None
        if geom.has_loose and st.overlay_settings.show_loose:
            self._core_rects = project_rects(geom, self.axes, core=True, table=table)[0]
        self._redraw_overlay()

    def _visible_rects(self, rects: np.ndarray) -> np.ndarray:
        """Mask of rectangles worth drawing now: inside the view and at least
        :data:`MIN_RECT_PX` on screen (smaller ones would only be noise), capped at
        :data:`RECT_CAP` (the biggest win)."""
        view = self.vb.viewRect()
        px, py = self.vb.viewPixelSize()
        u0, u1 = sorted((view.left(), view.right()))
        v0, v1 = sorted((view.top(), view.bottom()))
        w = (rects[:, 2] - rects[:, 0]) / max(px, 1e-12)
        h = (rects[:, 3] - rects[:, 1]) / max(py, 1e-12)
        keep = (rects[:, 2] >= u0) & (rects[:, 0] <= u1) & (rects[:, 3] >= v0) & (rects[:, 1] <= v1)
        keep &= np.maximum(w, h) >= MIN_RECT_PX
        idx = np.flatnonzero(keep)
        if len(idx) > RECT_CAP:
            keep[:] = False
            keep[idx[np.argsort(-(w[idx] * h[idx]), kind="stable")[:RECT_CAP]]] = True
        return keep

    def _redraw_overlay(self) -> None:
        """Rebuild the overlay paths for the visible range (level of detail), then the labels.

        Only the rectangles that appeared or went away are repainted: after a small edit the
        tree mostly keeps its nodes, and repainting the whole overlay would repaint the whole
        viewport with it."""
        rects = self._rects
        if rects is None:
            self.overlay.clear()
            self._drawn_overlay = np.empty((0, 5))
            self._update_labels()
            return
        layers: list[Layer] = []
        pieces: list[np.ndarray] = []  # what each layer draws: u0 v0 u1 v1 bin
        if self._core_rects is not None:
            core = self._core_rects[self._visible_rects(self._core_rects)]
            layers.append((segments_path(rect_segments(core)),
                           cosmetic_pen((0.55, 0.55, 0.6), 0.35, 1.0, Qt.PenStyle.DotLine), None))
            pieces.append(np.column_stack([core, np.full(len(core), -1.0)]))
        keep = self._visible_rects(rects)
        self.drawn_rects = int(keep.sum())
        bins = np.where(keep, self._rect_bins, -1)
        for b in range(COLOUR_BINS):
            mine = rects[bins == b]
            if len(mine):
                pen = cosmetic_pen(0.25 + 0.75 * bin_colour(b), 1.0, 1.6)
                layers.append((segments_path(rect_segments(mine)), pen, None))
                pieces.append(np.column_stack([mine, np.full(len(mine), float(b))]))
        if self._plane_segments is not None:  # BSP split lines over the node boxes
            layers.append((segments_path(self._plane_segments), cosmetic_pen(SPLIT_LINE, 0.55, 1.0), None))
            planes = self._plane_segments.reshape(-1, 4)
            pieces.append(np.column_stack([planes, np.full(len(planes), -2.0)]))
        drawn = np.concatenate(pieces) if pieces else np.empty((0, 5))
        px, py = self.vb.viewPixelSize()
        dirty = rects_bounds(changed_rows(self._drawn_overlay, drawn), (3 * px, 3 * py))
        self._drawn_overlay = drawn
        self.overlay.set_layers(layers, dirty=dirty if dirty is not None else QRectF())
        self._update_labels()

    def _update_labels(self) -> None:
        """Object counts written in overlay rectangles, only where they are legible."""
        rects = self._rects
        shown = 0
        if rects is not None and self.state.overlay_visible and len(rects):
            px, py = self.vb.viewPixelSize()
            view = self.vb.viewRect()
            w = (rects[:, 2] - rects[:, 0]) / max(px, 1e-12)
            h = (rects[:, 3] - rects[:, 1]) / max(py, 1e-12)
            cu = (rects[:, 0] + rects[:, 2]) / 2
            cv = (rects[:, 1] + rects[:, 3]) / 2
            ok = (w >= LABEL_MIN_PX[0]) & (h >= LABEL_MIN_PX[1]) & (self._rect_counts > 0)
            ok &= (cu >= view.left()) & (cu <= view.right()) & (cv >= min(view.top(), view.bottom())) \
                & (cv <= max(view.top(), view.bottom()))
            idx = np.flatnonzero(ok)
            if len(idx) > LABEL_CAP:  # the smallest legible cells are the most informative
                idx = idx[np.argsort(w[idx] * h[idx])[:LABEL_CAP]]
            self.labels.set_labels(np.column_stack([cu[idx], cv[idx]]),
                                   [str(int(c)) for c in self._rect_counts[idx]])
            shown = len(idx)
        if not shown:
            self.labels.set_labels(np.empty((0, 2)), [])

    def visible_label_count(self) -> int:
        return self.labels.count()

    def _on_queries_changed(self) -> None:
        st = self.state
        layers = self._query_layers() if st.query_layer_visible else []
        table = st.node_table
        row = st.inspected_node
        if table is not None and 0 <= row < len(table):
            u, v = self.axes
            r = np.array([[table.lo[row, u], table.lo[row, v], table.hi[row, u], table.hi[row, v]]])
            layers.append((segments_path(rect_segments(r)), cosmetic_pen((1, 1, 1), 1.0, 3.0), None))
        self.query.set_layers(layers)

    def _query_layers(self) -> list:
        """The query layer: culled and visited nodes, the ray or frustum, and their hits."""
        st = self.state
        table = st.node_table
        layers = []
        u, v = self.axes
        for q in (st.frustum, st.ray):
            res = getattr(q, "result", None)
            if res is None or table is None:
                continue
            for rows_all, col, style in ((getattr(res, "culled", None), CULLED, Qt.PenStyle.DotLine),
                                         (res.visited, VISITED, Qt.PenStyle.SolidLine)):
                if rows_all is None or not len(rows_all):
                    continue
                rows = rows_all[rows_all < len(table)]
                rects = np.unique(np.column_stack([table.lo[rows, u], table.lo[rows, v],
                                                   table.hi[rows, u], table.hi[rows, v]]), axis=0)
                layers.append((segments_path(rect_segments(rects)), cosmetic_pen(col, 0.9, 1.6, style), None))
        doc = st.document
        hits = []
        if st.ray is not None and st.ray.result is not None:
            hits += st.ray.result.ids.tolist()
            r = st.ray
            far = r.max_t if math.isfinite(r.max_t) else (float(r.result.t[-1]) + 64 if len(r.result.t) else 2048)
            seg = self.project(np.array([r.origin, r.origin + r.direction * far]))
            layers.append((segments_path(seg), cosmetic_pen(QUERY_RAY, 1.0, 2.5), None))
        if st.frustum is not None and st.frustum.result is not None:
            hits += st.frustum.result.ids.tolist()
            seg = self.project(st.frustum.shot.edge_lines())
            layers.append((segments_path(seg), cosmetic_pen((0.4, 1.0, 0.6), 1.0, 2.0), None))
        if hits and doc is not None:
            ids = [i for i in set(hits) if i in doc.scene]
            lo, hi = doc.scene.bounds_of(ids)
            rects = np.column_stack([lo[:, u], lo[:, v], hi[:, u], hi[:, v]])
            layers.append((segments_path(rect_segments(rects)), cosmetic_pen(QUERY_HIT, 1.0, 2.0), None))
        return layers

    # ------------------------------------------------------------------ node picking
    def node_at(self, point: QPointF) -> int:
        """The deepest drawn overlay node whose rectangle holds ``point`` (-1 if none)."""
        st = self.state
        geom, table = st.overlay, st.node_table
        if geom is None or table is None or geom.count == 0:
            return -1
        u, v = self.axes
        lo, hi = geom.lo, geom.hi
        inside = (lo[:, u] <= point.x()) & (point.x() <= hi[:, u]) & (lo[:, v] <= point.y()) & (point.y() <= hi[:, v])
        idx = np.flatnonzero(inside)
        if not len(idx):
            return -1
        rows = geom.rows[idx]
        # deepest first; among equals the one holding the most objects
        order = np.lexsort((-table.own_count[rows], -table.depth[rows]))
        return int(rows[order[0]])
