"""Quadtree behaviour beyond the shared oracle suite: splits, limits, multi-leaf storage,
planes, awake propagation, collapse and root growth."""
from __future__ import annotations

import numpy as np
import pytest

from plugins.brute import BruteForce
from plugins.quadtree import Quadtree
from plugins.quadtree import kernels as qk
from spatial.errors import IndexInvariantError, ParamError
from spatial.scenegen import random_boxes


def boxes(*rows):
    """``(lo, hi)`` from rows ``(x0, y0, z0, x1, y1, z1)``."""
    arr = np.array(rows, dtype=np.float64).reshape(-1, 6)
    return arr[:, :3], arr[:, 3:]


def leaves_holding(tree, object_id):
    table = tree.nodes()
    return [row for row in np.flatnonzero(table.is_leaf) if object_id in tree.node_objects(row)]


def square_overlaps(table, row, lo, hi, axes=(0, 1)):
    return all(table.lo[row, a] <= hi[a] and lo[a] <= table.hi[row, a] for a in axes)


# --------------------------------------------------------------------------- splitting
def test_overflowing_leaf_splits_and_reinserts_its_objects():
    lo, hi = boxes([1, 1, 0, 2, 2, 1], [7, 1, 0, 8, 2, 1], [1, 7, 0, 2, 8, 1], [7, 7, 0, 8, 8, 1])
    tree = Quadtree(max_objects=4)
    tree.build(np.arange(4), lo, hi)
    assert len(tree.nodes()) == 1, "four objects fit the root bucket"
    tree.insert([4], [[7.5, 7.5, 0]], [[7.9, 7.9, 1]])
    table = tree.nodes()
    assert len(table) == 5 and not table.is_leaf[0] and table.is_leaf[1:].all()
    assert (table.depth[1:] == 1).all() and (table.parent[1:] == 0).all()
    holders = {i: leaves_holding(tree, i) for i in range(5)}
    assert all(len(rows) == 1 for rows in holders.values()), holders
    assert holders[3] == holders[4], "the two objects in the top right quarter share a leaf"
    assert len({holders[i][0] for i in range(4)}) == 4
    assert table.own_count[0] == 0 and table.own_count[1:].sum() == 5
    tree.validate()


def test_leaves_respect_capacity_when_objects_can_be_separated():
    rng = np.random.default_rng(4)
    points = rng.uniform(0, 100, size=(300, 3))
    tree = Quadtree(max_objects=3, max_depth=20)
    tree.build(np.arange(300), points, points + 0.01)
    table = tree.nodes()
    assert table.own_count[table.is_leaf].max() <= 3
    assert tree.stats()["over_capacity_leaves"] == 0
    tree.validate()


def test_max_depth_stops_splitting_with_a_full_leaf():
    lo = np.tile([[10.3, 10.3, 0.0]], (6, 1))
    others = np.array([[0.0, 0.0, 0.0], [50.0, 50.0, 0.0]])
    lo = np.vstack([lo, others])
    hi = lo + 0.1
    tree = Quadtree(max_objects=2, max_depth=3)
    tree.build(np.arange(len(lo)), lo, hi)
    table = tree.nodes()
    assert table.depth.max() == 3
    full = np.flatnonzero(table.is_leaf & (table.own_count > 2))
    assert len(full) == 1 and table.depth[full[0]] == 3
    assert set(tree.node_objects(full[0])) == set(range(6))
    tree.validate()


def test_split_that_separates_nothing_is_refused():
    """Objects that all cover the centre would land in all four children: no split."""
    lo, hi = boxes(*[[0, 0, 0, 10, 10, 1]] * 5)
    tree = Quadtree(max_objects=1)
    tree.build(np.arange(5), lo, hi)
    assert len(tree.nodes()) == 1
    assert tree.stats()["over_capacity_leaves"] == 1
    tree.validate()


def test_max_duplication_bounds_reference_growth():
    ids, lo, hi = random_boxes(3000, seed=2, world=200.0, size_min=5.0, size_max=40.0)
    refs = {}
    for dup in (1.0, 2.0, 3.0):
        tree = Quadtree(max_duplication=dup)
        tree.build(ids, lo, hi)
        refs[dup] = tree.stats()["references"]
        tree.validate()
    assert refs[1.0] < refs[2.0] < refs[3.0]


# --------------------------------------------------------------------------- multi-leaf storage
def straddling_scene():
    """Two objects on the root centre, two in opposite corners; capacity 2."""
    lo, hi = boxes([4, 4, 0, 6, 6, 1], [4.5, 4.5, 0.5, 5.5, 5.5, 2], [0, 0, 0, 1, 1, 1],
                   [9, 9, 0, 10, 10, 1])
    tree = Quadtree(max_objects=2, max_duplication=4.0)
    tree.build(np.arange(4), lo, hi)
    return tree, lo, hi


def test_object_is_stored_in_every_leaf_it_overlaps():
    tree, lo, hi = straddling_scene()
    table = tree.nodes()
    leaves = np.flatnonzero(table.is_leaf)
    for i in range(4):
        want = [row for row in leaves if square_overlaps(table, row, lo[i], hi[i])]
        assert leaves_holding(tree, i) == want
    assert len(leaves_holding(tree, 0)) >= 4, "the centre object straddles both split lines"
    stats = tree.stats()
    assert stats["references"] == int(table.own_count.sum())
    assert stats["duplicates"] == stats["references"] - 4 > 0
    tree.validate()


def test_pairs_are_reported_once_and_every_test_is_counted():
    tree, _, _ = straddling_scene()
    shared = set(leaves_holding(tree, 0)) & set(leaves_holding(tree, 1))
    assert len(shared) > 1
    result = tree.pairs("all")
    np.testing.assert_array_equal(result.pairs, [[0, 1]])
    table = tree.nodes()
    assert result.tests == len(shared) == int(table.pair_tests.sum())
    assert all(table.pair_tests[row] == 1 for row in shared)


def test_touching_a_split_line_puts_the_object_on_both_sides():
    lo, hi = boxes([0, 0, 0, 1, 1, 1], [9, 9, 0, 10, 10, 1], [3, 3, 0, 5, 4, 1],
                   [5, 6, 0, 7, 7, 1])
    tree = Quadtree(max_objects=1, max_depth=1)
    tree.build(np.arange(4), lo, hi)
    assert len(leaves_holding(tree, 2)) == 2, "hi x == 5 touches the vertical split line"
    assert len(leaves_holding(tree, 3)) == 2, "lo x == 5 touches it from the other side"
    oracle = BruteForce()
    oracle.build(np.arange(4), lo, hi)
    np.testing.assert_array_equal(tree.pairs().pairs, oracle.pairs().pairs)


# --------------------------------------------------------------------------- planes
def test_xz_plane_on_the_rotated_scene_gives_the_same_tree():
    ids, lo, hi = random_boxes(800, seed=9, world=300.0, size_max=20.0)
    swap = [0, 2, 1]
    top_down = Quadtree(max_objects=4)
    top_down.build(ids, lo, hi)
    y_up = Quadtree(max_objects=4, plane="xz")
    y_up.build(ids, lo[:, swap], hi[:, swap])
    a, b = top_down.nodes(), y_up.nodes()
    assert len(a) > 50 and len(a) == len(b)
    np.testing.assert_array_equal(a.lo[:, swap], b.lo)
    np.testing.assert_array_equal(a.hi[:, swap], b.hi)
    for col in ("depth", "parent", "is_leaf", "own_count", "subtree_count"):
        np.testing.assert_array_equal(getattr(a, col), getattr(b, col), err_msg=col)
    np.testing.assert_array_equal(top_down.pairs().pairs, y_up.pairs().pairs)
    assert y_up.stats()["plane"] == "xz"


def test_only_the_plane_axes_are_partitioned():
    """A vertical stack shares one footprint from above but is spread out along xz."""
    z = np.arange(40, dtype=np.float64)[:, None] * 10.0
    lo = np.hstack([np.full((40, 1), 5.0), np.full((40, 1), 5.0), z])
    lo = np.vstack([lo, [[0.0, 0, 0], [10.0, 10, 390]]])
    hi = lo + 1.0
    ids = np.arange(len(lo))
    xy, xz = Quadtree(max_objects=4), Quadtree(max_objects=4, plane="xz")
    xy.build(ids, lo, hi)
    xz.build(ids, lo, hi)
    assert xy.stats()["over_capacity_leaves"] >= 1
    assert xz.stats()["over_capacity_leaves"] == 0
    oracle = BruteForce()
    oracle.build(ids, lo, hi)
    for tree in (xy, xz):
        np.testing.assert_array_equal(tree.pairs().pairs, oracle.pairs().pairs)
        tree.validate()
    assert xz.stats()["leaves"] > xy.stats()["leaves"]


def test_node_boxes_span_the_ignored_axis():
    lo, hi = boxes([0, 0, -5, 1, 1, 0], [3, 3, 2, 4, 4, 7])
    tree = Quadtree(plane="xz")
    tree.build([0, 1], lo, hi)
    table = tree.nodes()
    assert (table.lo[:, 1] == 0).all() and (table.hi[:, 1] == 4).all()
    assert table.lo[0, 0] <= 0 and table.hi[0, 0] >= 4 and table.lo[0, 2] <= -5 and table.hi[0, 2] >= 7


def test_unknown_plane_is_rejected_by_name():
    with pytest.raises(ParamError, match="plane"):
        Quadtree(plane="yz")


# --------------------------------------------------------------------------- awake
def awake_scene():
    rng = np.random.default_rng(3)
    lo = rng.uniform(0, 100, size=(200, 3))
    lo[:, 2] = 0.0
    hi = lo + rng.uniform(0.5, 6, size=(200, 3))
    return np.arange(200), lo, hi


def expected_awake(tree, active_ids):
    table = tree.nodes()
    want = np.zeros(len(table), dtype=bool)
    for i in active_ids:
        for row in leaves_holding(tree, i):
            while row >= 0:
                want[row] = True
                row = table.parent[row]
    return want


def test_awake_propagates_to_ancestors_and_follows_set_awake():
    ids, lo, hi = awake_scene()
    tree = Quadtree(max_objects=2)
    tree.build(ids, lo, hi, dynamic=True, awake=False)
    assert not tree.nodes().awake.any()
    tree.set_awake([17, 120], True)
    awake = tree.nodes().awake
    np.testing.assert_array_equal(awake, expected_awake(tree, [17, 120]))
    assert awake[0] and 0 < awake.sum() < len(awake)
    tree.set_awake([17], False)
    np.testing.assert_array_equal(tree.nodes().awake, expected_awake(tree, [120]))
    tree.update([120], [[50.0, 50, 0]], [[52.0, 52, 1]])
    np.testing.assert_array_equal(tree.nodes().awake, expected_awake(tree, [120]))
    tree.remove([120])
    assert not tree.nodes().awake.any()
    tree.validate()


def test_static_objects_never_wake_a_node():
    ids, lo, hi = awake_scene()
    tree = Quadtree(max_objects=2)
    tree.build(ids, lo, hi, dynamic=False, awake=True)
    assert not tree.nodes().awake.any()
    assert len(tree.pairs("active").pairs) == 0 and tree.pairs("active").tests == 0


def test_sleeping_nodes_are_skipped_in_active_pairs():
    ids, lo, hi = awake_scene()
    rng = np.random.default_rng(8)
    dynamic, awake = rng.random(200) < 0.5, rng.random(200) < 0.2
    tree, oracle = Quadtree(max_objects=2), BruteForce()
    tree.build(ids, lo, hi, dynamic, awake)
    oracle.build(ids, lo, hi, dynamic, awake)
    active, everything = tree.pairs("active"), tree.pairs("all")
    np.testing.assert_array_equal(active.pairs, oracle.pairs("active").pairs)
    assert len(active.pairs) > 0
    assert active.tests < everything.tests
    table = tree.nodes()
    assert (active.node_tests[~table.awake] == 0).all(), "a sleeping node made tests"


# --------------------------------------------------------------------------- removal
def test_removal_collapses_children_that_fit_one_bucket():
    lo, hi = boxes([1, 1, 0, 2, 2, 1], [7, 1, 0, 8, 2, 1], [1, 7, 0, 2, 8, 1], [7, 7, 0, 8, 8, 1],
                   [7.5, 7.5, 0, 7.9, 7.9, 1])
    tree = Quadtree(max_objects=4)
    tree.build(np.arange(5), lo, hi)
    assert len(tree.nodes()) == 5
    tree.remove([0])
    table = tree.nodes()
    assert len(table) == 1 and table.is_leaf[0] and table.own_count[0] == 4
    tree.validate()


def test_collapse_counts_distinct_objects_not_references():
    tree, lo, hi = straddling_scene()
    refs_before = tree.stats()["references"]
    tree.remove([3])
    table = tree.nodes()
    # three distinct objects remain under the root, more than the capacity of 2
    assert not table.is_leaf[0]
    tree.remove([2])
    table = tree.nodes()
    assert len(table) == 1 and table.own_count[0] == 2 < refs_before
    tree.validate()


def test_removing_everything_leaves_an_empty_root():
    ids, lo, hi = random_boxes(500, seed=4, world=100.0, size_max=5.0)
    tree = Quadtree(max_objects=2)
    tree.build(ids, lo, hi)
    assert len(tree.nodes()) > 20
    for chunk in np.array_split(ids, 7):
        tree.remove(chunk)
        tree.validate()
    table = tree.nodes()
    assert len(table) == 1 and table.own_count[0] == 0
    assert tree.stats()["memory_bytes"] > 0


# --------------------------------------------------------------------------- edits
def test_move_within_the_same_leaves_keeps_the_structure():
    ids, lo, hi = random_boxes(400, seed=5, world=100.0, size_max=3.0)
    tree = Quadtree(max_objects=4)
    tree.build(ids, lo, hi)
    before = tree.nodes()
    target = int(np.argmax(before.own_count))
    moved = tree.node_objects(target)[:1]
    slot = tree.objects.slots_of(moved)
    tree.update(moved, tree.objects.lo[slot] + [0, 0, 50], tree.objects.hi[slot] + [0, 0, 50])
    after = tree.nodes()
    for col in ("lo", "depth", "parent", "own_count"):
        if col == "lo":
            np.testing.assert_array_equal(before.lo[:, :2], after.lo[:, :2])
        else:
            np.testing.assert_array_equal(getattr(before, col), getattr(after, col))
    assert moved[0] in tree.node_objects(target)
    hits = tree.query_point(tree.objects.lo[slot][0]).ids
    assert moved[0] in hits
    tree.validate()


def test_move_across_leaves_leaves_old_and_joins_new():
    ids, lo, hi = random_boxes(400, seed=6, world=100.0, size_max=3.0)
    tree = Quadtree(max_objects=4)
    tree.build(ids, lo, hi)
    tree.update([0], [[1.0, 1, 1]], [[1.5, 1.5, 1.5]])
    table = tree.nodes()
    rows = leaves_holding(tree, 0)
    want = [r for r in np.flatnonzero(table.is_leaf)
            if square_overlaps(table, r, [1.0, 1.0], [1.5, 1.5])]
    assert rows == want
    tree.validate()


def test_inserting_outside_the_root_grows_it():
    ids, lo, hi = random_boxes(300, seed=7, world=100.0, size_max=5.0)
    tree, oracle = Quadtree(max_objects=4), BruteForce()
    tree.build(ids, lo, hi)
    oracle.build(ids, lo, hi)
    root = tree.nodes()
    assert root.hi[0, 0] <= 110
    far_lo, far_hi = np.array([[900.0, -400, 3]]), np.array([[950.0, -380, 4]])
    for index in (tree, oracle):
        index.insert([1000], far_lo, far_hi)
    table = tree.nodes()
    assert table.lo[0, 0] <= lo[:, 0].min() and table.hi[0, 0] >= 950
    assert table.lo[0, 1] <= -400 and table.hi[0, 1] >= hi[:, 1].max()
    side = table.hi[0, :2] - table.lo[0, :2]
    assert side.min() >= 1.9 * (950 - lo[:, 0].min()), "the grown root leaves room to move"
    np.testing.assert_array_equal(tree.query_box(far_lo, far_hi).ids, [1000])
    np.testing.assert_array_equal(tree.pairs().pairs, oracle.pairs().pairs)
    tree.validate()
    tree.update([1000], [[-2000.0, 0, 0]], [[-1990.0, 1, 1]])
    assert tree.nodes().lo[0, 0] <= -2000
    tree.validate()


def test_empty_tree_accepts_inserts():
    tree = Quadtree()
    tree.build([], np.zeros((0, 3)), np.zeros((0, 3)))
    assert len(tree.pairs().pairs) == 0 and len(tree.query_box([0, 0, 0], [1, 1, 1]).ids) == 0
    tree.insert([3, 4], [[50.0, 50, 50], [50.5, 50.5, 50.5]], [[51.0, 51, 51], [52, 52, 52]])
    np.testing.assert_array_equal(tree.pairs().pairs, [[3, 4]])
    tree.validate()


# --------------------------------------------------------------------------- queries and checks
def test_trace_reports_rows_of_the_node_table():
    ids, lo, hi = random_boxes(500, seed=8, world=100.0, size_max=5.0)
    tree = Quadtree(max_objects=4)
    tree.build(ids, lo, hi)
    n = len(tree.nodes())
    box = tree.query_box([10, 10, 0], [20, 20, 100], trace=True)
    assert box.nodes_visited == len(box.visited) and 0 in box.visited
    assert ((box.visited >= 0) & (box.visited < n)).all()
    assert box.nodes_visited < n, "a small box must not visit the whole tree"
    planes = np.array([[1.0, 0, 0, -50], [-1.0, 0, 0, 60]])
    frustum = tree.query_frustum(planes, trace=True)
    assert set(frustum.culled) <= set(frustum.visited) and len(frustum.culled) > 0
    oracle = BruteForce()
    oracle.build(ids, lo, hi)
    np.testing.assert_array_equal(frustum.ids, oracle.query_frustum(planes).ids)


def test_ray_distances_are_bit_identical_to_the_reference():
    ids, lo, hi = random_boxes(500, seed=10, world=100.0, size_max=8.0)
    tree, oracle = Quadtree(max_objects=4), BruteForce()
    tree.build(ids, lo, hi)
    oracle.build(ids, lo, hi)
    rng = np.random.default_rng(1)
    for _ in range(20):
        origin, direction = rng.uniform(-10, 110, 3), rng.normal(size=3)
        got, want = tree.query_ray(origin, direction), oracle.query_ray(origin, direction)
        np.testing.assert_array_equal(got.ids, want.ids)
        assert got.t.tobytes() == want.t.tobytes()
        assert got.objects_tested <= len(ids)


def _small_valid_tree(seed: int) -> Quadtree:
    """A quadtree of 200 small random boxes, four per bucket, checked valid."""
    ids, lo, hi = random_boxes(200, seed=seed, world=100.0, size_max=5.0)
    tree = Quadtree(max_objects=4)
    tree.build(ids, lo, hi)
    tree.validate()
    return tree


def test_validate_detects_a_corrupted_bucket():
    tree = _small_valid_tree(seed=11)
    leaf = int(np.flatnonzero((tree._ni[: tree._meta[qk.M_NODE_TOP], qk.CHILD] < 0)
                              & (tree._ni[: tree._meta[qk.M_NODE_TOP], qk.COUNT] > 0))[0])
    tree._ni[leaf, qk.COUNT] += 1
    with pytest.raises(IndexInvariantError, match="bucket"):
        tree.validate()


def test_validate_detects_a_stale_awake_count():
    tree = _small_valid_tree(seed=12)
    tree._ni[0, qk.ACTIVE] += 1
    with pytest.raises(IndexInvariantError, match="active"):
        tree.validate()


def test_queries_meet_each_stored_copy_once():
    tree, lo, hi = straddling_scene()
    assert tree.stats()["duplicates"] > 0
    everything = tree.query_box([-1, -1, -1], [11, 11, 11])
    np.testing.assert_array_equal(everything.ids, np.arange(4))
    assert everything.objects_tested == 4, "a duplicate reference must not be tested again"
    sphere = tree.query_sphere([5, 5, 1], 20.0)
    np.testing.assert_array_equal(sphere.ids, np.arange(4))
    ray = tree.query_ray([-5, 5, 0.75], [1, 0, 0])
    assert sorted(ray.ids.tolist()) == [0, 1] and ray.objects_tested <= 4


def test_closest_hit_rays_stop_early():
    ids, lo, hi = random_boxes(4000, seed=13, world=200.0, size_min=4.0, size_max=30.0)
    tree = Quadtree()
    tree.build(ids, lo, hi)
    rng = np.random.default_rng(2)
    origins = rng.uniform(0, 200, size=(50, 3))
    directions = rng.normal(size=(50, 3))
    batch = tree.query_rays(origins, directions)
    every_hit = [tree.query_ray(o, d) for o, d in zip(origins, directions)]
    hit = np.array([len(r.ids) > 1 for r in every_hit])
    assert hit.sum() > 10
    for q in np.flatnonzero(hit):
        assert batch.ids[q] == every_hit[q].ids[0]
    tested_all = np.array([r.objects_tested for r in every_hit])
    assert batch.objects_tested[hit].sum() < tested_all[hit].sum()
