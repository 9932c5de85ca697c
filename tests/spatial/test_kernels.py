"""The shared compiled kernels against the reference predicates of :mod:`spatial.geometry`."""
from __future__ import annotations

import numpy as np
import pytest

import spatial.kernels as K
from spatial.geometry import boxes_overlap, frustum_box, frustum_planes_from_camera, ray_box, sphere_box


@pytest.fixture(scope="module")
def boxes():
    rng = np.random.default_rng(7)
    lo = rng.uniform(-50.0, 50.0, size=(300, 3))
    hi = lo + rng.uniform(0.0, 20.0, size=(300, 3))
    return lo, hi


def _culled(shape, lo, hi, slack=0.0):
    """Rows ``shape_may_meet_row`` keeps."""
    a, b, scalar, inv = K.unpack_shape(shape.kind, shape.params)
    return np.array([K.shape_may_meet_row(shape.kind, a, b, scalar, inv, shape.planes, lo, hi, r,
                                          slack) for r in range(len(lo))])


def test_may_meet_is_exact_for_boxes_and_rays(boxes):
    lo, hi = boxes
    qlo, qhi = np.array([-5.0, -5, -5]), np.array([10.0, 3, 8])
    assert np.array_equal(_culled(K.box_shape(qlo, qhi), lo, hi), boxes_overlap(lo, hi, qlo, qhi))
    origin, direction = np.array([-60.0, 0.0, 1.0]), np.array([1.0, 0.2, 0.0])
    for max_t in (np.inf, 40.0):
        hit, t = ray_box(origin, direction, lo, hi)
        expected = hit & (t <= max_t)
        assert np.array_equal(_culled(K.ray_shape(origin, direction, max_t), lo, hi), expected)


def test_may_meet_keeps_every_sphere_and_frustum_hit(boxes):
    lo, hi = boxes
    centre, radius = np.array([1.0, 2.0, 3.0]), 25.0
    kept = _culled(K.sphere_shape(centre, radius), lo, hi, slack=1e-9)
    touching = sphere_box(centre, radius, lo, hi)
    assert kept[touching].all() and not kept.all()
    planes = frustum_planes_from_camera((0.0, 0.0, -80.0), (0.0, 0.0, 1.0), (0.0, 1.0, 0.0),
                                        40.0, 1.0, 1.0, 200.0)
    kept = _culled(K.frustum_shape(planes), lo, hi, slack=1e-9)
    inside = frustum_box(planes, lo, hi)
    assert kept[inside].all() and not kept.all()


def test_push_unseen_appends_each_slot_once():
    items = np.array([4, 1, 4, 7, 1, 2], dtype=np.int64)
    seen = np.zeros(8, dtype=np.bool_)
    out, m = K.push_unseen(items, 0, 3, seen, np.empty(1, dtype=np.int64), 0)
    out, m = K.push_unseen(items, 3, 3, seen, out, m)
    assert list(out[:m]) == [4, 1, 7, 2]
    assert list(np.flatnonzero(seen)) == [1, 2, 4, 7]


def test_preorder_lists_parents_before_children_and_stops_on_a_cycle():
    left = np.array([1, -1, 3, -1, -1])
    right = np.array([2, -1, 4, -1, -1])
    order, parents, depths = K.preorder(0, left, right)
    assert list(order) == [0, 1, 2, 3, 4]
    assert list(parents) == [-1, 0, 0, 2, 2] and list(depths) == [0, 1, 1, 2, 2]
    cycle = np.array([1, 0])  # node 1's children lead back to node 0
    order, _, _, complete = K.preorder_limited(0, cycle, cycle, 5)
    assert not complete and len(order) == 5
    assert K.preorder_limited(0, left, right, 5)[3]


def test_box_union_is_the_bounding_box_of_the_boxes():
    from spatial.geometry import box_union

    rng = np.random.default_rng(5)
    lo = rng.uniform(-50, 50, size=(1000, 3))
    hi = lo + rng.uniform(0, 5, size=lo.shape)
    got_lo, got_hi = box_union(lo, hi)
    assert np.array_equal(got_lo, lo.min(axis=0)) and np.array_equal(got_hi, hi.max(axis=0))
    empty_lo, empty_hi = box_union(np.empty((0, 3)), np.empty((0, 3)))
    assert np.all(empty_lo == np.inf) and np.all(empty_hi == -np.inf)
