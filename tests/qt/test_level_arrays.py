"""Draw arrays of walls, mesh triangles and split planes (Qt-free numpy behind the views)."""
from __future__ import annotations

import numpy as np

from editor.model.level_geometry import Segment, Triangle
from editor.qt.level_arrays import LevelGeometryCache, triangle_arrays, wall_arrays
from editor.qt.overlay import plane_outlines


def _walls():
    return [(10, Segment((0, 0), (100, 0), 0, 128)),
            (11, Segment((100, 0), (100, 50), -16, 96, back_side=3))]


def test_walls_are_quads_and_two_sided_ones_read_apart():
    cols = wall_arrays(_walls())
    assert cols["wall_vertices"].shape == (12, 3)
    quad = cols["wall_vertices"][:6]
    assert set(quad[:, 2]) == {0.0, 128.0}
    one, two = cols["wall_colours"][0], cols["wall_colours"][6]
    assert one[3] > two[3], "two-sided walls are see-through"
    assert not np.allclose(one[:3], two[:3])
    arrays = LevelGeometryCache().build(_FakeScene(_walls(), []))
    top = arrays.wall_segments_2d((0, 1), two_sided=False)
    np.testing.assert_array_equal(top, [[0, 0], [100, 0]])
    front = arrays.wall_segments_2d((0, 2), two_sided=True)
    assert len(front) == 8 and {tuple(p) for p in front} == {(100, -16), (100, 96)}


def test_a_big_mesh_keeps_its_largest_triangles():
    tris = [(i, Triangle((0, 0, 0), (s, 0, 0), (0, s, 0))) for i, s in enumerate([1, 8, 2, 16, 4])]
    cols = triangle_arrays(tris, cap=2)
    assert cols["triangles_total"] == 5
    np.testing.assert_array_equal(cols["triangle_ids"], [1, 3])
    assert cols["mesh_vertices"].shape == (6, 3)


class _FakeScene:
    def __init__(self, walls, tris):
        self._objects = dict(walls + tris)
        self._walls, self._tris = [i for i, _ in walls], [i for i, _ in tris]

    def segment_ids(self):
        return self._walls

    def triangle_ids(self):
        return self._tris

    def triangle_arrays(self):
        corners = [self._objects[i].corners for i in self._tris]
        return np.array(self._tris, dtype=np.int64), np.array(corners).reshape(-1, 3, 3)

    def __getitem__(self, oid):
        return self._objects[oid]


def test_unchanged_geometry_is_not_rebuilt():
    cache = LevelGeometryCache()
    tris = [(5, Triangle((0, 0, 0), (1, 0, 0), (0, 1, 0)))]
    scene = _FakeScene(_walls(), tris)
    first = cache.build(scene)
    assert cache.build(scene) is first
    scene._objects[5] = Triangle((0, 0, 0), (2, 0, 0), (0, 2, 0))
    second = cache.build(scene)
    assert second is not first and second.triangles_drawn == 1
    np.testing.assert_array_equal(second.wall_ids, first.wall_ids)


def test_plane_outline_is_the_section_of_its_box():
    lo, hi = np.zeros((3, 3)), np.full((3, 3), 10.0)
    planes = np.array([[0, 0, 1, -5],          # z = 5: a square
                       [np.nan] * 4,            # a leaf
                       [1, 0, 0, -50]])         # x = 50: misses the box
    segments, owner = plane_outlines(planes, lo, hi)
    np.testing.assert_array_equal(owner, [0, 0, 0, 0])
    assert np.allclose(segments[:, 2], 5.0)
    corners = {tuple(p) for p in segments[:, :2]}
    assert corners == {(0, 0), (10, 0), (0, 10), (10, 10)}
    diagonal, _ = plane_outlines(np.array([[1, 1, 0, -10]]) / [np.sqrt(2), np.sqrt(2), 1, np.sqrt(2)],
                                 lo[:1], hi[:1])
    assert len(diagonal) == 8, "a vertical diagonal cut of a cube is a rectangle"
