"""Draw arrays for the scene: brush triangles and edges, entity boxes, 2D outlines, and the
walls and mesh triangles of :mod:`.level_arrays`.

Qt-free numpy. Brush solids come from the model (computed once per brush value); this module
only concatenates them into the few big arrays the views upload, caching the per-brush pieces
by value so an edit re-tessellates only what changed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from editor.model import Brush, Entity

from .colors import BRUSH_ENTITY_FACE, BRUSH_FACE, class_colour
from .level_arrays import LevelArrays, LevelGeometryCache
from .overlay import box_lines

_LIGHT = np.array([0.35, 0.55, 0.76])
_LIGHT = _LIGHT / np.linalg.norm(_LIGHT)


@dataclass
class BrushPieces:
    vertices: np.ndarray   # (V, 3)
    triangles: np.ndarray  # (T, 3) into vertices
    tri_normals: np.ndarray  # (T, 3)
    edges: np.ndarray      # (E, 2) into vertices


def _pieces(brush: Brush) -> BrushPieces:
    solid = brush.solid
    tris = solid.triangles()
    v = solid.vertices
    n = np.cross(v[tris[:, 1]] - v[tris[:, 0]], v[tris[:, 2]] - v[tris[:, 0]])
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12)
    return BrushPieces(np.asarray(v, dtype=np.float64), tris, n, solid.edges())


@dataclass
class SceneArrays:
    """Everything the views draw for the scene itself.

    Brushes own contiguous ranges of the big arrays (``mesh_offsets`` and ``edge_offsets``,
    one more entry than brushes, in ``brush_ids`` order): an edit rewrites the ranges of the
    brushes it touched and leaves the others' values where they are. ``changed`` names the
    brushes an update touched (``None``: everything was rebuilt), so a view redraws only their
    part; ``entities_changed`` and ``level_changed`` say whether the point entities and the
    walls/mesh triangles moved on.
    """

    mesh_vertices: np.ndarray      # (3 T, 3) float32, unindexed triangles
    mesh_colours: np.ndarray       # (3 T, 4) float32
    edge_lines: np.ndarray         # (2 E, 3) float32 line list
    edge_ids: np.ndarray           # (E,) owning brush id per edge
    entity_lines: np.ndarray       # (24 P, 3) float32
    entity_colours: np.ndarray     # (24 P, 4) float32
    entity_ids: np.ndarray         # (P,)
    entity_lo: np.ndarray
    entity_hi: np.ndarray
    entity_rgb: np.ndarray         # (P, 3)
    brush_ids: np.ndarray          # (B,)
    brush_polys: list              # per brush: its vertices (V, 3) for 2D hulls
    level: LevelArrays             # Doom walls and mesh triangles
    mesh_offsets: np.ndarray       # (B + 1,) first mesh vertex of each brush
    edge_offsets: np.ndarray       # (B + 1,) first edge (line pair) of each brush
    brush_pieces: dict             # brush id -> its BrushPieces
    hulls: dict | None = None          # (u, v) axes -> {brush id: (pieces, 2D hull)}, prepared
    #: (u, v) axes -> that 2D view's chunked outline paths, built on the loading thread; a view
    #: takes its entry (once) when it shows these arrays first
    outlines: dict | None = None
    changed: frozenset | None = None
    entities_changed: bool = True
    level_changed: bool = True
    rows: dict | None = None           # cache of brush_rows(), kept while the order is

    def brush_rows(self) -> dict:
        """Brush id -> its position in ``brush_ids`` (computed once per order of brushes: an
        edit patched in place shares it)."""
        if self.rows is None:
            self.rows = {int(oid): k for k, oid in enumerate(self.brush_ids.tolist())}
        return self.rows


class SceneGeometry:
    """Caches brush tessellations by value and keeps :class:`SceneArrays` up to date.

    :meth:`build` assembles everything; :meth:`update` rewrites the ranges of the objects an
    edit touched: in place when a brush keeps its vertex and edge counts (a move, a resize of
    a box), otherwise by dropping the touched ranges and appending the new ones — numpy
    copies, never a walk over every brush.
    """

    def __init__(self, face_alpha: float = 0.35) -> None:
        self.face_alpha = face_alpha
        self._cache: dict[int, tuple[Brush, BrushPieces]] = {}
        self._level = LevelGeometryCache()
        self._arrays: SceneArrays | None = None
        self._rows: dict[int, int] = {}
        self._segment_ids: set = set()
        self._triangle_ids = np.empty(0, dtype=np.int64)
        #: 2D hulls computed ahead (see :func:`prepare_geometry`), handed to the views
        self.hulls: dict | None = None
        #: the scene whose arrays :func:`prepare_geometry` built, until they are first shown
        self._prepared_for = None

    def pieces(self, oid: int, brush: Brush) -> BrushPieces:
        hit = self._cache.get(oid)
        if hit is not None and hit[0] is brush:
            return hit[1]
        pieces = _pieces(brush)
        self._cache[oid] = (brush, pieces)
        return pieces

    def _brush_parts(self, scene, oid: int):
        """``(pieces, mesh vertices, mesh colours, edge lines)`` of one brush, or None."""
        brush = scene[oid]
        try:
            p = self.pieces(oid, brush)
        except Exception:
            return None  # a brush the model accepted always has a solid; be safe while drawing
        owner = scene.get(brush.entity)
        base = np.array(BRUSH_FACE if owner is None or owner.classname in ("worldspawn", "func_group")
                        else BRUSH_ENTITY_FACE)
        shade = 0.55 + 0.45 * np.abs(p.tri_normals @ _LIGHT)
        c = np.empty((len(p.triangles), 4))
        c[:, :3] = np.clip(base[None, :] * shade[:, None], 0, 1)
        c[:, 3] = self.face_alpha
        return (p, p.vertices[p.triangles].reshape(-1, 3), np.repeat(c, 3, axis=0),
                p.vertices[p.edges].reshape(-1, 3))

    def build(self, scene) -> SceneArrays:
        """Every array from scratch (a new document, or an edit too broad to patch)."""
        brush_ids = scene.brush_ids()
        live = set(brush_ids)
        for oid in [k for k in self._cache if k not in live]:
            del self._cache[oid]
        parts = {}
        for oid in brush_ids:
            got = self._brush_parts(scene, oid)
            if got is not None:
                parts[oid] = got
        ids = list(parts)
        arrays = SceneArrays(
            mesh_vertices=_cat([parts[i][1] for i in ids], 3),
            mesh_colours=_cat([parts[i][2] for i in ids], 4),
            edge_lines=_cat([parts[i][3] for i in ids], 3),
            edge_ids=np.repeat(np.asarray(ids, dtype=np.int64),
                               [len(parts[i][0].edges) for i in ids]),
            brush_ids=np.asarray(ids, dtype=np.int64),
            brush_polys=[parts[i][0].vertices for i in ids],
            level=self._level.build(scene),
            mesh_offsets=_offsets([len(parts[i][1]) for i in ids]),
            edge_offsets=_offsets([len(parts[i][0].edges) for i in ids]),
            brush_pieces={i: parts[i][0] for i in ids},
            hulls=self.hulls,
            **_entity_columns(scene))
        self._remember_level_ids(scene)
        self._adopt(arrays)
        return arrays

    def _remember_level_ids(self, scene) -> None:
        # The triangle ids stay the scene's own ascending array (a mesh's, not copied): a set
        # of them cost a Python int per triangle, on every open and level edit of a big mesh.
        self._segment_ids = set(scene.segment_ids())
        self._triangle_ids = scene.triangle_arrays()[0]

    def _was_level_object(self, oid) -> bool:
        """Whether ``oid`` was a wall segment or a mesh triangle when the level was last drawn
        (a deleted one is gone from the scene, so the scene cannot tell)."""
        if oid in self._segment_ids:
            return True
        ids = self._triangle_ids
        at = int(np.searchsorted(ids, oid))
        return at < len(ids) and ids[at] == oid

    def _adopt(self, arrays: SceneArrays) -> None:
        self._arrays = arrays
        self._rows = arrays.brush_rows()

    def update(self, scene, ids) -> SceneArrays:
        """The arrays after an edit that touched ``ids`` (``None``: anything, rebuild all)."""
        old = self._arrays
        if ids is None and old is not None and self._prepared_for is scene:
            # built on the loading thread for this very scene (prepare_geometry): the first
            # showing takes those arrays instead of building them again on the window's thread
            self._prepared_for = None
            return old
        if old is None or ids is None:
            return self.build(scene)
        touched_brushes, entities, level = set(), False, False
        old_entities = set(old.entity_ids.tolist())
        for oid in ids:
            obj = scene.get(oid)
            if isinstance(obj, Brush) or oid in self._rows:
                touched_brushes.add(oid)
            if isinstance(obj, Entity):
                if obj.is_point:
                    entities = True
                else:
                    touched_brushes.update(scene.brushes_of(oid))  # their colour follows the owner
            elif obj is None and oid in old_entities:
                entities = True
            if self._was_level_object(oid) or (obj is not None and not isinstance(obj, (Brush, Entity))):
                level = True
        arrays = self._patch_brushes(scene, old, touched_brushes)
        if entities:
            for key, value in _entity_columns(scene).items():
                setattr(arrays, key, value)
        if level:
            arrays.level = self._level.build(scene)
            self._remember_level_ids(scene)
        arrays.changed = frozenset(touched_brushes)
        arrays.entities_changed, arrays.level_changed = entities, level
        self._adopt(arrays)
        return arrays

    def _patch_brushes(self, scene, old: SceneArrays, touched: set) -> SceneArrays:
        live = {oid for oid in touched if isinstance(scene.get(oid), Brush)}
        for oid in touched - live:
            self._cache.pop(oid, None)
        parts = {}
        for oid in sorted(live):
            got = self._brush_parts(scene, oid)
            if got is not None:
                parts[oid] = got
        rows = self._rows
        same_shape = all(oid in rows and oid in parts for oid in touched) and all(
            old.mesh_offsets[rows[oid] + 1] - old.mesh_offsets[rows[oid]] == len(parts[oid][1])
            and old.edge_offsets[rows[oid] + 1] - old.edge_offsets[rows[oid]] == len(parts[oid][0].edges)
            for oid in touched)
        arrays = SceneArrays(**old.__dict__)
        if not same_shape:
            arrays.rows = None  # brushes are dropped and appended: the order changes
        if same_shape:
            # every touched brush keeps its counts: rewrite its ranges in place
            for oid in touched:
                k = rows[oid]
                p, verts, cols, edges = parts[oid]
                m0, m1 = old.mesh_offsets[k], old.mesh_offsets[k + 1]
                e0, e1 = old.edge_offsets[k], old.edge_offsets[k + 1]
                arrays.mesh_vertices[m0:m1] = verts
                arrays.mesh_colours[m0:m1] = cols
                arrays.edge_lines[2 * e0:2 * e1] = edges
                arrays.brush_polys[k] = p.vertices
                arrays.brush_pieces[oid] = p
            return arrays
        # drop the touched brushes' ranges, append the new ones at the end
        keep = ~np.isin(old.brush_ids, np.fromiter(touched, dtype=np.int64, count=len(touched)))
        mesh_counts = np.diff(old.mesh_offsets)
        edge_counts = np.diff(old.edge_offsets)
        mesh_keep = np.repeat(keep, mesh_counts)
        edge_keep = np.repeat(keep, edge_counts)
        new_ids = sorted(parts)
        pieces = {i: p for i, p in old.brush_pieces.items() if i not in touched}
        pieces.update({i: parts[i][0] for i in new_ids})
        arrays.mesh_vertices = _cat([old.mesh_vertices[mesh_keep]] + [parts[i][1] for i in new_ids], 3)
        arrays.mesh_colours = _cat([old.mesh_colours[mesh_keep]] + [parts[i][2] for i in new_ids], 4)
        arrays.edge_lines = _cat([old.edge_lines[np.repeat(edge_keep, 2)]]
                                 + [parts[i][3] for i in new_ids], 3)
        new_edge_counts = [len(parts[i][0].edges) for i in new_ids]
        arrays.edge_ids = np.concatenate([old.edge_ids[edge_keep],
                                          np.repeat(np.asarray(new_ids, dtype=np.int64), new_edge_counts)])
        arrays.brush_ids = np.concatenate([old.brush_ids[keep], np.asarray(new_ids, dtype=np.int64)])
        arrays.brush_polys = [poly for poly, k in zip(old.brush_polys, keep) if k] + \
            [parts[i][0].vertices for i in new_ids]
        arrays.mesh_offsets = _offsets(np.concatenate([mesh_counts[keep], [len(parts[i][1]) for i in new_ids]]))
        arrays.edge_offsets = _offsets(np.concatenate([edge_counts[keep], new_edge_counts]))
        arrays.brush_pieces = pieces
        return arrays


#: the axis pairs of the three 2D views (top, front, side)
VIEW_PLANES = ((0, 1), (0, 2), (1, 2))


def prepare_geometry(scene, planes=VIEW_PLANES, shown_for=None) -> SceneGeometry:
    """A :class:`SceneGeometry` with every brush tessellated and its 2D hulls computed: the
    slow, Qt-free part of showing a level, run on the loading thread (or a compare side's
    worker).

    ``planes``: the axis pairs of the 2D views that will show it. ``shown_for``: the scene the
    arrays are shown for when ``scene`` is a copy of it taken for a worker (default ``scene``).
    """
    geometry = SceneGeometry()
    arrays = geometry.build(scene)
    geometry._prepared_for = shown_for if shown_for is not None else scene
    geometry.hulls = {axes: {oid: (p, convex_hull(p.vertices[:, list(axes)]))
                             for oid, p in arrays.brush_pieces.items()} for axes in planes}
    arrays.hulls = geometry.hulls  # the arrays shown first carry them too
    # the 2D views' chunked outline paths (QPainterPath is a value type, safe off the window's
    # thread): a view only wraps them in items when the level is shown
    from .views.brush_outlines import BrushOutlines
    outlines = {}
    for axes in planes:
        outlines[axes] = BrushOutlines(axes)
        outlines[axes].update(arrays)
    arrays.outlines = outlines
    return geometry


def convex_hull(points: np.ndarray) -> np.ndarray:
    """Counter-clockwise hull of 2D points (Andrew's monotone chain).

    Plain Python over a brush's handful of points: numpy's per-call overhead would dominate.
    """
    pts = sorted(set(map(tuple, np.round(np.asarray(points, dtype=np.float64), 6).tolist())))
    if len(pts) < 3:
        return np.array(pts, dtype=np.float64).reshape(-1, 2)

    def half(seq):
        out: list[tuple[float, ...]] = []
        for p in seq:
            while len(out) >= 2 and ((out[-1][0] - out[-2][0]) * (p[1] - out[-2][1])
                                     - (out[-1][1] - out[-2][1]) * (p[0] - out[-2][0])) <= 0:
                out.pop()
            out.append(p)
        return out

    lower, upper = half(pts), half(pts[::-1])
    return np.array(lower[:-1] + upper[:-1], dtype=np.float64)


def _offsets(counts) -> np.ndarray:
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(np.asarray(counts, dtype=np.int64), out=out[1:])
    return out


def _entity_columns(scene) -> dict:
    """The point-entity columns of :class:`SceneArrays`."""
    ent_ids = scene.point_entity_ids()
    if ent_ids:
        lo, hi = scene.bounds_of(ent_ids)
        rgb = np.array([class_colour(scene[i].classname) for i in ent_ids])
    else:
        lo = hi = np.empty((0, 3))
        rgb = np.empty((0, 3))
    ent_cols = np.ones((len(ent_ids), 4), dtype=np.float32)
    ent_cols[:, :3] = rgb
    return dict(entity_lines=box_lines(lo, hi), entity_colours=np.repeat(ent_cols, 24, axis=0),
                entity_ids=np.asarray(ent_ids, dtype=np.int64), entity_lo=lo, entity_hi=hi,
                entity_rgb=rgb)


def _cat(parts: list, width: int) -> np.ndarray:
    if not parts:
        return np.empty((0, width), dtype=np.float32)
    return np.ascontiguousarray(np.concatenate(parts).astype(np.float32))


def selection_lines(scene, ids) -> np.ndarray:
    """Line-list vertices outlining the selected objects (brush edges, entity boxes)."""
    parts = []
    geom_ids = []
    for oid in sorted(ids):
        obj = scene.get(oid)
        if isinstance(obj, Brush):
            geom_ids.append(oid)
        elif isinstance(obj, Entity):
            if obj.is_point:
                parts.append(box_lines(obj.lo, obj.hi))
            else:
                geom_ids.extend(scene.brushes_of(oid))
    for oid in geom_ids:
        solid = scene[oid].solid
        parts.append(solid.vertices[solid.edges()].reshape(-1, 3).astype(np.float32))
    if not parts:
        return np.empty((0, 3), dtype=np.float32)
    return np.ascontiguousarray(np.concatenate(parts).astype(np.float32))


def expand_selection(scene, ids) -> list[int]:
    """Indexed ids standing for ``ids`` (a brush entity stands for its brushes)."""
    out = []
    for oid in ids:
        obj = scene.get(oid)
        if obj is None:
            continue
        if isinstance(obj, Entity) and not obj.is_point:
            out.extend(scene.brushes_of(oid))
        else:
            out.append(oid)
    return sorted(set(out))


def selection_bounds(scene, ids):
    """Joint bounds ``(lo, hi)`` of the selection, or ``None`` when nothing indexed is selected."""
    targets = expand_selection(scene, ids)
    if not targets:
        return None
    lo, hi = scene.bounds_of(targets)
    return lo.min(axis=0), hi.max(axis=0)
