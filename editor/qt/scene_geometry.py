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
from spatial.outline_raster import box_edge_colours

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
    faces = [np.asarray(f, dtype=np.int64) for f in solid.faces]
    lengths = np.array([len(f) for f in faces], dtype=np.int64)
    indices = np.concatenate(faces) if faces else np.empty(0, dtype=np.int64)
    vertices = np.asarray(solid.vertices, dtype=np.float64)
    flat = _Tessellation.of(vertices, np.array([0, len(vertices)]), indices,
                            _csr(lengths)[:-1], lengths, np.array([0, len(faces)]))
    return flat.pieces(0)


def _csr(counts) -> np.ndarray:
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(np.asarray(counts, dtype=np.int64), out=out[1:])
    return out


def _ranges(starts, counts) -> np.ndarray:
    """``concatenate([arange(s, s + c) for s, c in zip(starts, counts)])`` without the loop."""
    counts = np.asarray(counts, dtype=np.int64)
    out = np.arange(int(counts.sum()), dtype=np.int64)
    out += np.repeat(np.asarray(starts, dtype=np.int64) - _csr(counts)[:-1], counts)
    return out


@dataclass
class _Tessellation:
    """Fan triangles, their normals and the unique edges of many brushes at once (numpy over
    flat arrays: no Python step per brush). Indices are into :attr:`vertices`; brush ``k``
    owns rows ``vo[k]:vo[k + 1]`` of the vertices, ``to[k]:to[k + 1]`` of the triangles and
    ``eo[k]:eo[k + 1]`` of the edges, in the order of :meth:`ConvexBrush.triangles` and
    :meth:`ConvexBrush.edges`. One brush edited alone goes through the same code, so a
    patched range equals a fresh build bit for bit."""

    vertices: np.ndarray   # (V, 3) float64
    vo: np.ndarray
    triangles: np.ndarray  # (T, 3) into vertices
    normals: np.ndarray    # (T, 3)
    to: np.ndarray
    edges: np.ndarray      # (E, 2) into vertices
    eo: np.ndarray

    @classmethod
    def of(cls, vertices, vo, indices, face_starts, lengths, po) -> _Tessellation:
        n = len(vo) - 1
        face_brush = np.repeat(np.arange(n, dtype=np.int64), np.diff(po))
        base = vo[:-1][face_brush]  # first vertex of each face's brush
        # fan triangles (first, k, k + 1) of each face of three or more vertices
        ntri = np.maximum(lengths - 2, 0)
        tf = np.repeat(np.arange(len(lengths), dtype=np.int64), ntri)
        k = np.arange(len(tf), dtype=np.int64) - _csr(ntri)[:-1][tf] + 1
        s = face_starts[tf]
        triangles = np.column_stack([indices[s], indices[s + k], indices[s + k + 1]]) \
            + base[tf][:, None]
        to = _csr(np.bincount(face_brush[tf], minlength=n))
        v = vertices
        normals = np.cross(v[triangles[:, 1]] - v[triangles[:, 0]],
                           v[triangles[:, 2]] - v[triangles[:, 0]])
        normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)
        # each face's sides, made undirected, unique per brush and sorted as (a, b)
        ef = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
        i = np.arange(len(ef), dtype=np.int64) - _csr(lengths)[:-1][ef]
        a = indices[face_starts[ef] + i]
        b = indices[face_starts[ef] + (i + 1) % lengths[ef]]
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        m = int(hi.max()) + 1 if len(hi) else 1
        key = np.unique((face_brush[ef] * m + lo) * m + hi)
        edge_brush = key // (m * m)
        edges = np.column_stack([key // m % m, key % m]) + vo[:-1][edge_brush][:, None]
        eo = _csr(np.bincount(edge_brush, minlength=n))
        return cls(v, vo, triangles, normals, to, edges, eo)

    def __len__(self) -> int:
        return len(self.vo) - 1

    def pieces(self, k: int) -> BrushPieces:
        """Brush ``k``'s own :class:`BrushPieces` (views of the flat arrays)."""
        v0 = self.vo[k]
        return BrushPieces(self.vertices[v0:self.vo[k + 1]],
                           self.triangles[self.to[k]:self.to[k + 1]] - v0,
                           self.normals[self.to[k]:self.to[k + 1]],
                           self.edges[self.eo[k]:self.eo[k + 1]] - v0)


def _face_colours(normals: np.ndarray, base: np.ndarray, alpha: float) -> np.ndarray:
    """One colour per triangle: its brush's ``base`` colour (per triangle) shaded by the
    normal's angle to the light."""
    shade = 0.55 + 0.45 * np.abs(normals @ _LIGHT)
    c = np.empty((len(normals), 4))
    c[:, :3] = np.clip(base * shade[:, None], 0, 1)
    c[:, 3] = alpha
    return c


def _base_colour(owner) -> np.ndarray:
    return np.array(BRUSH_FACE if owner is None or owner.classname in ("worldspawn", "func_group")
                    else BRUSH_ENTITY_FACE, dtype=np.float64)


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
    #: (u, v) axes -> that 2D view's wall and mesh paths (a :class:`~.views.level_paths.
    #: LevelPaths`), built on the loading thread; taken like ``outlines``
    level_paths: dict | None = None
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
        base = np.broadcast_to(_base_colour(scene.get(brush.entity)), (len(p.triangles), 3))
        c = _face_colours(p.tri_normals, base, self.face_alpha)
        return (p, p.vertices[p.triangles].reshape(-1, 3), np.repeat(c, 3, axis=0),
                p.vertices[p.edges].reshape(-1, 3))

    def _tessellate_all(self, scene, brush_ids) -> tuple[list, _Tessellation | None]:
        """Every brush of ``brush_ids`` that has a solid, tessellated in one numpy pass: brushes
        built with their level (:func:`editor.model.brushes.build_solids`) are read from the
        level's arrays, any other one from its own solid. Returns ``(ids, tessellation)``."""
        groups: dict[int, tuple] = {}
        singles: list = []
        for oid in brush_ids:
            brush = scene[oid]
            batch = brush.batch
            if batch is not None and "solid" not in brush._cache:
                groups.setdefault(id(batch[0]), (batch[0], [], []))
                groups[id(batch[0])][1].append(oid)
                groups[id(batch[0])][2].append(batch[1])
            else:
                singles.append(oid)
        ids: list = []
        parts: list = []
        for built, oids, rows in groups.values():
            ids += oids
            parts.append(built.face_arrays(np.asarray(rows, dtype=np.int64)))
        for oid in singles:
            try:
                solid = scene[oid].solid
            except Exception:
                continue  # a brush the model accepted always has a solid; be safe while drawing
            faces = [np.asarray(f, dtype=np.int64) for f in solid.faces]
            lengths = np.array([len(f) for f in faces], dtype=np.int64)
            parts.append((np.asarray(solid.vertices, dtype=np.float64),
                          np.array([0, len(solid.vertices)]),
                          np.concatenate(faces) if faces else np.empty(0, dtype=np.int64),
                          _csr(lengths)[:-1], lengths, np.array([0, len(faces)])))
            ids.append(oid)
        if not ids:
            return [], None
        # one flat description of every brush, then one tessellation
        nv = np.cumsum([0] + [len(p[0]) for p in parts])
        ni = np.cumsum([0] + [len(p[2]) for p in parts])
        nf = np.cumsum([0] + [len(p[4]) for p in parts])
        vertices = np.concatenate([p[0] for p in parts])
        vo = np.concatenate([[0]] + [p[1][1:] + nv[g] for g, p in enumerate(parts)])
        indices = np.concatenate([p[2] for p in parts])
        starts = np.concatenate([p[3] + ni[g] for g, p in enumerate(parts)])
        lengths = np.concatenate([p[4] for p in parts])
        po = np.concatenate([[0]] + [p[5][1:] + nf[g] for g, p in enumerate(parts)])
        del parts
        return ids, _Tessellation.of(vertices, vo.astype(np.int64), indices, starts,
                                     lengths, po.astype(np.int64))

    def build(self, scene) -> SceneArrays:
        """Every array from scratch (a new document, or an edit too broad to patch)."""
        brush_ids = scene.brush_ids()
        ids, flat = self._tessellate_all(scene, brush_ids)
        self._cache = {}
        pieces: dict[int, BrushPieces] = {}
        if flat is not None:
            owners: dict = {}
            base = np.empty((len(ids), 3))
            for k, oid in enumerate(ids):
                brush = scene[oid]
                p = flat.pieces(k)
                pieces[oid] = p
                self._cache[oid] = (brush, p)
                colour = owners.get(brush.entity)
                if colour is None:
                    colour = owners[brush.entity] = _base_colour(scene.get(brush.entity))
                base[k] = colour
            tri_counts = np.diff(flat.to)
            colours = _face_colours(flat.normals, np.repeat(base, tri_counts, axis=0),
                                    self.face_alpha)
            mesh = flat.vertices[flat.triangles].reshape(-1, 3)
            mesh_vertices = np.ascontiguousarray(mesh, dtype=np.float32)
            mesh_colours = np.ascontiguousarray(np.repeat(colours, 3, axis=0), dtype=np.float32)
            edge_lines = np.ascontiguousarray(flat.vertices[flat.edges].reshape(-1, 3),
                                              dtype=np.float32)
            edge_counts = np.diff(flat.eo)
            mesh_offsets, edge_offsets = 3 * flat.to, flat.eo
        else:
            mesh_vertices = edge_lines = np.empty((0, 3), dtype=np.float32)
            mesh_colours = np.empty((0, 4), dtype=np.float32)
            edge_counts = np.empty(0, dtype=np.int64)
            mesh_offsets = edge_offsets = np.zeros(1, dtype=np.int64)
        id_array = np.asarray(ids, dtype=np.int64)
        arrays = SceneArrays(
            mesh_vertices=mesh_vertices,
            mesh_colours=mesh_colours,
            edge_lines=edge_lines,
            edge_ids=np.repeat(id_array, edge_counts),
            brush_ids=id_array,
            brush_polys=[p.vertices for p in pieces.values()],
            level=self._level.build(scene),
            mesh_offsets=mesh_offsets,
            edge_offsets=edge_offsets,
            brush_pieces=pieces,
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
    """A :class:`SceneGeometry` with every brush tessellated, its 2D hulls computed and each
    2D view's chunked outline paths built: the slow, Qt-free part of showing a level, run on
    the loading thread (or a compare side's worker).

    ``planes``: the axis pairs of the 2D views that will show it. ``shown_for``: the scene the
    arrays are shown for when ``scene`` is a copy of it taken for a worker (default ``scene``).
    """
    geometry = SceneGeometry()
    arrays = geometry.build(scene)
    geometry._prepared_for = shown_for if shown_for is not None else scene
    # the 2D views' chunked outline paths (QPainterPath is a value type, safe off the window's
    # thread): a view only wraps them in items when the level is shown. Each computes its
    # hulls in one numpy pass; they are kept so a view built again finds them.
    from .views.brush_outlines import BrushOutlines
    outlines, hulls = {}, {}
    for axes in planes:
        outlines[axes] = BrushOutlines(axes)
        outlines[axes].update(arrays)
        hulls[axes] = outlines[axes]._hulls
    geometry.hulls = hulls
    arrays.hulls = hulls  # the arrays shown first carry them too
    arrays.outlines = outlines
    from .views.level_paths import level_paths
    arrays.level_paths = {axes: level_paths(arrays.level, axes) for axes in planes}
    return geometry


def convex_hulls(points: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`convex_hull` of many point sets at once: set ``k`` is
    ``points[offsets[k]:offsets[k + 1]]``, its hull ``out[hull_offsets[k]:hull_offsets[k + 1]]``
    (the same points in the same order as :func:`convex_hull` gives, same arithmetic).

    Andrew's monotone chain run in lockstep over every set with the same number of distinct
    points: a numpy step per point and pop, not per set.
    """
    pts = np.round(np.asarray(points, dtype=np.float64).reshape(-1, 2), 6) + 0.0  # -0 -> 0
    n = len(offsets) - 1
    owner = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))
    order = np.lexsort((pts[:, 1], pts[:, 0], owner))
    pts, owner = pts[order], owner[order]
    if len(pts):
        keep = np.ones(len(pts), dtype=bool)
        keep[1:] = (owner[1:] != owner[:-1]) | (pts[1:, 0] != pts[:-1, 0]) | (pts[1:, 1] != pts[:-1, 1])
        pts, owner = pts[keep], owner[keep]
    counts = np.bincount(owner, minlength=n)
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    hull_counts = np.where(counts < 3, counts, 0)
    chains: dict[int, tuple] = {}
    for size in np.unique(counts[counts >= 3]).tolist():
        sets = np.flatnonzero(counts == size)
        grid = pts[(starts[sets][:, None] + np.arange(size)).reshape(-1)].reshape(-1, size, 2)
        lower, n_lower = _chain(grid)
        upper, n_upper = _chain(grid[:, ::-1])
        chains[size] = (sets, lower, n_lower - 1, upper, n_upper - 1)
        hull_counts[sets] = n_lower - 1 + n_upper - 1
    hull_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(hull_counts, out=hull_offsets[1:])
    out = np.empty((int(hull_offsets[-1]), 2))
    small = np.flatnonzero(counts < 3)
    if len(small):
        out[_ranges(hull_offsets[small], counts[small])] = pts[_ranges(starts[small], counts[small])]
    for sets, lower, n_lower, upper, n_upper in chains.values():
        size = lower.shape[1]
        col = np.arange(size)
        take = col[None, :] < n_lower[:, None]
        out[_ranges(hull_offsets[sets], n_lower)] = lower[take]
        take = col[None, :] < n_upper[:, None]
        out[_ranges(hull_offsets[sets] + n_lower, n_upper)] = upper[take]
    return out, hull_offsets


def _chain(grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One half of the monotone chain for every row of ``grid`` (``(n, K, 2)``, points sorted):
    the kept points (left-aligned) and how many."""
    n, size = grid.shape[:2]
    out = np.empty_like(grid)
    length = np.zeros(n, dtype=np.int64)
    rows = np.arange(n)
    for j in range(size):
        p = grid[:, j]
        while True:
            live = np.flatnonzero(length >= 2)
            if not len(live):
                break
            a = out[live, length[live] - 2]
            b = out[live, length[live] - 1]
            q = p[live]
            turn = (b[:, 0] - a[:, 0]) * (q[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (q[:, 0] - a[:, 0])
            pop = live[turn <= 0]
            if not len(pop):
                break
            length[pop] -= 1
        out[rows, length] = p
        length += 1
    return out, length


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
    return dict(entity_lines=box_lines(lo, hi), entity_colours=box_edge_colours(ent_cols),
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
