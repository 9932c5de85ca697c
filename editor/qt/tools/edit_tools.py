"""Editing tools: select / move / resize, create a brush, place an entity."""
from __future__ import annotations

import itertools

import numpy as np
from PySide6.QtCore import Qt

from editor.model import AddObjects, Entity, Transform, point_entity
from editor.model.entity_classes import class_box
from editor.model.placement import floor_below, player_height
from editor.model.scene import SceneEditError
from editor.model.shapes import box_brush
from spatial.errors import GeometryError

from ..scene_geometry import selection_bounds
from .edit_ops import combine_selection, ensure_worldspawn, select

_drag_ids = itertools.count(1)

#: pixels within which a press grabs a resize handle
HANDLE_GRAB_PX = 7.0


def _mods(modifiers) -> tuple[bool, bool]:
    return bool(modifiers & Qt.KeyboardModifier.ShiftModifier), bool(modifiers & Qt.KeyboardModifier.ControlModifier)


def pick_in_view(state, view, point) -> list[int]:
    """Ids under a 2D point (a ray cast through the index along the view axis).

    Point entities come first, then brushes, each nearest to the viewer first: in a top view a
    ceiling must not hide the monster standing under it.
    """
    doc = state.document
    d = view.depth_axis
    origin = view.to_world(point, depth=_top_of_index(doc, d) + 1.0)
    direction = np.zeros(3)
    direction[d] = -1.0
    hits = state.pick(origin, direction)
    scene = doc.scene
    return sorted(hits, key=lambda oid: not (isinstance(scene.get(oid), Entity)))


def _top_of_index(doc, axis: int) -> float:
    """The highest coordinate along ``axis`` of any object in the document's index, where a
    pick ray through that index may start. Read from the index's object table (one numpy
    maximum): the scene's bounds walk every object again after each edit, a third of a second
    on 50,000 brushes at the press of every drag."""
    table = doc.index.objects
    slots = table.alive_slots()
    if not len(slots):
        return float(doc.scene.bounds()[1][axis])
    return float(table.hi[slots, axis].max())


class SelectTool:
    """Click to select (Shift adds, Ctrl toggles), drag empty space for a box selection, drag a
    selected object to move it (snapped), drag a handle to resize."""

    #: kernel families its gestures wait for: none, picking answers without its kernels
    #: (:meth:`EditorState.pick`); moving and resizing check for editing's themselves
    KERNELS: tuple[str, ...] = ()

    def __init__(self, state) -> None:
        self.state = state
        self.mode: str | None = None  # "box", "move" or "resize" while a drag is on
        self.start = np.zeros(2)  # where the drag started (view pixels), read while mode is set
        self.applied = np.zeros(3)
        self.handle = -1
        self.bounds0: tuple[np.ndarray, np.ndarray] | None = None
        self.drag_id: tuple[str, int] | None = None

    def click(self, view, point, modifiers) -> None:
        doc = self.state.document
        hits = pick_in_view(self.state, view, point)
        add, toggle = _mods(modifiers)
        picked = hits[:1]
        select(doc, combine_selection(doc.selection, picked, add, toggle))

    def pick3d(self, origin, direction, modifiers) -> None:
        doc = self.state.document
        hits = self.state.pick(origin, direction)
        add, toggle = _mods(modifiers)
        select(doc, combine_selection(doc.selection, hits[:1], add, toggle))

    def merge_id(self):
        """The ``merge_id`` of the edits of a drag moving or resizing the selection now (they
        merge into one undo step), else None."""
        return self.drag_id if self.mode in ("move", "resize") else None

    def drag_start(self, view, point, modifiers) -> None:
        doc = self.state.document
        self.start = np.array([point.x(), point.y()])
        self.applied = np.zeros(3)
        self.drag_id = ("drag", next(_drag_ids))
        self.mode = "box"
        if doc.selection and len(view.handle_points):
            dist = np.linalg.norm(view.handle_points - self.start, axis=1) / max(view.pixel_size(), 1e-12)
            k = int(np.argmin(dist))
            if dist[k] <= HANDLE_GRAB_PX:
                self.mode = self._editing("resize")
                self.handle = k
                self.bounds0 = selection_bounds(doc.scene, doc.selection)
                return
        hits = pick_in_view(self.state, view, point)
        # a drag that starts on the selection moves it; anywhere else it draws a selection box
        # (in a top view the floor is under every point, so "on an object" cannot mean "move")
        if any(h in doc.selection for h in hits):
            self.mode = self._editing("move")

    def _editing(self, mode: str) -> str | None:
        """``mode`` (a move or resize) when editing's kernels are loaded, else None: the drag
        does nothing and the status bar says why (a first start still prepares them)."""
        if "edit" in self.state.kernels_waiting:
            self.state.status_message.emit("Moving waits for the editing tools to be prepared "
                                           "(see the status bar)…")
            return None
        return mode

    def drag_move(self, view, point, modifiers) -> None:
        if self.mode is None:
            return
        cur = np.array([point.x(), point.y()])
        if self.mode == "box":
            view.set_preview(None, fill_rect=(self.start, cur))
            return
        doc = self.state.document
        raw = cur - self.start
        if self.mode == "move":
            delta = np.zeros(3)
            delta[list(view.axes)] = self.state.snap_value(raw)
            step = delta - self.applied
            if step.any():
                try:
                    doc.push(Transform(sorted(doc.selection), delta=step, text="Move", merge_id=self.drag_id))
                    self.applied = delta
                except (SceneEditError, GeometryError):
                    pass
        elif self.mode == "resize":
            self._resize(view, cur)

    def _resize(self, view, cur) -> None:
        doc = self.state.document
        if self.bounds0 is None:
            return
        lo0, hi0 = (b.copy() for b in self.bounds0)
        lo, hi = lo0.copy(), hi0.copy()
        u, v = view.axes
        # handles run counter-clockwise from the low corner: which sides each one moves
        moves = {0: (-1, -1), 1: (0, -1), 2: (1, -1), 3: (1, 0), 4: (1, 1), 5: (0, 1), 6: (-1, 1), 7: (-1, 0)}
        su, sv = moves[self.handle]
        target = self.state.snap_value(cur)
        for axis, side, value in ((u, su, target[0]), (v, sv, target[1])):
            if side < 0:
                lo[axis] = min(value, hi0[axis] - self._min_size())
            elif side > 0:
                hi[axis] = max(value, lo0[axis] + self._min_size())
        try:
            doc.push(Transform.resize(doc.scene, sorted(doc.selection), lo, hi, merge_id=self.drag_id))
        except (SceneEditError, GeometryError):
            pass

    def _min_size(self) -> float:
        return float(self.state.grid_size if self.state.snap else 1.0)

    def drag_end(self, view, point, modifiers) -> None:
        mode, self.mode = self.mode, None
        view.set_preview(None)
        if mode != "box":
            return
        doc = self.state.document
        cur = np.array([point.x(), point.y()])
        lo, hi = doc.scene.bounds()
        qlo, qhi = lo.copy() - 1, hi.copy() + 1
        u, v = view.axes
        qlo[u], qhi[u] = sorted((self.start[0], cur[0]))
        qlo[v], qhi[v] = sorted((self.start[1], cur[1]))
        ids = self.state.box_candidates(qlo, qhi)
        # a box selects what lies inside it, as in every editor (not what it merely touches)
        if len(ids):
            blo, bhi = doc.scene.bounds_of(ids.tolist())
            inside = np.all((blo[:, [u, v]] >= qlo[[u, v]]) & (bhi[:, [u, v]] <= qhi[[u, v]]), axis=1)
            ids = ids[inside]
        add, toggle = _mods(modifiers)
        select(doc, combine_selection(doc.selection, ids.tolist(), add, toggle))


class BrushTool:
    """Drag a rectangle in a 2D view to create a box brush (snapped to the grid)."""

    #: kernel families its gestures wait for (a new brush is inserted into the index)
    KERNELS = ("edit",)

    def __init__(self, state) -> None:
        self.state = state
        self.start: np.ndarray | None = None

    def drag_start(self, view, point, modifiers) -> None:
        self.start = self.state.snap_value(np.array([point.x(), point.y()]))

    def drag_move(self, view, point, modifiers) -> None:
        if self.start is None:
            return
        cur = self.state.snap_value(np.array([point.x(), point.y()]))
        view.set_preview(None, fill_rect=(self.start, cur))

    def drag_end(self, view, point, modifiers) -> None:
        view.set_preview(None)
        if self.start is None:
            return
        start, self.start = self.start, None
        cur = self.state.snap_value(np.array([point.x(), point.y()]))
        create_box_brush(self.state, view, start, cur)


def brush_depth_range(state, view) -> tuple[float, float]:
    """Depth extent of a new brush: the last created brush's along the view's depth axis, else
    the grid's default from the level's floor up (never the selection's: what happens to be
    selected says nothing about how tall the next brush should be)."""
    last = state.last_brush_range.get(view.depth_axis)
    if last is not None:
        return last
    doc = state.document
    d = view.depth_axis
    lo, hi = doc.scene.bounds()
    base = float(state.snap_value(lo[d])) if len(doc.scene.indexed_ids()) else 0.0
    return base, base + default_brush_depth(state.grid_size)


def default_brush_depth(grid: float) -> float:
    """The grid's default brush height: four grid steps, at least 64 units."""
    return float(max(4 * grid, 64))


def create_box_brush(state, view, corner_a, corner_b) -> int | None:
    """Create a box brush spanning two 2D corners in ``view``; returns its id (None if flat)."""
    doc = state.document
    u0, u1 = sorted((float(corner_a[0]), float(corner_b[0])))
    v0, v1 = sorted((float(corner_a[1]), float(corner_b[1])))
    if u1 - u0 <= 0 or v1 - v0 <= 0:
        state.status_message.emit("Brush not created: drag a rectangle with some area")
        return None
    d0, d1 = brush_depth_range(state, view)
    lo, hi = np.zeros(3), np.zeros(3)
    u, v = view.axes
    lo[u], hi[u], lo[v], hi[v] = u0, u1, v0, v1
    lo[view.depth_axis], hi[view.depth_axis] = d0, d1
    new: dict = {}
    world = ensure_worldspawn(doc, new)
    bid = doc.scene.allocate_ids(1)[0]
    new[bid] = box_brush(world, lo, hi)
    if doc.push(AddObjects(new, text="Create Brush", select=True)):
        state.last_brush_range[view.depth_axis] = (d0, d1)
    return bid


class EntityTool:
    """Click in a 2D view to place an entity of the palette's class at the snapped point; from
    the top view it stands on the floor below the cursor (:func:`entity_origin_on_floor`)."""

    #: kernel families its gestures wait for: the floor is found with the index's ray query,
    #: and the entity is inserted into the index
    KERNELS = ("pick", "edit")

    def __init__(self, state) -> None:
        self.state = state

    def click(self, view, point, modifiers) -> None:
        state = self.state
        p = self.spot(view, point)
        place_entity(state, p, snap=False)
        state.placed_height = float(p[2])  # the next one from the top view goes on this level

    def spot(self, view, point) -> np.ndarray:
        """Where a click at ``point`` places the entity (snapped; from the top view, standing
        on the floor below the working height)."""
        state = self.state
        p = view.to_world(point)
        p[list(view.axes)] = state.snap_value(p[list(view.axes)])
        if view.depth_axis == 2:
            p[2] = entity_origin_on_floor(state, state.entity_class, p[0], p[1])
        return p

    def hover(self, view, point) -> None:
        """Say, before the click, where the entity would land (shown in the status bar)."""
        if view.depth_axis != 2 or self.state.document is None:
            return
        p = self.spot(view, point) + 0.0  # no "-0" on screen
        self.state.status_message.emit(
            f"{self.state.entity_class} lands at ({p[0]:g}, {p[1]:g}, {p[2]:g})")


def working_height(state) -> float | None:
    """The height entities placed from the top view are put at, before finding the floor
    below it: the Queries panel's ray height when set, else the last placed entity's, else
    the level's player start (None: none of these)."""
    if state.ray_height is not None:
        return float(state.ray_height)
    if state.placed_height is not None:
        return state.placed_height
    return player_height(state.document.scene)


def entity_origin_on_floor(state, classname: str, x: float, y: float) -> float:
    """Origin height that stands a ``classname`` entity on the floor below ``(x, y)``: a downward
    ray through the live index from the working height (:func:`working_height`), else from
    the top of the level; the level's lowest point when it meets no floor."""
    doc = state.document
    mins, maxs = (np.asarray(v, dtype=np.float64) for v in class_box(classname))
    floor = None
    height = working_height(state)
    if height is not None:
        floor = floor_below(doc.scene, doc.index, x, y, below=height + 1.0)
    if floor is None:
        floor = floor_below(doc.scene, doc.index, x, y, clearance=float(maxs[2] - mins[2]))
    if floor is None:
        floor = float(doc.scene.bounds()[0][2]) if len(doc.scene.indexed_ids()) else 0.0
    return floor - float(mins[2])


def place_entity(state, point3, snap: bool = True) -> int:
    """Add an entity of the palette's class at ``point3`` (snapped to the grid when ``snap``)."""
    doc = state.document
    origin = np.asarray(point3, dtype=np.float64)
    if snap:
        origin = state.snap_value(origin)
    eid = doc.scene.allocate_ids(1)[0]
    doc.push(AddObjects({eid: point_entity(state.entity_class, origin)},
                        text=f"Place {state.entity_class}", select=True))
    return eid
