"""Triangle-box overlap against an exact clipping reference, plus hand-made edge cases."""
from __future__ import annotations

from fractions import Fraction

import numba
import numpy as np
import pytest

from spatial.errors import GeometryError
from spatial.geometry import boxes_overlap
from spatial.triangles import tri_box_overlap, triangle_bounds, triangles_boxes_overlap

UNIT_LO = np.zeros(3)
UNIT_HI = np.ones(3)


def reference_overlap(v0, v1, v2, lo, hi) -> bool:
    """Exact closed test: clip the triangle by the six box half-spaces (Sutherland-Hodgman).

    Works in rational arithmetic, keeps points on a clip plane, and treats a degenerate
    triangle as the (degenerate) polygon it is, so a non-empty remainder means the closed
    triangle and the closed box share a point.
    """
    polygon = [tuple(Fraction(c) for c in v) for v in (v0, v1, v2)]
    for axis in range(3):
        for sign, bound in ((1, Fraction(lo[axis])), (-1, Fraction(hi[axis]))):
            # keep points with sign * (p[axis] - bound) >= 0
            clipped = []
            for k, cur in enumerate(polygon):
                prev = polygon[k - 1]
                s_cur = sign * (cur[axis] - bound)
                s_prev = sign * (prev[axis] - bound)
                if (s_cur >= 0) != (s_prev >= 0):
                    t = s_prev / (s_prev - s_cur)
                    clipped.append(tuple(p + t * (c - p) for p, c in zip(prev, cur)))
                if s_cur >= 0:
                    clipped.append(cur)
            polygon = clipped
            if not polygon:
                return False
    return True


def overlap(v0, v1, v2, lo=UNIT_LO, hi=UNIT_HI) -> bool:
    result = bool(triangles_boxes_overlap(v0, v1, v2, lo, hi))
    assert result == reference_overlap(v0, v1, v2, lo, hi), (v0, v1, v2, lo, hi)
    return result


def random_cases(rng, n, coord_range, denominator):
    """Triangles and boxes on a coarse dyadic grid, so float64 arithmetic is exact and many
    cases touch exactly or miss by one grid step."""
    tri = rng.integers(-coord_range, coord_range + 1, size=(n, 3, 3)) / denominator
    kind = rng.integers(0, 6, size=n)
    tri[kind == 1, 1] = tri[kind == 1, 0]                       # two corners coincide
    tri[kind == 2, 1] = tri[kind == 2, 0]                       # a single point
    tri[kind == 2, 2] = tri[kind == 2, 0]
    mid = kind == 3                                             # three collinear corners
    tri[mid, 2] = 2 * tri[mid, 1] - tri[mid, 0]
    lo = rng.integers(-coord_range // 2, coord_range // 2 + 1, size=(n, 3)) / denominator
    size = rng.integers(0, coord_range, size=(n, 3)) / denominator
    size[kind == 4, rng.integers(0, 3)] = 0                     # flat boxes
    return tri, lo, lo + size


@pytest.mark.parametrize("seed, coord_range, denominator", [
    (0, 3, 1), (1, 4, 2), (2, 6, 4), (3, 16, 8), (4, 2, 1),
])
def test_agrees_with_exact_clipping_on_random_cases(seed, coord_range, denominator):
    rng = np.random.default_rng(seed)
    tri, lo, hi = random_cases(rng, 1000, coord_range, denominator)
    got = triangles_boxes_overlap(tri[:, 0], tri[:, 1], tri[:, 2], lo, hi)
    expected = np.array([reference_overlap(t[0], t[1], t[2], a, b)
                         for t, a, b in zip(tri.tolist(), lo.tolist(), hi.tolist())])
    wrong = np.flatnonzero(got != expected)
    assert wrong.size == 0, [(tri[k].tolist(), lo[k].tolist(), hi[k].tolist(), expected[k])
                             for k in wrong[:5]]
    # The sample must exercise both answers, and contain misses the bounds test cannot see.
    bounds_hit = boxes_overlap(*triangle_bounds(tri[:, 0], tri[:, 1], tri[:, 2]), lo, hi)
    assert 0.05 < expected.mean() < 0.95
    assert (bounds_hit & ~expected).sum() > 20
    assert not (expected & ~bounds_hit).any()


def test_near_touching_cases_shifted_by_one_grid_step():
    """Touching configurations and the same ones moved one grid step away or inwards."""
    rng = np.random.default_rng(7)
    step = 1 / 64
    checked = 0
    for _ in range(600):
        tri = rng.integers(-64, 129, size=(3, 3)) * step
        # Put the triangle's extreme corner exactly on a random box face along a random axis.
        axis = int(rng.integers(0, 3))
        low_side = bool(rng.integers(0, 2))
        lo, hi = UNIT_LO.copy(), UNIT_HI.copy()
        shift = np.zeros(3)
        if low_side:
            shift[axis] = hi[axis] - tri[:, axis].min()
        else:
            shift[axis] = lo[axis] - tri[:, axis].max()
        for nudge in (-step, 0.0, step):
            moved = tri + shift
            moved[:, axis] += nudge
            overlap(*moved)
            checked += 1
    assert checked == 1800


def test_triangle_through_box_with_no_corner_inside():
    assert overlap([-10, -10, 0.5], [10, -10, 0.5], [0, 20, 0.5])
    # A slanted triangle x + y + z = 1.5 with every corner far outside the box.
    assert overlap([4.5, -1.5, -1.5], [-1.5, 4.5, -1.5], [-1.5, -1.5, 4.5])
    for corner in ([4.5, -1.5, -1.5], [-1.5, 4.5, -1.5], [-1.5, -1.5, 4.5]):
        assert not np.all((UNIT_LO <= corner) & (np.array(corner) <= UNIT_HI))


def test_touching_a_face_an_edge_and_a_corner_counts():
    # In the plane of the top face.
    assert overlap([-1, -1, 1], [3, -1, 1], [-1, 3, 1])
    assert not overlap([-1, -1, 1.0001], [3, -1, 1.0001], [-1, 3, 1.0001])
    # Plane x + y = 2 touches the box edge x = y = 1.
    assert overlap([2, 0, -1], [0, 2, -1], [1, 1, 3])
    assert not overlap([2.0625, 0, -1], [0, 2.0625, -1], [1.03125, 1.03125, 3])
    # Plane x + y + z = 3 touches only the corner (1, 1, 1).
    assert overlap([3, 0, 0], [0, 3, 0], [0, 0, 3])
    assert not overlap([3.0625, 0, 0], [0, 3.0625, 0], [0, 0, 3.0625])
    # A corner of the triangle resting on a box corner / inside a box face.
    assert overlap([1, 1, 1], [2, 3, 4], [3, 2, 5])
    assert overlap([0.5, 0.5, 1], [0.5, 3, 4], [3, 0.5, 5])


def test_triangle_parallel_to_a_face():
    assert overlap([0.25, 0.25, 0.5], [0.75, 0.25, 0.5], [0.25, 0.75, 0.5])   # inside
    assert not overlap([0.25, 0.25, 1.5], [0.75, 0.25, 1.5], [0.25, 0.75, 1.5])
    assert not overlap([1.5, 0.25, 0.5], [2.5, 0.25, 0.5], [1.5, 0.75, 0.5])
    # Bounds overlap near the corner (1, 1) but the hypotenuse x + y = 2.125 passes it:
    # only an edge cross-product axis separates.
    assert not overlap([1.5, 0.625, 0.5], [0.625, 1.5, 0.5], [1.5, 1.5, 0.5])
    assert overlap([1.5, 0.5, 0.5], [0.5, 1.5, 0.5], [1.5, 1.5, 0.5])  # x + y = 2 touches


def test_bounds_overlap_but_the_triangle_plane_misses():
    assert not overlap([3.5, 0, 0], [0, 3.5, 0], [0, 0, 3.5])
    # x + y + z = -0.5 misses the unit box; x + y + z = 0 touches its corner at the origin.
    assert not overlap([-0.5, 0, 0], [0, -0.5, 0], [0, 0, -0.5])
    assert overlap([1, -1, 0], [-1, 1, 0], [0, 1, -1])


def test_degenerate_triangles():
    # Points: inside, on a face, on a corner, outside.
    assert overlap([0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5])
    assert overlap([1, 0.5, 0.5], [1, 0.5, 0.5], [1, 0.5, 0.5])
    assert overlap([1, 1, 1], [1, 1, 1], [1, 1, 1])
    assert not overlap([1.5, 0.5, 0.5], [1.5, 0.5, 0.5], [1.5, 0.5, 0.5])
    # Segments (collinear corners): through the box with both ends outside, past an edge,
    # touching an edge.
    assert overlap([-1, 0.5, 0.5], [2, 0.5, 0.5], [0.5, 0.5, 0.5])
    assert overlap([-1, -1, -1], [2, 2, 2], [0.5, 0.5, 0.5])
    assert not overlap([2.5, 0, 0.5], [0, 2.5, 0.5], [1.25, 1.25, 0.5])
    assert overlap([2, 0, 0.5], [0, 2, 0.5], [1, 1, 0.5])
    assert overlap([2, 0, 0.5], [0, 2, 0.5], [2, 0, 0.5])       # two equal corners
    # Flat and point boxes.
    assert overlap([0, 0, 0], [2, 0, 0], [0, 2, 0], [0.5, 0.5, 0], [0.5, 0.5, 0])
    assert not overlap([0, 0, 0], [2, 0, 0], [0, 2, 0], [1.5, 1.5, 0], [1.5, 1.5, 0])


def test_broadcasting_one_box_against_many_triangles_and_back():
    rng = np.random.default_rng(4)
    tri = rng.integers(-3, 4, size=(40, 3, 3)).astype(float)
    lo, hi = np.array([-1.0, 0, -2]), np.array([1.0, 2, 0])
    one_box = triangles_boxes_overlap(tri[:, 0], tri[:, 1], tri[:, 2], lo, hi)
    assert one_box.shape == (40,) and one_box.dtype == bool
    rows = [bool(triangles_boxes_overlap(*t, lo, hi)) for t in tri]
    assert one_box.tolist() == rows
    grid = triangles_boxes_overlap(tri[:, 0].reshape(5, 8, 3), tri[:, 1].reshape(5, 8, 3),
                                   tri[:, 2].reshape(5, 8, 3), lo, hi)
    assert grid.shape == (5, 8) and grid.ravel().tolist() == rows
    boxes_lo = rng.integers(-3, 2, size=(30, 3)).astype(float)
    boxes_hi = boxes_lo + rng.integers(0, 3, size=(30, 3))
    one_tri = triangles_boxes_overlap(tri[0, 0], tri[0, 1], tri[0, 2], boxes_lo, boxes_hi)
    assert one_tri.tolist() == [reference_overlap(*tri[0], a, b)
                                for a, b in zip(boxes_lo, boxes_hi)]
    assert triangles_boxes_overlap(tri[0, 0], tri[0, 1], tri[0, 2], lo, hi).shape == ()


def test_bad_input_is_rejected():
    with pytest.raises(GeometryError, match=r"v1\[0\]: coordinates must be finite"):
        triangles_boxes_overlap([0, 0, 0], [np.nan, 0, 0], [0, 1, 0], UNIT_LO, UNIT_HI)
    with pytest.raises(GeometryError, match=r"box 1: lo .* exceeds hi"):
        triangles_boxes_overlap([0, 0, 0], [1, 0, 0], [0, 1, 0], [[0, 0, 0], [2, 0, 0]],
                                [[1, 1, 1], [1, 1, 1]])
    with pytest.raises(GeometryError, match="length 3"):
        triangles_boxes_overlap([0, 0], [1, 0], [0, 1], [0, 0], [1, 1])
    with pytest.raises(GeometryError, match="broadcast"):
        triangles_boxes_overlap(np.zeros((4, 3)), np.zeros((5, 3)), np.zeros((4, 3)),
                                UNIT_LO, UNIT_HI)


def test_triangle_bounds():
    lo, hi = triangle_bounds([[0, 5, -1], [1, 1, 1]], [[2, -3, 0], [1, 1, 1]],
                             [[1, 1, 4], [1, 1, 1]])
    np.testing.assert_array_equal(lo, [[0, -3, -1], [1, 1, 1]])
    np.testing.assert_array_equal(hi, [[2, 5, 4], [1, 1, 1]])


@numba.njit
def _count_overlaps(tris, lo, hi):
    count = 0
    for k in range(tris.shape[0]):
        if tri_box_overlap(tris[k, 0], tris[k, 1], tris[k, 2], lo, hi):
            count += 1
    return count


def test_scalar_kernel_is_callable_from_compiled_code():
    rng = np.random.default_rng(9)
    tris = rng.integers(-3, 4, size=(200, 3, 3)).astype(float)
    expected = sum(reference_overlap(*t, UNIT_LO, UNIT_HI) for t in tris)
    assert 0 < expected < 200
    assert _count_overlaps(tris, UNIT_LO, UNIT_HI) == expected
