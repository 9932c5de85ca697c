"""Where things go when they are placed from a 2D view: on the floor below the cursor.

The floor is found with a downward ray cast through the document's own spatial index
(dogfooding: the same queries the game would make), refined on the exact geometry of what the
index's boxes report: a brush's solid (entry and exit of the convex volume) or a mesh triangle
(the ray–triangle hit). Point entities and wall segments are not surfaces and are ignored.

Walking down the ray, the solids it crosses form intervals; the top of each one is a candidate
floor. The first candidate with a solid above it (an enclosed room, not the roof seen from the
sky outside the level) and at least ``clearance`` of free space under that solid wins; when no
candidate is enclosed (an open-air level) the first surface hit is the floor.
"""
from __future__ import annotations

import math

import numpy as np

from .brushes import Brush
from .level_geometry import Triangle

#: triangles steeper than this (|n_z| below it) are walls, not floors
FLOOR_MIN_NORMAL_Z = 0.3


def ray_convex_entry(origin, direction, normals, dists) -> float | None:
    """Entry distance of a ray into the convex solid ``normals @ x <= dists`` (None: a miss)."""
    span = ray_convex_span(origin, direction, normals, dists)
    return None if span is None else span[0]


def ray_convex_span(origin, direction, normals, dists) -> tuple[float, float] | None:
    """``(t_in, t_out)`` of a ray through the convex solid ``normals @ x <= dists``
    (``t_in`` clamped at 0; None: a miss)."""
    denom = normals @ direction
    num = dists - normals @ origin
    parallel = np.abs(denom) < 1e-12
    if (parallel & (num < 0)).any():
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        t = num / denom
    entering = ~parallel & (denom < 0)
    leaving = ~parallel & (denom > 0)
    t_in = max(0.0, float(t[entering].max())) if entering.any() else 0.0
    t_out = float(t[leaving].min()) if leaving.any() else math.inf
    return (t_in, t_out) if t_in <= t_out else None


def ray_triangle(origin, direction, tri: Triangle) -> float | None:
    """Distance along the ray to triangle ``tri`` (Möller–Trumbore; None: a miss)."""
    v0, v1, v2 = (np.asarray(v, dtype=np.float64) for v in (tri.v0, tri.v1, tri.v2))
    e1, e2 = v1 - v0, v2 - v0
    p = np.cross(direction, e2)
    det = float(e1 @ p)
    if abs(det) < 1e-12:
        return None
    s = origin - v0
    u = float(s @ p) / det
    if u < -1e-9 or u > 1 + 1e-9:
        return None
    q = np.cross(s, e1)
    v = float(direction @ q) / det
    if v < -1e-9 or u + v > 1 + 1e-9:
        return None
    t = float(e2 @ q) / det
    return t if t >= 0 else None


def _surface_intervals(scene, index, origin, direction) -> list[tuple[float, float]]:
    """Merged ``(t_in, t_out)`` intervals of the solids and floor-like triangles on the ray."""
    found = []
    for oid in index.query_ray(origin, direction).ids.tolist():
        obj = scene.get(oid)
        if isinstance(obj, Brush):
            span = ray_convex_span(origin, direction, *obj.planes())
            if span is not None:
                found.append(span)
        elif isinstance(obj, Triangle):
            n = np.cross(np.subtract(obj.v1, obj.v0), np.subtract(obj.v2, obj.v0))
            norm = float(np.linalg.norm(n))
            if norm and abs(n[2]) / norm >= FLOOR_MIN_NORMAL_Z:
                t = ray_triangle(origin, direction, obj)
                if t is not None:
                    found.append((t, t))
    found.sort()
    merged: list[list[float]] = []
    for t_in, t_out in found:
        if merged and t_in <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], t_out)
        else:
            merged.append([t_in, t_out])
    return [(a, b) for a, b in merged]


def floor_below(scene, index, x: float, y: float, clearance: float = 0.0,
                below: float | None = None) -> float | None:
    """Height of the floor under ``(x, y)`` (see the module docstring), or None when the
    downward ray meets no brush or mesh surface. With ``below``, the ray starts at that height
    instead (a working height): the floor is the first surface under it.

    Parameters
    ----------
    scene : Scene
        The document (exact geometry of what the index reports).
    index : spatial.contract.SpatialIndex
        The document's live index: the ray is cast through it.
    x, y : float
        The point on the map plane.
    clearance : float
        Free height wanted above the floor (an entity's height).
    below : float, optional
        Start the downward ray at this height (see :func:`working_floor`).
    """
    if not len(scene.indexed_ids()):
        return None
    if below is not None:
        return working_floor(scene, index, x, y, below)
    lo, hi = scene.bounds()
    top = float(hi[2]) + 1.0
    origin = np.array([x, y, top], dtype=np.float64)
    direction = np.array([0.0, 0.0, -1.0])
    intervals = _surface_intervals(scene, index, origin, direction)
    if not intervals:
        return None
    for k in range(1, len(intervals)):
        gap = intervals[k][0] - intervals[k - 1][1]
        if gap >= clearance and gap > 0:
            return top - intervals[k][0]
    return top - intervals[0][0]


def working_floor(scene, index, x: float, y: float, height: float) -> float | None:
    """The first floor under ``(x, y)`` below ``height`` (None: nothing below it). A start
    inside a solid skips that solid: its top is above the working height."""
    origin = np.array([x, y, float(height)], dtype=np.float64)
    intervals = _surface_intervals(scene, index, origin, np.array([0.0, 0.0, -1.0]))
    below = [t_in for t_in, _ in intervals if t_in > 0.0]
    return float(height) - below[0] if below else None


#: classes whose origin marks where the level is played: their height is a first working height
PLAYER_CLASSES = ("info_player_start", "info_player_deathmatch", "info_player_coop", "player1_start")


def player_height(scene) -> float | None:
    """The origin height of the level's first player start, or None without one."""
    for oid in scene.point_entity_ids():
        entity = scene[oid]
        if entity.classname in PLAYER_CLASSES:
            return float(entity.origin[2])
    return None
