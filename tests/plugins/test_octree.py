"""Octree-specific behaviour: placement, lazy insertion, climb-and-sink, lifespans, policies.

Correctness of every query and pair mode against brute force is covered by the shared oracle
suite (``tests/spatial/test_oracle.py``); these tests pin down what only an octree promises.
The small scenes live in a root cube ``[0, 64]^3`` (the objects span exactly that cube), so
cell boundaries are powers of two and expected depths can be worked out by hand.
"""
from __future__ import annotations

import numpy as np
import pytest

from plugins.brute import BruteForce
from plugins.octree import Octree
from spatial.errors import GeometryError, IndexInvariantError, ParamError
from spatial.geometry import frustum_planes_from_camera
from spatial.scenegen import random_boxes

# three tiny boxes in three corners of [0, 64]^3 pin the root to that cube and keep out of the
# octants (the origin's and the far corner's) the tests use
FRAME_LO = np.array([[0.0, 63.5, 63.5], [63.5, 0.0, 63.5], [63.5, 63.5, 0.0]])
FRAME_HI = FRAME_LO + 0.5
FRAME_IDS = np.array([900, 901, 902])


def scene(extra_ids=(), extra_lo=(), extra_hi=(), **params):
    """An octree over the two frame boxes plus the given ones."""
    ids = np.concatenate([FRAME_IDS, np.asarray(extra_ids, dtype=np.int64)])
    lo = np.vstack([FRAME_LO, np.asarray(extra_lo, dtype=np.float64).reshape(-1, 3)])
    hi = np.vstack([FRAME_HI, np.asarray(extra_hi, dtype=np.float64).reshape(-1, 3)])
    index = Octree(**params)
    index.build(ids, lo, hi)
    index.validate()
    assert index.stats()["root_side"] == 64.0
    return index


def row_of(index, object_id):
    """Row of ``nodes()`` whose own list holds the object."""
    table = index.nodes()
    rows = [r for r in range(len(table)) if object_id in index.node_objects(r)]
    assert len(rows) == 1, f"object {object_id} found in rows {rows}"
    return rows[0]


def row_with_core(index, core_lo, depth):
    table = index.nodes()
    hits = np.flatnonzero((table.depth == depth) & (table.core_lo == core_lo).all(axis=1))
    return int(hits[0]) if len(hits) else None


def cube(lo, size):
    lo = np.asarray(lo, dtype=np.float64)
    return lo, lo + size


# --------------------------------------------------------------------------- placement
def test_objects_live_in_the_smallest_enclosing_node():
    a_lo, a_hi = cube([1, 1, 1], 1.0)        # separates from b only in cells of side 2
    b_lo, b_hi = cube([3, 3, 3], 0.5)
    s_lo, s_hi = np.array([30.0, 5, 5]), np.array([34.0, 6, 6])  # straddles the root's x split
    index = scene([1, 2, 3], [a_lo, b_lo, s_lo], [a_hi, b_hi, s_hi])
    table = index.nodes()
    assert row_of(index, 3) == 0, "a box straddling the root's split stays in the root"
    ra, rb = row_of(index, 1), row_of(index, 2)
    assert table.depth[ra] == 5 and table.depth[rb] == 5  # 64 / 2**5 = 2
    np.testing.assert_array_equal(table.core_lo[ra], [0, 0, 0])
    np.testing.assert_array_equal(table.core_hi[ra], [2, 2, 2])
    np.testing.assert_array_equal(table.core_lo[rb], [2, 2, 2])
    # the chain above them holds nothing of its own and has one child each
    parent = table.parent[ra]
    assert parent == table.parent[rb] and table.own_count[parent] == 0


def test_every_object_is_in_its_deepest_enclosing_cell_on_a_random_scene():
    ids, lo, hi = random_boxes(3000, seed=4, world=256.0, size_max=20.0)
    index = Octree()
    index.build(ids, lo, hi)
    table = index.nodes()
    has_children = np.zeros(len(table), dtype=bool)
    has_children[table.parent[1:]] = True
    seen = []
    for r in range(len(table)):
        held = index.node_objects(r)
        seen.extend(held.tolist())
        assert table.own_count[r] == len(held)
        if not len(held):
            continue
        olo, ohi = lo[held], hi[held]
        assert (olo >= table.core_lo[r]).all() and (ohi <= table.core_hi[r]).all()
        side = table.core_hi[r, 0] - table.core_lo[r, 0]
        if side <= index.params.min_size or table.depth[r] == index.params.max_depth:
            continue
        if len(held) == 1 and not has_children[r]:
            continue  # a lone object in a leaf is not pushed further down
        mid = (table.core_lo[r] + table.core_hi[r]) / 2
        # an object entirely on one side of the split on every axis would fit a child
        one_side = ((ohi <= mid) | (olo >= mid)).all(axis=1)
        assert not one_side.any(), f"row {r}: objects {held[one_side]} fit a child cell"
    assert sorted(seen) == sorted(ids.tolist())


def test_min_size_stops_subdivision():
    ids, lo, hi = random_boxes(2000, seed=2, world=500.0, size_max=4.0)
    index = Octree(min_size=16.0)
    index.build(ids, lo, hi)
    index.validate()
    table = index.nodes()
    side = table.core_hi[:, 0] - table.core_lo[:, 0]
    assert (side[~table.is_leaf] > 16.0).all()
    assert side.min() == 16.0  # the small boxes reach the 16-unit cells and stop there
    finer = Octree()
    finer.build(ids, lo, hi)
    assert finer.stats()["max_depth"] > index.stats()["max_depth"]


def test_max_depth_stops_subdivision():
    same = np.tile([[10.0, 10.0, 10.0]], (20, 1))
    index = scene(np.arange(20), same, same + 0.25, max_depth=3)
    table = index.nodes()
    assert table.depth.max() == 3
    assert table.own_count[row_of(index, 0)] == 20  # all twenty pile up at the deepest level
    deep = scene(np.arange(20), same, same + 0.25)
    assert deep.nodes().depth.max() > 3


def test_looseness_lets_straddlers_sink():
    x_lo, x_hi = np.array([31.0, 40, 40]), np.array([33.0, 41, 41])
    b_lo, b_hi = cube([50, 50, 50], 1.0)
    tight = scene([1, 2], [x_lo, b_lo], [x_hi, b_hi])
    loose = scene([1, 2], [x_lo, b_lo], [x_hi, b_hi], looseness=2.0)
    assert tight.nodes().depth[row_of(tight, 1)] == 0
    table = loose.nodes()
    r = row_of(loose, 1)
    assert table.depth[r] >= 1
    assert (table.lo[r] <= x_lo).all() and (x_hi <= table.hi[r]).all()
    assert (table.lo[r] < table.core_lo[r]).all(), "loose bounds extend beyond the cell"
    # on a random scene the loose tree stores objects deeper on average
    ids, lo, hi = random_boxes(2000, seed=9, world=256.0, size_max=16.0)

    def mean_depth(index):
        table = index.nodes()
        return float((table.depth * table.own_count).sum() / table.own_count.sum())

    classic, k2 = Octree(), Octree(looseness=2.0)
    classic.build(ids, lo, hi)
    k2.build(ids, lo, hi)
    assert mean_depth(k2) > mean_depth(classic) + 0.5


def test_empty_regions_get_no_nodes():
    index = scene()
    table = index.nodes()
    assert len(table) == 4  # root + the three corner octants holding the frame boxes
    assert sorted(table.own_count.tolist()) == [0, 1, 1, 1]


# --------------------------------------------------------------------------- lazy insertion
def test_insertions_wait_in_one_batch_until_the_next_query():
    index = scene()
    flushes = index.flushes
    nodes_before = len(index.nodes())
    for k in range(3):
        lo, hi = cube([5 + 10 * k, 5, 5], 1.0)
        index.insert([k], [lo], [hi])
    assert index.pending == 3
    assert index.flushes == flushes
    assert len(index._order()[0]) == nodes_before, "no node is created before the flush"
    hits = index.query_box([0, 0, 0], [64, 64, 64]).ids
    assert index.pending == 0
    assert index.flushes == flushes + 1, "the three batches are placed in one flush"
    assert {0, 1, 2} <= set(hits.tolist())
    assert len(index.nodes()) > nodes_before
    index.validate()


def test_removing_or_moving_a_pending_object():
    index = scene()
    index.insert([1, 2], [[5.0, 5, 5], [7.0, 7, 7]], [[6.0, 6, 6], [8.0, 8, 8]])
    index.remove([1])
    index.update([2], [[40.0, 40, 40]], [[41.0, 41, 41]])
    assert index.pending == 1
    assert index.query_point([40.5, 40.5, 40.5]).ids.tolist() == [2]
    assert index.query_point([5.5, 5.5, 5.5]).ids.tolist() == []
    index.validate()


# --------------------------------------------------------------------------- updates
def test_a_move_across_the_world_climbs_to_the_root_and_sinks_again():
    a_lo, a_hi = cube([1, 1, 1], 1.0)
    b_lo, b_hi = cube([3, 3, 3], 0.5)
    c_lo, c_hi = cube([60, 60, 60], 1.0)
    d_lo, d_hi = cube([58, 58, 58], 0.5)
    index = scene([1, 2, 3, 4], [a_lo, b_lo, c_lo, d_lo], [a_hi, b_hi, c_hi, d_hi])
    depth_before = int(index.nodes().depth[row_of(index, 1)])
    assert depth_before == 5
    target_lo, target_hi = cube([56.25, 56.25, 56.25], 0.5)
    index.update([1], [target_lo], [target_hi])
    index.validate()
    table = index.nodes()
    r = row_of(index, 1)
    depth_after = int(table.depth[r])
    assert depth_after >= 3
    assert (table.core_lo[r] <= target_lo).all() and (target_hi <= table.core_hi[r]).all()
    stats = index.stats()
    assert stats["levels_moved_last_update"] == depth_before + depth_after
    assert stats["max_levels_moved_last_update"] == depth_before + depth_after


def test_a_small_move_inside_the_cell_moves_no_level():
    a_lo, a_hi = cube([1, 1, 1], 0.5)
    b_lo, b_hi = cube([3, 3, 3], 0.5)
    index = scene([1, 2], [a_lo, b_lo], [a_hi, b_hi])
    before = row_of(index, 1)
    index.update([1], [a_lo + 0.25], [a_hi + 0.25])
    assert row_of(index, 1) == before
    assert index.stats()["levels_moved_last_update"] == 0
    index.validate()


def test_a_move_to_a_neighbour_cell_climbs_one_level():
    a_lo, a_hi = cube([1, 1, 1], 0.5)     # cell [0, 2]
    b_lo, b_hi = cube([3, 3, 3], 0.5)     # cell [2, 4]
    index = scene([1, 2], [a_lo, b_lo], [a_hi, b_hi])
    index.update([1], [[1.0, 3.0, 1.0]], [[1.5, 3.5, 1.5]])  # into the sibling cell [0,2]x[2,4]x[0,2]
    index.validate()
    table = index.nodes()
    r = row_of(index, 1)
    assert table.depth[r] == 5
    np.testing.assert_array_equal(table.core_lo[r], [0, 2, 0])
    assert index.stats()["levels_moved_last_update"] == 2  # up one, down one


# --------------------------------------------------------------------------- lifespans
def lone_leaf_scene():
    """Object 1 alone in the root's first octant; returns the index and that node's row."""
    index = scene([1], [[10.0, 10, 10]], [[11.0, 11, 11]])
    r = row_of(index, 1)
    return index, r


def node_state(index, depth, core_lo):
    table = index.nodes()
    r = row_with_core(index, np.asarray(core_lo, dtype=np.float64), depth)
    if r is None:
        return None
    return int(table.lifespan_left[r]), int(table.lifespan_max[r]), int(table.own_count[r])


def test_an_emptied_leaf_counts_down_and_is_pruned_at_zero():
    index = scene([1, 2], [[1.0, 1, 1], [5.0, 5, 5]], [[1.5, 1.5, 1.5], [5.5, 5.5, 5.5]])
    leaf_depth = int(index.nodes().depth[row_of(index, 1)])
    leaf_core = index.nodes().core_lo[row_of(index, 1)].copy()
    assert node_state(index, leaf_depth, leaf_core) == (0, 8, 1)
    index.remove([1])
    assert node_state(index, leaf_depth, leaf_core) == (8, 8, 0)
    index.validate()
    index.step(5)
    assert node_state(index, leaf_depth, leaf_core) == (3, 8, 0)
    index.step(2)
    assert node_state(index, leaf_depth, leaf_core) == (1, 8, 0)
    pruned = index.stats()["pruned_total"]
    index.step(1)
    assert node_state(index, leaf_depth, leaf_core) is None
    assert index.stats()["pruned_total"] == pruned + 1
    index.validate()


def test_a_pruned_leaf_leaves_its_empty_parent_counting_down():
    # 1 and 2 share a cell of side 8 and split in cells of side 4 below it
    index = scene([1, 2], [[1.0, 1, 1], [5.0, 5, 5]], [[1.5, 1.5, 1.5], [5.5, 5.5, 5.5]])
    table = index.nodes()
    r1, r2 = row_of(index, 1), row_of(index, 2)
    parent = table.parent[r1]
    assert parent == table.parent[r2]
    p_depth, p_core = int(table.depth[parent]), table.core_lo[parent].copy()
    index.remove([1, 2])
    assert node_state(index, p_depth, p_core) == (0, 8, 0), "a parent with children does not count"
    index.step(8)  # both leaves pruned: the parent is now empty and childless
    assert node_state(index, p_depth, p_core) == (8, 8, 0)
    index.validate()
    index.step(8)
    assert node_state(index, p_depth, p_core) is None
    index.validate()


def test_a_long_step_equals_single_frames():
    ids, lo, hi = random_boxes(400, seed=3, world=64.0, size_max=3.0)
    rng = np.random.default_rng(0)
    gone = rng.choice(ids, 300, replace=False)
    one, many = Octree(), Octree()
    for index in (one, many):
        index.build(ids, lo, hi)
        index.remove(gone)
    one.step(37)
    for _ in range(37):
        many.step(1)
    a, b = one.nodes(), many.nodes()
    np.testing.assert_array_equal(a.core_lo, b.core_lo)
    np.testing.assert_array_equal(a.lifespan_left, b.lifespan_left)
    assert one.stats()["pruned_total"] == many.stats()["pruned_total"] > 0
    one.validate()


def test_reuse_during_the_countdown_doubles_the_lifespan_up_to_the_cap():
    index, r = lone_leaf_scene()
    table = index.nodes()
    depth, core = int(table.depth[r]), table.core_lo[r].copy()
    box = ([[10.0, 10, 10]], [[11.0, 11, 11]])
    seen = []
    for _ in range(5):
        index.remove([1])
        left, life_max, _ = node_state(index, depth, core)
        assert left == life_max, "the countdown starts from the node's current lifespan"
        seen.append(life_max)
        index.step(3)
        index.insert([1], *box)  # re-enters the counting node: the countdown stops, max doubles
        index.validate()
        assert node_state(index, depth, core)[0] == 0
    assert seen == [8, 16, 32, 64, 64]
    assert node_state(index, depth, core)[1] == 64


def test_lifespan_parameters_are_checked():
    with pytest.raises(ParamError, match="max_lifespan_initial"):
        Octree(max_lifespan_initial=100, max_lifespan_cap=10)
    with pytest.raises(ParamError, match="looseness"):
        Octree(looseness=0.5)
    with pytest.raises(ParamError, match="out_of_bounds"):
        Octree(out_of_bounds="wrap")


def test_zero_lifespan_prunes_at_the_next_step():
    index = scene([1], [[10.0, 10, 10]], [[11.0, 11, 11]], max_lifespan_initial=0, max_lifespan_cap=0)
    nodes = len(index.nodes())
    index.remove([1])
    index.validate()
    index.step(1)
    assert len(index.nodes()) == nodes - 1
    index.validate()


# --------------------------------------------------------------------------- out of bounds
def test_grow_policy_doubles_the_root_towards_the_object():
    index = scene([1], [[10.0, 10, 10]], [[11.0, 11, 11]])
    index.insert([2], [[200.0, 10, 10]], [[201.0, 11, 11]])
    assert index.query_point([200.5, 10.5, 10.5]).ids.tolist() == [2]
    stats = index.stats()
    assert stats["root_side"] == 256.0 and stats["root_origin"] == [0.0, 0.0, 0.0]
    assert stats["root_grows"] == 1
    index.update([2], [[-100.0, 10, 10]], [[-99.0, 11, 11]])
    stats = index.stats()
    assert stats["root_side"] == 512.0 and stats["root_origin"] == [-256.0, 0.0, 0.0]
    assert index.query_point([-99.5, 10.5, 10.5]).ids.tolist() == [2]
    index.validate()


def test_keep_in_root_policy_stores_outsiders_in_the_root():
    index = scene([1], [[10.0, 10, 10]], [[11.0, 11, 11]], out_of_bounds="keep_in_root")
    index.insert([2], [[200.0, 10, 10]], [[201.0, 11, 11]])
    assert index.query_point([200.5, 10.5, 10.5]).ids.tolist() == [2]
    ray = index.query_ray([300.0, 10.5, 10.5], [-1.0, 0, 0])
    assert ray.ids.tolist()[:1] == [2] and ray.t[0] == 99.0
    assert index.stats()["root_side"] == 64.0
    assert index.stats()["outside_root"] == 1
    assert row_of(index, 2) == 0
    index.validate()
    index.update([2], [[20.0, 20, 20]], [[21.0, 21, 21]])  # back inside: it sinks again
    assert row_of(index, 2) != 0 and index.stats()["outside_root"] == 0
    index.update([1], [[-50.0, 10, 10]], [[-49.0, 11, 11]])  # a deep object leaves the root
    assert row_of(index, 1) == 0
    index.validate()


def test_error_policy_rejects_outsiders_without_changing_anything():
    index = scene([1], [[10.0, 10, 10]], [[11.0, 11, 11]], out_of_bounds="error")
    with pytest.raises(GeometryError, match="object id 7 .*outside the octree root"):
        index.insert([5, 7], [[1.0, 1, 1], [70.0, 1, 1]], [[2.0, 2, 2], [71.0, 2, 2]])
    assert len(index) == 4 and index.pending == 0
    with pytest.raises(GeometryError, match="object id 1 .*outside"):
        index.update([1], [[10.0, 10, -5]], [[11.0, 11, 1]])
    assert index.query_point([10.5, 10.5, 10.5]).ids.tolist() == [1]
    index.validate()


# --------------------------------------------------------------------------- awake, pairs, rows
def test_awake_flags_propagate_to_ancestors_only():
    ids, lo, hi = random_boxes(500, seed=1, world=64.0, size_max=2.0)
    dynamic = np.zeros(len(ids), dtype=bool)
    mover = 123
    dynamic[mover] = True
    index = Octree()
    index.build(ids, lo, hi, dynamic=dynamic)
    table = index.nodes()
    chain = []
    r = row_of(index, mover)
    while r >= 0:
        chain.append(r)
        r = table.parent[r]
    expected = np.zeros(len(table), dtype=bool)
    expected[chain] = True
    np.testing.assert_array_equal(table.awake, expected)
    assert len(chain) > 2
    index.set_awake([mover], [False])
    assert not index.nodes().awake.any()
    assert len(index.pairs("active").pairs) == 0


def test_active_pairs_skip_static_subtrees():
    ids, lo, hi = random_boxes(4000, seed=6, world=300.0, size_max=12.0)
    dynamic = np.zeros(len(ids), dtype=bool)
    dynamic[:40] = True
    index, oracle = Octree(), BruteForce()
    for x in (index, oracle):
        x.build(ids, lo, hi, dynamic=dynamic)
    got, want = index.pairs("active"), oracle.pairs("active")
    np.testing.assert_array_equal(got.pairs, want.pairs)
    everything = index.pairs("all")
    assert got.tests < everything.tests / 10, "static objects must not test each other"
    assert got.node_tests.sum() == got.tests
    assert len(got.node_tests) == len(index.nodes())


@pytest.mark.slow
def test_random_20k_scene_pairs_match_brute_force():
    ids, lo, hi = random_boxes(20000, seed=0)
    index, oracle = Octree(), BruteForce()
    index.build(ids, lo, hi)
    oracle.build(ids, lo, hi)
    got, want = index.pairs("all"), oracle.pairs("all")
    assert len(got.pairs) == len(want.pairs) > 0
    np.testing.assert_array_equal(got.pairs, want.pairs)
    assert want.tests / got.tests > 50, "the tree must prune far below all-pairs"
    table = index.nodes()
    np.testing.assert_array_equal(table.pair_tests, got.node_tests)
    assert table.pair_tests.sum() == got.tests


def test_trace_rows_are_node_rows():
    ids, lo, hi = random_boxes(800, seed=5, world=100.0, size_max=5.0)
    index = Octree()
    index.build(ids, lo, hi)
    table = index.nodes()
    box = index.query_box([10, 10, 10], [30, 30, 30], trace=True)
    assert box.nodes_visited == len(box.visited) and 0 < len(box.visited) < len(table)
    assert (table.hi[box.visited] >= 10).all() and (table.lo[box.visited] <= 30).all()
    planes = frustum_planes_from_camera([50, 50, -50], [0, 0, 1], [0, 1, 0], 30.0, 1.0, 1.0, 80.0)
    frustum = index.query_frustum(planes, trace=True)
    assert len(frustum.culled) > 0
    assert not set(frustum.culled.tolist()) & set(frustum.visited.tolist())
    assert frustum.visited.max() < len(table) and frustum.culled.max() < len(table)


def test_batch_rays_visit_fewer_nodes_than_all_hit_queries():
    ids, lo, hi = random_boxes(5000, seed=2, world=200.0, size_max=6.0)
    index = Octree()
    index.build(ids, lo, hi)
    rng = np.random.default_rng(1)
    origins = rng.uniform(0, 200, (50, 3))
    dirs = rng.normal(size=(50, 3))
    closest = index.query_rays(origins, dirs)
    every = [index.query_ray(origins[i], dirs[i]) for i in range(50)]
    for i in range(50):
        if len(every[i].ids):
            assert closest.ids[i] == every[i].ids[0] and closest.t[i] == every[i].t[0]
        else:
            assert closest.ids[i] == -1
    assert closest.nodes_visited.sum() < sum(r.nodes_visited for r in every)


# --------------------------------------------------------------------------- validation
def test_validate_reports_a_moved_object_the_tree_was_not_told_about():
    index = scene([1], [[10.0, 10, 10]], [[11.0, 11, 11]])
    slot = index.objects.slots_of([1])[0]
    index.objects.lo[slot] += 30.0
    index.objects.hi[slot] += 30.0
    with pytest.raises(IndexInvariantError, match="object id 1 .*not enclosed"):
        index.validate()


def test_validate_reports_a_broken_count():
    index = scene([1], [[10.0, 10, 10]], [[11.0, 11, 11]])
    index._ni[0, 7] += 1  # the root's own-object count
    with pytest.raises(IndexInvariantError, match="count"):
        index.validate()


def test_stats_describe_the_tree():
    ids, lo, hi = random_boxes(1000, seed=8, world=128.0, size_max=6.0)
    index = Octree(looseness=2.0)
    index.build(ids, lo, hi)
    stats = index.stats()
    assert stats["objects"] == 1000 and stats["references"] == 1000
    assert stats["loose"] == 2.0 and stats["root_side"] >= 128.0
    assert stats["pending"] == 0 and stats["memory_bytes"] > 0
    assert stats["max_depth"] >= stats["ideal_depth"] >= 3


def test_box_queries_scan_only_the_reachable_part_of_crowded_nodes():
    ids, lo, hi = random_boxes(20000, seed=3)
    index, oracle = Octree(), BruteForce()
    index.build(ids, lo, hi)
    oracle.build(ids, lo, hi)
    table = index.nodes()
    assert table.own_count[0] > 500, "mixed sizes crowd the root with straddlers"
    for qlo, qhi in (([100.0, 100, 100], [140.0, 130, 120]), ([480.0, 480, 480], [520.0, 520, 520])):
        got = index.query_box(qlo, qhi, trace=True)
        np.testing.assert_array_equal(got.ids, oracle.query_box(qlo, qhi).ids)
        in_visited = int(table.own_count[got.visited].sum())
        assert got.objects_tested < in_visited / 4
    sphere = index.query_sphere([500.0, 500, 500], 30.0, trace=True)
    np.testing.assert_array_equal(sphere.ids, oracle.query_sphere([500.0, 500, 500], 30.0).ids)
    assert sphere.objects_tested < int(table.own_count[sphere.visited].sum()) / 4
    # an edit refreshes the packed copy the queries read
    index.update([ids[0]], [[2000.0, 2000, 2000]], [[2001.0, 2001, 2001]])
    assert index.query_point([2000.5, 2000.5, 2000.5]).ids.tolist() == [ids[0]]
    index.remove([ids[1]])
    assert ids[1] not in index.query_box(lo[1], hi[1]).ids


def test_rays_descend_crowded_node_lists_instead_of_scanning_them():
    ids, lo, hi = random_boxes(20000, seed=3)
    index, oracle = Octree(), BruteForce()
    index.build(ids, lo, hi)
    oracle.build(ids, lo, hi)
    table = index.nodes()
    assert table.own_count[0] > 500, "mixed sizes crowd the root with straddlers"
    rng = np.random.default_rng(4)
    origins = rng.uniform(0, 1000, (200, 3))
    dirs = rng.normal(size=(200, 3))
    dirs[:20, 1] = 0.0  # rays parallel to a slab take the other branch of the slab test
    closest = index.query_rays(origins, dirs)
    expected = oracle.query_rays(origins, dirs)
    np.testing.assert_array_equal(closest.ids, expected.ids)
    np.testing.assert_array_equal(closest.t, expected.t)
    # every ray passes the root; scanning its list would test all of it
    assert closest.objects_tested.max() < table.own_count[0] / 10
    for i in range(10):
        got = index.query_ray(origins[i], dirs[i], trace=True)
        want = oracle.query_ray(origins[i], dirs[i])
        np.testing.assert_array_equal(got.ids, want.ids)
        np.testing.assert_array_equal(got.t, want.t)
        assert got.objects_tested < int(table.own_count[got.visited].sum()) / 4


def test_batch_box_queries_answer_in_the_callers_order():
    ids, lo, hi = random_boxes(3000, seed=6, world=300.0)
    index = Octree()
    index.build(ids, lo, hi)
    rng = np.random.default_rng(2)
    qlo = rng.uniform(0, 300, (120, 3))
    qhi = qlo + rng.uniform(0, 40, (120, 3))
    batch = index.query_boxes(qlo, qhi)
    for q in range(120):
        single = index.query_box(qlo[q], qhi[q])
        part = batch.ids[batch.offsets[q]:batch.offsets[q + 1]]
        np.testing.assert_array_equal(np.sort(part), single.ids)
        assert batch.objects_tested[q] == single.objects_tested
    rays = index.query_rays(qlo, qhi - qlo)
    for q in range(0, 120, 7):
        single = index.query_ray(qlo[q], qhi[q] - qlo[q])
        assert rays.ids[q] == (single.ids[0] if len(single.ids) else -1)


@pytest.mark.parametrize("params", [{"looseness": 1.0}, {"looseness": 2.0}, {"max_depth": 3},
                                    {"min_size": 16.0}])
def test_bulk_build_matches_placing_one_object_at_a_time(params):
    """The build partitions all objects top-down at once; the tree must be the one sinking
    them one by one makes (same nodes, every object in the same node)."""
    ids, lo, hi = random_boxes(2000, seed=8, world=256.0)

    def node_cells(index):
        table = index.nodes()
        return sorted(zip(table.depth.tolist(), map(tuple, table.lo.tolist()),
                          table.own_count.tolist()))

    def holder_bounds(index):
        table = index.nodes()
        where = {}
        for row in range(len(table)):
            for ident in index.node_objects(row).tolist():
                where[ident] = (tuple(table.lo[row]), tuple(table.hi[row]))
        return where

    # one object per flush (each sinks from the root on its own) against one batch of the same
    # objects; a pin box spanning every object fixes the same root cube for both
    pin, pin_lo, pin_hi = int(ids.max()) + 1, lo.min(axis=0)[None], hi.max(axis=0)[None]
    chosen = np.random.default_rng(3).permutation(len(ids))[:300]
    batch = Octree(**params)
    batch.build(np.concatenate([[pin], ids[chosen]]), np.vstack([pin_lo, lo[chosen]]),
                np.vstack([pin_hi, hi[chosen]]))
    batch.validate()
    single = Octree(**params)
    single.build([pin], pin_lo, pin_hi)
    for k in chosen:
        single.insert([ids[k]], lo[k:k + 1], hi[k:k + 1])
        single.query_point(lo[k])
    assert single.flushes == len(chosen)
    single.validate()
    assert holder_bounds(single) == holder_bounds(batch)
    assert node_cells(single) == node_cells(batch)
