"""Ray casts against a level's solid geometry, for bodies that must stay inside their room.

A :class:`LevelProbe` keeps the level's solid static objects in a private spatial index (one of
our own backends) and answers batches of rays exactly: the index gives the candidates whose
boxes the ray meets, nearest first, and the exact shape decides the hit —

* a **brush** by clipping the ray against its face planes (a ray that starts inside a brush
  ignores it, so a body embedded in a slope can walk out);
* a **wall segment** of a 2D level in the map plane (heights do not matter: Doom walls are
  walls from floor to ceiling for a walker);
* a **triangle** of a mesh (Möller–Trumbore).

What is solid:

* brushes, except those of trigger entities and ``func_illusionary`` (the game lets bodies pass
  through both) and liquid brushes (every face textured ``*water``, ``*slime``...);
* one-sided wall segments; two-sided ones flagged impassable or blocking monsters (Doom flag
  bits 1 and 2), and those whose opening is too low (:data:`MIN_OPENING`) or whose floors differ
  by more than a step (:data:`MAX_STEP`): closed doors, ledges and pits. A sector's heights are
  read from its one-sided walls (a wall segment spans its sectors' lowest floor to highest
  ceiling, exactly its sector's heights when it is one-sided); a two-sided line next to a sector
  with no one-sided wall is passable unless flagged;
* every mesh triangle.

The probe is built on first use and never changes: level geometry is static in a simulation.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from .brushes import Brush
from .entities import Entity
from .level_geometry import Segment, triangle_bounds
from .scene import Scene

if TYPE_CHECKING:
    from spatial.contract import SpatialIndex

#: backend of the probe's private index
PROBE_BACKEND = "octree"
#: Doom's step height: floors differing more than this block a walker
MAX_STEP = 24.0
#: lowest opening (ceiling minus floor) a walker passes (Doom's shortest walking monsters)
MIN_OPENING = 56.0
#: Doom line flags that block monsters: impassable (1) and block monsters (2)
BLOCKING_FLAGS = 0x0001 | 0x0002
#: brush entities the game lets bodies pass through
PASSABLE_CLASS_PREFIXES = ("trigger_", "func_illusionary")
_EPS = 1e-9


def _solid_brush(brush: Brush, owner: Entity | None) -> bool:
    if owner is not None and owner.classname.startswith(PASSABLE_CLASS_PREFIXES):
        return False
    return not all(face.texture.startswith("*") for face in brush.faces)


def _flags(segment: Segment) -> int:
    try:
        return int(segment.get("flags", "0") or 0)
    except ValueError:
        return 0


def blocking_segments(segments: list[Segment]) -> np.ndarray:
    """Which of ``segments`` block a walker (see the module docstring), as a bool array."""
    heights: dict[int, tuple[float, float]] = {}
    for s in segments:
        if not s.two_sided and s.front_sector >= 0:
            heights.setdefault(s.front_sector, (s.floor, s.ceiling))
    out = np.zeros(len(segments), dtype=bool)
    for k, s in enumerate(segments):
        if not s.two_sided or _flags(s) & BLOCKING_FLAGS:
            out[k] = True
            continue
        front, back = heights.get(s.front_sector), heights.get(s.back_sector)
        if front is None or back is None:
            continue
        opening = min(front[1], back[1]) - max(front[0], back[0])
        out[k] = opening < MIN_OPENING or abs(front[0] - back[0]) > MAX_STEP
    return out


class LevelProbe:
    """Exact ray casts against the solid static geometry of a scene.

    Parameters
    ----------
    scene : Scene
        Read once (on the first cast); never modified.
    registry : Registry, optional
        Where the private index's backend is looked up (default registry).
    """

    def __init__(self, scene: Scene, registry=None) -> None:
        self._scene = scene
        self._registry = registry
        self._index: SpatialIndex | None = None
        self.rays_cast = 0

    # ------------------------------------------------------------------ building
    def prepare(self) -> None:
        """Build the private index now rather than on the first cast: a caller on a worker
        thread spares the thread that steps the first frame (the window's) that build."""
        self._built_index()

    def _built_index(self) -> SpatialIndex:
        """The private index, built with the probe's arrays on first use."""
        if self._index is None:
            self._index = self._build()
        return self._index

    def _build(self) -> SpatialIndex:
        scene = self._scene
        kinds: dict[int, int] = {}
        rows: dict[int, int] = {}
        ids: list[int] = []
        lo: list = []
        hi: list = []
        normals: list[np.ndarray] = []
        dists: list[np.ndarray] = []
        plane_counts: list[int] = []
        for oid in scene.brush_ids():
            brush = scene.brush(oid)
            if not _solid_brush(brush, scene.entity(brush.entity)):
                continue
            n, d = brush.planes()
            kinds[oid], rows[oid] = 0, len(plane_counts)
            normals.append(n)
            dists.append(d)
            plane_counts.append(len(d))
            ids.append(oid)
            lo.append(brush.lo)
            hi.append(brush.hi)
        segment_ids = scene.segment_ids()
        segments = [scene.segment(i) for i in segment_ids]
        seg_a: list[tuple[float, float]] = []
        seg_b: list[tuple[float, float]] = []
        # A wall of a 2D level blocks at every height (bodies keep their z while sectors step
        # up and down), so its box in the probe spans the whole level vertically.
        world_lo, world_hi = scene.bounds()
        for oid, seg, solid in zip(segment_ids, segments, blocking_segments(segments)):
            if solid:
                kinds[oid], rows[oid] = 1, len(seg_a)
                seg_a.append(seg.a)
                seg_b.append(seg.b)
                ids.append(oid)
                lo.append([min(seg.a[0], seg.b[0]), min(seg.a[1], seg.b[1]), world_lo[2] - 64])
                hi.append([max(seg.a[0], seg.b[0]), max(seg.a[1], seg.b[1]), world_hi[2] + 64])
        # triangles straight from the scene's arrays: a mesh may hold millions of them
        tri_ids, corners = scene.triangle_arrays()
        tri_lo, tri_hi = triangle_bounds(corners)
        self._kind, self._row = kinds, rows  # brushes and walls; triangles by _tri_ids
        self._tri_ids = tri_ids
        self._normals = np.concatenate(normals) if normals else np.zeros((0, 3))
        self._dists = np.concatenate(dists) if dists else np.zeros(0)
        counts = np.asarray(plane_counts, dtype=np.int64)
        self._plane_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self._seg_a = np.asarray(seg_a, dtype=np.float64).reshape(-1, 2)
        self._seg_b = np.asarray(seg_b, dtype=np.float64).reshape(-1, 2)
        self._tris = corners
        self._has_floors = bool(len(plane_counts) or len(corners))
        if self._registry is None:
            from spatial.registry import default_registry
            self._registry = default_registry()
        index = self._registry.backend(PROBE_BACKEND)()
        lo_arr = np.concatenate([np.asarray(lo, dtype=np.float64).reshape(-1, 3), tri_lo])
        hi_arr = np.concatenate([np.asarray(hi, dtype=np.float64).reshape(-1, 3), tri_hi])
        all_ids = np.concatenate([np.asarray(ids, dtype=np.int64), tri_ids])
        # an axis-aligned wall or floor has a zero-width box; padding keeps the index's slab
        # test robust, and the exact test decides anyway
        index.build(all_ids, lo_arr - 0.5, hi_arr + 0.5,
                    dynamic=np.zeros(len(all_ids), dtype=bool))
        return index

    @property
    def has_floors(self) -> bool:
        """Whether the level has geometry to stand on (brushes or triangles; walls of a 2D
        level have no floor to probe)."""
        self._built_index()
        return self._has_floors

    @property
    def solid_count(self) -> int:
        """Number of solid objects (brushes, walls, triangles) the probe tests against."""
        return len(self.solid_ids())

    def solid_ids(self) -> list[int]:
        """Scene ids of the solid objects, ascending."""
        self._built_index()
        return sorted(list(self._kind) + self._tri_ids.tolist())

    # ------------------------------------------------------------------ casting
    def cast(self, origins, directions, max_t: float) -> np.ndarray:
        """Distance along each ray to the first solid surface, ``inf`` if none within ``max_t``.

        Parameters
        ----------
        origins, directions : array_like (N, 3)
            Ray starts and directions (normalised here; distances are in world units).
        max_t : float
            Longest distance of interest.
        """
        index = self._built_index()
        origins = np.asarray(origins, dtype=np.float64).reshape(-1, 3)
        directions = np.asarray(directions, dtype=np.float64).reshape(-1, 3)
        norms = np.linalg.norm(directions, axis=1)
        out = np.full(len(origins), np.inf)
        self.rays_cast += len(origins)
        if not (len(self._kind) or len(self._tri_ids)):
            return out
        for q in np.flatnonzero(norms > 0):
            d = directions[q] / norms[q]
            found = index.query_ray(origins[q], d, max_t)
            if len(found.ids):
                out[q] = self._first_hit(origins[q], d, found.ids, max_t)
        return out

    def _first_hit(self, origin: np.ndarray, direction: np.ndarray, ids: np.ndarray,
                   max_t: float) -> float:
        # triangle ids are ascending in _tri_ids: their row is found by bisection
        tri_row = np.searchsorted(self._tri_ids, ids)
        is_tri = tri_row < len(self._tri_ids)
        is_tri[is_tri] = self._tri_ids[tri_row[is_tri]] == ids[is_tri]
        kind = np.array([2 if t else self._kind[int(i)] for i, t in zip(ids.tolist(), is_tri)])
        row = np.array([r if t else self._row[int(i)]
                        for i, t, r in zip(ids.tolist(), is_tri, tri_row.tolist())], dtype=np.int64)
        best = math.inf
        if (kind == 0).any():
            best = min(best, self._hit_brushes(origin, direction, row[kind == 0]))
        if (kind == 1).any():
            best = min(best, self._hit_segments(origin, direction, row[kind == 1]))
        if (kind == 2).any():
            best = min(best, self._hit_triangles(origin, direction, row[kind == 2]))
        return best if best <= max_t else math.inf

    def _hit_brushes(self, origin, direction, rows) -> float:
        starts, ends = self._plane_start[rows], self._plane_start[rows + 1]
        counts = ends - starts
        planes = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)])
        n, d = self._normals[planes], self._dists[planes]
        denom = n @ direction
        num = d - n @ origin
        with np.errstate(divide="ignore", invalid="ignore"):
            t = num / denom
        entering = denom < -_EPS
        leaving = denom > _EPS
        parallel_outside = ~entering & ~leaving & (num < 0)
        t_in = np.where(entering, t, -np.inf)
        t_out = np.where(leaving, t, np.inf)
        t_out = np.where(parallel_outside, -np.inf, t_out)
        offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
        enter = np.maximum.reduceat(t_in, offsets)
        leave = np.minimum.reduceat(t_out, offsets)
        hit = (enter <= leave) & (enter >= 0)  # starting inside a brush ignores it
        return float(enter[hit].min()) if hit.any() else math.inf

    def _hit_segments(self, origin, direction, rows) -> float:
        u = direction[:2]
        if not u.any():
            return math.inf  # a vertical ray runs along a wall, never through it
        a, b = self._seg_a[rows], self._seg_b[rows]
        e = b - a
        w = a - origin[:2]
        denom = u[0] * e[:, 1] - u[1] * e[:, 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (w[:, 0] * e[:, 1] - w[:, 1] * e[:, 0]) / denom
            s = (w[:, 0] * u[1] - w[:, 1] * u[0]) / denom
        # t is measured in the map plane; the 3D distance along a tilted ray is longer
        t = t / np.linalg.norm(u)
        hit = (np.abs(denom) > _EPS) & (t >= 0) & (s >= 0) & (s <= 1)
        return float(t[hit].min()) if hit.any() else math.inf

    def _hit_triangles(self, origin, direction, rows) -> float:
        tri = self._tris[rows]
        e1, e2 = tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]
        p = np.cross(direction, e2)
        det = np.einsum("ij,ij->i", e1, p)
        ok = np.abs(det) > _EPS
        inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
        s = origin - tri[:, 0]
        u = np.einsum("ij,ij->i", s, p) * inv
        q = np.cross(s, e1)
        v = (q @ direction) * inv
        t = np.einsum("ij,ij->i", e2, q) * inv
        hit = ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0)
        return float(t[hit].min()) if hit.any() else math.inf
