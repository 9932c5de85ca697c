"""Draw arrays for levels that are not made of brushes: Doom walls and mesh triangles.

Qt-free numpy, like :mod:`.scene_geometry`. Walls become one triangle list (two triangles a
wall, extruded from its floor to its ceiling) and one line list (floor and ceiling edges), with
one-sided walls opaque grey and two-sided lines (openings, steps, windows) translucent amber, so
the two kinds read apart at a glance. Mesh triangles become one shaded triangle list and, for the
2D views, their edges.

Level of detail: a mesh with more than :data:`MESH_DETAIL_CAP` triangles draws only its
largest ones up to the cap (the small ones are the least visible from afar and the most
numerous); :attr:`LevelArrays.triangles_drawn` says how many made it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: above this many triangles a mesh draws its largest ones only (level of detail)
MESH_DETAIL_CAP = 200_000

ONE_SIDED_WALL = (0.72, 0.74, 0.80)
TWO_SIDED_WALL = (1.0, 0.66, 0.22)
MESH_FACE = (0.60, 0.68, 0.78)

_LIGHT = np.array([0.35, 0.55, 0.76]) / np.linalg.norm([0.35, 0.55, 0.76])
_EMPTY3 = np.empty((0, 3), dtype=np.float32)
_EMPTY4 = np.empty((0, 4), dtype=np.float32)


@dataclass
class LevelArrays:
    """Walls and mesh triangles ready for upload (float32, unindexed)."""

    wall_ids: np.ndarray            # (S,) ids of the drawn wall segments
    wall_a: np.ndarray              # (S, 2) start on the map plane
    wall_b: np.ndarray              # (S, 2) end
    wall_floor: np.ndarray          # (S,)
    wall_ceiling: np.ndarray        # (S,)
    wall_two_sided: np.ndarray      # (S,) bool
    wall_vertices: np.ndarray       # (6 S, 3) two triangles a wall
    wall_colours: np.ndarray        # (6 S, 4)
    wall_lines: np.ndarray          # (4 S, 3) floor and ceiling edges
    wall_line_colours: np.ndarray   # (4 S, 4)
    triangle_ids: np.ndarray        # (T,) ids of the drawn triangles
    triangle_corners: np.ndarray    # (T, 3, 3)
    mesh_vertices: np.ndarray       # (3 T, 3)
    mesh_colours: np.ndarray        # (3 T, 4)
    triangles_total: int = 0        # triangles in the scene (drawn or not)

    @property
    def walls_drawn(self) -> int:
        return len(self.wall_ids)

    @property
    def triangles_drawn(self) -> int:
        return len(self.triangle_ids)

    def wall_segments_2d(self, axes: tuple[int, int], two_sided: bool) -> np.ndarray:
        """``(2 K, 2)`` segment end points of the walls of one kind projected on ``axes``.

        Seen from above a wall is its line; seen from the side it is the outline of its quad.
        """
        mine = self.wall_two_sided == two_sided
        a, b = self.wall_a[mine], self.wall_b[mine]
        if axes == (0, 1):
            return np.stack([a, b], axis=1).reshape(-1, 2)
        floor, ceiling = self.wall_floor[mine], self.wall_ceiling[mine]
        corners = np.empty((len(a), 4, 3))
        corners[:, 0, :2], corners[:, 0, 2] = a, floor
        corners[:, 1, :2], corners[:, 1, 2] = b, floor
        corners[:, 2, :2], corners[:, 2, 2] = b, ceiling
        corners[:, 3, :2], corners[:, 3, 2] = a, ceiling
        edges = corners[:, [0, 1, 1, 2, 2, 3, 3, 0], :]
        return edges[..., list(axes)].reshape(-1, 2)

    def triangle_segments_2d(self, axes: tuple[int, int]) -> np.ndarray:
        """``(6 T, 2)`` end points of the drawn triangles' edges projected on ``axes``."""
        c = self.triangle_corners[..., list(axes)]
        return c[:, [0, 1, 1, 2, 2, 0], :].reshape(-1, 2)


def _shaded(base, normals: np.ndarray, alpha: float) -> np.ndarray:
    shade = 0.55 + 0.45 * np.abs(normals @ _LIGHT)
    out = np.empty((len(normals), 4), dtype=np.float32)
    out[:, :3] = np.clip(np.asarray(base)[None, :] * shade[:, None], 0, 1)
    out[:, 3] = alpha
    return out


def wall_arrays(segments) -> dict:
    """The wall columns of :class:`LevelArrays` for ``segments`` (``(id, Segment)`` pairs)."""
    n = len(segments)
    ids = np.fromiter((oid for oid, _ in segments), dtype=np.int64, count=n)
    a = np.array([s.a for _, s in segments], dtype=np.float64).reshape(n, 2)
    b = np.array([s.b for _, s in segments], dtype=np.float64).reshape(n, 2)
    floor = np.fromiter((s.floor for _, s in segments), dtype=np.float64, count=n)
    ceiling = np.fromiter((s.ceiling for _, s in segments), dtype=np.float64, count=n)
    two = np.fromiter((s.two_sided for _, s in segments), dtype=bool, count=n)
    quad = np.empty((n, 4, 3))
    quad[:, 0, :2], quad[:, 0, 2] = a, floor
    quad[:, 1, :2], quad[:, 1, 2] = b, floor
    quad[:, 2, :2], quad[:, 2, 2] = b, ceiling
    quad[:, 3, :2], quad[:, 3, 2] = a, ceiling
    tris = quad[:, [0, 1, 2, 0, 2, 3], :].reshape(-1, 3)
    normal = np.zeros((n, 3))
    normal[:, 0], normal[:, 1] = b[:, 1] - a[:, 1], a[:, 0] - b[:, 0]
    normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-12)
    face = np.where(two[:, None], _shaded(TWO_SIDED_WALL, normal, 0.28),
                    _shaded(ONE_SIDED_WALL, normal, 0.85)).astype(np.float32)
    lines = quad[:, [0, 1, 3, 2], :].reshape(-1, 3)
    line_rgb = np.where(two[:, None], np.array([*TWO_SIDED_WALL, 0.9]),
                        np.array([*ONE_SIDED_WALL, 1.0])).astype(np.float32)
    return dict(wall_ids=ids, wall_a=a, wall_b=b, wall_floor=floor, wall_ceiling=ceiling,
                wall_two_sided=two, wall_vertices=tris.astype(np.float32),
                wall_colours=np.repeat(face, 6, axis=0),
                wall_lines=lines.astype(np.float32), wall_line_colours=np.repeat(line_rgb, 4, axis=0))


def triangle_arrays(triangles, cap: int = MESH_DETAIL_CAP) -> dict:
    """The mesh columns of :class:`LevelArrays` for ``triangles`` (``(id, Triangle)`` pairs),
    keeping the ``cap`` largest triangles when there are more."""
    n = len(triangles)
    ids = np.fromiter((oid for oid, _ in triangles), dtype=np.int64, count=n)
    corners = np.array([(t.v0, t.v1, t.v2) for _, t in triangles], dtype=np.float64).reshape(n, 3, 3)
    return mesh_arrays(ids, corners, cap)


def mesh_arrays(ids: np.ndarray, corners: np.ndarray, cap: int = MESH_DETAIL_CAP) -> dict:
    """The mesh columns of :class:`LevelArrays` for triangles given as arrays (ids ``(T,)``,
    corners ``(T, 3, 3)``, as :meth:`~editor.model.scene.Scene.triangle_arrays` gives them),
    keeping the ``cap`` largest triangles when there are more."""
    n = len(ids)
    normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    area = np.linalg.norm(normal, axis=1)
    if n > cap:
        keep = np.sort(np.argsort(-area, kind="stable")[:cap])
        ids, corners, normal, area = ids[keep], corners[keep], normal[keep], area[keep]
    normal /= np.maximum(area[:, None], 1e-12)
    colours = np.repeat(_shaded(MESH_FACE, normal, 0.9), 3, axis=0)
    return dict(triangle_ids=ids, triangle_corners=corners,
                mesh_vertices=corners.reshape(-1, 3).astype(np.float32), mesh_colours=colours,
                triangles_total=n)


def empty_level_arrays() -> LevelArrays:
    return LevelArrays(
        wall_ids=np.empty(0, dtype=np.int64), wall_a=np.empty((0, 2)), wall_b=np.empty((0, 2)),
        wall_floor=np.empty(0), wall_ceiling=np.empty(0), wall_two_sided=np.empty(0, dtype=bool),
        wall_vertices=_EMPTY3, wall_colours=_EMPTY4, wall_lines=_EMPTY3, wall_line_colours=_EMPTY4,
        triangle_ids=np.empty(0, dtype=np.int64), triangle_corners=np.empty((0, 3, 3)),
        mesh_vertices=_EMPTY3, mesh_colours=_EMPTY4)


class LevelGeometryCache:
    """Rebuilds :class:`LevelArrays` only when a wall or triangle changed, so an edit to an
    entity on a big mesh does not re-read every triangle: walls are compared by identity,
    triangles by the scene's arrays (the same arrays while the mesh is untouched)."""

    def __init__(self, cap: int = MESH_DETAIL_CAP) -> None:
        self.cap = cap
        self._walls: list = []
        self._triangles: tuple[np.ndarray, np.ndarray] = (np.empty(0, np.int64),
                                                           np.empty((0, 3, 3)))
        self._arrays = empty_level_arrays()

    @staticmethod
    def _same(old: list, new: list) -> bool:
        return len(old) == len(new) and all(a[0] == b[0] and a[1] is b[1] for a, b in zip(old, new))

    @staticmethod
    def _same_arrays(old: tuple, new: tuple) -> bool:
        return all(a is b or (a.shape == b.shape and np.array_equal(a, b))
                   for a, b in zip(old, new))

    def build(self, scene) -> LevelArrays:
        walls = [(i, scene[i]) for i in scene.segment_ids()]
        tris = scene.triangle_arrays()
        walls_same = self._same(self._walls, walls)
        tris_same = self._same_arrays(self._triangles, tris)
        if walls_same and tris_same:
            return self._arrays
        columns = dict(self._arrays.__dict__)
        if not walls_same:
            empty = empty_level_arrays().__dict__
            columns.update(wall_arrays(walls) if walls else
                           {k: v for k, v in empty.items() if k.startswith("wall_")})
        if not tris_same:
            empty = empty_level_arrays().__dict__
            columns.update(mesh_arrays(tris[0], tris[1], self.cap) if len(tris[0]) else
                           {k: empty[k] for k in ("triangle_ids", "triangle_corners",
                                                  "mesh_vertices", "mesh_colours",
                                                  "triangles_total")})
        self._walls, self._triangles = walls, tris
        self._arrays = LevelArrays(**columns)
        return self._arrays
