"""The 3D perspective view: translucent brushes with edges, entity boxes, the tree overlay,
the ray and the frustum, drawn with a handful of big pyqtgraph GL items.

Navigation: left-drag orbits, middle-drag (or Ctrl+left) pans, the wheel zooms; ``Z`` toggles
fly mode, where WASD (and Q/E down/up) move the camera and a left-drag looks around. A left
click without a drag is handed to the active tool as a pick ray: picking is a CPU ray cast
through our own spatial index, never GL selection.
"""
from __future__ import annotations

import math
import operator
import time
from collections.abc import Callable, Generator
from functools import partial

import numpy as np
import pyqtgraph.opengl as gl
from OpenGL.GL import (
    GL_BLEND,
    GL_COLOR_BUFFER_BIT,
    GL_CULL_FACE,
    GL_DEPTH_BUFFER_BIT,
    GL_DEPTH_TEST,
    GL_ONE_MINUS_SRC_ALPHA,
    GL_SRC_ALPHA,
    glClear,
    glClearColor,
    glFinish,
    glViewport,
)
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QVector3D

from spatial.geometry import frustum_box

from ..colors import CULLED, QUERY_HIT, QUERY_RAY, SELECTED, VISITED
from ..overlay import OverlayGeometry, box_lines
from ..scene_geometry import expand_selection, selection_lines
from .camera import CameraShot, pixel_ray
from .follow_state import follow_state
from .gl_ranges import RangeLinesItem, RangeTrianglesItem
from .raster_gl_widget import RasterGLView
from .still_layer import StillLayer

_EMPTY = np.zeros((0, 3), dtype=np.float32)

#: overlays with more boxes than this are culled to the camera's view before upload
CULL_OVERLAY_ABOVE = 4000

#: a level with more brush face vertices than this draws its brushes as edges only while the
#: camera moves (level of detail): under a software OpenGL every vertex is processed on the
#: window's thread, and the translucent faces of 20,000 brushes (720,000 vertices) cost
#: about half of each orbit frame. Faces come back once the camera rests.
MOTION_LOD_VERTICES = 400_000
#: the camera counts as resting after this long without a change
CAMERA_REST_MS = 150
#: vertices of the level image drawn per paint when the brush faces come back: the first full
#: frame of 50,000 brushes (1.8 million face and 1.2 million edge vertices) took 140 ms of the
#: window's thread on a quiet llvmpipe, about 300 ms under load, in one paint
SLICE_VERTICES = 300_000

#: GL state of the query layer: blended, without a depth test, so it draws over the tree
ON_TOP = {GL_DEPTH_TEST: False, GL_BLEND: True, GL_CULL_FACE: False,
          "glBlendFunc": (GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA)}


def _lines(pos, color, width=1.0, opts="opaque"):
    item = gl.GLLinePlotItem(pos=pos, color=color, width=width, mode="lines", antialias=False,
                             glOptions=opts)
    return item


def _mesh():
    """An empty, hidden triangle-list item (filled by :func:`_set_mesh`)."""
    item = gl.GLMeshItem(vertexes=np.zeros((3, 3), dtype=np.float32), smooth=False,
                         drawEdges=False, computeNormals=False, glOptions="translucent")
    item.setVisible(False)
    return item


def _set_lines(item, pos, colours) -> None:
    """Give a line item new vertices and colours, unless it already has these: an edit redraws
    the tree overlay, mostly the same, and a new upload would draw the still image again."""
    same = (item.pos is not None and isinstance(item.color, np.ndarray)
            and np.array_equal(item.pos, pos) and np.array_equal(item.color, colours))
    if not same:
        item.setData(pos=pos, color=colours)


def _set_mesh(item, vertices, colours) -> None:
    """Upload an unindexed triangle list (or hide the item when there is none)."""
    if len(vertices):
        item.setMeshData(vertexes=vertices, faces=np.arange(len(vertices), dtype=np.uint32).reshape(-1, 3),
                         vertexColors=colours)
    item.setVisible(bool(len(vertices)))


def brush_row_ranges(old, new) -> tuple[list | None, list | None]:
    """Rows of the brush face and edge arrays that differ between two
    :class:`~editor.qt.scene_geometry.SceneArrays` (``None``: all of them).

    ``new`` was patched from ``old`` in place when it holds the same arrays (each touched
    brush rewrote its own range), or appended to when it starts with the same brushes and none
    of them was touched; anything else (a brush deleted, one whose vertex count changed) is
    sent whole.
    """
    if old is None or new.changed is None or old.mesh_offsets is None:
        return None, None
    touched = list(new.changed)
    if new.mesh_vertices is old.mesh_vertices and new.edge_lines is old.edge_lines:
        rows = new.brush_rows()
        ks = [rows[oid] for oid in touched if oid in rows]
        mesh = [(new.mesh_offsets[k], new.mesh_offsets[k + 1]) for k in ks]
        edges = [(2 * new.edge_offsets[k], 2 * new.edge_offsets[k + 1]) for k in ks]
        return mesh, edges
    n = len(old.brush_ids)
    if len(new.brush_ids) >= n and np.array_equal(new.brush_ids[:n], old.brush_ids) and \
            not np.isin(np.fromiter(touched, dtype=np.int64, count=len(touched)), old.brush_ids).any():
        return ([(len(old.mesh_vertices), len(new.mesh_vertices))],
                [(len(old.edge_lines), len(new.edge_lines))])
    return None, None


class View3D(RasterGLView):
    """The perspective view. ``pick_requested(origin, direction, modifiers)`` on a click."""

    pick_requested = Signal(object, object, object)
    frame_rendered = Signal(float)

    def __init__(self, state, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.setObjectName("view3d")
        self.setBackgroundColor((28, 30, 36))
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMinimumSize(200, 150)
        self.opts["fov"] = 75
        self.fly_mode = False
        self.faces_wanted = True
        self._has_faces = False
        self.frame_ms = 0.0
        #: at most this share of the window's time goes to painting this view while set (a
        #: live game's frames arrive faster than a big scene paints); None: paint on request
        self.paint_share: float | None = None
        self.paints = 0
        self._painted_at = 0.0
        self._deferred = QTimer(self)
        self._deferred.setSingleShot(True)
        self._deferred.timeout.connect(super().update)
        self._press_pos = None
        self._fly_keys: set[int] = set()
        self._fly_timer = QTimer(self)
        self._fly_timer.setInterval(16)
        self._fly_timer.timeout.connect(self._fly_step)
        self._geom: OverlayGeometry | None = None
        self._culled_for: tuple | None = None
        self.drawn_boxes = 0
        self._drawn = {"brushes": 0, "wall_segments": 0, "triangles": 0, "entities": 0}
        self._recull_timer = QTimer(self)
        self._recull_timer.setSingleShot(True)
        self._recull_timer.setInterval(120)
        self._recull_timer.timeout.connect(self._upload_overlay)
        # _arriving: a new level's first image is not whole yet (it is shown as it is drawn)
        self._last_camera, self._full_frame_asked, self._arriving = None, False, False
        self._face_upload = QTimer(self)
        self._face_upload.setSingleShot(True)
        self._face_upload.timeout.connect(self._upload_skipped_faces)
        self._rest_timer = QTimer(self)
        self._rest_timer.setSingleShot(True)
        self._rest_timer.setInterval(CAMERA_REST_MS)
        self._rest_timer.timeout.connect(self._on_camera_rest)

        self.grid_item = gl.GLGridItem(color=(255, 255, 255, 40))
        self.grid_item.setGLOptions("translucent")
        # the brushes: one face and one edge item over the scene's big arrays, updated by the
        # ranges of the brushes an edit touched (see gl_ranges); the selected brushes' rows
        # are drawn by their parts, after every other brush (see _split_selection)
        self.faces = RangeTrianglesItem()
        self.edges = RangeLinesItem((0.8, 0.85, 0.95, 0.9))
        self._shown_arrays = None
        self._split_for: tuple | None = None  # the selection and rows last split off
        # the level's own geometry when it is not brushes: Doom walls, mesh triangles
        self.wall_faces = _mesh()
        self.wall_edges = _lines(_EMPTY, (1, 1, 1, 1), opts="translucent")
        self.mesh_faces = _mesh()
        self.split_planes = _lines(_EMPTY, (1, 1, 1, 1), width=1.5, opts="translucent")
        self.entities = _lines(_EMPTY, (1, 1, 1, 1), width=1.5)
        self.overlay = _lines(_EMPTY, (1, 1, 1, 1))
        self.overlay_core = _lines(_EMPTY, (1, 1, 1, 1))
        self.selection = _lines(_EMPTY, SELECTED + (1.0,), width=2.0)
        # the query layer: drawn over everything else (no depth test), so a visited node is
        # never hidden in the heatmap box it coincides with
        self.query_nodes = _lines(_EMPTY, (1, 1, 1, 1), width=2.0, opts=ON_TOP)
        self.highlight = _lines(_EMPTY, QUERY_HIT + (1.0,), width=2.0, opts=ON_TOP)
        self.ray_item = _lines(_EMPTY, QUERY_RAY + (1.0,), width=3.0, opts=ON_TOP)
        self.frustum_item = _lines(_EMPTY, (0.4, 1.0, 0.6, 1.0), width=2.0, opts=ON_TOP)
        self.inspected = _lines(_EMPTY, (1.0, 1.0, 1.0, 1.0), width=3.0)
        for item in (self.grid_item, self.overlay_core, self.overlay, self.split_planes,
                     self.mesh_faces, self.wall_faces, self.wall_edges, self.faces, self.edges,
                     self.faces.part, self.edges.part, self.entities, self.query_nodes,
                     self.highlight, self.selection, self.ray_item, self.frustum_item,
                     self.inspected):
            self.addItem(item)
        self._make_still_layer()

        follow_state(self, state)

    # ------------------------------------------------------------------ model -> items
    def frame_scene(self, bounds=None) -> None:
        """Point the camera at the whole level, or at the box ``bounds`` (``(lo, hi)``)."""
        doc = self.state.document
        if bounds is None and doc is None:
            return
        lo, hi = bounds if bounds is not None else doc.scene.bounds()
        centre = (lo + hi) / 2
        radius = max(float(np.linalg.norm(hi - lo)) / 2, 64.0)
        self.setCameraPosition(pos=QVector3D(*centre), distance=radius * 1.6, elevation=35,
                               azimuth=-60)
        self._on_grid_changed()
        if self._culled_for is not None and self._culled_for != self._camera_key():
            # a jump, not a motion: cull the overlay for the new camera now, before the next
            # frame, rather than painting a frame for the old one and another 120 ms later
            self._upload_overlay()

    def _on_grid_changed(self) -> None:
        doc = self.state.document
        g = self.state.grid_size
        spacing = g * max(1, int(64 // g))  # a readable density at any grid size
        size = 1024.0
        if doc is not None:
            lo, hi = doc.scene.bounds()
            size = float(max(hi[0] - lo[0], hi[1] - lo[1], 256)) * 1.25
            while size / spacing > 64:  # at most ~64 lines across, however big the level
                spacing *= 2
        self.grid_item.setSpacing(spacing, spacing, spacing)
        if doc is not None:
            size = math.ceil(size / spacing) * spacing
            self.grid_item.setSize(size, size, 1)
            self.grid_item.resetTransform()
            c = (lo + hi) / 2
            self.grid_item.translate(round(c[0] / spacing) * spacing, round(c[1] / spacing) * spacing, lo[2])
        self.grid_item.setVisible(self.state.show_grid)
        self.update()

    def _on_scene_arrays_changed(self, arrays) -> None:
        mesh_ranges, edge_ranges = brush_row_ranges(self._shown_arrays, arrays)
        self._shown_arrays = arrays
        self.faces.set_triangles(arrays.mesh_vertices, arrays.mesh_colours, mesh_ranges)
        self._has_faces = bool(len(arrays.mesh_vertices))
        self.faces.setVisible(self._has_faces and self.faces_wanted)
        self.edges.set_lines(arrays.edge_lines, edge_ranges)
        self._split_selection()
        everything = arrays.changed is None
        if everything and len(arrays.edge_lines) + len(arrays.mesh_vertices) > SLICE_VERTICES:
            self._arriving = True
        if everything or arrays.entities_changed:
            if len(arrays.entity_lines):
                self.entities.setData(pos=arrays.entity_lines, color=arrays.entity_colours)
            else:
                self.entities.setData(pos=_EMPTY)
        level = arrays.level
        self._drawn = {"brushes": len(arrays.brush_ids), "wall_segments": level.walls_drawn,
                       "triangles": level.triangles_drawn, "entities": len(arrays.entity_ids)}
        if everything or arrays.level_changed:
            self._upload_level(level)
        self.update()

    def _upload_level(self, level) -> None:
        """Walls and mesh triangles (re-uploaded only when walls or triangles were edited)."""
        _set_mesh(self.wall_faces, level.wall_vertices, level.wall_colours)
        _set_mesh(self.mesh_faces, level.mesh_vertices, level.mesh_colours)
        if len(level.wall_lines):
            self.wall_edges.setData(pos=level.wall_lines, color=level.wall_line_colours)
        self.wall_edges.setVisible(bool(len(level.wall_lines)))

    def drawn_counts(self) -> dict:
        """What the 3D view holds now: brushes, wall segments, triangles and entities."""
        return dict(self._drawn)

    def set_faces_visible(self, on: bool) -> None:
        """Show or hide the translucent brush faces (edges stay)."""
        self.faces_wanted = bool(on)
        self.faces.setVisible(self.faces_wanted and self._has_faces)
        self.update()

    def _on_selection_changed(self, ids) -> None:
        doc = self.state.document
        pos = selection_lines(doc.scene, ids) if ids else _EMPTY
        self.selection.setData(pos=pos)
        self._split_selection()
        self.update()

    def _split_selection(self) -> None:
        """Leave the selected brushes' rows to the face and edge items' parts, drawn after
        every other brush, in every frame: the others are then the same still image however a
        drag moves the selection (see :mod:`.still_layer`), and that image with the parts over
        it is the frame drawing every item gives."""
        arrays, doc = self._shown_arrays, self.state.document
        if arrays is None or doc is None:
            return
        selection = doc.selection
        key = (selection, arrays.mesh_offsets, arrays.edge_offsets, arrays.brush_ids)
        if self._split_for is not None and all(a is b for a, b in zip(key, self._split_for)):
            return  # the same selection over the same rows (a drag's step)
        self._split_for = key
        rows = arrays.brush_rows()
        picked = [rows[oid] for oid in expand_selection(doc.scene, selection) if oid in rows] \
            if selection else []
        if not picked or arrays.mesh_offsets is None:
            self.faces.split_off([])
            self.edges.split_off([])
            return
        ks = np.sort(np.asarray(picked, dtype=np.int64))
        mesh, edge = np.asarray(arrays.mesh_offsets), np.asarray(arrays.edge_offsets)
        self.faces.split_off(zip(mesh[ks].tolist(), mesh[ks + 1].tolist()))
        self.edges.split_off(zip((2 * edge[ks]).tolist(), (2 * edge[ks + 1]).tolist()))

    def _on_overlay_changed(self, geom) -> None:
        self._geom = geom
        self._upload_overlay()
        self._on_queries_changed()

    def _camera_key(self) -> tuple:
        c = self.opts["center"]
        return (c.x(), c.y(), c.z(), self.opts["distance"], self.opts["elevation"],
                self.opts["azimuth"], self.opts["fov"], self.width(), self.height())

    def _upload_overlay(self) -> None:
        """Upload the overlay boxes; a big tree is culled to the camera's view first (level of
        detail), and re-culled shortly after the camera stops moving."""
        geom = self._geom
        visible = False
        if geom is not None and self.state.overlay_visible and geom.count > 0:
            lines, colours = geom.lines3d, geom.colours3d
            core, core_colours = geom.core_lines3d, geom.core_colours3d
            self._culled_for = None
            if geom.count > CULL_OVERLAY_ABOVE:
                keep = frustum_box(self.camera_shot(far_factor=1000.0).planes(), geom.lo, geom.hi)
                per_vertex = np.repeat(keep, 24)
                lines, colours = lines[per_vertex], colours[per_vertex]
                if len(core):
                    core, core_colours = core[per_vertex], core_colours[per_vertex]
                self._culled_for = self._camera_key()
            self.drawn_boxes = len(lines) // 24
            if len(geom.plane_lines3d):
                _set_lines(self.split_planes, geom.plane_lines3d, geom.plane_colours3d)
            if len(lines):
                _set_lines(self.overlay, lines, colours)
            if len(core):
                _set_lines(self.overlay_core, core, core_colours)
            visible = len(lines) > 0
        self.overlay.setVisible(visible)
        self.split_planes.setVisible(visible and geom is not None and len(geom.plane_lines3d) > 0)
        self.overlay_core.setVisible(visible and geom is not None and len(geom.core_lines3d) > 0)
        self.update()

    def _on_queries_changed(self) -> None:
        st = self.state
        table = st.node_table
        parts, colours, hl = [], [], []
        ray = st.ray if st.query_layer_visible else None
        fr = st.frustum if st.query_layer_visible else None
        if ray is not None and ray.result is not None:
            far = ray.max_t if math.isfinite(ray.max_t) else self._scene_extent() * 2
            if len(ray.result.t):
                far = max(far if math.isfinite(ray.max_t) else 0, float(ray.result.t[-1]) + 32) \
                    if not math.isfinite(ray.max_t) else far
            self.ray_item.setData(pos=np.array([ray.origin, ray.origin + ray.direction * far],
                                               dtype=np.float32))
            self.ray_item.setVisible(True)
            if ray.result.visited is not None and table is not None:
                rows = ray.result.visited[ray.result.visited < len(table)]
                parts.append(box_lines(table.lo[rows], table.hi[rows]))
                colours.append(np.tile(np.array(VISITED + (1.0,), dtype=np.float32), (24 * len(rows), 1)))
            hl.extend(ray.result.ids.tolist())
        else:
            self.ray_item.setVisible(False)
        if fr is not None and fr.result is not None:
            self.frustum_item.setData(pos=fr.shot.edge_lines().astype(np.float32))
            self.frustum_item.setVisible(True)
            if table is not None:
                for rows_all, col in ((fr.result.culled, CULLED), (fr.result.visited, VISITED)):
                    if rows_all is None:
                        continue
                    rows = rows_all[rows_all < len(table)]
                    parts.append(box_lines(table.lo[rows], table.hi[rows]))
                    colours.append(np.tile(np.array(col + (1.0,), dtype=np.float32), (24 * len(rows), 1)))
            hl.extend(fr.result.ids.tolist())
        else:
            self.frustum_item.setVisible(False)
        if parts and sum(len(p) for p in parts):
            self.query_nodes.setData(pos=np.concatenate(parts), color=np.concatenate(colours))
            self.query_nodes.setVisible(True)
        else:
            self.query_nodes.setVisible(False)
        doc = st.document
        if hl and doc is not None:
            lo, hi = doc.scene.bounds_of([i for i in set(hl) if i in doc.scene])
            self.highlight.setData(pos=box_lines(lo, hi))
            self.highlight.setVisible(True)
        else:
            self.highlight.setVisible(False)
        row = st.inspected_node
        if table is not None and 0 <= row < len(table):
            self.inspected.setData(pos=box_lines(table.lo[row], table.hi[row]))
            self.inspected.setVisible(True)
        else:
            self.inspected.setVisible(False)
        self.update()

    def _scene_extent(self) -> float:
        doc = self.state.document
        if doc is None:
            return 1024.0
        lo, hi = doc.scene.bounds()
        return max(float(np.linalg.norm(hi - lo)), 256.0)

    # ------------------------------------------------------------------ camera
    def camera_shot(self, far_factor: float = 1.5) -> CameraShot:
        """The current camera as a :class:`CameraShot` (for the frustum tool; the far plane
        sits at ``far_factor`` times the orbit distance)."""
        pos = np.array(list(self.cameraPosition()), dtype=np.float64)
        c = self.opts["center"]
        centre = np.array([c.x(), c.y(), c.z()])
        forward = centre - pos
        w, h = max(self.width(), 1), max(self.height(), 1)
        fov_x = math.radians(self.opts["fov"])
        fov_y = math.degrees(2 * math.atan(math.tan(fov_x / 2) * h / w))
        return CameraShot(pos, forward, np.array([0.0, 0.0, 1.0]), fov_y, w / h, near=4.0,
                          far=float(self.opts["distance"]) * far_factor)

    def inverse_mvp(self) -> np.ndarray:
        w, h = max(self.width(), 1), max(self.height(), 1)
        proj = self.projectionMatrix((0, 0, w, h), (0, 0, w, h))
        mvp = proj * self.viewMatrix()
        m = np.array(mvp.data(), dtype=np.float64).reshape(4, 4).T  # Qt stores column-major
        return np.linalg.inv(m)

    def ray_at(self, x: float, y: float):
        """World ``(origin, direction)`` through widget pixel ``(x, y)``."""
        return pixel_ray(self.inverse_mvp(), x, y, max(self.width(), 1), max(self.height(), 1))

    # ------------------------------------------------------------------ input
    def mousePressEvent(self, ev) -> None:
        self._press_pos = ev.position()
        super().mousePressEvent(ev)

    def mouseMoveEvent(self, ev) -> None:
        if self.fly_mode and ev.buttons() == Qt.MouseButton.LeftButton:
            pos = ev.position()
            last = getattr(self, "mousePos", pos)
            diff = pos - last
            self.mousePos = pos
            # look around: turn the camera about its own position, not the orbit centre
            eye = self.cameraPosition()
            self.opts["azimuth"] -= diff.x() * 0.3
            self.opts["elevation"] = max(-89.0, min(89.0, self.opts["elevation"] + diff.y() * 0.3))
            self._keep_eye(eye)
            self.update()
            return
        super().mouseMoveEvent(ev)

    def mouseReleaseEvent(self, ev) -> None:
        press, self._press_pos = self._press_pos, None
        if ev.button() == Qt.MouseButton.LeftButton and press is not None:
            moved = ev.position() - press
            if abs(moved.x()) + abs(moved.y()) <= 3:
                origin, direction = self.ray_at(ev.position().x(), ev.position().y())
                self.pick_requested.emit(origin, direction, ev.modifiers())
        super().mouseReleaseEvent(ev)

    def _keep_eye(self, eye) -> None:
        """Move the orbit centre so the camera stays at ``eye`` after a rotation."""
        dist = self.opts["distance"]
        elev, azim = math.radians(self.opts["elevation"]), math.radians(self.opts["azimuth"])
        offset = QVector3D(dist * math.cos(elev) * math.cos(azim), dist * math.cos(elev) * math.sin(azim),
                           dist * math.sin(elev))
        self.opts["center"] = QVector3D(eye) - offset

    def set_fly_mode(self, on: bool) -> None:
        self.fly_mode = bool(on)
        if not on:
            self._fly_keys.clear()
            self._fly_timer.stop()
        self.state.status_message.emit("Fly mode: WASD to move, Q/E down/up, drag to look, Z to leave"
                                       if on else "Orbit mode")

    _FLY = {Qt.Key.Key_W, Qt.Key.Key_A, Qt.Key.Key_S, Qt.Key.Key_D, Qt.Key.Key_Q, Qt.Key.Key_E}

    def keyPressEvent(self, ev) -> None:
        if ev.key() == Qt.Key.Key_Z and not ev.modifiers():
            self.set_fly_mode(not self.fly_mode)
            return
        if self.fly_mode and ev.key() in self._FLY:
            if not ev.isAutoRepeat():
                self._fly_keys.add(ev.key())
                self._fly_step()
                self._fly_timer.start()
            return
        super().keyPressEvent(ev)

    def keyReleaseEvent(self, ev) -> None:
        if ev.key() in self._FLY and not ev.isAutoRepeat():
            self._fly_keys.discard(ev.key())
            if not self._fly_keys:
                self._fly_timer.stop()
            return
        super().keyReleaseEvent(ev)

    def _fly_step(self) -> None:
        if not self._fly_keys:
            return
        eye = np.array(list(self.cameraPosition()))
        c = self.opts["center"]
        forward = np.array([c.x(), c.y(), c.z()]) - eye
        forward /= max(np.linalg.norm(forward), 1e-9)
        right = np.cross(forward, [0, 0, 1.0])
        right /= max(np.linalg.norm(right), 1e-9)
        speed = max(self.state.grid_size, 8) * 0.5
        move = np.zeros(3)
        k = self._fly_keys
        move += forward * ((Qt.Key.Key_W in k) - (Qt.Key.Key_S in k))
        move += right * ((Qt.Key.Key_D in k) - (Qt.Key.Key_A in k))
        move[2] += (Qt.Key.Key_E in k) - (Qt.Key.Key_Q in k)
        self.opts["center"] = c + QVector3D(*(move * speed))
        self.update()

    # ------------------------------------------------------------------ rendering
    def full_frame_due(self) -> bool:
        """Whether the brush faces were left out of the last frame (the camera moved) and the
        frame drawing them is still to be painted, or a new level's first image is not whole
        yet."""
        return bool(self.faces.skipped) or self._full_frame_asked or self._arriving

    def _upload_skipped_faces(self) -> None:
        """Upload the faces a frame left out, in turns of their own before the frame that
        draws them (for a level just opened, the whole level's faces): one buffer a turn."""
        if self.faces.skipped and self.isValid():
            self.makeCurrent()
            try:
                more = self.faces.upload_next()
            finally:
                self.doneCurrent()
            if more:
                self._face_upload.start()

    def _on_camera_rest(self) -> None:
        if self.faces.skipped:
            self.faces.skipped = False
            self._full_frame_asked = True  # until painted (the paint comes a few ms later)
            self.update()

    def _motion_level_of_detail(self, camera) -> None:
        """Leave the brush faces out of frames drawn while the camera moves, on big levels."""
        moved = self._last_camera is not None and camera != self._last_camera
        self._last_camera = camera
        faces = self.faces.vertexes
        if moved and faces is not None and len(faces) > MOTION_LOD_VERTICES:
            self.faces.skipped = True
            self._rest_timer.start()
            uploads = self.faces.position_uploads
            if uploads.everything or uploads.ranges:
                self._face_upload.start()  # after this frame, before the one drawing them

    def update(self, *args) -> None:  # noqa: D401 (Qt's name)
        """Ask for a paint; with :attr:`paint_share` set, not before the last paint's time
        over that share has passed (later requests fold into the one deferred paint)."""
        share = getattr(self, "paint_share", None)  # the view's constructor asks for a paint
        if share is None or args:
            super().update(*args)
            return
        wait_ms = self.frame_ms * (1.0 / share - 1.0) - (time.perf_counter() - self._painted_at) * 1e3
        if wait_ms <= 0:
            super().update()
        elif not self._deferred.isActive():
            self._deferred.start(int(wait_ms) + 1)

    def paintGL(self, *args, **kwargs) -> None:
        self.paints += 1
        camera = self._camera_key()
        self._motion_level_of_detail(camera[:7])  # a resize is not a camera motion
        if self._culled_for is not None and self._culled_for != camera:
            self._recull_timer.start()  # the camera moved: re-cull once it rests
        start = time.perf_counter()
        if self.level_layer.usable:
            self._paint_over_still_layer()
        else:
            super().paintGL(*args, **kwargs)
        self._full_frame_asked = self._full_frame_asked and (
            bool(self.faces.skipped) or self.level_layer.pending)
        self._arriving = self._arriving and self.level_layer.pending
        if self.paint_share is not None:
            # software OpenGL renders after paintGL returns, while Qt composes the window: the
            # share must count that too, or the paint costs several times what it is held to
            glFinish()
        self._painted_at = time.perf_counter()
        self.frame_ms = (self._painted_at - start) * 1e3
        self.frame_rendered.emit(self.frame_ms)

    def _make_still_layer(self) -> None:
        #: items drawn first and rarely changed (the grid, a live game's static boxes), redrawn
        #: only when they or the camera change
        self.still = StillLayer()
        self.still.add(self.grid_item)
        #: on that image, the level as far as a full frame draws it before the selected
        #: brushes: the tree overlay (drawn before the translucent brush faces, so it shows
        #: through them), the walls, the mesh and every other brush; drawn again when one of
        #: them, the selection or the camera changes, not when the selected brushes move
        self.level_layer = StillLayer(base=self.still)
        for item in (self.overlay_core, self.overlay, self.split_planes, self.mesh_faces,
                     self.wall_faces, self.wall_edges, self.faces, self.edges):
            self.level_layer.add(item)
        #: while a pass draws: which top-level items it draws
        self._pass: Callable[[object], bool] | None = None
        self._slice_timer = QTimer(self)
        self._slice_timer.setSingleShot(True)
        self._slice_timer.timeout.connect(self.update)  # the next slice of the level image

    def _layer_of(self, item) -> StillLayer | None:
        for layer in (self.still, self.level_layer):
            if layer.holds(item):
                return layer
        return None

    def _paint_over_still_layer(self) -> None:
        """Copy the still layers' image (drawn first if stale), then draw the other items."""
        region = self.getViewport()
        size = (region[2], region[3])
        base_key = (self._camera_key(), self.still.generation)
        level_key = (base_key, self.faces.skipped, self.level_layer.generation)

        def render_base() -> None:
            glViewport(0, 0, *size)
            self._draw_pass(region, lambda item: self.still.holds(item), clear=True)

        def render_level() -> Generator[None, None, bool]:
            """The level image, yielding after each :data:`SLICE_VERTICES` vertices drawn."""
            if not self.still.draw(base_key, size, self.level_layer.handle, render_base):
                return False
            drawn = 0
            for item in self.level_layer.items:
                for rows in self._row_slices(item):
                    if drawn >= SLICE_VERTICES:
                        yield
                        drawn = 0
                    glViewport(0, 0, *size)
                    self._draw_rows(region, item, rows)
                    drawn += sum(b - a for a, b in rows or ())
            return True

        # the frame bringing the brush faces back (a big level's first, or after an orbit)
        # is drawn a slice per paint while the image before it, without them, stays on show
        # and so is a new level's first image, shown as it is drawn (the 2D views' brushes
        # arrive in slices too)
        shown = self.level_layer.shown_key
        in_slices = self._full_frame_asked and shown is not None and shown[0] == base_key
        reveal = self._arriving and not in_slices
        if not self.level_layer.draw(level_key, size, self.defaultFramebufferObject(),
                                     render_level, in_slices=in_slices, reveal=reveal):
            glViewport(*region)
            super().paintGL()
            return
        if self.level_layer.pending:
            self._slice_timer.start()
        glViewport(*region)
        self._draw_pass(region, lambda item: self._layer_of(item) is None, clear=False)

    def _draw_rows(self, region, item, rows) -> None:
        """Draw one item over what is there: rows ``rows`` of a range item (None: all)."""
        if rows is not None:
            item.only_rows = rows
        try:
            self._draw_pass(region, partial(operator.is_, item), clear=False)
        finally:
            if rows is not None:
                item.only_rows = None

    def _row_slices(self, item) -> list:
        """Row ranges of a range item's own rows, at most :data:`SLICE_VERTICES` each (None
        for the whole of any other item, or one drawing nothing now)."""
        if not isinstance(item, (RangeTrianglesItem, RangeLinesItem)) or not item.visible() \
                or getattr(item, "skipped", False):
            return [None]
        out: list = []
        for a, b in item.own_rows():
            for start in range(a, b, SLICE_VERTICES):
                out.append([(start, min(b, start + SLICE_VERTICES))])
        return out or [None]

    def _draw_pass(self, region, chosen: Callable[[object], bool], clear: bool) -> None:
        """Draw the top-level items ``chosen`` picks, on a cleared image or over what is
        there."""
        self.setProjection(region, region)
        self.setModelview()
        if clear:
            glClearColor(*self.opts["bgcolor"])
            glClear(GL_DEPTH_BUFFER_BIT | GL_COLOR_BUFFER_BIT)
        self._pass = chosen
        try:
            self.drawItemTree()
        finally:
            self._pass = None

    def drawItemTree(self, item=None, useItemNames=False) -> None:  # noqa: N802, N803 (pyqtgraph's names)
        """pyqtgraph's walk over the items, limited to one pass's top-level items while
        :meth:`_draw_pass` draws."""
        if item is not None or self._pass is None:
            super().drawItemTree(item, useItemNames=useItemNames)
            return
        chosen = [x for x in self.items if x.parentItem() is None and x.visible()
                  and self._pass(x)]
        chosen.sort(key=lambda a: a.depthValue())
        for top in chosen:
            self._modelViewStack.append(self.currentModelView() * top.transform())
            try:
                super().drawItemTree(top, useItemNames=useItemNames)
            finally:
                self._modelViewStack.pop()
