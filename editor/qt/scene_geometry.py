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
    """Everything the views draw for the scene itself."""

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


class SceneGeometry:
    """Caches brush tessellations by value and assembles :class:`SceneArrays`."""

    def __init__(self, face_alpha: float = 0.35) -> None:
        self.face_alpha = face_alpha
        self._cache: dict[int, tuple[Brush, BrushPieces]] = {}
        self._level = LevelGeometryCache()

    def pieces(self, oid: int, brush: Brush) -> BrushPieces:
        hit = self._cache.get(oid)
        if hit is not None and hit[0] is brush:
            return hit[1]
        pieces = _pieces(brush)
        self._cache[oid] = (brush, pieces)
        return pieces

    def build(self, scene) -> SceneArrays:
        brush_ids = scene.brush_ids()
        live = set(brush_ids)
        for oid in [k for k in self._cache if k not in live]:
            del self._cache[oid]
        verts, cols, edges, edge_ids, polys = [], [], [], [], []
        for oid in brush_ids:
            brush = scene[oid]
            try:
                p = self.pieces(oid, brush)
            except Exception:
                continue  # a brush the model accepted always has a solid; be safe while drawing
            owner = scene.get(brush.entity)
            base = np.array(BRUSH_FACE if owner is None or owner.classname in ("worldspawn", "func_group")
                            else BRUSH_ENTITY_FACE)
            shade = 0.55 + 0.45 * np.abs(p.tri_normals @ _LIGHT)
            rgb = np.clip(base[None, :] * shade[:, None], 0, 1)
            verts.append(p.vertices[p.triangles].reshape(-1, 3))
            c = np.empty((len(p.triangles), 4))
            c[:, :3] = rgb
            c[:, 3] = self.face_alpha
            cols.append(np.repeat(c, 3, axis=0))
            edges.append(p.vertices[p.edges].reshape(-1, 3))
            edge_ids.append(np.full(len(p.edges), oid))
            polys.append(p.vertices)
        ent_ids = scene.point_entity_ids()
        if ent_ids:
            lo, hi = scene.bounds_of(ent_ids)
            rgb = np.array([class_colour(scene[i].classname) for i in ent_ids])
        else:
            lo = hi = np.empty((0, 3))
            rgb = np.empty((0, 3))
        ent_cols = np.ones((len(ent_ids), 4), dtype=np.float32)
        ent_cols[:, :3] = rgb
        return SceneArrays(
            mesh_vertices=_cat(verts, 3),
            mesh_colours=_cat(cols, 4),
            edge_lines=_cat(edges, 3),
            edge_ids=np.concatenate(edge_ids) if edge_ids else np.empty(0, dtype=np.int64),
            entity_lines=box_lines(lo, hi),
            entity_colours=np.repeat(ent_cols, 24, axis=0),
            entity_ids=np.asarray(ent_ids, dtype=np.int64),
            entity_lo=lo, entity_hi=hi, entity_rgb=rgb,
            brush_ids=np.asarray(brush_ids, dtype=np.int64),
            brush_polys=polys,
            level=self._level.build(scene),
        )


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
